"""Spark decode throughput from files: ``decode_changes`` against honest baselines (issue 29).

For each text format (debezium-json with embedded schemas, canal-json, arcion-s3-json,
maxwell-json, ogg-json) the same
generated messages (benchmarks/datagen.py) are written once to a JSON-lines file, then, in one
run and after warm-up, every variant reads that file and decodes it into the same typed columns
(``op``, ``table``, ``key``, ``before``, ``after``, ``ts_ms``, ``source_ts_ms``, ``position``),
written to Spark's ``noop`` sink:

- ``decode_changes`` — the product (the canonical feed, with ``_error`` and all its checks);
- ``from_json`` — the bare hand-written ``from_json``: a minimal schema, Spark's lenient casts,
  validates nothing (``"1e3"`` is 1000, ``"yes"`` true, ``"1.234"`` 1.23);
- ``strict`` — the strict hand-written ceiling (benchmarks/strict_ceiling.py): the same grammar
  and checks as ``decode_changes`` written directly against Spark's functions. A damaged sample
  (benchmarks/damage.py) proves it flags exactly the rows ``decode_changes`` flags; the run
  stops if it does not;
- ``udf`` and ``arrow_udf`` — a Python decoder (``json.loads``) as a plain pickled UDF and as
  an Arrow UDF;
- Debezium only: a narrow projection (``op`` and 3 ``after`` columns of a 6-column table with a
  15-field ``source``), ``decode_changes(...).select(...)`` against a ``from_json`` of just
  those fields;
- where PyFlink is installed (``pip install -e '.[bench]'``, or ``--flink-python`` naming a
  Python that has it): Apache Flink's own ``debezium-json``, ``canal-json``, ``maxwell-json`` and
  ``ogg-json`` formats over the
  same files (benchmarks/flink_decode.py, in its own process).

Before timing, the rows of every variant on the first 3,000 messages are compared with
``decode_changes``'s; the run stops if any differs. Throughput is the best of ``--repeat``
passes (variants taking turns) after ``--warmup`` passes; JVM CPU µs/msg is the driver JVM's
process CPU time (``OperatingSystemMXBean.getProcessCpuTime`` over py4j) for that pass, divided
by the messages (less sensitive to other load than wall-clock time). The session caps fused
methods at HotSpot's JIT limit (``spark.sql.codegen.hugeMethodLimit=8000``, docs/spark.md).
Each format's ratios are printed beside the issue's targets. Run::

    .venv/bin/python -m benchmarks.spark_decode                 # 200,000 messages per format
    .venv/bin/python -m benchmarks.spark_decode --messages 1000000 --formats canal-json
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import decimal
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import orjson
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from benchmarks import datagen
from benchmarks.damage import damaged_sample
from benchmarks.jvm_clock import process_cpu_clock
from benchmarks.strict_ceiling import (
    MAXWELL_POSITION,
    MYSQL_POSITION,
    arcion_schema,
    debezium_payload,
    maxwell_schema,
    ogg_schema,
    strict,
)
from contracts.contract import Contract
from contracts.formats import get_format
from contracts.formats.base import InferOptions, Message
from contracts.formats.maxwell_json import MAXWELL_TYPES
from contracts.formats.ogg_json import OP_TYPES as OGG_TYPES
from contracts.logical import DECIMAL_NAME, decimal_scale, lookup
from spark_bindings import decode, decode_changes, spark_schema
from spark_bindings.feed import CANONICAL, ERROR_COL
from spark_bindings.session import HUGE_METHOD_CONF

Variant = Callable[[DataFrame, Contract], DataFrame]


# --- the bare hand-written from_json (lenient, validates nothing) ------------------------------


def _native_leaf(col: Column, schema: Any, target: T.DataType) -> Column:
    """What a careful engineer writes by hand for one Connect column (no error reporting)."""
    logical = lookup(schema)
    name = logical.name if logical else None
    if name == DECIMAL_NAME:
        hexed = F.hex(F.unbase64(col))
        pad = F.when(F.substring(hexed, 1, 1) >= F.lit("8"), F.lit("F")).otherwise(F.lit("0"))
        signed = F.conv(F.concat(F.repeat(pad, F.lit(16) - F.length(hexed)), hexed), 16, -10)
        return F.concat(signed, F.lit(f"E-{decimal_scale(schema)}")).try_cast(target)
    if name and "MicroTimestamp" in name:
        return F.timestamp_micros(col)
    if name and name.endswith(".Timestamp"):
        return F.timestamp_millis(col)
    if name and name.endswith("Date"):
        return F.date_from_unix_date(col)
    if name and "ZonedTimestamp" in name:
        return col.try_cast("timestamp")
    return col.try_cast(target) if not isinstance(target, T.StringType) else col


def _text_leaf(col: Column, target: T.DataType) -> Column:
    return col if isinstance(target, T.StringType) else col.try_cast(target)


def _key_of(c: Contract, image: Column) -> Column:
    if not c.key:
        return F.lit(None).cast(T.StructType())
    return F.when(image.isNotNull(), F.struct(*[image[k].alias(k) for k in c.key]))


def _parsed(df: DataFrame, schema: T.StructType, inner: str | None = None) -> DataFrame:
    """``df`` as one column ``j``, the parsed message or its field ``inner`` (parsed once:
    read inside CASE WHEN branches, an inline ``from_json`` would be evaluated again)."""
    parsed = F.from_json(F.col("value").cast("string"), schema)
    return df.select((parsed[inner] if inner else parsed).alias("j"))


def handwritten(df: DataFrame, c: Contract) -> DataFrame:
    """from_json with the minimal schema of each format, then typed columns (lenient)."""
    row = spark_schema(c, "row", "decoded")
    if c.format == "debezium-json":
        return _debezium_handwritten(df, c, row)
    strings = T.StructType([T.StructField(n, T.StringType()) for n in row.fieldNames()])
    if c.format == "canal-json":
        return _canal_handwritten(df, c, row, strings)
    if c.format == "maxwell-json":
        return _maxwell_handwritten(df, c, row)
    if c.format == "ogg-json":
        return _ogg_handwritten(df, c, row)
    return _arcion_handwritten(df, c, row, strings)


def _debezium_handwritten(df: DataFrame, c: Contract, row: T.StructType) -> DataFrame:
    payload = debezium_payload(c)
    parsed = _parsed(df, T.StructType([T.StructField("payload", payload)]), "payload")
    j = F.col("j")

    def image(side: str) -> Column:
        leaves = [
            _native_leaf(j[side][f.field], f, row[f.field].dataType).alias(f.field)
            for f in c.row_schema.fields or ()
        ]
        return F.when(j[side].isNotNull(), F.struct(*leaves))

    s = j["source"]
    position = F.create_map(*[x for n in MYSQL_POSITION for x in (F.lit(n), s[n].cast("string"))])
    return parsed.select(
        j["op"].alias("op"),
        F.struct(
            s["db"].alias("database"),
            F.lit(None).cast("string").alias("schema"),
            s["table"].alias("name"),
        ).alias("table"),
        _key_of(c, F.coalesce(j["after"], j["before"])).alias("key"),
        image("before").alias("before"),
        image("after").alias("after"),
        j["ts_ms"].alias("ts_ms"),
        s["ts_ms"].alias("source_ts_ms"),
        F.map_filter(position, lambda _k, v: v.isNotNull()).alias("position"),
    )


def _canal_handwritten(
    df: DataFrame, c: Contract, row: T.StructType, strings: T.StructType
) -> DataFrame:
    """Canal: ``data`` exploded with its index, ``before`` from ``old`` over ``data``."""
    schema = T.StructType(
        [
            T.StructField("data", T.ArrayType(strings)),
            T.StructField("old", T.ArrayType(T.MapType(T.StringType(), T.StringType()))),
            *[T.StructField(n, T.StringType()) for n in ("database", "table", "type", "id")],
            T.StructField("es", T.LongType()),
            T.StructField("ts", T.LongType()),
        ]
    )
    j = F.col("j")
    exploded = _parsed(df, schema).select(
        F.posexplode(j["data"]).alias("i", "r"),
        *[j[n].alias(n) for n in ("old", "database", "table", "type", "id", "es", "ts")],
    )
    old = F.element_at(F.col("old"), F.col("i") + 1)
    r = F.col("r")
    op = (
        F.when(F.col("type") == "INSERT", "c")
        .when(F.col("type") == "UPDATE", "u")
        .when(F.col("type") == "DELETE", "d")
    )
    names = row.fieldNames()
    data_image = F.struct(*[_text_leaf(r[n], row[n].dataType).alias(n) for n in names])

    def old_leaf(n: str) -> Column:
        value = F.when(F.map_contains_key(old, n), old[n]).otherwise(r[n])
        return _text_leaf(value, row[n].dataType).alias(n)

    decoded = exploded.select(
        op.alias("op"),
        "*",
        F.when(op.isin("c", "u"), data_image).alias("after"),
        F.when(op == "d", data_image)
        .when(old.isNotNull(), F.struct(*[old_leaf(n) for n in names]))
        .alias("before"),
    )
    return decoded.select(
        "op",
        F.struct(
            F.col("database").alias("database"),
            F.lit(None).cast("string").alias("schema"),
            F.col("table").alias("name"),
        ).alias("table"),
        _key_of(c, F.coalesce("after", "before")).alias("key"),
        "before",
        "after",
        F.col("ts").alias("ts_ms"),
        F.col("es").alias("source_ts_ms"),
        F.create_map(F.lit("id"), F.col("id"), F.lit("row"), F.col("i").cast("string")).alias(
            "position"
        ),
    )


def _arcion_handwritten(
    df: DataFrame, c: Contract, row: T.StructType, strings: T.StructType
) -> DataFrame:
    """Arcion S3 JSON: the literal ``"null"`` as SQL NULL, the cursor as the position."""
    schema = arcion_schema(row.fieldNames(), with_exists=False)
    parsed = _parsed(df, schema).select(
        "j", F.from_json("j.cursor", T.MapType(T.StringType(), T.StringType())).alias("cursor")
    )
    j, cursor = F.col("j"), F.col("cursor")
    op = F.when(j["opType"] == "I", "c").when(j["opType"] == "U", "u").when(j["opType"] == "D", "d")

    def image(side: str) -> Column:
        leaves = [
            _text_leaf(F.nullif(j[side][n], F.lit("null")), row[n].dataType).alias(n)
            for n in row.fieldNames()
        ]
        return F.struct(*leaves)

    decoded = parsed.select(
        op.alias("op"),
        j["tableName"].alias("t"),
        F.when(op != "c", image("before")).alias("before"),
        F.when(op != "d", image("after")).alias("after"),
        cursor.alias("position"),
    )
    return decoded.select(
        "op",
        F.struct(
            F.col("t.namespace.catalog").alias("database"),
            F.col("t.namespace.schema").alias("schema"),
            F.col("t.name").alias("name"),
        ).alias("table"),
        _key_of(c, F.coalesce("after", "before")).alias("key"),
        "before",
        "after",
        F.col("position")["extractionTimestamp"].cast("long").alias("ts_ms"),
        F.col("position")["timestamp"].cast("long").alias("source_ts_ms"),
        "position",
    )


def _maxwell_handwritten(df: DataFrame, c: Contract, row: T.StructType) -> DataFrame:
    """Maxwell: ``data`` in the JSON types (text for times), ``old`` as a map of texts laid
    over it for an update's before image."""
    parsed = _parsed(df, maxwell_schema(row, data_as_text=False))
    j = F.col("j")
    old = j["old"]
    op = F.lit(None).cast("string")
    for code, canonical in MAXWELL_TYPES.items():
        op = F.when(j["type"] == code, F.lit(canonical)).otherwise(op)
    names = row.fieldNames()
    data = F.struct(*[_text_leaf(j["data"][n], row[n].dataType).alias(n) for n in names])

    def old_leaf(n: str) -> Column:
        value = F.when(F.map_contains_key(old, n), old[n].try_cast(row[n].dataType))
        return value.otherwise(_text_leaf(j["data"][n], row[n].dataType)).alias(n)

    decoded = parsed.select(
        op.alias("op"),
        "j",
        F.when(op != "d", data).alias("after"),
        F.when(op == "d", data)
        .when((op == "u") & old.isNotNull(), F.struct(*[old_leaf(n) for n in names]))
        .alias("before"),
    )
    position = F.create_map(*[x for n in MAXWELL_POSITION for x in (F.lit(n), j[n].cast("string"))])
    return decoded.select(
        "op",
        F.struct(
            j["database"].alias("database"),
            F.lit(None).cast("string").alias("schema"),
            j["table"].alias("name"),
        ).alias("table"),
        _key_of(c, F.coalesce("after", "before")).alias("key"),
        "before",
        "after",
        F.lit(None).cast("long").alias("ts_ms"),
        (j["ts"] * 1000).alias("source_ts_ms"),
        F.map_filter(position, lambda _k, v: v.isNotNull()).alias("position"),
    )


def _ogg_handwritten(df: DataFrame, c: Contract, row: T.StructType) -> DataFrame:
    """GoldenGate: images in the JSON types (text for times), ``SCHEMA.TABLE`` split."""
    parsed = _parsed(df, ogg_schema(row, images_as_text=False))
    j = F.col("j")
    op = F.lit(None).cast("string")
    for code, canonical in OGG_TYPES.items():
        op = F.when(j["op_type"] == code, F.lit(canonical)).otherwise(op)
    names = row.fieldNames()

    def image(side: str) -> Column:
        return F.struct(*[_text_leaf(j[side][n], row[n].dataType).alias(n) for n in names])

    def millis(text: Column) -> Column:
        return F.unix_millis(text.try_cast("timestamp"))

    qualified = j["table"]
    decoded = parsed.select(
        op.alias("op"),
        F.struct(
            F.lit(None).cast("string").alias("database"),
            F.when(F.contains(qualified, F.lit(".")), F.substring_index(qualified, ".", 1)).alias(
                "schema"
            ),
            F.substring_index(qualified, ".", -1).alias("name"),
        ).alias("table"),
        F.when(op.isin("u", "d"), image("before")).alias("before"),
        F.when(op.isin("c", "u"), image("after")).alias("after"),
        millis(j["current_ts"]).alias("ts_ms"),
        millis(j["op_ts"]).alias("source_ts_ms"),
        F.create_map(F.lit("pos"), j["pos"]).alias("position"),
    )
    return decoded.select(
        "op",
        "table",
        _key_of(c, F.coalesce("after", "before")).alias("key"),
        "before",
        "after",
        "ts_ms",
        "source_ts_ms",
        "position",
    )


# --- the Python UDF teams write ---------------------------------------------------------------


def _python_leaf(schema: Any) -> Callable[[Any], Any]:
    logical = lookup(schema)
    name = logical.name if logical else None
    if name == DECIMAL_NAME:
        scale = decimal_scale(schema)
        return lambda v: (
            None
            if v is None
            else decimal.Decimal(int.from_bytes(base64.b64decode(v), "big", signed=True)).scaleb(
                -scale
            )
        )
    if name and "MicroTimestamp" in name:
        return lambda v: (
            None if v is None else dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=v)
        )
    if name and name.endswith("Date"):
        return lambda v: None if v is None else dt.date(1970, 1, 1) + dt.timedelta(days=v)
    if name and "ZonedTimestamp" in name:
        return lambda v: None if v is None else dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    return lambda v: v


def _python_text(target: T.DataType) -> Callable[[Any], Any]:
    if isinstance(target, T.DecimalType):
        return lambda v: None if v in (None, "null") else decimal.Decimal(v)
    if isinstance(target, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        return lambda v: None if v in (None, "null") else int(v)
    if isinstance(target, T.BooleanType):
        return lambda v: None if v in (None, "null") else v in ("1", "true")
    if isinstance(target, T.DoubleType | T.FloatType):
        return lambda v: None if v in (None, "null") else float(v)
    if isinstance(target, T.TimestampType):
        return lambda v: None if v in (None, "null") else dt.datetime.fromisoformat(v)
    if isinstance(target, T.DateType):
        return lambda v: None if v in (None, "null") else dt.date.fromisoformat(v)
    return lambda v: None if v == "null" else v


def udf_output_type(row: T.StructType, c: Contract) -> T.StructType:
    """The canonical columns a hand-written UDF returns (one struct per message)."""
    return T.StructType(
        [
            T.StructField("op", T.StringType()),
            T.StructField(
                "table",
                T.StructType(
                    [T.StructField(n, T.StringType()) for n in ("database", "schema", "name")]
                ),
            ),
            T.StructField("key", T.StructType([row[k] for k in c.key])),
            T.StructField("before", row),
            T.StructField("after", row),
            T.StructField("ts_ms", T.LongType()),
            T.StructField("source_ts_ms", T.LongType()),
            T.StructField("position", T.MapType(T.StringType(), T.StringType())),
        ]
    )


def _python_json(target: T.DataType) -> Callable[[Any], Any]:
    """One plain JSON value (Maxwell): numbers as they are, times from their text."""
    if isinstance(target, T.TimestampType):
        return lambda v: None if v is None else dt.datetime.fromisoformat(v)
    if isinstance(target, T.DateType):
        return lambda v: None if v is None else dt.date.fromisoformat(v)
    if isinstance(target, T.DoubleType | T.FloatType):
        return lambda v: None if v is None else float(v)
    return lambda v: v


def _maxwell_udf(
    row: T.StructType,
    key_of: Callable[[Any], Any],
    row_of: Callable[[dict[str, Any], list[Callable[[Any], Any]]], tuple[Any, ...]],
) -> Callable[[Any], Any]:
    leaves = [_python_json(f.dataType) for f in row.fields]

    def decode_maxwell(value: bytes) -> Any:
        m = json.loads(value)
        op = MAXWELL_TYPES.get(m.get("type"))
        data = m.get("data") or {}
        image = row_of(data, leaves)
        before = after = None
        if op == "d":
            before = image
        else:
            after = image
            if op == "u" and m.get("old") is not None:
                before = row_of({**data, **m["old"]}, leaves)
        position = {k: _text_of(m[k]) for k in MAXWELL_POSITION if m.get(k) is not None}
        table = (m.get("database") or None, None, m.get("table") or None)
        ts = m.get("ts")
        return (
            op,
            table,
            key_of(after or before),
            before,
            after,
            None,
            None if ts is None else ts * 1000,
            position,
        )

    return decode_maxwell


def _ogg_udf(
    row: T.StructType,
    key_of: Callable[[Any], Any],
    row_of: Callable[[dict[str, Any], list[Callable[[Any], Any]]], tuple[Any, ...]],
) -> Callable[[Any], Any]:
    leaves = [_python_json(f.dataType) for f in row.fields]

    def millis(text: str | None) -> int | None:
        if text is None:
            return None
        at = dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        return (at - EPOCH) // dt.timedelta(milliseconds=1)

    def decode_ogg(value: bytes) -> Any:
        m = json.loads(value)
        op = OGG_TYPES.get(m.get("op_type"))
        before = row_of(m["before"], leaves) if op in ("u", "d") else None
        after = row_of(m["after"], leaves) if op in ("c", "u") else None
        schema, _, name = (m.get("table") or "").rpartition(".")
        position = {"pos": m["pos"]} if m.get("pos") is not None else {}
        return (
            op,
            (None, schema or None, name or None),
            key_of(after or before),
            before,
            after,
            millis(m.get("current_ts")),
            millis(m.get("op_ts")),
            position,
        )

    return decode_ogg


EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: The UDF decoders of the plain JSON formats, by format.
JSON_UDFS: Final = {"maxwell-json": _maxwell_udf, "ogg-json": _ogg_udf}


def _text_of(value: Any) -> str:
    """A JSON scalar as Spark casts it to a string (``true``, not ``True``)."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def python_udf(df: DataFrame, c: Contract, arrow: bool) -> DataFrame:
    """A UDF doing json.loads and decoding each column in Python, producing the columns the
    from_json baselines and ``decode_changes`` produce (op, table, key, before, after, times,
    position); ``arrow``: batches through Arrow, else each row pickled."""
    row = spark_schema(c, "row", "decoded")
    names = row.fieldNames()
    key_at = [names.index(k) for k in c.key]
    out = udf_output_type(row, c)

    def key_of(image: Any) -> Any:
        return tuple(image[i] for i in key_at) if image and key_at else None

    def row_of(values: dict[str, Any], leaves: list[Callable[[Any], Any]]) -> tuple[Any, ...]:
        return tuple(fn(values.get(n)) for n, fn in zip(names, leaves, strict=True))

    fmt = c.format
    if fmt == "debezium-json":
        leaves = [_python_leaf(f) for f in c.row_schema.fields or ()]

        def decode(value: bytes) -> Any:
            p = json.loads(value)["payload"]
            after, before = _img(p, "after"), _img(p, "before")
            source = p.get("source") or {}
            table = (source.get("db"), None, source.get("table"))
            position = {k: str(source[k]) for k in MYSQL_POSITION if source.get(k) is not None}
            return (
                p["op"],
                table,
                key_of(after or before),
                before,
                after,
                p.get("ts_ms"),
                source.get("ts_ms"),
                position,
            )

        def _img(p: dict[str, Any], side: str) -> Any:
            if p.get(side) is None:
                return None
            return row_of(p[side], leaves)

        return df.select(F.udf(decode, out, useArrow=arrow)("value").alias("r")).select("r.*")
    if fmt in JSON_UDFS:
        decoder = JSON_UDFS[fmt](row, key_of, row_of)
        return df.select(F.udf(decoder, out, useArrow=arrow)("value").alias("r")).select("r.*")
    leaves = [_python_text(row[n].dataType) for n in names]
    if fmt == "canal-json":
        ops = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}

        def decode_canal(value: bytes) -> Any:
            m = json.loads(value)
            op = ops.get(m.get("type"))
            table = (m.get("database"), None, m.get("table"))
            olds = m.get("old") or []
            out_rows = []
            for i, d in enumerate(m.get("data") or []):
                image = row_of(d, leaves)
                old = olds[i] if i < len(olds) else None
                before = after = None
                if op == "d":
                    before = image
                else:
                    after = image
                    if old is not None:
                        before = row_of({**d, **old}, leaves)
                position = {"id": str(m.get("id")), "row": str(i)}
                out_rows.append(
                    (op, table, key_of(image), before, after, m.get("ts"), m.get("es"), position)
                )
            return out_rows

        return df.select(
            F.explode(F.udf(decode_canal, T.ArrayType(out), useArrow=arrow)("value")).alias("r")
        ).select("r.*")
    arcion_ops = {"I": "c", "U": "u", "D": "d"}

    def decode_arcion(value: bytes) -> Any:
        m = json.loads(value)
        op = arcion_ops.get(m.get("opType"))
        name = m.get("tableName") or {}
        namespace = name.get("namespace") or {}
        table = (namespace.get("catalog"), namespace.get("schema"), name.get("name"))
        before = row_of(m["before"], leaves) if op != "c" else None
        after = row_of(m["after"], leaves) if op != "d" else None
        cursor = json.loads(m["cursor"])
        position = {k: None if v is None else str(v) for k, v in cursor.items()}
        return (
            op,
            table,
            key_of(after or before),
            before,
            after,
            cursor.get("extractionTimestamp"),
            cursor.get("timestamp"),
            position,
        )

    return df.select(F.udf(decode_arcion, out, useArrow=arrow)("value").alias("r")).select("r.*")


def bindings(df: DataFrame, c: Contract) -> DataFrame:
    return decode_changes(df, c)


VARIANTS: Final[dict[str, Variant]] = {
    "decode_changes": bindings,
    "from_json": handwritten,
    "strict": strict,
    "udf": lambda df, c: python_udf(df, c, arrow=False),
    "arrow_udf": lambda df, c: python_udf(df, c, arrow=True),
}
#: The variants that run Python workers (fewer passes: each is 10-30x slower).
PYTHON_VARIANTS: Final = ("udf", "arrow_udf")

GENERATORS: Final[dict[str, Callable[[int], Iterator[bytes]]]] = {
    "debezium-json": lambda n: datagen.debezium_messages(n),
    "canal-json": lambda n: datagen.canal_messages(n),
    "arcion-s3-json": lambda n: datagen.arcion_s3_json_messages(n),
    "maxwell-json": lambda n: datagen.maxwell_messages(n),
    "ogg-json": lambda n: datagen.ogg_messages(n),
}


# --- the narrow projection (Debezium: op + 3 after columns of a 6-column table) -----------------

#: The 6 columns of the narrow table, and the 3 the query reads.
NARROW_TABLE: Final = ("id", "customer_id", "status", "amount", "quantity", "created_at")
NARROW_READ: Final = ("id", "status", "amount")


def narrow_messages(n: int) -> Iterator[bytes]:
    """Debezium events of a 6-column table (the 15-field MySQL ``source`` kept)."""
    for message in datagen.debezium_messages(n):
        doc = orjson.loads(message)
        for side in doc["schema"]["fields"][:2]:
            side["fields"] = [f for f in side["fields"] if f["field"] in NARROW_TABLE]
        for side in ("before", "after"):
            image = doc["payload"][side]
            if image is not None:
                doc["payload"][side] = {k: image[k] for k in NARROW_TABLE}
        yield orjson.dumps(doc)


def narrow_bindings(df: DataFrame, c: Contract) -> DataFrame:
    return decode_changes(df, c).select("op", *[F.col("after")[n].alias(n) for n in NARROW_READ])


def narrow_handwritten(df: DataFrame, c: Contract) -> DataFrame:
    """A from_json of just the fields the query reads."""
    fields = {f.field: f for f in c.row_schema.fields or ()}
    row = spark_schema(c, "row", "decoded")
    wire = {f.name: f.dataType for f in spark_schema(c, "row", "wire").fields}
    after = T.StructType(
        [
            T.StructField(n, T.StringType() if isinstance(wire[n], T.VariantType) else wire[n])
            for n in NARROW_READ
        ]
    )
    payload = T.StructType([T.StructField("op", T.StringType()), T.StructField("after", after)])
    j = F.col("j")
    return _parsed(df, T.StructType([T.StructField("payload", payload)]), "payload").select(
        j["op"].alias("op"),
        *[_native_leaf(j["after"][n], fields[n], row[n].dataType).alias(n) for n in NARROW_READ],
    )


# --- measuring ----------------------------------------------------------------------------------


def infer_contract(fmt: str, sample: list[bytes]) -> Contract:
    f = get_format(fmt)
    msgs = [Message(value=json.loads(m), where=f"message {i}") for i, m in enumerate(sample)]
    return f.infer(msgs, InferOptions(infer_types=True)).contract


def _canonical(value: Any) -> Any:
    """``value`` with every dict (a struct or a map) as its sorted items: a map's order is not
    part of its value."""
    if isinstance(value, dict):
        return sorted((k, _canonical(v)) for k, v in value.items())
    return value


def rows_of(df: DataFrame) -> list[str]:
    return sorted(repr(_canonical(r.asDict(True))) for r in df.select(*CANONICAL).collect())


def check_agreement(sample: DataFrame, c: Contract, variants: dict[str, Variant]) -> None:
    """Stop unless every variant yields the same rows as the first (values, not nullability;
    a map's order aside) on ``sample``."""
    rows = {name: rows_of(variant(sample, c)) for name, variant in variants.items()}
    first, *others = rows
    for name in others:
        got, expected = rows[name], rows[first]
        if got != expected:
            differ = sum(a != b for a, b in zip(got, expected, strict=False))
            sys.exit(f"{c.format}: {name} disagrees with {first} on {differ} rows")


def jvm_cpu_seconds(spark: SparkSession) -> Callable[[], float]:
    """A clock of the driver JVM's process CPU seconds."""
    return process_cpu_clock(spark.sparkContext._jvm)


def check_damaged(spark: SparkSession, fmt: str, c: Contract) -> str:
    """Stop unless the strict ceiling flags exactly the rows ``decode_changes`` flags on a
    damaged sample; the counts, as one line."""
    messages, damages = damaged_sample(fmt)
    df = spark.createDataFrame(
        [(m.decode("utf-8", "replace"),) for m in messages], "value string"
    ).coalesce(1)

    def flagged(out: DataFrame) -> set[int]:
        # one partition, one row per message (one row of data per Canal message): row order
        errors = [r[0] for r in out.select(ERROR_COL).collect()]
        if len(errors) != len(messages):
            sys.exit(f"{fmt}: {len(errors)} rows out of {len(messages)} damaged messages")
        return {i for i, e in enumerate(errors) if e is not None}

    ours, theirs = flagged(decode_changes(df, c)), flagged(strict(df, c))
    line = (
        f"{fmt}: damaged sample of {len(messages)} messages, {len(damages)} damaged; "
        f"_error set by decode_changes on {len(ours)}, by the strict ceiling on {len(theirs)}, "
        f"same rows: {'yes' if ours == theirs else 'NO'} (the bare from_json flags none)"
    )
    if ours != theirs:
        sys.exit(
            f"{fmt}: the strict ceiling is not the same check: only decode_changes flags "
            f"{sorted(ours - theirs)[:10]}, only the ceiling {sorted(theirs - ours)[:10]}"
        )
    return line


def best_passes(
    built: dict[str, DataFrame],
    warmup: int,
    repeat: int,
    cpu: Callable[[], float] = lambda: 0.0,
) -> tuple[dict[str, float], dict[str, float]]:
    """Each DataFrame written to the ``noop`` sink ``warmup`` times, then ``repeat`` times with
    the variants taking turns (a change in the machine's load hits every variant alike); the
    Python UDFs get one warm-up and at most two passes. The best wall-clock and CPU seconds."""
    for name, out in built.items():
        for _ in range(1 if name in PYTHON_VARIANTS else warmup):
            out.write.format("noop").mode("overwrite").save()
    best = dict.fromkeys(built, float("inf"))
    best_cpu = dict.fromkeys(built, float("inf"))
    for turn in range(repeat):
        for name, out in built.items():
            if name in PYTHON_VARIANTS and turn >= 2:
                continue
            start, start_cpu = time.perf_counter(), cpu()
            out.write.format("noop").mode("overwrite").save()
            best[name] = min(best[name], time.perf_counter() - start)
            best_cpu[name] = min(best_cpu[name], cpu() - start_cpu)
    return best, best_cpu


def data_file(
    data_dir: Path, name: str, n: int, messages: Callable[[int], Iterator[bytes]]
) -> Path:
    """The JSON-lines file of ``n`` messages (written once, reused by later runs)."""
    path = data_dir / f"{name}-{n}.jsonl"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        datagen.write_jsonl(tmp, messages(n))
        tmp.rename(path)
    return path


def measure(spark: SparkSession, fmt: str, args: argparse.Namespace) -> dict[str, Any]:
    n = args.messages
    path = data_file(args.data_dir, fmt, n, GENERATORS[fmt])
    with path.open("rb") as f:
        sample = list(itertools.islice(f, 3000))
    c = infer_contract(fmt, sample[:2000])
    small = spark.createDataFrame([(v.decode(),) for v in sample], "value string")
    check_agreement(small, c, VARIANTS)
    result: dict[str, Any] = {
        "format": fmt,
        "messages": n,
        "mb": path.stat().st_size / 1e6,
        "damaged": check_damaged(spark, fmt, c),
    }
    df = spark.read.text(str(path))
    decode._STEPS.clear()
    built = {name: variant(df, c) for name, variant in VARIANTS.items()}
    if fmt == "debezium-json":
        narrow = data_file(args.data_dir, "debezium-narrow", n, narrow_messages)
        with narrow.open("rb") as f:
            nc = infer_contract(fmt, list(itertools.islice(f, 2000)))
        narrow_df = spark.read.text(str(narrow))
        built["narrow_decode_changes"] = narrow_bindings(narrow_df, nc)
        built["narrow_from_json"] = narrow_handwritten(narrow_df, nc)
    best, best_cpu = best_passes(built, args.warmup, args.repeat, jvm_cpu_seconds(spark))
    for name in built:
        result[name] = n / best[name]
        result[f"{name}_cpu_us"] = best_cpu[name] * 1e6 / n
    return result


def benchmark_session(conf: dict[str, str] | None = None) -> SparkSession:
    """The benchmarks' session: local[2], UTC, no UI, a 6 GB driver, ``conf`` on top; Python
    workers run this interpreter (the UDF variants need this venv)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "6g")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# --- Apache Flink's own formats (benchmarks/flink_decode.py, in its own process) ----------------

#: The benchmark table as Flink SQL columns, per Flink format. Debezium: Flink maps no Connect
#: logical type, so the Decimal is BYTES (its DECIMAL fails the job on base64), the
#: MicroTimestamp a BIGINT and the Date an INT: Flink decodes less than we do there.
FLINK_COLUMNS: Final = {
    "canal-json": "id BIGINT, customer_id INT, status STRING, amount DECIMAL(12,2), "
    "quantity SMALLINT, unit_price DOUBLE, weight_kg FLOAT, sku STRING, note STRING, "
    "is_gift BOOLEAN, created_at TIMESTAMP(6), ship_date DATE",
    "debezium-json": "id BIGINT, customer_id INT, status STRING, amount BYTES, "
    "quantity SMALLINT, unit_price DOUBLE, weight_kg FLOAT, sku STRING, note STRING, "
    "is_gift BOOLEAN, created_at BIGINT, ship_date INT",
    "maxwell-json": "id BIGINT, customer_id BIGINT, status STRING, amount DOUBLE, "
    "quantity BIGINT, unit_price DOUBLE, weight_kg DOUBLE, sku STRING, note STRING, "
    "is_gift BIGINT, created_at TIMESTAMP(6), ship_date DATE",
    "ogg-json": "id BIGINT, customer_id BIGINT, status STRING, amount DOUBLE, "
    "quantity BIGINT, unit_price DOUBLE, weight_kg DOUBLE, sku STRING, note STRING, "
    "is_gift BIGINT, created_at TIMESTAMP(6), ship_date DATE",
}
FLINK_NOTE: Final = {
    "ogg-json": "Flink reads JSON values leniently and has no error column",
    "maxwell-json": "Flink reads JSON values leniently and has no error column; it fails the "
    "job on a `bootstrap-insert` (snapshot) row, so the generated file holds none",
    "canal-json": "Flink reads text values leniently and has no error column",
    "debezium-json": "Flink's table: amount BYTES (its DECIMAL fails the job on Connect's "
    "base64 Decimal), created_at BIGINT, ship_date INT (no Connect logical types decoded)",
}


def flink_python(args: argparse.Namespace) -> str | None:
    """A Python that can import PyFlink (``--flink-python``, else this one), or None."""
    candidate = args.flink_python or sys.executable
    done = subprocess.run(
        [candidate, "-c", "import pyflink.table"], capture_output=True, check=False
    )
    return candidate if done.returncode == 0 else None


def _flink(
    python: str, fmt: str, path: Path, n: int, extra: list[str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            python, "-m", "benchmarks.flink_decode", "--format", fmt, "--file", str(path),
            "--columns", FLINK_COLUMNS[fmt], "--messages", str(n), *extra,
        ],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip


def flink_measure(python: str, fmt: str, args: argparse.Namespace) -> dict[str, float]:
    path = data_file(args.data_dir, fmt, args.messages, GENERATORS[fmt])
    extra = ["--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    done = _flink(python, fmt, path, args.messages, extra)
    if done.returncode != 0:
        sys.exit(f"Flink {fmt} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def flink_conversions(python: str, fmt: str, args: argparse.Namespace) -> list[str]:
    """What Flink made of the damaged sample's values: one line per damaged value it kept."""
    messages, damages = damaged_sample(fmt)
    path = args.data_dir / f"{fmt}-damaged.jsonl"
    datagen.write_jsonl(path, messages)
    done = _flink(python, fmt, path, len(messages), ["--show"])
    if done.returncode != 0:
        return [f"Flink {fmt} failed on the damaged sample: {done.stderr.strip().splitlines()[-1]}"]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    by_id = {r["id"]: r for r in rows if r.get("id") is not None}
    lines, silent = [], 0
    for d in damages:
        row = by_id.get(str(d.row_id))
        if row is None or d.column not in row:
            continue
        silent += 1
        if len(lines) < 12:
            lines.append(f"  {d.column} {json.dumps(d.bad)} -> {row[d.column]}")
    head = f"Flink {fmt} on the damaged sample: {len(rows)} rows, {silent} of {len(damages)} "
    head += "damaged values decoded in silence (no error column)"
    if fmt == "canal-json":
        ones = sum(b'"is_gift":"1"' in m for m in messages)
        trues = sum(str(r.get("is_gift")).upper() == "TRUE" for r in rows)
        head += f'; tinyint(1) is_gift: {ones} messages hold "1", Flink read true on {trues} rows'
    return [head + ":", *lines]


# --- the report ---------------------------------------------------------------------------------

ROOT: Final = Path(__file__).resolve().parent.parent
#: The issue's targets: (what, ratio name, at least).
TARGETS: Final[dict[str, list[tuple[str, str, float]]]] = {
    "debezium-json": [
        ("vs bare from_json", "vs_from_json", 0.9),
        ("narrow vs narrow from_json", "narrow", 0.9),
        ("vs Flink debezium-json", "vs_flink", 1.0),
    ],
    "canal-json": [
        ("vs strict ceiling", "vs_strict", 0.95),
        ("vs bare from_json", "vs_from_json", 0.65),
        ("vs Flink canal-json", "vs_flink", 0.6),
    ],
    "arcion-s3-json": [
        ("vs strict ceiling", "vs_strict", 0.95),
        ("vs bare from_json", "vs_from_json", 0.6),
    ],
    "maxwell-json": [("vs strict ceiling", "vs_strict", 0.95)],
    "ogg-json": [("vs strict ceiling", "vs_strict", 0.95)],
}


def ratios(r: dict[str, Any]) -> dict[str, float]:
    udf = max(r["udf"], r["arrow_udf"])
    out = {
        "vs_from_json": r["decode_changes"] / r["from_json"],
        "vs_strict": r["decode_changes"] / r["strict"],
        "strict_vs_from_json": r["strict"] / r["from_json"],
        "vs_udf": r["decode_changes"] / udf,
        "from_json_vs_udf": r["from_json"] / udf,
    }
    # the UDF target: decode_changes' ratio to the faster UDF >= 0.8 x from_json's own ratio
    out["udf_target"] = out["vs_udf"] / out["from_json_vs_udf"]
    if "narrow_decode_changes" in r:
        out["narrow"] = r["narrow_decode_changes"] / r["narrow_from_json"]
    if "flink" in r:
        out["vs_flink"] = r["decode_changes"] / r["flink"]
    return out


def report(r: dict[str, Any]) -> None:
    q = ratios(r)
    print(f"\n### {r['format']}: {r['messages']:,} messages, {r['mb']:.0f} MB from a file")
    print("\n| variant | msg/s | JVM CPU µs/msg | decode_changes is |")
    print("|---|---:|---:|---:|")
    rows = [
        ("decode_changes", "decode_changes"),
        ("bare from_json (lenient)", "from_json"),
        ("strict hand-written ceiling", "strict"),
        ("Python UDF, pickled", "udf"),
        ("Python UDF, Arrow", "arrow_udf"),
        ("narrow: decode_changes + select", "narrow_decode_changes"),
        ("narrow: from_json of those fields", "narrow_from_json"),
        (f"Flink {r['format']} (streaming, parallelism 2)", "flink"),
    ]
    for label, key in rows:
        if key not in r:
            continue
        base = "narrow_decode_changes" if key.startswith("narrow") else "decode_changes"
        times = r[base] / r[key]
        print(f"| {label} | {r[key]:,.0f} | {r[f'{key}_cpu_us']:.1f} | {times:.2f}x |")
    print(
        f"\nstrict vs bare from_json {q['strict_vs_from_json']:.2f}x; vs the faster UDF: "
        f"decode_changes {q['vs_udf']:.2f}x, from_json {q['from_json_vs_udf']:.2f}x"
    )
    print("\n| target | measured | wanted | |")
    print("|---|---:|---:|---|")
    for what, key, wanted in TARGETS.get(r["format"], []):
        if key in q:
            met = "met" if q[key] >= wanted else "NOT met"
            print(f"| {what} | {q[key]:.2f}x | ≥ {wanted}x | {met} |")
        else:
            print(f"| {what} | - | ≥ {wanted}x | not measured |")
    met = "met" if q["udf_target"] >= 0.8 else "NOT met"
    print(f"| vs faster UDF / from_json's own ratio | {q['udf_target']:.2f} | ≥ 0.8 | {met} |")
    print(f"\n{r['damaged']}")
    for line in r.get("flink_notes", []):
        print(line)
    sys.stdout.flush()


def machine() -> str:
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return f"{os.cpu_count()} CPUs ({model}), load average {load}, {dt.date.today()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--messages", type=int, default=200_000, help="per format (default 200,000)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed passes (default 3)")
    parser.add_argument("--warmup", type=int, default=2, help="passes before timing (default 2)")
    parser.add_argument("--formats", default=",".join(GENERATORS), help="comma-separated")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("TMPDIR", "/tmp")) / "cdc-contracts-bench",
        help="where the generated files are written once and reused",
    )
    parser.add_argument(
        "--flink-python",
        default=os.environ.get("CDC_BENCH_FLINK_PYTHON"),
        help="a Python that has apache-flink (default: $CDC_BENCH_FLINK_PYTHON, else this one)",
    )
    parser.add_argument("--no-flink", action="store_true", help="skip Apache Flink")
    parser.add_argument(
        "--huge-method-limit",
        type=int,
        default=8000,
        help="spark.sql.codegen.hugeMethodLimit (default 8000, HotSpot's limit, as docs/spark.md "
        "recommends; 65535 is Spark's default)",
    )
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}", flush=True)
    flink = None if args.no_flink else flink_python(args)
    if flink is None and not args.no_flink:
        print(
            "Flink: skipped, apache-flink is not installed here "
            "(pip install -e '.[bench]' in a separate venv, then --flink-python THAT/bin/python)",
            flush=True,
        )
    spark = benchmark_session()
    spark.conf.set(HUGE_METHOD_CONF, str(args.huge_method_limit))
    results = []
    for fmt in args.formats.split(","):
        if fmt not in GENERATORS:
            sys.exit(f"unknown format {fmt!r} (known: {', '.join(GENERATORS)})")
        r = measure(spark, fmt, args)
        if flink is not None and fmt in FLINK_COLUMNS:
            r.update({f"flink{k[len('msg_s'):]}" if k == "msg_s" else f"flink_{k}": v
                      for k, v in flink_measure(flink, fmt, args).items()})  # fmt: skip
            r["flink_notes"] = [f"Flink: {FLINK_NOTE[fmt]}", *flink_conversions(flink, fmt, args)]
        report(r)
        results.append(r)
    spark.stop()
    print(f"\nmachine at the end: {machine()}")


if __name__ == "__main__":
    main()
