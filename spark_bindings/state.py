"""``latest_state``: materialize a table from a change feed (the current row per key)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from contracts.errors import InputError

_RANK = "__cdc_rank"
_COUNTS = "__cdc_counts"
_KEY = "__cdc_key"
_REMOVED = "__cdc_removed"
#: The ops that change one row (a truncate, ``t``, names none).
_ROW_OPS = ("c", "u", "r", "d")


def _newest(entries: DataFrame, by: Sequence[str], order: Sequence[Column]) -> DataFrame:
    """The newest entry of each ``by`` group: rows that count first, then ``order``."""
    window = Window.partitionBy(*by).orderBy(F.col(_COUNTS).desc(), *order)
    return entries.withColumn(_RANK, F.row_number().over(window)).where(F.col(_RANK) == 1)


def _newest_in_kafka_order(entries: DataFrame) -> DataFrame:
    """The newest entry per key in Kafka order: the offset, then the row within a message.

    Offsets compare only within one topic partition, where a keyed topic keeps every change of
    a key. A key seen in several partitions (a repartitioned topic, a key change sent to the
    new key's partition) takes each partition's newest entry, then the newest of those by
    ``ts_ms``. Without an ``offset`` column: ``ts_ms``, then the row."""
    cols = entries.columns
    row = F.col("position")["row"].try_cast("long").desc_nulls_last()
    offset = [F.col("offset").desc_nulls_last()] if "offset" in cols else []
    ts = [F.col("ts_ms").desc_nulls_last()] if "ts_ms" in cols else []
    sources = [c for c in ("topic", "partition") if c in cols]
    if not offset:
        return _newest(entries, [_KEY], [*ts, row])
    if not sources:
        return _newest(entries, [_KEY], [*offset, row])
    per_partition = _newest(entries, [_KEY, *sources], [*offset, row])
    return _newest(per_partition, [_KEY], [*ts, *offset, row])


def _keys(
    changes: DataFrame, keys: Sequence[str] | None
) -> tuple[list[str], Column, Column | None]:
    """The key columns, the key a change writes (a struct) and, when the row holds every key
    column, the key its before image had (null when that image lacks one of them)."""
    row = changes.schema["before"].dataType
    row_fields = set(row.fieldNames()) if isinstance(row, StructType) else set()
    if keys:
        names = list(keys)
        new = [F.coalesce(F.col("after")[k], F.col("before")[k]).alias(k) for k in names]
        old = [F.col("before")[k].alias(k) for k in names]
    else:
        key_type = changes.schema["key"].dataType
        key_fields = key_type.fields if isinstance(key_type, StructType) else []
        if not key_fields:
            raise InputError("the contract names no key columns: pass keys=[...]")
        names = [f.name for f in key_fields]
        new = [F.col("key")[k].alias(k) for k in names]
        old = [F.col("before")[f.name].cast(f.dataType).alias(f.name) for f in key_fields]
    if not set(names) <= row_fields:
        return names, F.struct(*new), None
    complete = F.lit(True)
    for k in names:
        complete = complete & F.col("before")[k].isNotNull()
    return names, F.struct(*new), F.when(complete, F.struct(*old))


def latest_state(
    changes: DataFrame,
    keys: Sequence[str] | None = None,
    order_by: Sequence[str | Column] | None = None,
    include_deletes: bool = False,
) -> DataFrame:
    """The current row per key of a decoded change feed; a delete removes the row.

    ``keys`` names row columns (default: the fields of the feed's ``key`` struct). An update
    whose before image has another key (a primary-key change sent as one UPDATE, as Canal does)
    also deletes that key, at the update's place in the order. ``order_by`` orders changes of
    one key, oldest first (default: Kafka order, ``offset`` then ``position.row``, within each
    topic partition; across partitions the newest by ``ts_ms``). Control records, rows with
    ``_error`` and truncates (``op`` ``t``, which name no row) are ignored: a truncate does not
    empty the result. The result has the row's columns (``after.*``).

    ``include_deletes=True`` keeps each key's newest change even when it is a delete, with an
    ``op`` column first (``c``, ``u``, ``r`` or ``d``): a delete's row is its before image with
    the key filled in, for a MERGE's ``WHEN MATCHED AND s.op = 'd' THEN DELETE``. Batch only:
    on a stream, call it inside ``foreachBatch``.
    """
    missing = [c for c in ("op", "key", "before", "after") if c not in changes.columns]
    if missing:
        raise InputError(
            f"latest_state needs a decode_changes output (missing {', '.join(missing)})"
        )
    row_type = changes.schema["after"].dataType
    if include_deletes and isinstance(row_type, StructType) and "op" in row_type.fieldNames():
        raise InputError("the row has a column named op: include_deletes=True cannot add one")
    names, new_key, old_key = _keys(changes, keys)
    counts = F.col("op").isin(*_ROW_OPS) & F.col("_error").isNull()
    # A change enters the ranking once under the key it writes; an update that moves a row
    # enters again under the key it leaves, as a removal with the same place in the order.
    entry = F.struct(new_key.alias(_KEY), F.lit(False).alias(_REMOVED))
    if old_key is None:
        entries = F.array(entry)
    else:
        # (no before image, as Debezium's default replica identity sends: no old key to leave)
        moved = (
            counts
            & (F.col("op") == F.lit("u"))
            & old_key.isNotNull()
            & ~old_key.eqNullSafe(new_key)
        )
        left = F.struct(old_key.alias(_KEY), F.lit(True).alias(_REMOVED))
        entries = F.when(moved, F.array(entry, left)).otherwise(F.array(entry))
    # Rows that count sort first in each key, and are kept after the ranking: a filter before
    # the window would be pushed down into the decode's projections, where Spark's constraint
    # inference over their large expressions runs out of memory (a 12-column Debezium contract).
    exploded = changes.select("*", F.inline(entries)).withColumn(_COUNTS, counts)
    if order_by:
        order = [(F.col(c) if isinstance(c, str) else c).desc_nulls_last() for c in order_by]
        latest = _newest(exploded, [_KEY], order).where(F.col(_COUNTS))
    else:
        latest = _newest_in_kafka_order(exploded).where(F.col(_COUNTS))
    deleted = (F.col("op") == F.lit("d")) | F.col(_REMOVED)
    if not include_deletes:
        return latest.where(~deleted).select("after.*")
    return latest.select(
        F.when(deleted, F.lit("d")).otherwise(F.col("op")).alias("op"),
        F.when(deleted, _deleted_row(row_type, names)).otherwise(F.col("after")).alias("row"),
    ).select("op", "row.*")


def _deleted_row(row_type: DataType, key_names: Sequence[str]) -> Column:
    """The row a delete removes: its before image, with the key columns set to the key it was
    ranked under (a delete without a before image still names its key)."""
    if not isinstance(row_type, StructType):
        return F.col("before")
    empty = F.struct(*[F.lit(None).cast(f.dataType).alias(f.name) for f in row_type.fields])
    row = F.coalesce(F.col("before"), empty)
    for f in row_type.fields:
        if f.name in key_names:
            row = row.withField(f.name, F.col(_KEY)[f.name].cast(f.dataType))
    return row
