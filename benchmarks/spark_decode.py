"""Spark decode throughput: ``decode_changes`` vs a hand-written ``from_json`` vs a Python UDF.

For each format (Debezium with embedded schemas, Canal, Arcion S3 JSON) the same generated
messages (benchmarks/datagen.py) are cached in memory, then decoded four ways into the same
typed columns — ``op``, ``table``, ``key``, ``before``, ``after``, ``ts_ms``, ``source_ts_ms``,
``position`` (for Canal one row per element of ``data``, ``before`` rebuilt from ``old``) —
and written to Spark's ``noop`` sink:

- ``decode_changes`` — the bindings (the canonical feed, with ``_error`` and its checks);
- ``from_json`` — a hand-written ``from_json`` with a minimal payload-only schema and native
  expressions for the logical types, no error reporting (the Spark-native ceiling);
- ``floor`` — the hand-written ``from_json`` plus only what the issue requires of every
  decode (:class:`Required`: every message kept, ``_error`` for a message that does not parse,
  is not UTF-8 or has an unknown op, and for a value that does not decode), with Spark's own
  lenient casts and no JSON paths: how close to the ceiling any decode meeting the issue can
  come by this route (``floor vs from_json``);
- ``udf`` — a Python UDF with ``json.loads`` (what teams write by hand; PySpark's default,
  Arrow-optimized since 4.x). ``from_json vs UDF`` is the ceiling's own ratio: a decode at
  most as fast as the ceiling is at most that many times the UDF.

Before timing, the variants' rows are compared on the first 3,000 messages; the run
stops if any differs from ``decode_changes``.

Each variant's DataFrame is built once, as a job builds it, and executed ``--warmup`` times
over the whole data set (the JVM's JIT needs a few full passes: a first pass is 2-5x slower
than the fifth), then ``--repeat`` times, the variants taking turns; the best time counts.
Every execution is a new query: Spark analyzes, optimizes and generates code for it each time,
as for each micro-batch of a stream. Building the DataFrame is reported apart, in
milliseconds: ``decode_changes``'s first call for a contract (thousands of Py4J calls), a
later call with the same contract and input columns (which replays the recorded steps), and
the hand-written ``from_json``'s build. Besides wall-clock throughput, the JVM's CPU time per
message is reported for the three JVM-only variants (less sensitive to other load on the
machine). The session caps fused methods at HotSpot's JIT limit
(``spark.sql.codegen.hugeMethodLimit=8000``, as docs/spark.md recommends; ``--huge-method-limit
65535`` for Spark's default), for every variant alike. ``--extra-columns K`` widens the Canal
and Arcion S3 tables by K timestamp/decimal/date columns. Run::

    .venv/bin/python -m benchmarks.spark_decode --n 200000
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import decimal
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from benchmarks import datagen
from contracts.contract import Contract
from contracts.formats import get_format
from contracts.formats.base import InferOptions, Message
from contracts.logical import DECIMAL_NAME, decimal_scale, lookup
from spark_bindings import decode, decode_changes, spark_schema
from spark_bindings.feed import CANONICAL
from spark_bindings.session import HUGE_METHOD_CONF

Variant = Callable[[DataFrame, Contract], DataFrame]
#: The Debezium MySQL source fields that make the position.
MYSQL_POSITION = ("file", "pos", "row", "gtid")


# --- hand-written, Spark-native baselines -----------------------------------------------------


def _native_leaf(col: Column, schema: Any, target: T.DataType, safe: bool = False) -> Column:
    """What a careful engineer writes by hand for one Connect column (no error reporting;
    ``safe``: a value that does not decode is null, not a failed job)."""
    logical = lookup(schema)
    name = logical.name if logical else None
    if name == DECIMAL_NAME:
        raw = F.try_to_binary(col, F.lit("base64")) if safe else F.unbase64(col)
        hexed = F.hex(raw)
        pad = F.when(F.substring(hexed, 1, 1) >= F.lit("8"), F.lit("F")).otherwise(F.lit("0"))
        signed = F.conv(F.concat(F.repeat(pad, F.lit(16) - F.length(hexed)), hexed), 16, -10)
        number = F.concat(signed, F.lit(f"E-{decimal_scale(schema)}"))
        return number.try_cast(target) if safe else number.cast(target)
    if name and "MicroTimestamp" in name:
        return F.timestamp_micros(col)
    if name and name.endswith(".Timestamp"):
        return F.timestamp_millis(col)
    if name and name.endswith("Date"):
        return F.date_from_unix_date(col)
    cast = col.try_cast if safe else col.cast
    if name and "ZonedTimestamp" in name:
        return cast("timestamp")
    return cast(target) if not isinstance(target, T.StringType) else col


def _text_leaf(col: Column, target: T.DataType) -> Column:
    return col if isinstance(target, T.StringType) else col.try_cast(target)


# --- the floor: what every decode must do on top of the hand-written from_json ----------------

#: The parse options of the floor: a message that does not parse keeps its text here.
FLOOR_PARSE: Final = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt_record"}


@dataclass(frozen=True)
class Required:
    """What the issue requires of every decode beyond the hand-written ``from_json``: a
    message that does not parse, whose bytes are not UTF-8 or whose op is unknown, and a
    value that does not decode, each set ``_error`` (and null the row's images) instead of
    being dropped or changed. ``None`` everywhere: the plain hand-written baseline."""

    not_utf8: Column
    unparsed: Column
    values: list[tuple[Column, Column]] = field(default_factory=list)

    def value(self, wire: Column, decoded: Column) -> Column:
        """``decoded``, remembered as a check: a non-null ``wire`` that decoded to null."""
        self.values.append((wire, decoded))
        return decoded

    def error(self, op: Column, *more: tuple[Column, str]) -> Column:
        """The ``_error`` text: the first requirement that failed (no JSON paths); ``more``:
        a format's own (condition, text) pairs, tested before the values."""
        bad_value = F.lit(False)
        for wire, decoded in self.values:
            bad_value = bad_value | (wire.isNotNull() & decoded.isNull())
        out = (
            F.when(self.not_utf8, F.lit("$: is not UTF-8 text"))
            .when(self.unparsed, F.lit("$: is not valid JSON"))
            .when(op.isNull(), F.lit("$: unknown op"))
        )
        for condition, said in more:
            out = out.when(condition, F.lit(said))
        return out.when(bad_value, F.lit("a value does not decode"))


def _floor_outputs(decoded: DataFrame, c: Contract, required: Required | None) -> list[Column]:
    """The canonical columns over ``decoded`` (op, table parts, before, after, the times and
    the position as columns), nulled where the floor's ``_error`` is set."""
    ok = F.col("_error").isNull() if required is not None else F.lit(True)
    image = {side: F.when(ok, F.col(side)) for side in ("before", "after")}
    return [
        F.when(ok, F.col("op")).alias("op"),
        F.col("table"),
        F.when(ok, _key_of(c, F.coalesce(F.col("after"), F.col("before")))).alias("key"),
        image["before"].alias("before"),
        image["after"].alias("after"),
        "ts_ms",
        "source_ts_ms",
        "position",
        *([F.col("_error")] if required is not None else []),
    ]


def handwritten(df: DataFrame, c: Contract) -> DataFrame:
    """from_json with the minimal schema of each format, then typed columns."""
    return _handwritten(df, c, floor=False)


def required_floor(df: DataFrame, c: Contract) -> DataFrame:
    """The hand-written ``from_json`` plus only what the issue requires of every decode
    (:class:`Required`), with Spark's own lenient casts and no JSON paths in ``_error``."""
    return _handwritten(df, c, floor=True)


def _handwritten(df: DataFrame, c: Contract, floor: bool) -> DataFrame:
    row = spark_schema(c, "row", "decoded")
    text = F.col("value").cast("string")
    if c.format == "debezium-json":
        return _debezium_handwritten(df, c, row, text, floor)
    strings = T.StructType([T.StructField(n, T.StringType()) for n in row.fieldNames()])
    if c.format == "canal-json":
        return _canal_handwritten(df, c, row, strings, text, floor)
    return _arcion_handwritten(df, c, row, strings, text, floor)


def _parse(
    df: DataFrame, text: Column, schema: T.StructType, floor: bool, inner: str | None = None
) -> DataFrame:
    """``df`` as one column ``j``, the parsed message or its field ``inner`` (parsed once:
    read inside CASE WHEN branches, an inline ``from_json`` would be evaluated again for every
    field); the floor adds the corrupt-record column and ``unparsed``/``not_utf8`` flags."""
    if not floor:
        parsed = F.from_json(text, schema)
        return df.select((parsed[inner] if inner else parsed).alias("j"))
    with_corrupt = schema.add("_corrupt_record", T.StringType())
    m = F.col("m")
    return df.select(
        F.from_json(text, with_corrupt, FLOOR_PARSE).alias("m"),
        (~F.is_valid_utf8(text)).alias("not_utf8"),
    ).select(
        (m[inner] if inner else m).alias("j"),
        "not_utf8",
        (m.isNull() | m["_corrupt_record"].isNotNull()).alias("unparsed"),
    )


def _required(floor: bool) -> Required | None:
    return Required(F.col("not_utf8"), F.col("unparsed")) if floor else None


def _checked(required: Required | None, wire: Column, decoded: Column) -> Column:
    return decoded if required is None else required.value(wire, decoded)


def _debezium_handwritten(
    df: DataFrame, c: Contract, row: T.StructType, text: Column, floor: bool
) -> DataFrame:
    """Debezium: the payload's images, source and op (the floor: every cast a ``try_``)."""
    wire = spark_schema(c, "row", "wire")
    payload = T.StructType(
        [
            T.StructField("before", wire),
            T.StructField("after", wire),
            T.StructField("op", T.StringType()),
            T.StructField("ts_ms", T.LongType()),
            T.StructField(
                "source",
                T.StructType(
                    [T.StructField(n, T.StringType()) for n in ("db", "table", *MYSQL_POSITION)]
                    + [T.StructField("ts_ms", T.LongType())]
                ),
            ),
        ]
    )
    required = _required(floor)
    parsed = _parse(df, text, T.StructType([T.StructField("payload", payload)]), floor, "payload")
    j = F.col("j")

    def leaf(side: str, f: Any) -> Column:
        value = j[side][f.field]
        decoded = _native_leaf(value, f, row[f.field].dataType, safe=floor)
        return _checked(required, value, decoded).alias(f.field)

    def image(side: str) -> Column:
        return F.when(
            j[side].isNotNull(), F.struct(*[leaf(side, f) for f in c.row_schema.fields or ()])
        )

    source = j["source"]
    position = F.create_map(*[x for n in MYSQL_POSITION for x in (F.lit(n), source[n])])
    op = j["op"] if required is None else F.when(j["op"].isin(*"cudrt"), j["op"])
    columns = [
        op.alias("op"),
        F.struct(
            j["source"]["db"].alias("database"),
            F.lit(None).cast("string").alias("schema"),
            j["source"]["table"].alias("name"),
        ).alias("table"),
        _key_of(c, F.coalesce(j["after"], j["before"])).alias("key"),
        image("before").alias("before"),
        image("after").alias("after"),
        j["ts_ms"].alias("ts_ms"),
        j["source"]["ts_ms"].alias("source_ts_ms"),
        F.map_filter(position, lambda _k, v: v.isNotNull()).alias("position"),
    ]
    if required is None:
        return parsed.select(*columns)
    decoded = parsed.select(*columns, required.error(op).alias("_error"))
    return decoded.select(*_floor_outputs(decoded, c, required))


def _key_of(c: Contract, image: Column) -> Column:
    if not c.key:
        return F.lit(None).cast(T.StructType())
    return F.when(image.isNotNull(), F.struct(*[image[k].alias(k) for k in c.key]))


def _canal_handwritten(
    df: DataFrame, c: Contract, row: T.StructType, strings: T.StructType, text: Column, floor: bool
) -> DataFrame:
    """Canal: ``data`` exploded with its index, ``before`` from ``old`` over ``data`` (the
    floor: every message kept, ``isDdl`` a control record)."""
    schema = T.StructType(
        [
            T.StructField("data", T.ArrayType(strings)),
            T.StructField("old", T.ArrayType(T.MapType(T.StringType(), T.StringType()))),
            *[T.StructField(n, T.StringType()) for n in ("database", "table", "type", "id")],
            T.StructField("es", T.LongType()),
            T.StructField("ts", T.LongType()),
            *([T.StructField("isDdl", T.BooleanType())] if floor else []),
        ]
    )
    # parsed once, then exploded (a generator beside other reads of one from_json would
    # parse the message once for each of them)
    j = F.col("j")
    carried = ("old", "database", "table", "type", "id", "es", "ts", *(("isDdl",) if floor else ()))
    explode = F.posexplode_outer if floor else F.posexplode
    exploded = _parse(df, text, schema, floor).select(
        explode(j["data"]).alias("i", "r"),
        *[j[n].alias(n) for n in carried],
        *([F.col("not_utf8"), F.col("unparsed")] if floor else []),
    )
    required = _required(floor)
    old = F.element_at(F.col("old"), F.col("i") + 1)
    r = F.col("r")
    op = (
        F.when(F.col("type") == "INSERT", "c")
        .when(F.col("type") == "UPDATE", "u")
        .when(F.col("type") == "DELETE", "d")
    )
    names = row.fieldNames()
    data_image = F.struct(
        *[_checked(required, r[n], _text_leaf(r[n], row[n].dataType)).alias(n) for n in names]
    )

    def old_leaf(n: str) -> Column:
        value = F.when(F.map_contains_key(old, n), old[n]).otherwise(r[n])
        return _checked(required, value, _text_leaf(value, row[n].dataType)).alias(n)

    old_image = F.struct(*[old_leaf(n) for n in names])
    images = [
        F.when(op.isin("c", "u"), data_image).alias("after"),
        F.when(op == "d", data_image).when(old.isNotNull(), old_image).alias("before"),
    ]
    if required is not None:
        control = F.coalesce(F.col("isDdl"), F.lit(False))
        empty = F.col("i").isNull()
        images.append(
            F.when(~control, required.error(op, (empty, "$.data holds no rows"))).alias("_error")
        )
    decoded = exploded.select(op.alias("op"), "*", *images)
    table = F.struct(
        F.col("database").alias("database"),
        F.lit(None).cast("string").alias("schema"),
        F.col("table").alias("name"),
    )
    position = F.create_map(F.lit("id"), F.col("id"), F.lit("row"), F.col("i").cast("string"))
    times = [F.col("ts").alias("ts_ms"), F.col("es").alias("source_ts_ms")]
    if required is not None:
        kept = [F.col(name) for name in decoded.columns if name != "table"]
        decoded = decoded.select(*kept, table.alias("table"), *times, position.alias("position"))
        return decoded.select(*_floor_outputs(decoded, c, required))
    return decoded.select(
        "op",
        table.alias("table"),
        _key_of(c, F.coalesce("after", "before")).alias("key"),
        "before",
        "after",
        *times,
        position.alias("position"),
    )


def _arcion_handwritten(
    df: DataFrame, c: Contract, row: T.StructType, strings: T.StructType, text: Column, floor: bool
) -> DataFrame:
    """Arcion S3 JSON: the literal ``"null"`` as SQL NULL, the cursor as the position."""
    namespace = T.StructType([T.StructField(n, T.StringType()) for n in ("catalog", "schema")])
    schema = T.StructType(
        [
            T.StructField(
                "tableName",
                T.StructType(
                    [T.StructField("namespace", namespace), T.StructField("name", T.StringType())]
                ),
            ),
            T.StructField("opType", T.StringType()),
            T.StructField("cursor", T.StringType()),
            T.StructField("before", strings),
            T.StructField("after", strings),
        ]
    )
    flags = [F.col("not_utf8"), F.col("unparsed")] if floor else []
    parsed = _parse(df, text, schema, floor).select(
        "j",
        F.from_json("j.cursor", T.MapType(T.StringType(), T.StringType())).alias("cursor"),
        *flags,
    )
    required = _required(floor)
    j, cursor = F.col("j"), F.col("cursor")
    op = F.when(j["opType"] == "I", "c").when(j["opType"] == "U", "u").when(j["opType"] == "D", "d")

    def leaf(side: str, n: str) -> Column:
        value = F.nullif(j[side][n], F.lit("null"))
        return _checked(required, value, _text_leaf(value, row[n].dataType)).alias(n)

    def image(side: str) -> Column:
        return F.struct(*[leaf(side, n) for n in row.fieldNames()])

    decoded = parsed.select(
        op.alias("op"),
        j["tableName"].alias("t"),
        F.when(op != "c", image("before")).alias("before"),
        F.when(op != "d", image("after")).alias("after"),
        cursor.alias("position"),
        *([required.error(op).alias("_error")] if required is not None else []),
    )
    columns = [
        F.struct(
            F.col("t.namespace.catalog").alias("database"),
            F.col("t.namespace.schema").alias("schema"),
            F.col("t.name").alias("name"),
        ).alias("table"),
        F.col("position")["extractionTimestamp"].cast("long").alias("ts_ms"),
        F.col("position")["timestamp"].cast("long").alias("source_ts_ms"),
    ]
    if required is not None:
        decoded = decoded.select("*", *columns)
        return decoded.select(*_floor_outputs(decoded, c, required))
    return decoded.select(
        "op",
        columns[0],
        _key_of(c, F.coalesce("after", "before")).alias("key"),
        "before",
        "after",
        *columns[1:],
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


def python_udf(df: DataFrame, c: Contract) -> DataFrame:
    """A UDF doing json.loads and decoding each column in Python, producing the columns the
    from_json baselines and ``decode_changes`` produce (op, table, key, before, after, times,
    position)."""
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

        return df.select(F.udf(decode, out)("value").alias("r")).select("r.*")
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
            F.explode(F.udf(decode_canal, T.ArrayType(out))("value")).alias("r")
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

    return df.select(F.udf(decode_arcion, out)("value").alias("r")).select("r.*")


def bindings(df: DataFrame, c: Contract) -> DataFrame:
    return decode_changes(df, c)


VARIANTS: dict[str, Variant] = {
    "decode_changes": bindings,
    "from_json": handwritten,
    "floor": required_floor,
    "udf": python_udf,
}

GENERATORS: dict[str, Callable[[int], Iterator[bytes]]] = {
    "debezium-json": lambda n: datagen.debezium_messages(n),
    "canal-json": lambda n: datagen.canal_messages(n),
    "arcion-s3-json": lambda n: datagen.arcion_s3_json_messages(n),
}


#: The columns a wider table repeats (a timestamp, a decimal and a date: the rules with the most
#: generated code).
WIDENING_COLUMNS = ("created_at", "amount", "ship_date")


def widen(fmt: str, message: bytes, extra: int) -> bytes:
    """``message`` with ``extra`` more columns, copies of :data:`WIDENING_COLUMNS` in turn."""
    if extra == 0:
        return message
    doc = json.loads(message)

    def more(row: dict[str, Any]) -> dict[str, Any]:
        out = dict(row)
        for i in range(extra):
            source = WIDENING_COLUMNS[i % len(WIDENING_COLUMNS)]
            out[f"{source}_{i + 2}"] = row[source]
        return out

    if fmt == "canal-json":
        doc["mysqlType"], doc["sqlType"] = more(doc["mysqlType"]), more(doc["sqlType"])
        doc["data"] = [more(row) for row in doc["data"]]
    elif fmt == "arcion-s3-json":
        for part in ("before", "after", "exists"):
            doc[part] = more(doc[part])
    else:
        raise SystemExit(f"--extra-columns applies to canal-json and arcion-s3-json, not {fmt}")
    return json.dumps(doc).encode()


def infer_contract(fmt: str, sample: list[bytes]) -> Contract:
    f = get_format(fmt)
    msgs = [Message(value=json.loads(m), where=f"message {i}") for i, m in enumerate(sample)]
    return f.infer(msgs, InferOptions(infer_types=True)).contract


def jvm_cpu_seconds(spark: SparkSession) -> Callable[[], float]:
    """A clock of the driver JVM's CPU time (user + system, all threads)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    ticks = os.sysconf("SC_CLK_TCK")

    def clock() -> float:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks

    return clock


def check_agreement(sample: DataFrame, c: Contract, variants: dict[str, Variant]) -> None:
    """Stop unless every variant yields the same rows as the first (values, not nullability)
    on ``sample``."""
    rows = {
        name: sorted(repr(r.asDict(True)) for r in variant(sample, c).select(*CANONICAL).collect())
        for name, variant in variants.items()
    }
    first, *others = rows
    for name in others:
        got, expected = rows[name], rows[first]
        if got != expected:
            differ = sum(a != b for a, b in zip(got, expected, strict=False))
            sys.exit(f"{c.format}: {name} disagrees with {first} on {differ} rows")


def best_passes(
    built: dict[str, DataFrame], warmup: int, repeat: int, cpu: Callable[[], float] | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """Each DataFrame written to the ``noop`` sink ``warmup`` times, then ``repeat`` times with
    the variants taking turns (a change in the machine's load hits every variant alike): the
    best wall-clock seconds and the best ``cpu`` seconds (inf without ``cpu``) per variant."""
    for out in built.values():
        for _ in range(warmup):
            out.write.format("noop").mode("overwrite").save()
    best = dict.fromkeys(built, float("inf"))
    best_cpu = dict.fromkeys(built, float("inf"))
    for _ in range(repeat):
        for name, out in built.items():
            start, start_cpu = time.perf_counter(), cpu() if cpu else 0.0
            out.write.format("noop").mode("overwrite").save()
            best[name] = min(best[name], time.perf_counter() - start)
            if cpu:
                best_cpu[name] = min(best_cpu[name], cpu() - start_cpu)
    return best, best_cpu


def measure(
    spark: SparkSession, fmt: str, n: int, repeat: int, warmup: int, extra: int = 0
) -> dict[str, Any]:
    values = [widen(fmt, v, extra) for v in GENERATORS[fmt](n)]
    size = sum(len(v) for v in values)
    c = infer_contract(fmt, values[:2000])
    check_agreement(
        spark.createDataFrame([(v,) for v in values[:3000]], "value binary"), c, VARIANTS
    )
    df = spark.createDataFrame([(v,) for v in values], "value binary").repartition(2).cache()
    df.count()
    cpu = jvm_cpu_seconds(spark)
    result: dict[str, Any] = {
        "format": fmt,
        "columns": len(c.row_schema.fields or ()),
        "messages": n,
        "mb": size / 1e6,
    }
    decode._STEPS.clear()
    built: dict[str, DataFrame] = {}
    for name, variant in VARIANTS.items():
        # Building the DataFrame is a one-time cost per job, reported apart: the first call
        # (decode_changes records its steps), then a second call (decode_changes replays them).
        start = time.perf_counter()
        built[name] = variant(df, c)
        result[f"{name}_build_s"] = time.perf_counter() - start
        start = time.perf_counter()
        variant(df, c)
        result[f"{name}_rebuild_s"] = time.perf_counter() - start
    best, best_cpu = best_passes(built, warmup, repeat, cpu)
    for name in built:
        result[name] = n / best[name]
        result[f"{name}_cpu_us"] = best_cpu[name] * 1e6 / n
    df.unpersist()
    return result


def benchmark_session(conf: dict[str, str] | None = None) -> SparkSession:
    """The benchmarks' session: local[2], UTC, no UI, a 6 GB driver, ``conf`` on top; Python
    workers run this interpreter (the UDF variant needs this venv)."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--formats", default=",".join(GENERATORS))
    parser.add_argument(
        "--extra-columns",
        type=int,
        default=0,
        help="widen the 12-column table (canal-json, arcion-s3-json) by this many columns",
    )
    parser.add_argument(
        "--huge-method-limit",
        type=int,
        default=8000,
        help="spark.sql.codegen.hugeMethodLimit: 8000 (HotSpot's limit, the setting docs/spark.md "
        "recommends) unless given; 65535 is Spark's default",
    )
    args = parser.parse_args()
    spark = benchmark_session()
    # every variant gets the same session; with Spark's default a stage whose fused method
    # outgrows HotSpot's limit runs interpreted, which slowed the hand-written Canal baseline 2x
    spark.conf.set(HUGE_METHOD_CONF, str(args.huge_method_limit))
    print(
        "| format | columns | messages | MB | decode_changes msg/s | from_json msg/s | floor msg/s "
        "| UDF msg/s | vs from_json | vs UDF | floor vs from_json | from_json vs UDF "
        "| JVM CPU µs/msg decode_changes / from_json / floor "
        "| build ms: decode_changes first / later call, from_json |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for fmt in args.formats.split(","):
        r = measure(spark, fmt, args.n, args.repeat, args.warmup, args.extra_columns)
        print(
            f"| {fmt} | {r['columns']} | {r['messages']} | {r['mb']:.0f} "
            f"| {r['decode_changes']:,.0f} | {r['from_json']:,.0f} | {r['floor']:,.0f} "
            f"| {r['udf']:,.0f} | {r['decode_changes'] / r['from_json']:.2f}x "
            f"| {r['decode_changes'] / r['udf']:.2f}x | {r['floor'] / r['from_json']:.2f}x "
            f"| {r['from_json'] / r['udf']:.2f}x "
            f"| {r['decode_changes_cpu_us']:.1f} / {r['from_json_cpu_us']:.1f} "
            f"/ {r['floor_cpu_us']:.1f} "
            f"| {r['decode_changes_build_s'] * 1e3:,.0f} / {r['decode_changes_rebuild_s'] * 1e3:,.0f}"
            f", {r['from_json_build_s'] * 1e3:,.0f} |",
            flush=True,
        )
    spark.stop()


if __name__ == "__main__":
    main()
