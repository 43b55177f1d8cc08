"""The canonical change feed: its columns, and how a format's decoded parts become one row.

Every format decoder produces a :class:`Feed` — one Column per canonical field plus the
problems found — and :func:`finish` turns it into the output DataFrame::

    op, table, key, before, after, ts_ms, source_ts_ms, position,
    <every other input column, unchanged>, _control, _error, _absent

A row whose ``_error`` is set has ``op``, ``key``, ``before`` and ``after`` null (its transport
columns, table, timestamps and position stay, to find the message). A control record (tombstone,
heartbeat, DDL, transaction marker, logical-decoding message) has ``op`` null and ``_control``
naming its kind; ``drop_control_records=True`` filters those out. ``_absent`` lists the columns a
message left out of an image (``before.<column>``, ``after.<column>``): null in the image, yet
not a null the producer sent (Canal's MINIMAL row images, SharePlex's changed columns, Arcion's
exists flags); empty when every column is there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, MapType, StringType, StructField, StructType

from contracts.events import OPS
from spark_bindings.expressions import Problem, error_text
from spark_bindings.frame import Frame
from spark_bindings.schema import quoted

#: The canonical columns, in output order (before the passed-through input columns).
CANONICAL: Final = ("op", "table", "key", "before", "after", "ts_ms", "source_ts_ms", "position")
CONTROL_COL: Final = "_control"
ERROR_COL: Final = "_error"
ABSENT_COL: Final = "_absent"
#: The feed's columns after the passed-through input columns.
LAST_COLUMNS: Final = (CONTROL_COL, ERROR_COL, ABSENT_COL)
ABSENT_TYPE: Final = ArrayType(StringType())
#: Working column names (never kept in the output).
PARSED_COL: Final = "__cdc_parsed"
ELEMENT_COL: Final = "__cdc_element"

TABLE_TYPE: Final = StructType(
    [
        StructField("database", StringType()),
        StructField("schema", StringType()),
        StructField("name", StringType()),
    ]
)
POSITION_TYPE: Final = MapType(StringType(), StringType())


@dataclass(frozen=True)
class Feed:
    """A format's canonical fields as Column expressions over one (possibly exploded) row."""

    op: Column
    table: Column
    key: Column
    before: Column
    after: Column
    ts_ms: Column
    source_ts_ms: Column
    position: Column
    control: Column = field(default_factory=lambda: F.lit(None).cast("string"))
    problems: tuple[Problem, ...] = ()
    #: The Kafka key's problems (also among ``problems``): a tombstone's key is judged too, as
    #: the core judges it, though a tombstone has nothing else to check.
    key_problems: tuple[Problem, ...] = ()
    #: The row change's index in the message's row arrays (Canal's ``data``/``old``): error
    #: paths ``$.data.col`` then read ``$.data[i].col``, as the Python decoder's.
    element: Column | None = None
    #: The row arrays' names (see ``element``).
    element_arrays: tuple[str, ...] = ()
    #: The columns left out of an image (``before.<column>``/``after.<column>``).
    absent: Column = field(default_factory=lambda: F.array().cast(ABSENT_TYPE))


def table_struct(database: Column, schema: Column, name: Column) -> Column:
    """The ``table`` column from its three parts (each a string or null)."""
    return F.struct(
        database.cast("string").alias("database"),
        schema.cast("string").alias("schema"),
        name.cast("string").alias("name"),
    )


def constant_table(database: str | None, schema: str | None, name: str | None) -> Column:
    return table_struct(F.lit(database), F.lit(schema), F.lit(name))


def position_map(entries: Mapping[str, Column]) -> Column:
    """``map<string,string>`` of the non-null entries (values as their JSON text)."""
    if not entries:
        return F.create_map().cast(POSITION_TYPE)
    pairs: list[Column] = []
    for name, value in entries.items():
        pairs += [F.lit(name), value.cast("string")]
    return F.map_filter(F.create_map(*pairs), lambda _k, v: v.isNotNull())


def op_from(code: Column, table: Mapping[str, str]) -> Column:
    """A canonical op from a producer's code through a table (unknown codes: null)."""
    out: Column = F.lit(None).cast("string")
    for wire, op in reversed(list(table.items())):
        out = F.when(code == F.lit(wire), F.lit(op)).otherwise(out)
    return out


def first_control(rules: Sequence[tuple[str, Column]]) -> Column:
    """The kind of the first control rule that holds (null: a row change)."""
    out: Column = F.lit(None).cast("string")
    for kind, condition in reversed(list(rules)):
        out = F.when(F.coalesce(condition, F.lit(False)), F.lit(kind)).otherwise(out)
    return out


def unknown_op_problem(op: Column, code: Column, control: Column, path: str) -> Problem:
    """Neither a row change nor a control record: the op code is unknown."""
    condition = op.isNull() & control.isNull()
    return Problem(path, "is not a known op code", condition)


def finish(
    df: Frame,
    feed: Feed,
    passthrough: Sequence[str],
    *,
    drop_control_records: bool,
    key_type: DataType,
    row_type: DataType,
) -> Frame:
    """The output DataFrame: canonical columns, passed-through columns, ``_control``, ``_error``."""
    key_type, row_type = all_nullable(key_type), all_nullable(row_type)
    # Stage 1: every canonical part and the error text as their own columns, so that later
    # expressions refer to them by name instead of repeating their expression trees.
    parts = {
        "__cdc_op": feed.op,
        "__cdc_table": feed.table,
        "__cdc_key": feed.key,
        "__cdc_before": feed.before,
        "__cdc_after": feed.after,
        "__cdc_ts_ms": feed.ts_ms,
        "__cdc_source_ts_ms": feed.source_ts_ms,
        "__cdc_position": feed.position,
        "__cdc_control": feed.control,
        "__cdc_absent": feed.absent,
        ERROR_COL: error_text(list(feed.problems)),
    }
    if feed.element is not None:
        parts[ELEMENT_COL] = feed.element
    staged = df.select(
        *[F.col(quoted(c)) for c in passthrough],
        *[v.alias(k) for k, v in parts.items()],
    )
    c = F.col
    ok = c(ERROR_COL).isNull()
    change = ok & c("__cdc_control").isNull()
    out = staged.select(
        F.when(change & c("__cdc_op").isin(*OPS), c("__cdc_op")).alias("op"),
        c("__cdc_table").alias("table"),
        F.when(ok, c("__cdc_key")).cast(key_type).alias("key"),
        F.when(change, c("__cdc_before")).cast(row_type).alias("before"),
        F.when(change, c("__cdc_after")).cast(row_type).alias("after"),
        c("__cdc_ts_ms").cast("long").alias("ts_ms"),
        c("__cdc_source_ts_ms").cast("long").alias("source_ts_ms"),
        c("__cdc_position").alias("position"),
        *[c(quoted(name)) for name in passthrough],
        F.when(ok, c("__cdc_control")).alias(CONTROL_COL),
        _indexed(c(ERROR_COL), c(ELEMENT_COL), feed.element_arrays).alias(ERROR_COL)
        if feed.element is not None
        else c(ERROR_COL),
        F.when(change, c("__cdc_absent")).otherwise(F.array().cast(ABSENT_TYPE)).alias(ABSENT_COL),
    )
    if drop_control_records:
        out = out.where(F.col(CONTROL_COL).isNull())
    return out


def _indexed(error: Column, index: Column, arrays: Sequence[str]) -> Column:
    """``$.<array>.<col>`` (``$.data.id``) in an error text with the element's index."""
    at = F.concat(F.lit("\\$.$1["), index.cast("string"), F.lit("]."))
    names = "|".join(re.escape(a) for a in arrays)
    indexed = F.regexp_replace(error, rf"\$\.({names})\.", at)
    return F.when(error.isNotNull() & index.isNotNull(), indexed).otherwise(error)


def all_nullable(t: DataType) -> DataType:
    """``t`` with every field, element and value nullable (what decoded columns may hold)."""
    if isinstance(t, StructType):
        return StructType([StructField(f.name, all_nullable(f.dataType), True) for f in t.fields])
    if isinstance(t, ArrayType):
        return ArrayType(all_nullable(t.elementType), True)
    if isinstance(t, MapType):
        return MapType(t.keyType, all_nullable(t.valueType), True)
    return t
