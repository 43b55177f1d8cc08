"""JSON formats: one ``from_json`` per message with a pruned wire schema, then native expressions.

Each decoder states the *wire* schema of the fields it needs (only those: ``from_json`` skips
everything else, so the embedded ``schema`` half of a ``{schema, payload}`` message is never
materialized) and maps the parsed struct to a :class:`~spark_bindings.feed.Feed`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    FractionalType,
    IntegralType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from contracts.formats._connect import POSITION_FIELDS
from spark_bindings.context import Context, required_problems
from spark_bindings.expressions import (
    CANAL_TEXT,
    Decoded,
    Problem,
    floor_div,
    json_absent,
    padded_base64,
    zoned_text_timestamp,
)
from spark_bindings.feed import (
    PARSED_COL,
    POSITION_TYPE,
    Feed,
    constant_table,
    first_control,
    op_from,
    position_map,
    table_struct,
)
from spark_bindings.frame import Frame
from spark_bindings.schema import quoted

CORRUPT_COL: Final = "_corrupt_record"
BAD_JSON_COL: Final = "__cdc_bad_json"
NOT_JSON: Final = "is not valid JSON for the contract's wire schema (malformed or a wrong type)"
NOT_JSON_KEY: Final = "is not valid JSON for the contract's key (malformed or a wrong type)"
#: ``from_json`` options of every message parse: a malformed message is kept, its text in
#: ``CORRUPT_COL``.
PARSE_OPTIONS: Final = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": CORRUPT_COL,
    # JSON has no single-quoted strings (Spark's parser takes them by default)
    "allowSingleQuotes": "false",
}

S = StringType()
L = LongType()


def fields(**types: DataType) -> StructType:
    """A StructType from keyword arguments (field order kept)."""
    return StructType([StructField(name, t) for name, t in types.items()])


class JsonDecoder:
    """Base of the JSON format decoders."""

    #: Whether a row of this format may hold a Kafka key to decode.
    uses_key: bool = True
    #: Whether every message is one JSON object (anything after its closing brace is an error).
    object_messages: bool = True
    #: Whether the wire texts its text rules read can be computed in the parse projection:
    #: only for a format that does not explode rows and whose texts hold no second
    #: ``from_json`` (inside one, Spark would evaluate the message's parse again).
    texts_from_parse: bool = False

    def wire_schema(self, ctx: Context) -> StructType:
        raise NotImplementedError

    def prepare(self, df: Frame, text: Column, ctx: Context) -> Frame:
        """Working columns the parse reads, computed by generated code before it (none but for
        Connect envelopes)."""
        return df

    def parse_columns(self, parsed: Column) -> dict[str, Column]:
        """The parse projection's columns made from the parsed message (one parse serves them
        all): the parsed struct itself but for Canal."""
        return {PARSED_COL: parsed}

    def explode(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        """One row per change (identity for every format but Canal)."""
        return df

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        raise NotImplementedError

    # --- shared ------------------------------------------------------------------------------

    def parse_schema(self, ctx: Context) -> StructType:
        """The wire schema plus the column that holds a message that did not parse."""
        return self.wire_schema(ctx).add(CORRUPT_COL, S)

    def parse(self, text: Column, ctx: Context) -> Column:
        return F.from_json(text, self.parse_schema(ctx), PARSE_OPTIONS)

    def parse_problem(self, present: Column, j: Column) -> Problem:
        """The message (``present``: not a tombstone) did not parse."""
        bad = present & (j.isNull() | j[CORRUPT_COL].isNotNull())
        return Problem("$", NOT_JSON, bad)

    def parse_report(self, parsed: Column, ctx: Context) -> Column | None:
        """Why a message did not parse, with JSON paths (see :func:`wire_mismatches`); null
        for a message that parsed. Computed over the parse: its own column of the parse
        projection."""
        return wire_mismatches(parsed, self.parse_schema(ctx))

    def utf8(self, text: Column, ctx: Context) -> Column:
        """Whether the part of the message the parse reads values from is UTF-8 (Spark's
        parser would read other bytes as U+FFFD). A column of the parse projection."""
        return F.is_valid_utf8(text)

    def key_utf8(self, key_text: Column) -> Column:
        """Whether the Kafka key's bytes are UTF-8 (a JSON key is read as text)."""
        return F.is_valid_utf8(key_text)


# --- Connect envelopes: debezium-json, cdl-debezium-json, arcion-json ---------------------------


def position_keys(ctx: Context) -> dict[str, tuple[str, ...]]:
    """Position fields per connector: the contract's connector only, when it names one."""
    named = ctx.contract.option("connector")
    if isinstance(named, str) and named.lower() in POSITION_FIELDS:
        return {named.lower(): POSITION_FIELDS[named.lower()]}
    return dict(POSITION_FIELDS)


def _source_type(ctx: Context) -> StructType:
    s = fields(db=S, schema=S, table=S, ts_ms=L, connector=S)
    for name in dict.fromkeys(k for keys in position_keys(ctx).values() for k in keys):
        s = s.add(name, S)
    return s


def source_position(source: Column, ctx: Context) -> Column:
    """Debezium's position fields by connector (as ``contracts.formats._connect`` lists them)."""
    known = position_keys(ctx)
    every = tuple(dict.fromkeys(k for keys in known.values() for k in keys))
    connector = F.lower(source["connector"])
    out = position_map({k: source[k] for k in every})
    for name, keys in known.items():
        chosen = position_map({k: source[k] for k in keys})
        out = F.when(connector == F.lit(name), chosen).otherwise(out)
    return F.when(source.isNotNull(), out)


def connect_key(
    ctx: Context, key_text: Column | None
) -> tuple[Column, Column, tuple[Problem, ...]]:
    """The Kafka key ``{schema, payload}`` or a bare key object, decoded: (key, present,
    problems). A key that is not JSON, or whose fields have the wrong JSON type, is a problem
    (not silently replaced by the key columns of the row)."""
    if key_text is None or not ctx.contract.key:
        return F.lit(None).cast(ctx.key_type), F.lit(False), ()
    wire = ctx.key_wire
    schema = StructType([StructField("payload", wire), *wire.fields, StructField(CORRUPT_COL, S)])
    k = F.from_json(key_text, schema, PARSE_OPTIONS)
    payload = ctx.json_key(k["payload"], "$key.payload")
    bare = ctx.json_key(F.struct(*[k[f.name].alias(f.name) for f in wire.fields]), "$key")
    any_bare = F.lit(False)
    for f in ctx.key_schema.fields or ():
        any_bare = any_bare | ~json_absent(k[f.field or ""], f)
    has_payload = k["payload"].isNotNull()
    key = F.when(has_payload, payload.value).when(any_bare, bare.value)
    unparsed = key_text.isNotNull() & k[CORRUPT_COL].isNotNull()
    problems = (
        Problem("$key", NOT_JSON_KEY, unparsed),
        *[p.gated(~unparsed & has_payload) for p in payload.problems],
        *[p.gated(~unparsed & ~has_payload & any_bare) for p in bare.problems],
    )
    return key, key.isNotNull(), problems


def wire_mismatches(parsed: Column, schema: StructType) -> Column:
    """On a message whose parse failed (its text in ``CORRUPT_COL``): ``$: is not valid JSON``
    when it is malformed, else every field whose JSON value is not of its wire type
    (``$.payload.after.id: "abc" is not an integer``), else :data:`NOT_JSON`.

    Spark's parse keeps what it could read (partial results) and leaves a field null where the
    value had the wrong type; a field null there but not null in the message is one. Only rows
    that did not parse evaluate it: the paths are one literal array and the search is one
    higher-order function, so the code a clean row runs does not grow with the contract."""
    checked = _checked_fields(schema, "$")
    text = parsed[CORRUPT_COL]
    if not checked:
        return F.when(text.isNotNull(), F.lit(f"$: {NOT_JSON}"))
    leaves = F.array(*[F.struct(F.lit(p).alias("p"), F.lit(k).alias("k")) for p, k in checked])
    message = F.try_parse_json(text)
    read = F.try_parse_json(F.to_json(parsed))  # what the parse kept: nulls left out

    def sent(leaf: Column) -> Column:
        return F.try_variant_get(message, leaf["p"], "variant")

    def lost(leaf: Column) -> Column:
        value = sent(leaf)
        unread = F.try_variant_get(read, leaf["p"], "variant").isNull()
        return value.isNotNull() & ~F.is_variant_null(value) & unread

    def describe(leaf: Column) -> Column:
        value = F.to_json(sent(leaf))
        shown = F.when(F.length(value) > 40, F.concat(F.left(value, F.lit(37)), F.lit("...")))
        return F.concat(leaf["p"], F.lit(": "), F.coalesce(shown, value), F.lit(" is "), leaf["k"])

    wrong = F.filter(leaves, lost)
    return (
        F.when(text.isNull(), F.lit(None).cast(S))
        .when(message.isNull(), F.lit("$: is not valid JSON (malformed)"))
        .when(F.size(wrong) > 0, F.array_join(F.transform(wrong, describe), "; "))
        .otherwise(F.lit(f"$: {NOT_JSON}"))
    )


_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _checked_fields(schema: StructType, path: str) -> list[tuple[str, str]]:
    """(JSON path, what its value must be) for every field whose wire type can refuse a JSON
    value, outermost first: strings and variants take any value; arrays and maps are checked
    as a whole."""
    out: list[tuple[str, str]] = []
    for f in schema.fields:
        if f.name == CORRUPT_COL or "'" in f.name:
            continue
        sub = f"{path}.{f.name}" if _IDENTIFIER.fullmatch(f.name) else f"{path}['{f.name}']"
        kind = _json_kind(f.dataType)
        if kind is not None:
            out.append((sub, kind))
        if isinstance(f.dataType, StructType):
            out += _checked_fields(f.dataType, sub)
    return out


def _json_kind(t: DataType) -> str | None:
    """What JSON value a wire type reads (None: any value)."""
    if isinstance(t, StringType | VariantType):
        return None
    if isinstance(t, StructType | MapType):
        return "not an object"
    if isinstance(t, ArrayType):
        return "not an array"
    if isinstance(t, BooleanType):
        return "not a boolean"
    if isinstance(t, IntegralType):
        return "not an integer"
    if isinstance(t, FractionalType):
        return "not a number"
    return f"not read as {t.simpleString()}"


PAYLOAD_KEY: Final = '"payload":'
PAYLOAD_TAIL_COL: Final = "__cdc_payload_tail"
_SPAN: Final = "__cdc_span"
_END: Final = "__cdc_end"
_WRAP_OPEN: Final = '{"' + _SPAN + '":{"payload":'
_WRAP_CLOSE: Final = ',"' + _END + '":1}'


def payload_tail(text: Column) -> Column:
    """The text after the message's last ``"payload":`` (the whole text when it has none)."""
    return F.substring_index(text, PAYLOAD_KEY, -1)


def payload_only(text: Column, tail: Column, inner: StructType, whole: Column) -> Column:
    """``whole`` (the parse of the entire message ``text``), computed from ``tail`` (the text
    after the message's last ``"payload":``, see :func:`payload_tail`) when that key is the
    top-level one.

    Producers put the (large) embedded schema before the payload, so the tail is the payload
    value and the envelope's closing brace. It is parsed inside a wrapper,
    ``{"<span>":{"payload":<tail>,"<end>":1}``: the end marker is read only when the tail closes
    exactly one object, i.e. when the key was a key of the top-level object. A key nested
    deeper (a column named ``payload``, a schema that nests one) closes the wrapper early, the
    marker is not read and the whole message is parsed; so is a message without the key, or one
    whose tail is malformed. The one difference from parsing the whole message: the text before
    the payload key (the schema) is not checked for JSON syntax."""
    quick = _quick_parse(tail, inner)
    return F.when(_from_tail(text, tail, quick), quick[_SPAN]).otherwise(whole)


def _quick_parse(tail: Column, inner: StructType) -> Column:
    """The parse of ``tail`` inside the wrapper (see :func:`payload_only`)."""
    wrapped = F.concat(F.lit(_WRAP_OPEN), tail, F.lit(_WRAP_CLOSE))
    schema = StructType(
        [StructField(_SPAN, inner), StructField(_END, LongType()), StructField(CORRUPT_COL, S)]
    )
    return F.from_json(wrapped, schema, PARSE_OPTIONS)


def _from_tail(text: Column, tail: Column, quick: Column) -> Column:
    """Whether the tail's parse gives the top-level payload (see :func:`payload_only`)."""
    top_level = (
        (F.octet_length(tail) < F.octet_length(text))
        & quick[CORRUPT_COL].isNull()
        & (quick[_END] == F.lit(1))
        & quick[_SPAN]["payload"].isNotNull()
        & quick[_SPAN][CORRUPT_COL].isNull()
    )
    return F.coalesce(top_level, F.lit(False))


def envelope_column(name: str) -> str:
    """The working column an envelope field is resolved into (see ``ConnectEnvelope.explode``)."""
    return f"__cdc_env_{name}"


class ConnectEnvelope(JsonDecoder):
    """``{schema, payload}`` (or the payload alone) holding a Debezium-style envelope."""

    after_field = "after"
    before_field = "before"
    unique_field: str | None = None
    empty_image_is_absent = False
    op_path = "$.payload.op"

    def envelope_type(self, ctx: Context) -> StructType:
        env = fields(
            **{self.before_field: ctx.row_wire, self.after_field: ctx.row_wire},
            source=_source_type(ctx),
            op=S,
            ts_ms=L,
            ts_us=L,
            ts_ns=L,
            status=S,
            id=S,
            ddl=S,
            tableChanges=S,
        )
        if self.unique_field:
            env = env.add(self.unique_field, ctx.key_wire)
        return env

    def wire_schema(self, ctx: Context) -> StructType:
        """``{payload: envelope}``, or the envelope alone when ``options.schemas_enable`` is
        false (messages of the other layout are reported in ``_error``)."""
        env = self.envelope_type(ctx)
        if not self.has_schema_half(ctx):
            return env
        return StructType([StructField("payload", env)])

    def explode(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        """Envelope fields as columns; the parsed struct is dropped (fewer nested fields keep
        the plan under Spark's whole-stage-codegen field limit)."""
        env = parsed["payload"] if self.has_schema_half(ctx) else parsed
        names = self.envelope_type(ctx).fieldNames()
        keep = [F.col(quoted(c)) for c in df.columns if c != PARSED_COL]
        bad = parsed.isNull() | parsed[CORRUPT_COL].isNotNull()
        return df.select(
            *keep,
            bad.alias(BAD_JSON_COL),
            *[env[n].alias(envelope_column(n)) for n in names],
        )

    def parse(self, text: Column, ctx: Context) -> Column:
        """A ``{schema, payload}`` message is parsed from its ``payload`` key on (see
        :func:`payload_only`), so the parser does not read the embedded schema; the whole message
        is parsed only when that does not give the top-level payload."""
        whole = super().parse(text, ctx)
        if not self.has_schema_half(ctx):
            return whole
        return payload_only(text, F.col(PAYLOAD_TAIL_COL), self.parse_schema(ctx), whole)

    def prepare(self, df: Frame, text: Column, ctx: Context) -> Frame:
        if not self.has_schema_half(ctx):
            return df
        return df.select("*", payload_tail(text).alias(PAYLOAD_TAIL_COL))

    def utf8(self, text: Column, ctx: Context) -> Column:
        """Only the payload's bytes, when the parse read the payload alone: the embedded
        schema's are never read (checking a whole 4 KB message cost 4 µs, its payload's 2)."""
        if not self.has_schema_half(ctx):
            return super().utf8(text, ctx)
        tail = F.col(PAYLOAD_TAIL_COL)
        read = F.when(_from_tail(text, tail, _quick_parse(tail, self.parse_schema(ctx))), tail)
        return F.is_valid_utf8(F.coalesce(read, text))

    @staticmethod
    def has_schema_half(ctx: Context) -> bool:
        """Messages are ``{schema, payload}`` (``options.schemas_enable`` not false)."""
        return ctx.contract.option("schemas_enable", True) is not False

    def parse_problem(self, present: Column, j: Column) -> Problem:
        return Problem("$", NOT_JSON, present & F.col(BAD_JSON_COL))

    @staticmethod
    def field(j: Column, name: str) -> Column:
        """A resolved envelope field (see :meth:`explode`)."""
        return F.col(envelope_column(name))

    def image(self, j: Column, name: str, ctx: Context) -> Decoded:
        wire = self.field(j, name)
        if self.empty_image_is_absent:
            empty = F.lit(True)
            for f in ctx.row.fields or ():
                empty = empty & json_absent(wire[f.field or ""], f)
            wire = F.when(~empty, wire)
        return ctx.json_image(wire, f"$.payload.{name}")

    def controls(self, j: Column) -> list[tuple[str, Column]]:
        f = self.field
        quiet = F.lit(True)
        for name in ("before", "after", "source", "op", "ts_us", "ts_ns", "status", "ddl"):
            quiet = quiet & f(j, name).isNull()
        return [
            ("message", f(j, "op") == F.lit("m")),
            ("transaction", f(j, "status").isin("BEGIN", "END") & f(j, "id").isNotNull()),
            ("ddl", f(j, "ddl").isNotNull() | f(j, "tableChanges").isNotNull()),
            ("heartbeat", quiet & f(j, "ts_ms").isNotNull()),
        ]

    def op_code(self, j: Column) -> Column:
        return self.field(j, "op")

    def op_table(self) -> Mapping[str, str]:
        return {o: o for o in ("c", "u", "d", "r", "t")}

    def table(self, j: Column, ctx: Context) -> Column:
        source = self.field(j, "source")
        return table_struct(source["db"], source["schema"], source["table"])

    def times(self, j: Column) -> tuple[Column, Column]:
        f = self.field
        ts_ms = F.coalesce(
            f(j, "ts_ms"), floor_div(f(j, "ts_us"), 1_000), floor_div(f(j, "ts_ns"), 1_000_000)
        )
        return ts_ms, f(j, "source")["ts_ms"]

    def position(self, j: Column, ctx: Context) -> Column:
        return source_position(self.field(j, "source"), ctx)

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        after = self.image(j, self.after_field, ctx)
        before = self.image(j, self.before_field, ctx)
        control = first_control(self.controls(j))
        op = op_from(self.op_code(j), self.op_table())
        kafka_key, has_key, key_problems = connect_key(ctx, key_text)
        key = F.when(has_key, kafka_key)
        if self.unique_field:
            unique = ctx.json_key(
                self.field(j, self.unique_field), f"$.payload.{self.unique_field}"
            )
            key = F.coalesce(key, unique.value)
        key = F.coalesce(key, ctx.key_from_image(F.coalesce(after.value, before.value)))
        ts_ms, source_ts_ms = self.times(j)
        problems = [
            *after.problems,
            *before.problems,
            Problem(self.op_path, "is not a known op code", op.isNull() & control.isNull()),
            *key_problems,
        ]
        return Feed(
            op=op,
            table=self.table(j, ctx),
            key=key,
            before=before.value,
            after=after.value,
            ts_ms=ts_ms,
            source_ts_ms=source_ts_ms,
            position=self.position(j, ctx),
            control=control,
            problems=tuple(problems),
        )


class DebeziumJson(ConnectEnvelope):
    """``debezium-json`` (with or without the embedded schema)."""


# --- arcion-s3-json ----------------------------------------------------------------------------

ARCION_S3_OPS: Final = {"I": "c", "U": "u", "D": "d"}


class ArcionS3Json(JsonDecoder):
    """Arcion S3 JSON: string images, the literal ``"null"``, and ``exists`` flags."""

    uses_key = False
    texts_from_parse = True
    #: The text that stands for SQL NULL in an image.
    null_text = "null"

    def wire_schema(self, ctx: Context) -> StructType:
        namespace = fields(catalog=S, schema=S)
        return fields(
            tableName=fields(namespace=namespace, name=S),
            opType=S,
            cursor=S,
            before=ctx.row_text,
            after=ctx.row_text,
            exists=ctx.row_text,
        )

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        op = op_from(j["opType"], ARCION_S3_OPS)
        before = self.image(j, "before", ("2", "3"), ctx)
        after = self.image(j, "after", ("1", "3"), ctx)
        before_value = F.when(op != F.lit("c"), before.value)
        after_value = F.when(op != F.lit("d"), after.value)
        cursor = F.from_json(j["cursor"], MapType(S, S))
        bad_flags = Problem(
            "$.exists", "holds a flag other than 0, 1, 2 or 3", self._bad_flags(j, ctx)
        )
        problems = [
            *before.problems,
            *after.problems,
            Problem("$.opType", "is not I, U or D", op.isNull()),
            Problem("$.cursor", "is not a JSON object", cursor.isNull()),
            bad_flags,
        ]
        key = ctx.key_from_image(F.coalesce(after_value, before_value))
        name = j["tableName"]
        return Feed(
            op=op,
            table=table_struct(
                name["namespace"]["catalog"], name["namespace"]["schema"], name["name"]
            ),
            key=key,
            before=before_value,
            after=after_value,
            ts_ms=_int_text(cursor["extractionTimestamp"]),
            source_ts_ms=_int_text(cursor["timestamp"]),
            position=cursor,
            problems=tuple(problems),
        )

    @staticmethod
    def _bad_flags(j: Column, ctx: Context) -> Column:
        bad = F.lit(False)
        for name in ctx.row.field_names():
            flag = j["exists"][name]
            bad = bad | (flag.isNotNull() & ~flag.isin("0", "1", "2", "3"))
        return bad

    def image(self, j: Column, side: str, flags: tuple[str, ...], ctx: Context) -> Decoded:
        values: dict[str, Column] = {}
        present: dict[str, Column] = {}
        problems: list[Problem] = []
        for name in ctx.row.field_names():
            here = j["exists"][name].isin(*flags)
            raw = j[side][name]
            text = F.when(here & (raw != F.lit(self.null_text)), raw)
            decoded = ctx.text_value(name, text, f"$.{side}.{name}")
            values[name] = decoded.value
            present[name] = F.coalesce(here, F.lit(False))
            problems.extend(decoded.problems)
        problems += required_problems(ctx, values, present, f"$.{side}")
        value = F.struct(*[v.alias(n) for n, v in values.items()])
        return Decoded(value, tuple(problems))


def _int_text(value: Column) -> Column:
    """An integer from a JSON number or a string of digits (as ``contracts.formats._typing.lenient_int``); else null."""
    return F.when(F.trim(value).rlike(r"^-?\d+$"), F.trim(value).try_cast("long"))


# --- canal-json ------------------------------------------------------------------------------

CANAL_OPS: Final = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}
CANAL_ELEMENT: Final = "__cdc_canal_row"
#: The parse projection's ``data`` and ``old`` arrays (read by the explode only).
CANAL_DATA: Final = "__cdc_canal_data"
CANAL_OLD: Final = "__cdc_canal_old"


class CanalJson(JsonDecoder):
    """Canal FlatMessage: ``data`` exploded (one row each), ``before`` rebuilt from ``old``."""

    uses_key = False

    def wire_schema(self, ctx: Context) -> StructType:
        return fields(
            data=ArrayType(ctx.row_text),
            old=ArrayType(MapType(S, S)),
            database=S,
            table=S,
            es=L,
            ts=L,
            id=S,
            isDdl=BooleanType(),
            type=S,
        )

    def parse_columns(self, parsed: Column) -> dict[str, Column]:
        """``data`` and ``old`` as columns of their own, apart from the rest of the message: the
        explode reads them, and no exploded row carries them (each would copy the whole
        arrays: memory and time growing with rows x message size)."""
        return {
            PARSED_COL: parsed.dropFields("data", "old"),
            CANAL_DATA: parsed["data"],
            CANAL_OLD: parsed["old"],
        }

    def explode(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        data, old = F.col(CANAL_DATA), F.col(CANAL_OLD)
        rows = F.when(F.size(data) > 0, F.sequence(F.lit(0), F.size(data) - 1)).when(
            F.size(old) > 0, F.sequence(F.lit(0), F.size(old) - 1)
        )
        # one struct per row change: its index, its data element and its old element (read
        # once here, not once per column by every later expression)
        element = F.transform(
            rows,
            lambda i: F.struct(
                i.alias("index"),
                F.try_element_at(data, i + 1).alias("data"),
                F.try_element_at(old, i + 1).alias("old"),
                F.size(data).alias("data_rows"),
                F.size(old).alias("old_rows"),
            ),
        )
        keep = [F.col(quoted(c)) for c in df.columns if c not in (CANAL_DATA, CANAL_OLD)]
        return df.select(*keep, F.explode_outer(element).alias(CANAL_ELEMENT))

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        element = F.col(CANAL_ELEMENT)
        index, data, old = element["index"], element["data"], element["old"]
        op = op_from(j["type"], CANAL_OPS)
        control = first_control([("ddl", j["isDdl"])])
        legacy_delete = (op == F.lit("d")) & data.isNull()
        names = ctx.row.field_names()
        # Each wire text is decoded once: the before image takes a column from old when old
        # names it, else from data (as the after image); a legacy delete's image is old's.
        from_data = self.decode_texts({n: data[n] for n in names}, "$.data", ctx)
        from_old = self.decode_texts({n: old[n] for n in names}, "$.old", ctx)
        old_has = {n: F.coalesce(F.map_contains_key(old, F.lit(n)), F.lit(False)) for n in names}
        merged = {
            n: Decoded(
                F.when(old_has[n], from_old[n].value).otherwise(from_data[n].value),
                tuple(
                    Problem(
                        po.path,
                        po.message,
                        F.when(old_has[n], po.condition).otherwise(pd.condition),
                    )
                    for pd, po in zip(from_data[n].problems, from_old[n].problems, strict=True)
                ),
            )
            for n in names
        }
        after = self.image(from_data, dict.fromkeys(names, F.lit(True)), "$.data", ctx)
        before = self.image(
            merged, dict.fromkeys(names, old.isNotNull() | (op == F.lit("d"))), "$.old", ctx
        )
        legacy = self.image(from_old, old_has, "$.old", ctx)
        after_value = F.when(op.isin("c", "u"), after.value)
        before_value = (
            F.when(legacy_delete, legacy.value)
            .when(op == F.lit("d"), after.value)
            .when((op == F.lit("u")) & old.isNotNull(), before.value)
        )
        data_rows, old_rows = element["data_rows"], element["old_rows"]
        # an UPDATE's old holds one image per data row (fewer would invent absent pre-images)
        uneven = (op == F.lit("u")) & (old_rows >= 0) & (old_rows != data_rows)
        has_row = index.isNotNull()
        problems = [
            Problem("$.isDdl", "isDdl must be true or false", j["isDdl"].isNull()),
            *_gated(after.problems, ~legacy_delete & has_row),
            *_gated(before.problems, (op == F.lit("u")) & old.isNotNull()),
            *_gated(legacy.problems, legacy_delete),
            Problem("$.type", "is not INSERT, UPDATE or DELETE", op.isNull() & control.isNull()),
            Problem("$.data", "holds no rows", control.isNull() & op.isNotNull() & ~has_row),
            Problem(
                "$.old",
                F.concat(
                    F.lit("old has "),
                    old_rows.cast("string"),
                    F.lit(" rows but data has "),
                    data_rows.cast("string"),
                ),
                control.isNull() & uneven,
            ),
        ]
        return Feed(
            op=op,
            table=table_struct(j["database"], F.lit(None), j["table"]),
            key=ctx.key_from_image(F.coalesce(after_value, before_value)),
            before=before_value,
            after=after_value,
            ts_ms=j["ts"],
            source_ts_ms=j["es"],
            position=position_map({"id": j["id"], "row": index}),
            control=control,
            problems=tuple(problems),
            element=index,
        )

    @staticmethod
    def decode_texts(texts: dict[str, Column], path: str, ctx: Context) -> dict[str, Decoded]:
        """Each column's text decoded with Canal's text rules."""
        dialect = replace(CANAL_TEXT, time_zone=str(ctx.contract.option("time_zone", "UTC")))
        return {n: ctx.text_value(n, t, f"{path}.{n}", dialect) for n, t in texts.items()}

    @staticmethod
    def image(
        decoded: dict[str, Decoded], present: dict[str, Column], path: str, ctx: Context
    ) -> Decoded:
        """One image from its decoded columns, with their problems and the required ones."""
        values = {n: d.value for n, d in decoded.items()}
        problems = [p for d in decoded.values() for p in d.problems]
        problems += required_problems(ctx, values, present, path)
        return Decoded(F.struct(*[v.alias(n) for n, v in values.items()]), tuple(problems))


def _gated(problems: tuple[Problem, ...], gate: Column) -> list[Problem]:
    return [p.gated(gate) for p in problems]


# --- arcion-json, cdl-debezium-json, cdl-json: more Connect envelopes ---------------------------


class ArcionJson(ConnectEnvelope):
    """``arcion-json``: the Debezium envelope; ``{}`` as an image means no image. The key
    document arrives as the Kafka key (``{schema, payload}``), a delete's tombstone as a null
    value."""

    empty_image_is_absent = True


HEARTBEAT_FIELD: Final = "HEARTBEAT_IDENTIFIER"
TOP_HEARTBEAT_COL: Final = "__cdc_top_heartbeat"


class CdlHeartbeats(ConnectEnvelope):
    """Huawei CDL: a heartbeat identifier with no op and no image is a heartbeat, whether it
    comes inside the payload or as a bare ``{"HEARTBEAT_IDENTIFIER": ...}`` document."""

    def envelope_type(self, ctx: Context) -> StructType:
        return super().envelope_type(ctx).add(HEARTBEAT_FIELD, S)

    def wire_schema(self, ctx: Context) -> StructType:
        schema = super().wire_schema(ctx)
        return schema.add(HEARTBEAT_FIELD, S) if "payload" in schema.fieldNames() else schema

    def explode(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        beat = F.lit(None).cast("string")
        if self.has_schema_half(ctx):
            beat = F.when(parsed["payload"].isNull(), parsed[HEARTBEAT_FIELD])
        return super().explode(df.select("*", beat.alias(TOP_HEARTBEAT_COL)), parsed, ctx)

    def heartbeat(self, j: Column) -> Column:
        f = self.field
        beat = F.coalesce(f(j, HEARTBEAT_FIELD), F.col(TOP_HEARTBEAT_COL))
        quiet = f(j, self.after_field).isNull() & f(j, self.before_field).isNull()
        return beat.isNotNull() & quiet & self.op_code(j).isNull()


class CdlDebeziumJson(CdlHeartbeats):
    """``cdl-debezium-json`` (message_version 2.0): the Debezium envelope plus ``unique`` (the
    key columns); vendor decimals and timestamps are strings (``com.xxx.cdc.data.*``)."""

    unique_field = "unique"

    def controls(self, j: Column) -> list[tuple[str, Column]]:
        return [("heartbeat", self.heartbeat(j)), *super().controls(j)]


CDL_OPERATIONS: Final = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}


class CdlJson(CdlHeartbeats):
    """``cdl-json`` (message_version 1.0): a flat envelope — ``SEG_OWNER``, ``TABLE_NAME``,
    ``TIMESTAMP``, ``OPERATION``, ``data``/``before``, ``unique`` and the position in
    ``transaction.properties`` (``[{name, value}]``)."""

    after_field = "data"
    unique_field = "unique"
    op_path = "$.payload.OPERATION"

    def envelope_type(self, ctx: Context) -> StructType:
        properties = ArrayType(fields(name=S, value=S))
        return fields(
            data=ctx.row_wire,
            before=ctx.row_wire,
            SEG_OWNER=S,
            TABLE_NAME=S,
            TIMESTAMP=L,
            OPERATION=S,
            transaction=fields(properties=properties),
            unique=ctx.key_wire,
            HEARTBEAT_IDENTIFIER=S,
        )

    def controls(self, j: Column) -> list[tuple[str, Column]]:
        return [("heartbeat", self.heartbeat(j))]

    def op_code(self, j: Column) -> Column:
        return self.field(j, "OPERATION")

    def op_table(self) -> Mapping[str, str]:
        return CDL_OPERATIONS

    def table(self, j: Column, ctx: Context) -> Column:
        f = self.field
        return table_struct(F.lit(None), f(j, "SEG_OWNER"), f(j, "TABLE_NAME"))

    def times(self, j: Column) -> tuple[Column, Column]:
        return F.lit(None).cast("long"), self.field(j, "TIMESTAMP")

    def position(self, j: Column, ctx: Context) -> Column:
        """``{name: value}`` of the properties (the last of a repeated name wins; nulls out)."""
        props = F.coalesce(self.field(j, "transaction")["properties"], F.array())
        last = F.filter(
            props,
            lambda p, i: (
                p["name"].isNotNull()
                & ~F.exists(F.slice(props, i + 2, F.size(props)), lambda q: q["name"] == p["name"])
            ),
        )
        kept = F.filter(last, lambda p: p["value"].isNotNull())
        return F.map_from_entries(F.transform(kept, lambda p: F.struct(p["name"], p["value"])))


# --- shareplex-json ----------------------------------------------------------------------------

#: meta.op spellings (lower case, single spaces) → the op, or a control kind in brackets.
SHAREPLEX_ACTIONS: Final = {
    "ins": "c",
    "insert": "c",
    "upd": "u",
    "update": "u",
    "update after": "u",
    "del": "d",
    "delete": "d",
    "trunc": "t",
    "truncate": "t",
    "update before": "[other]",
    "drop column": "[ddl]",
    "add column": "[ddl]",
    "modify column": "[ddl]",
    "rename column": "[ddl]",
    "ddl": "[ddl]",
}
SHAREPLEX_POSITION: Final = ("scn", "rowid", "trans", "seq", "idx")


class ShareplexJson(JsonDecoder):
    """SharePlex ``{meta, data, key}`` with text values. ``data`` is the row (insert, delete)
    or the changed columns (update, whose before image is ``key``); columns a message leaves
    out are null."""

    uses_key = False
    texts_from_parse = True

    def wire_schema(self, ctx: Context) -> StructType:
        text_map = MapType(S, S)
        return fields(meta=text_map, data=text_map, key=text_map)

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        meta, data, key = j["meta"], j["data"], j["key"]
        spelled = F.trim(F.regexp_replace(F.lower(_at(meta, "op")), r"[_\s]+", " "))
        action = op_from(spelled, SHAREPLEX_ACTIONS)
        control = F.when(action.startswith("["), F.regexp_extract(action, r"\[(\w+)\]", 1))
        op = F.when(control.isNull(), action)
        has_data = F.coalesce(F.size(data) > 0, F.lit(False))
        # a delete's row: data, else key (``data or key or {}``)
        delete_from = F.when(has_data, data).otherwise(key)
        names = ctx.row.field_names()
        after_text = {n: F.when(_has(data, n), _at(data, n)).otherwise(_at(key, n)) for n in names}
        after_here = {n: _has(data, n) | ((op == F.lit("u")) & _has(key, n)) for n in names}
        before_source = F.when(op == F.lit("d"), delete_from).otherwise(key)
        before_text = {n: _at(before_source, n) for n in names}
        before_here = {n: _has(before_source, n) for n in names}
        after = _text_image(after_text, after_here, "$.data", ctx)
        before = _text_image(before_text, before_here, "$.key", ctx)
        is_delete = op == F.lit("d")
        after_value = F.when(op.isin("c", "u"), after.value)
        before_value = F.when(op == F.lit("u"), F.when(key.isNotNull(), before.value)).when(
            is_delete, before.value
        )
        names_lit = [F.lit(n) for n in names]

        def extra(image: Column) -> Column:
            return F.exists(F.map_keys(image), lambda k: ~k.isin(*names_lit))

        problems = [
            Problem("$.meta", "is missing (it holds op, table and position)", meta.isNull()),
            Problem("$.meta.op", "is not a known SharePlex op", meta.isNotNull() & action.isNull()),
            Problem("$.meta.table", "is not a non-empty string", _at(meta, "table") == F.lit("")),
            *_gated(after.problems, op.isin("c", "u")),
            *_gated(_with_path(before.problems, "$.key", "$.data"), is_delete & has_data),
            *_gated(before.problems, (is_delete & ~has_data) | (op == F.lit("u"))),
            Problem(
                "$.data",
                "holds a column that is not in the contract",
                op.isin("c", "u", "d") & F.coalesce(extra(data), F.lit(False)),
            ),
            Problem(
                "$.key",
                "holds a column that is not in the contract",
                ((op == F.lit("u")) | (is_delete & ~has_data))
                & F.coalesce(extra(key), F.lit(False)),
            ),
        ]
        position = F.transform_values(
            F.map_filter(meta, lambda k, _v: k.isin(*SHAREPLEX_POSITION)),
            lambda _k, v: F.coalesce(v, F.lit("null")),
        )
        return Feed(
            op=op,
            table=self.table(_at(meta, "table"), ctx),
            key=ctx.key_from_image(F.coalesce(after_value, before_value)),
            before=before_value,
            after=after_value,
            ts_ms=_epoch_ms(_at(meta, "posttime")),
            source_ts_ms=_epoch_ms(_at(meta, "time")),
            position=F.coalesce(position, F.create_map().cast(POSITION_TYPE)),
            control=control,
            problems=tuple(problems),
        )

    @staticmethod
    def table(name: Column, ctx: Context) -> Column:
        """``OWNER.TABLE`` → schema OWNER, name TABLE (no dot: no schema); absent → the
        contract's table."""
        last = F.substring_index(name, ".", -1)
        owner = F.when(F.instr(name, ".") > 0, F.regexp_extract(name, r"^(.*)\.[^.]*$", 1))
        fallback = constant_table(None, ctx.contract.table.schema_, ctx.contract.table.name)
        return F.when(name.isNull(), fallback).otherwise(table_struct(F.lit(None), owner, last))


# --- opencdc-json ------------------------------------------------------------------------------

OPENCDC_OPS: Final = {"create": "c", "update": "u", "delete": "d", "snapshot": "r"}
RAW_COLUMN: Final = "raw"
_CREATED_AT: Final = "opencdc.createdAt"
_READ_AT: Final = "opencdc.readAt"
_COLLECTION: Final = "opencdc.collection"


class OpencdcJson(JsonDecoder):
    """Conduit OpenCDC records. Structured data (a JSON object), and raw data (base64) whose
    bytes are a JSON object, are decoded natively; other raw bytes fill the contract's bytes
    column ``raw`` when it has one and are an ``_error`` otherwise."""

    uses_key = False

    def wire_schema(self, ctx: Context) -> StructType:
        # images as text: an object comes back as its JSON text, raw data as its base64
        return fields(
            position=S,
            operation=S,
            metadata=MapType(S, S),
            key=S,
            payload=fields(before=S, after=S),
        )

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        op = op_from(j["operation"], OPENCDC_OPS)
        meta = j["metadata"]
        after = self.data(j["payload"]["after"], "$.payload.after", ctx)
        before = self.data(j["payload"]["before"], "$.payload.before", ctx)
        position = F.coalesce(j["position"], F.lit(""))
        bad_position = j["position"].isNotNull() & padded_base64(j["position"]).isNull()
        collection = F.nullif(_at(meta, _COLLECTION), F.lit(""))
        c = ctx.contract.table_id
        table = F.when(collection.isNull(), constant_table(c.database, c.schema, c.name))
        problems = [
            Problem("$.operation", "is not create, update, delete or snapshot", op.isNull()),
            Problem("$.position", "is not valid base64", bad_position),
            *after.problems,
            *before.problems,
        ]
        return Feed(
            op=op,
            table=table.otherwise(table_struct(F.lit(None), F.lit(None), collection)),
            key=F.coalesce(
                ctx.key_from_image(F.coalesce(after.value, before.value)),
                self.record_key(j["key"], ctx),
            ),
            before=before.value,
            after=after.value,
            ts_ms=floor_div(_int_text(_at(meta, _READ_AT)), 1_000_000),
            source_ts_ms=floor_div(_int_text(_at(meta, _CREATED_AT)), 1_000_000),
            position=position_map({"position": position}),
            problems=tuple(problems),
        )

    @staticmethod
    def structured(text: Column) -> tuple[Column, Column, Column]:
        """(fields as a text map, raw bytes, whether the text is neither) of one data value."""
        is_object = F.startswith(F.ltrim(text), F.lit("{"))
        raw = F.when(text.isNotNull() & ~is_object, padded_base64(text))
        raw_text = raw.cast("string")
        raw_json = F.when(F.startswith(raw_text, F.lit("{")), raw_text)
        fields_map = F.from_json(
            F.when(is_object, text).otherwise(raw_json), MapType(S, S), {"mode": "PERMISSIVE"}
        )
        undecodable = text.isNotNull() & ~is_object & raw.isNull()
        return fields_map, raw, undecodable

    def data(self, text: Column, path: str, ctx: Context) -> Decoded:
        fields_map, raw, undecodable = self.structured(text)
        is_raw = raw.isNotNull() & fields_map.isNull()
        names = ctx.row.field_names()
        texts = {n: _at(fields_map, n) for n in names}
        image = _text_image(texts, {n: _has(fields_map, n) for n in names}, path, ctx)
        raw_column = ctx.row.get_field(RAW_COLUMN)
        raw_fits = raw_column is not None and raw_column.type == "bytes"
        values = [
            (
                F.when(is_raw, raw).otherwise(image.value[n])
                if n == RAW_COLUMN and raw_fits
                else image.value[n]
            ).alias(n)
            for n in names
        ]
        names_lit = [F.lit(n) for n in names]
        extra = F.exists(F.map_keys(fields_map), lambda k: ~k.isin(*names_lit))
        problems = [
            Problem(path, "is neither a JSON object nor valid base64", undecodable),
            Problem(
                path, "holds a column that is not in the contract", F.coalesce(extra, F.lit(False))
            ),
            *_gated(image.problems, fields_map.isNotNull()),
        ]
        if not raw_fits:
            problems.append(
                Problem(
                    path,
                    "is raw data (base64 bytes that are not a JSON object) and the contract "
                    "has no bytes column 'raw' to hold it",
                    is_raw,
                )
            )
        return Decoded(F.when(text.isNotNull(), F.struct(*values)), tuple(problems))

    @staticmethod
    def record_key(text: Column, ctx: Context) -> Column:
        """The record's own structured key, decoded to the key columns (null when raw)."""
        if not ctx.contract.key:
            return F.lit(None).cast(ctx.key_type)
        fields_map = F.from_json(
            F.when(F.startswith(F.ltrim(text), F.lit("{")), text), MapType(S, S)
        )
        values = {
            k: ctx.text_value(k, _at(fields_map, k), f"$.key.{k}").value for k in ctx.contract.key
        }
        return ctx.key_from_image(F.struct(*[v.alias(k) for k, v in values.items()]))


# --- helpers for text images held in maps -----------------------------------------------------


def _at(image: Column, name: str) -> Column:
    """A map entry (null when the map or the entry is absent; never an ANSI error)."""
    return F.try_element_at(image, F.lit(name))


def _has(image: Column, name: str) -> Column:
    return F.coalesce(F.map_contains_key(image, F.lit(name)), F.lit(False))


def _text_image(
    texts: dict[str, Column], present: dict[str, Column], path: str, ctx: Context
) -> Decoded:
    """Text values decoded with the core's text rules; a present null in a required column is
    a problem."""
    values: dict[str, Column] = {}
    problems: list[Problem] = []
    for name, text in texts.items():
        decoded = ctx.text_value(name, text, f"{path}.{name}")
        values[name] = decoded.value
        problems.extend(decoded.problems)
    problems += required_problems(ctx, values, present, path)
    return Decoded(F.struct(*[v.alias(n) for n, v in values.items()]), tuple(problems))


def _with_path(problems: tuple[Problem, ...], old: str, new: str) -> tuple[Problem, ...]:
    return tuple(replace(p, path=new + p.path.removeprefix(old)) for p in problems)


def _epoch_ms(text: Column) -> Column:
    """ISO-8601 text (zone-less: UTC) → epoch milliseconds; null when unreadable."""
    return F.unix_millis(zoned_text_timestamp(text))


def _csv_decoder() -> JsonDecoder:
    """``arcion-s3-csv`` is parsed with ``from_csv`` (spark_bindings.csv_format)."""
    from spark_bindings.csv_format import ArcionS3Csv

    return ArcionS3Csv()


#: Format name → its JSON decoder.
JSON_DECODERS: Final[Mapping[str, JsonDecoder]] = {
    "debezium-json": DebeziumJson(),
    "arcion-s3-json": ArcionS3Json(),
    "canal-json": CanalJson(),
    "arcion-json": ArcionJson(),
    "cdl-json": CdlJson(),
    "cdl-debezium-json": CdlDebeziumJson(),
    "shareplex-json": ShareplexJson(),
    "opencdc-json": OpencdcJson(),
    "arcion-s3-csv": _csv_decoder(),
}
