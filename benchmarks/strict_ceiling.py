"""The strict hand-written ceiling of benchmarks/spark_decode.py.

What a careful engineer writes directly against Spark's functions to decode the benchmark's
formats with the same grammar and the same checks as ``decode_changes``: every message kept, a
message that does not parse (or holds a value of the wrong JSON type) has ``_error``, an unknown
op has ``_error``, a text value is read with the project's grammar (no ``"1e3"``, ``"0012"``,
``"yes"``, ``"+10000-01-01"``, no decimal with more digits after the point than its scale),
Arcion's ``exists`` codes are checked, and a row with ``_error`` has no op, key or images.

It is hand-written: one ``select`` per format, one rule per Spark type, no JSON paths in
``_error`` (a fixed text per kind of failure), no plan generator. The regular expressions are
the project's grammar, imported rather than restated (one fact, one place). A damaged sample in
spark_decode.py proves that it flags exactly the rows ``decode_changes`` flags.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from contracts.contract import Contract
from contracts.formats._typing import TEXT_WHITESPACE
from contracts.formats.arcion_s3_json import EXISTS_FLAGS, NULL_LITERAL
from contracts.formats.arcion_s3_json import OP_TYPES as ARCION_OPS
from contracts.formats.canal_json import SPEC as CANAL_SPEC
from contracts.formats.maxwell_json import MAXWELL_CONTROLS, MAXWELL_TYPES
from contracts.formats.maxwell_json import SPEC as MAXWELL_SPEC
from contracts.formats.ogg_json import OP_TYPES as OGG_TYPES
from contracts.formats.ogg_json import SPEC as OGG_SPEC
from contracts.formats.spec import DEFAULT_TEXT, TextConventions
from contracts.logical import decimal_precision, decimal_scale, lookup
from contracts.schema import ConnectSchema
from spark_bindings import spark_schema
from spark_bindings.expressions import (
    _DATE_TEXT,
    _INT_TEXT,
    _TIMESTAMP_TEXT,
    MAX_DAYS,
    MAX_MICROS,
    MIN_DAYS,
    MIN_MICROS,
    decimal_text_pattern,
)

#: Parse options: a message that does not parse, or holds a value of the wrong JSON type,
#: keeps its text in ``_corrupt_record``.
PARSE: Final = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": "_corrupt_record",
    "allowSingleQuotes": "false",
}
BAD_VALUE: Final = "a value does not decode"


def _parse(df: DataFrame, schema: T.StructType) -> DataFrame:
    """``m`` (the parsed message) and ``unparsed`` (it did not parse as ``schema``)."""
    m = F.from_json(F.col("value").cast("string"), schema.add("_corrupt_record", T.StringType()))
    return df.select(m.alias("m")).select(
        "m", (F.col("m").isNull() | F.col("m._corrupt_record").isNotNull()).alias("unparsed")
    )


def _any(conditions: list[Column]) -> Column:
    out = F.lit(False)
    for c in conditions:
        out = out | F.coalesce(c, F.lit(False))
    return out


def _key(c: Contract, image: Column) -> Column:
    if not c.key:
        return F.lit(None).cast(T.StructType())
    return F.when(image.isNotNull(), F.struct(*[image[k].alias(k) for k in c.key]))


def _outputs(c: Contract, table: Column, times: list[Column], pos: Column) -> list[Column]:
    ok = F.col("_e").isNull()
    return [
        F.when(ok, F.col("op")).alias("op"),
        table.alias("table"),
        F.when(ok, _key(c, F.coalesce(F.col("after"), F.col("before")))).alias("key"),
        F.when(ok, F.col("before")).alias("before"),
        F.when(ok, F.col("after")).alias("after"),
        *times,
        pos.alias("position"),
        F.col("_e").alias("_error"),
    ]


# --- text values (Canal, Arcion S3) -------------------------------------------------------------


def text_value(schema: ConnectSchema, target: T.DataType, d: TextConventions) -> Callable:
    """The strict decode of one text value of ``schema`` (null: it does not decode)."""
    logical = lookup(schema)
    kind = logical.kind if logical is not None else schema.type

    def zero_or(rule: Callable[[Column], Column]) -> Callable[[Column], Column]:
        if d.zero_date is None:
            return rule
        return lambda t: F.when(~F.startswith(t, F.lit(d.zero_date)), rule(t))

    if kind == "decimal":
        pattern = decimal_text_pattern(decimal_scale(schema))
        precision, scale = decimal_precision(schema), decimal_scale(schema)
        assert precision is None or scale <= precision  # no decimal(2,5) in the benchmark
        return lambda t: F.when(t.rlike(pattern), t.try_cast(target))
    if kind in ("int8", "int16", "int32", "int64", "year"):
        return lambda t: F.when(t.rlike(_INT_TEXT), t.try_cast(target))
    if kind == "date":
        return zero_or(lambda t: F.when(t.rlike(_DATE_TEXT), t.try_cast("date")))
    if kind == "timestamp":
        micros = F.lit(MIN_MICROS), F.lit(MAX_MICROS)

        def stamp(t: Column) -> Column:
            value = F.when(t.rlike(_TIMESTAMP_TEXT), F.concat(t, F.lit("Z")).try_cast("timestamp"))
            return F.when(F.unix_micros(value).between(*micros), value)

        return zero_or(stamp)
    if kind == "boolean":

        def flag(t: Column) -> Column:
            t = F.lower(t) if d.fold_booleans else t
            return F.when(t.isin(*d.true_texts), True).when(t.isin(*d.false_texts), False)

        return flag
    if kind == "float":

        def narrow(t: Column) -> Column:
            wide = t.try_cast("double")
            value = wide.cast("float")
            inf = F.lit(float("inf"))
            return F.when(~((F.abs(value) == inf) & (F.abs(wide) != inf)), value)

        return narrow
    if kind == "double":
        return lambda t: t.try_cast("double")
    if kind == "string":
        return lambda t: t
    raise SystemExit(f"strict ceiling: no text rule for {kind} (extend benchmarks/strict_ceiling)")


def _strips(schema: ConnectSchema, d: TextConventions) -> bool:
    logical = lookup(schema)
    kind = logical.kind if logical is not None else schema.type
    return kind not in ("string", "bytes") and (kind != "boolean" or d.fold_booleans)


class TextImage:
    """Decodes the text values of one image, remembering the checks (non-null in, null out)."""

    def __init__(self, c: Contract, d: TextConventions) -> None:
        self.row = spark_schema(c, "row", "decoded")
        self.fields = list(zip(c.row_schema.fields or (), self.row.fields, strict=True))
        self.rules = [(s, f, text_value(s, f.dataType, d), _strips(s, d)) for s, f in self.fields]
        self.checks: list[Column] = []

    def struct(self, value_of: Callable[[str], Column], present: Column | None = None) -> Column:
        leaves = []
        for _schema, f, rule, strips in self.rules:
            wire = value_of(f.name)
            text = F.trim(wire, F.lit(TEXT_WHITESPACE)) if strips else wire
            decoded = rule(text)
            bad = wire.isNotNull() & decoded.isNull()
            self.checks.append(bad if present is None else present & bad)
            leaves.append(decoded.alias(f.name))
        return F.struct(*leaves)


def canal(df: DataFrame, c: Contract) -> DataFrame:
    """Canal: ``data`` exploded (one row per element), ``before`` from ``old`` over ``data``;
    a DDL is a control record; an empty ``data`` or an unknown type is an error."""
    strings = T.StructType(
        [T.StructField(f.field or "", T.StringType()) for f in c.row_schema.fields or ()]
    )
    schema = T.StructType(
        [
            T.StructField("data", T.ArrayType(strings)),
            T.StructField("old", T.ArrayType(T.MapType(T.StringType(), T.StringType()))),
            *[T.StructField(n, T.StringType()) for n in ("database", "table", "type")],
            T.StructField("id", T.LongType()),
            T.StructField("es", T.LongType()),
            T.StructField("ts", T.LongType()),
            T.StructField("isDdl", T.BooleanType()),
        ]
    )
    m = F.col("m")
    exploded = _parse(df, schema).select(
        F.posexplode_outer(m["data"]).alias("i", "r"),
        *[m[n].alias(n) for n in ("old", "database", "table", "type", "id", "es", "ts", "isDdl")],
        "unparsed",
    )
    op = F.lit(None).cast("string")
    for code in ("INSERT", "UPDATE", "DELETE"):
        op = F.when(F.col("type") == code, F.lit(CANAL_SPEC.ops.read(code)[0])).otherwise(op)
    ddl = F.coalesce(F.col("isDdl"), F.lit(False))
    image = TextImage(c, CANAL_SPEC.images.text)
    r, old = F.col("r"), F.element_at(F.col("old"), F.col("i") + 1)
    data = image.struct(lambda n: r[n])
    is_update = op == "u"
    prior = image.struct(
        lambda n: F.when(F.map_contains_key(old, n), old[n]).otherwise(r[n]),
        is_update & old.isNotNull(),
    )
    bad = _any(image.checks)
    error = (
        F.when(ddl, F.lit(None))
        .when(F.col("unparsed"), F.lit("$: is not valid JSON"))
        .when(F.col("isDdl").isNull(), F.lit("$.isDdl: is required"))
        .when(op.isNull(), F.lit("$.type: unknown op"))
        .when(F.col("i").isNull(), F.lit("$.data: holds no rows"))
        .when(bad, F.lit(BAD_VALUE))
    )
    decoded = exploded.select(
        F.when(~ddl, op).alias("op"),
        "*",
        F.when(op.isin("c", "u") & ~ddl, data).alias("after"),
        F.when(ddl, None)
        .when(op == "d", data)
        .when(is_update & old.isNotNull(), prior)
        .alias("before"),
        error.alias("_e"),
    ).drop("r")
    empty = F.nullif(F.col("database"), F.lit(""))
    table = F.struct(
        empty.alias("database"),
        F.lit(None).cast("string").alias("schema"),
        F.nullif(F.col("table"), F.lit("")).alias("name"),
    )
    position = F.create_map(
        F.lit("id"), F.col("id").cast("string"), F.lit("row"), F.col("i").cast("string")
    )
    times = [F.col("ts").alias("ts_ms"), F.col("es").alias("source_ts_ms")]
    return decoded.select(*_outputs(c, table, times, position))


def arcion_schema(names: list[str], with_exists: bool) -> T.StructType:
    """What ``from_json`` reads of an Arcion S3 JSON record (images as text)."""
    strings = T.StructType([T.StructField(n, T.StringType()) for n in names])
    text = T.StructType([T.StructField(n, T.StringType()) for n in ("catalog", "schema")])
    table = T.StructType([T.StructField("namespace", text), T.StructField("name", T.StringType())])
    return T.StructType(
        [
            T.StructField("tableName", table),
            T.StructField("opType", T.StringType()),
            T.StructField("cursor", T.StringType()),
            T.StructField("before", strings),
            T.StructField("after", strings),
            *([T.StructField("exists", strings)] if with_exists else []),
        ]
    )


def arcion_s3(df: DataFrame, c: Contract) -> DataFrame:
    """Arcion S3 JSON: ``"null"`` is SQL NULL; ``exists`` says which image holds a column
    (a code outside 0-3 is an error); the cursor (JSON text) is the position."""
    names = [f.field or "" for f in c.row_schema.fields or ()]
    schema = arcion_schema(names, with_exists=True)
    parsed = _parse(df, schema)
    m = F.col("m")
    cursor = F.from_json(m["cursor"], T.MapType(T.StringType(), T.StringType()))
    op = F.lit(None).cast("string")
    for code, said in ARCION_OPS.items():
        op = F.when(m["opType"] == code, F.lit(said)).otherwise(op)
    image = TextImage(c, DEFAULT_TEXT)
    codes = list(EXISTS_FLAGS)

    def value(side: str) -> Callable[[str], Column]:
        return lambda n: F.nullif(m[side][n], F.lit(NULL_LITERAL))

    before = image.struct(value("before"), op != "c")
    after = image.struct(value("after"), op != "d")
    bad_exists = [m["exists"][n].isNotNull() & ~m["exists"][n].isin(*codes) for n in names]
    error = (
        F.when(F.col("unparsed"), F.lit("$: is not valid JSON"))
        .when(op.isNull(), F.lit("$.opType: unknown op"))
        .when(m["tableName"]["name"].isNull(), F.lit("$.tableName.name: is required"))
        .when(cursor.isNull(), F.lit("$.cursor: is not a JSON object"))
        .when(_any(bad_exists), F.lit("$.exists: unknown code"))
        .when(_any(image.checks), F.lit(BAD_VALUE))
    )
    decoded = parsed.select(
        op.alias("op"),
        m["tableName"].alias("t"),
        F.when(op != "c", before).alias("before"),
        F.when(op != "d", after).alias("after"),
        cursor.alias("cursor"),
        error.alias("_e"),
    )
    table = F.struct(
        F.nullif(F.col("t.namespace.catalog"), F.lit("")).alias("database"),
        F.nullif(F.col("t.namespace.schema"), F.lit("")).alias("schema"),
        F.nullif(F.col("t.name"), F.lit("")).alias("name"),
    )
    times = [
        F.col("cursor")["extractionTimestamp"].cast("long").alias("ts_ms"),
        F.col("cursor")["timestamp"].cast("long").alias("source_ts_ms"),
    ]
    return decoded.select(*_outputs(c, table, times, F.col("cursor")))


# --- Maxwell (plain JSON values) ----------------------------------------------------------------

#: The Maxwell fields that make the position.
MAXWELL_POSITION: Final = ("xid", "xoffset", "commit", "position", "gtid")


TEXTS: Final = T.MapType(T.StringType(), T.StringType())


def json_image(row: T.StructType) -> T.StructType:
    """A plain JSON image (Maxwell, GoldenGate) in the columns' JSON types, a time as text."""
    temporal = (T.TimestampType, T.DateType)
    return T.StructType(
        [
            T.StructField(
                f.name, T.StringType() if isinstance(f.dataType, temporal) else f.dataType
            )
            for f in row.fields
        ]
    )


def maxwell_schema(row: T.StructType, data_as_text: bool) -> T.StructType:
    """What ``from_json`` reads of a Maxwell event: ``data`` as a map of the values' texts
    (``data_as_text``) or in the columns' JSON types (:func:`json_image`); ``old`` as texts."""
    texts, typed = TEXTS, json_image(row)
    return T.StructType(
        [
            *[T.StructField(n, T.StringType()) for n in ("database", "table", "type")],
            *[T.StructField(n, T.LongType()) for n in ("ts", "xid", "xoffset")],
            T.StructField("commit", T.BooleanType()),
            *[T.StructField(n, T.StringType()) for n in ("position", "gtid")],
            T.StructField("data", texts if data_as_text else typed),
            T.StructField("old", texts),
        ]
    )


def maxwell(df: DataFrame, c: Contract) -> DataFrame:
    """Maxwell: each value's JSON text read with the column's text rule; an update's before
    image is ``old`` over ``data``; bootstrap markers and DDL are control records."""
    row = spark_schema(c, "row", "decoded")
    m = F.col("m")
    data, old = m["data"], m["old"]
    op = F.lit(None).cast("string")
    for code, said in MAXWELL_TYPES.items():
        op = F.when(m["type"] == code, F.lit(said)).otherwise(op)
    control = m["type"].isin(*MAXWELL_CONTROLS)
    image = TextImage(c, MAXWELL_SPEC.images.text)
    present = data.isNotNull()
    row_image = image.struct(lambda n: data[n], present)
    is_update = (op == "u") & old.isNotNull()
    prior = image.struct(
        lambda n: F.when(F.map_contains_key(old, n), old[n]).otherwise(data[n]), is_update
    )
    required = [
        present & data[f.field or ""].isNull()
        for f in c.row_schema.fields or ()
        if not f.optional and not f.has_default
    ]
    error = (
        F.when(control, F.lit(None))
        .when(F.col("unparsed"), F.lit("$: is not valid JSON"))
        .when(op.isNull(), F.lit("$.type: unknown op"))
        .when(~present, F.lit("$.data: is required"))
        .when(_any(image.checks + required), F.lit(BAD_VALUE))
    )
    decoded = _parse(df, maxwell_schema(row, data_as_text=True)).select(
        F.when(~control, op).alias("op"),
        "m",
        F.when(op != "d", row_image).alias("after"),
        F.when(op == "d", row_image).when(is_update, prior).alias("before"),
        error.alias("_e"),
    )
    table = F.struct(
        F.nullif(m["database"], F.lit("")).alias("database"),
        F.lit(None).cast("string").alias("schema"),
        F.nullif(m["table"], F.lit("")).alias("name"),
    )
    position = F.map_filter(
        F.create_map(*[x for n in MAXWELL_POSITION for x in (F.lit(n), m[n].cast("string"))]),
        lambda _k, v: v.isNotNull(),
    )
    times = [F.lit(None).cast("long").alias("ts_ms"), (m["ts"] * 1000).alias("source_ts_ms")]
    return decoded.select(*_outputs(c, table, times, position))


# --- Oracle GoldenGate JSON (plain JSON values) ----------------------------------------------------

#: The GoldenGate envelope fields the benchmark reads.
OGG_FIELDS: Final = ("table", "op_type", "op_ts", "current_ts", "pos")


def ogg_schema(row: T.StructType, images_as_text: bool) -> T.StructType:
    """What ``from_json`` reads of a GoldenGate operation: the images as maps of the values'
    texts (``images_as_text``) or in the columns' JSON types (:func:`json_image`)."""
    image = TEXTS if images_as_text else json_image(row)
    return T.StructType(
        [
            *[T.StructField(n, T.StringType()) for n in OGG_FIELDS],
            T.StructField("before", image),
            T.StructField("after", image),
        ]
    )


def ogg_time(text: Column) -> Column:
    """Epoch milliseconds of a GoldenGate time (UTC wall-clock text; null: it does not read)."""
    stamp = F.when(text.rlike(_TIMESTAMP_TEXT), F.concat(text, F.lit("Z")).try_cast("timestamp"))
    return F.unix_millis(stamp)


def ogg(df: DataFrame, c: Contract) -> DataFrame:
    """GoldenGate: each value's JSON text read with the column's text rule; ``T`` is a truncate
    without images; ``SCHEMA.TABLE`` names the table."""
    row = spark_schema(c, "row", "decoded")
    m = F.col("m")
    op = F.lit(None).cast("string")
    for code, said in OGG_TYPES.items():
        op = F.when(m["op_type"] == code, F.lit(said)).otherwise(op)
    image = TextImage(c, OGG_SPEC.images.text)
    needs_before, needs_after = op.isin("u", "d"), op.isin("c", "u")
    before = image.struct(lambda n: m["before"][n], needs_before)
    after = image.struct(lambda n: m["after"][n], needs_after)
    times = [ogg_time(m["current_ts"]), ogg_time(m["op_ts"])]
    required = [
        present & side[f.field or ""].isNull()
        for side, present in ((m["before"], needs_before), (m["after"], needs_after))
        for f in c.row_schema.fields or ()
        if not f.optional and not f.has_default
    ]
    error = (
        F.when(F.col("unparsed"), F.lit("$: is not valid JSON"))
        .when(op.isNull(), F.lit("$.op_type: unknown op"))
        .when(needs_before & m["before"].isNull(), F.lit("$.before: is required"))
        .when(needs_after & m["after"].isNull(), F.lit("$.after: is required"))
        .when(m["op_ts"].isNotNull() & times[1].isNull(), F.lit("$.op_ts: is not a time"))
        .when(m["current_ts"].isNotNull() & times[0].isNull(), F.lit("$.current_ts: bad"))
        .when(_any(image.checks + required), F.lit(BAD_VALUE))
    )
    decoded = _parse(df, ogg_schema(row, images_as_text=True)).select(
        op.alias("op"),
        "m",
        F.when(needs_before, before).alias("before"),
        F.when(needs_after, after).alias("after"),
        times[0].alias("ts"),
        times[1].alias("source_ts"),
        error.alias("_e"),
    )
    qualified = F.col("m.table")
    table = F.struct(
        F.lit(None).cast("string").alias("database"),
        F.when(F.contains(qualified, F.lit(".")), F.substring_index(qualified, ".", 1)).alias(
            "schema"
        ),
        F.substring_index(qualified, ".", -1).alias("name"),
    )
    position = F.map_filter(F.create_map(F.lit("pos"), F.col("m.pos")), lambda _k, v: v.isNotNull())
    stamps = [F.col("ts").alias("ts_ms"), F.col("source_ts").alias("source_ts_ms")]
    return decoded.select(*_outputs(c, table, stamps, position))


# --- Debezium (JsonConverter values) ------------------------------------------------------------

#: The Debezium MySQL source fields that make the position.
MYSQL_POSITION: Final = ("file", "pos", "row", "gtid")


def _json_leaf(schema: ConnectSchema, wire: Column, target: T.DataType) -> Column:
    """The strict decode of one JsonConverter value (null: it does not decode)."""
    logical = lookup(schema)
    kind, unit = (logical.kind, logical.key[1]) if logical is not None else (schema.type, None)
    if kind == "decimal":
        assert isinstance(target, T.DecimalType)
        raw = F.when(F.length(wire) % 4 == 0, F.try_to_binary(wire, F.lit("base64")))
        hexed = F.hex(raw)
        size = F.length(hexed)
        pad = F.when(F.substring(hexed, 1, 1) >= F.lit("8"), F.lit("F")).otherwise(F.lit("0"))
        signed = F.conv(F.concat(F.repeat(pad, F.lit(16) - size), hexed), 16, -10)
        digits = F.when((size > 0) & (size <= 16), signed)
        number = F.concat(digits, F.lit(f"E-{decimal_scale(schema)}"))
        return number.try_cast(target)
    if kind == "timestamp" and unit == "micros":
        return F.when(wire.between(MIN_MICROS, MAX_MICROS), F.timestamp_micros(wire))
    if kind == "date":
        return F.when(wire.between(MIN_DAYS, MAX_DAYS), F.date_from_unix_date(wire))
    if kind == "float":
        value = wire.cast("float")
        inf = F.lit(float("inf"))
        return F.when(~((F.abs(value) == inf) & (F.abs(wire) != inf)), value)
    if logical is None:
        return wire
    raise SystemExit(f"strict ceiling: no JSON rule for {kind} (extend benchmarks/strict_ceiling)")


def debezium_payload(c: Contract) -> T.StructType:
    """What ``from_json`` reads of a Debezium payload: the images in the contract's wire
    types (a Decimal as its base64 text), op, ts_ms and the source's table and position."""
    wire = spark_schema(c, "row", "wire")
    image = T.StructType(
        [
            T.StructField(
                f.name, T.StringType() if isinstance(f.dataType, T.VariantType) else f.dataType
            )
            for f in wire.fields
        ]
    )
    source = T.StructType(
        [T.StructField(n, T.StringType()) for n in ("db", "table", "file", "gtid")]
        + [T.StructField(n, T.LongType()) for n in ("pos", "row", "ts_ms")]
    )
    return T.StructType(
        [
            T.StructField("before", image),
            T.StructField("after", image),
            T.StructField("op", T.StringType()),
            T.StructField("ts_ms", T.LongType()),
            T.StructField("source", source),
        ]
    )


def debezium(df: DataFrame, c: Contract) -> DataFrame:
    """Debezium with JsonConverter values: the payload's images (required columns checked),
    source, op; a value of the wrong JSON type fails the parse (an error, not a null)."""
    row = spark_schema(c, "row", "decoded")
    fields = c.row_schema.fields or ()
    payload = debezium_payload(c)
    parsed = _parse(df, T.StructType([T.StructField("payload", payload)]))
    p = F.col("m.payload")
    checks: list[Column] = []

    def image(side: str) -> Column:
        leaves = []
        present = p[side].isNotNull()
        for schema, f in zip(fields, row.fields, strict=True):
            value = p[side][f.name]
            decoded = _json_leaf(schema, value, f.dataType)
            if decoded is not value:
                checks.append(present & value.isNotNull() & decoded.isNull())
            if not schema.optional and not schema.has_default:
                checks.append(present & value.isNull())
            leaves.append(decoded.alias(f.name))
        return F.when(present, F.struct(*leaves))

    images = [image("before").alias("before"), image("after").alias("after")]
    op = F.when(p["op"].isin("c", "u", "d", "r", "t"), p["op"])
    error = (
        F.when(F.col("unparsed"), F.lit("$: is not valid JSON"))
        .when(op.isNull(), F.lit("$.payload.op: unknown op"))
        .when(_any(checks), F.lit(BAD_VALUE))
    )
    decoded = parsed.select(op.alias("op"), p.alias("p"), *images, error.alias("_e"))
    s = F.col("p.source")
    table = F.struct(
        s["db"].alias("database"),
        F.lit(None).cast("string").alias("schema"),
        s["table"].alias("name"),
    )
    position = F.map_filter(
        F.create_map(*[x for n in MYSQL_POSITION for x in (F.lit(n), s[n].cast("string"))]),
        lambda _k, v: v.isNotNull(),
    )
    times = [F.col("p.ts_ms").alias("ts_ms"), s["ts_ms"].alias("source_ts_ms")]
    return decoded.select(*_outputs(c, table, times, position))


STRICT: Final[dict[str, Callable[[DataFrame, Contract], DataFrame]]] = {
    "debezium-json": debezium,
    "canal-json": canal,
    "arcion-s3-json": arcion_s3,
    "maxwell-json": maxwell,
    "ogg-json": ogg,
}


def strict(df: DataFrame, c: Contract) -> DataFrame:
    """The strict hand-written decode of ``c``'s format."""
    return STRICT[c.format](df, c)
