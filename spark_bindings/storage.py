"""Writing a change feed to storage."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType


def storable(feed: DataFrame) -> DataFrame:
    """The feed without columns whose type is an empty struct.

    A contract without key columns yields ``key`` as a null ``struct<>``; Parquet (and most
    table formats) cannot store a struct with no fields, so such columns are left out.
    """
    empty = [
        f.name
        for f in feed.schema.fields
        if isinstance(f.dataType, StructType) and not f.dataType.fields
    ]
    return feed.drop(*empty) if empty else feed


def write_parquet(feed: DataFrame, path: str) -> None:
    """Write a change feed as Parquet (overwriting ``path``), storable columns only."""
    storable(feed).write.mode("overwrite").parquet(path)


def feed_counts(feed: DataFrame) -> dict[str, int]:
    """Rows of a change feed by what they are: their op (``c``, ``u``, ``d``, ``r``, ``t``),
    ``error`` (``_error`` set) or ``control:<kind>`` (a control record)."""
    from pyspark.sql import functions as F

    label = (
        F.when(F.col("_error").isNotNull(), F.lit("error"))
        .when(F.col("op").isNotNull(), F.col("op"))
        .otherwise(F.concat(F.lit("control:"), F.coalesce(F.col("_control"), F.lit("?"))))
    )
    rows = feed.groupBy(label.alias("what")).count().collect()
    return {row["what"]: int(row["count"]) for row in rows}
