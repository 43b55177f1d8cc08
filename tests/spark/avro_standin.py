"""A stand-in for spark-avro's ``from_avro``, for machines without the spark-avro jar.

The jar (``org.apache.spark:spark-avro``) comes from Maven Central, which this test machine
cannot reach, so the ``from_avro`` decode path is exercised with this stand-in: a Python UDF
that reads the value with fastavro and returns what spark-avro's ``AvroDataToCatalyst``
returns for the schemas a Connect envelope uses. The facts it follows (Spark 4.0):

- the output type is ``SchemaConverters.toSqlType`` of the schema
  (:func:`contracts.translate.spark.avro_to_spark`, held to Spark's rules by the translation
  tests);
- ``PERMISSIVE`` mode: the output type is made nullable throughout, and a value that does not
  decode gives a struct whose fields are all null (null for a non-record schema);
- the reader stops at the end of the datum: bytes after it are ignored.

Values of ``member0..N`` unions are not rebuilt (Connect envelopes have none; the type is).

It is a test double of an external component, not of ours; the real jar's behaviour is
asserted only where :func:`spark_bindings.avro.spark_avro_available` finds it.
"""

from __future__ import annotations

import io
import json
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from contracts.translate.spark import avro_to_spark
from spark_bindings.expressions import spark_type_of
from spark_bindings.feed import all_nullable


def catalyst_type(avro: Any) -> DataType:
    """spark-avro's Catalyst type of an Avro schema (the project's own mapping of
    ``SchemaConverters.toSqlType``), every part nullable as ``PERMISSIVE`` makes it."""
    return all_nullable(spark_type_of(avro_to_spark(avro)))


def standin_from_avro(data: Column, writer_schema: str) -> Column:
    """``from_avro(data, writer_schema, {"mode": "PERMISSIVE"})`` as a fastavro UDF."""
    import fastavro

    avro = json.loads(writer_schema)
    dtype = catalyst_type(avro)
    parsed = fastavro.parse_schema(avro)
    failed = {f.name: None for f in dtype.fields} if isinstance(dtype, StructType) else None

    def read(value: bytes | None) -> Any:
        if value is None:
            return None
        try:
            return fastavro.schemaless_reader(io.BytesIO(value), parsed, None)
        except Exception:
            return failed

    return F.udf(lambda value: read(value), dtype)(data)
