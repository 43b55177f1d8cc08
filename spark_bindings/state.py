"""``latest_state``: materialize a table from a change feed (the current row per key)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from contracts.errors import InputError

_RANK = "__cdc_rank"


def _default_order(changes: DataFrame) -> list[Column]:
    """Newest first: producer time, then the Kafka offset, then the row within a message."""
    order: list[Column] = [
        F.col(name).desc_nulls_last() for name in ("ts_ms", "offset") if name in changes.columns
    ]
    order.append(F.col("position")["row"].try_cast("long").desc_nulls_last())
    return order


def latest_state(
    changes: DataFrame,
    keys: Sequence[str] | None = None,
    order_by: Sequence[str | Column] | None = None,
) -> DataFrame:
    """The current row per key of a decoded change feed; a delete removes the row.

    ``keys`` names row columns (default: the fields of the feed's ``key`` struct);
    ``order_by`` orders changes of one key, oldest first (default: ``ts_ms``, ``offset``,
    ``position.row``). Control records and rows with ``_error`` are ignored. The result has
    the row's columns (``after.*``). Batch only: on a stream, call it inside ``foreachBatch``.
    """
    missing = [c for c in ("op", "key", "before", "after") if c not in changes.columns]
    if missing:
        raise InputError(
            f"latest_state needs a decode_changes output (missing {', '.join(missing)})"
        )
    if keys:
        key_cols = [F.coalesce(F.col("after")[k], F.col("before")[k]) for k in keys]
    else:
        key_fields = changes.schema["key"].dataType.fieldNames()  # type: ignore[attr-defined]
        if not key_fields:
            raise InputError("the contract names no key columns: pass keys=[...]")
        key_cols = [F.col("key")[k] for k in key_fields]
    newest_first = (
        [(F.col(c) if isinstance(c, str) else c).desc_nulls_last() for c in order_by]
        if order_by
        else _default_order(changes)
    )
    window = Window.partitionBy(*key_cols).orderBy(*newest_first)
    rows = changes.where(F.col("op").isNotNull() & F.col("_error").isNull())
    latest = rows.withColumn(_RANK, F.row_number().over(window)).where(F.col(_RANK) == 1)
    return latest.where(F.col("op") != F.lit("d")).select("after.*")
