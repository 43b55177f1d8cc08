"""Spark bindings: the only package that imports pyspark.

- :func:`spark_schema` — a contract's row, key or value as a StructType (decoded or wire view);
- :func:`decode_changes` — a Kafka-shaped DataFrame of any format → the canonical change feed;
- :func:`latest_state` — the current row per key, from a change feed.
"""

from __future__ import annotations

from spark_bindings.decode import decode_changes
from spark_bindings.schema import spark_schema
from spark_bindings.state import latest_state

__all__ = ["decode_changes", "latest_state", "spark_schema"]
