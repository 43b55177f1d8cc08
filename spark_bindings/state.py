"""``latest_state``: materialize a table from a change feed (the current row per key)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from contracts.errors import InputError

_RANK = "__cdc_rank"
_COUNTS = "__cdc_counts"
#: The ops that change one row (a truncate, ``t``, names none).
_ROW_OPS = ("c", "u", "r", "d")


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
    ``position.row``). Control records, rows with ``_error`` and truncates (``op`` ``t``, which
    name no row) are ignored: a truncate does not empty the result. The result has the row's
    columns (``after.*``). Batch only: on a stream, call it inside ``foreachBatch``.
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
    # Rows that count sort first in each key, and are kept after the ranking: a filter before
    # the window would be pushed down into the decode's projections, where Spark's constraint
    # inference over their large expressions runs out of memory (a 12-column Debezium contract).
    counts = F.col("op").isin(*_ROW_OPS) & F.col("_error").isNull()
    window = Window.partitionBy(*key_cols).orderBy(counts.desc(), *newest_first)
    ranked = changes.select(
        "op", "after", counts.alias(_COUNTS), F.row_number().over(window).alias(_RANK)
    )
    latest = ranked.where((F.col(_RANK) == 1) & F.col(_COUNTS) & (F.col("op") != F.lit("d")))
    return latest.select("after.*")
