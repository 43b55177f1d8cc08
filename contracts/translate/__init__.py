"""Translations between the Connect, Avro and Spark schema languages.

Pure functions from JSON-able data to JSON-able data; nothing here imports pyspark.

- :mod:`contracts.translate.avro` — Connect ⇄ Avro, following Confluent's AvroData.
- :mod:`contracts.translate.spark` — Connect → Spark (decoded and wire views), Avro → Spark
  (spark-avro's SchemaConverters), Spark → Connect.
- :mod:`contracts.translate.ddl` — Spark type JSON → Spark DDL text.
"""

from __future__ import annotations

from contracts.translate.avro import avro_to_connect, connect_to_avro
from contracts.translate.ddl import spark_ddl
from contracts.translate.spark import avro_to_spark, connect_to_spark, spark_to_connect

__all__ = [
    "avro_to_connect",
    "avro_to_spark",
    "connect_to_avro",
    "connect_to_spark",
    "spark_ddl",
    "spark_to_connect",
]
