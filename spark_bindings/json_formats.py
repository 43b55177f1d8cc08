"""JSON formats: one ``from_json`` per message with a pruned wire schema, then native expressions.

Each decoder states the *wire* schema of the fields it needs (only those: ``from_json`` skips
everything else, so the embedded ``schema`` half of a ``{schema, payload}`` message is never
materialized) and maps the parsed struct to a :class:`~spark_bindings.feed.Feed`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from contracts.formats._connect import POSITION_FIELDS
from spark_bindings.context import Context, required_problems
from spark_bindings.expressions import CANAL_TEXT, Decoded, Problem, floor_div
from spark_bindings.feed import (
    PARSED_COL,
    Feed,
    first_control,
    op_from,
    position_map,
    table_struct,
)

CORRUPT_COL: Final = "_corrupt_record"
BAD_JSON_COL: Final = "__cdc_bad_json"
NOT_JSON: Final = "is not valid JSON for the contract's wire schema (malformed or a wrong type)"

S = StringType()
L = LongType()


def fields(**types: DataType) -> StructType:
    """A StructType from keyword arguments (field order kept)."""
    return StructType([StructField(name, t) for name, t in types.items()])


class JsonDecoder:
    """Base of the JSON format decoders."""

    #: Whether a row of this format may hold a Kafka key to decode.
    uses_key: bool = True

    def wire_schema(self, ctx: Context) -> StructType:
        raise NotImplementedError

    def explode(self, df: DataFrame, parsed: Column) -> DataFrame:
        """One row per change (identity for every format but Canal)."""
        return df

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        raise NotImplementedError

    # --- shared ------------------------------------------------------------------------------

    def parse(self, text: Column, ctx: Context) -> Column:
        schema = self.wire_schema(ctx).add(CORRUPT_COL, S)
        options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_COL}
        return F.from_json(text, schema, options)

    def parse_problem(self, text: Column, j: Column) -> Problem:
        bad = text.isNotNull() & (j.isNull() | j[CORRUPT_COL].isNotNull())
        return Problem("$", NOT_JSON, bad)


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


def connect_key(ctx: Context, key_text: Column | None) -> tuple[Column, Column]:
    """The Kafka key ``{schema, payload}`` or a bare key object, decoded: (key, present)."""
    if key_text is None or not ctx.contract.key:
        return F.lit(None).cast(ctx.key_type), F.lit(False)
    wire = ctx.key_wire
    k = F.from_json(key_text, StructType([StructField("payload", wire), *wire.fields]))
    payload = ctx.json_key(k["payload"], "$key.payload").value
    bare = ctx.json_key(F.struct(*[k[f.name].alias(f.name) for f in wire.fields]), "$key").value
    any_bare = F.lit(False)
    for f in wire.fields:
        any_bare = any_bare | k[f.name].isNotNull()
    key = F.when(k["payload"].isNotNull(), payload).when(any_bare, bare)
    return key, key.isNotNull()


class ConnectEnvelope(JsonDecoder):
    """``{schema, payload}`` (or the payload alone) holding a Debezium-style envelope."""

    after_field = "after"
    before_field = "before"
    unique_field: str | None = None
    empty_image_is_absent = False

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
        if ctx.contract.option("schemas_enable", True) is False:
            return env
        return StructType([StructField("payload", env)])

    def explode(self, df: DataFrame, parsed: Column) -> DataFrame:
        """Envelope fields as columns; the parsed struct is dropped (fewer nested fields keep
        the plan under Spark's whole-stage-codegen field limit)."""
        top = df.select(parsed.alias("p")).schema["p"].dataType
        assert isinstance(top, StructType)
        env = parsed["payload"] if "payload" in top.fieldNames() else parsed
        names = [f.name for f in top.fields if f.name not in ("payload", CORRUPT_COL)]
        if "payload" in top.fieldNames():
            inner = top["payload"].dataType
            assert isinstance(inner, StructType)
            names = inner.fieldNames()
        keep = [F.col(f"`{c}`") for c in df.columns if c != PARSED_COL]
        bad = parsed.isNull() | parsed[CORRUPT_COL].isNotNull()
        return df.select(
            *keep,
            bad.alias(BAD_JSON_COL),
            *[env[n].alias(f"__cdc_env_{n}") for n in names],
        )

    def parse_problem(self, text: Column, j: Column) -> Problem:
        return Problem("$", NOT_JSON, text.isNotNull() & F.col(BAD_JSON_COL))

    @staticmethod
    def field(j: Column, name: str) -> Column:
        """A resolved envelope field (see :meth:`explode`)."""
        return F.col(f"__cdc_env_{name}")

    def image(self, j: Column, name: str, ctx: Context) -> Decoded:
        wire = self.field(j, name)
        if self.empty_image_is_absent:
            empty = F.lit(True)
            for f in ctx.row_wire.fields:
                empty = empty & wire[f.name].isNull()
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
        kafka_key, has_key = connect_key(ctx, key_text)
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
            Problem("$.payload.op", "is not a known op code", op.isNull() & control.isNull()),
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

    @staticmethod
    def image(j: Column, side: str, flags: tuple[str, ...], ctx: Context) -> Decoded:
        values: dict[str, Column] = {}
        present: dict[str, Column] = {}
        problems: list[Problem] = []
        for name in ctx.row.field_names():
            here = j["exists"][name].isin(*flags)
            raw = j[side][name]
            text = F.when(here & (raw != F.lit("null")), raw)
            decoded = ctx.text_value(name, text, f"$.{side}.{name}")
            values[name] = decoded.value
            present[name] = F.coalesce(here, F.lit(False))
            problems.extend(decoded.problems)
        problems += required_problems(ctx, values, present, f"$.{side}")
        value = F.struct(*[v.alias(n) for n, v in values.items()])
        return Decoded(value, tuple(problems))


def _int_text(value: Column) -> Column:
    """An integer from a JSON number or a string of digits (as ``int_or_none``); else null."""
    return F.when(F.trim(value).rlike(r"^-?\d+$"), F.trim(value).try_cast("long"))


# --- canal-json ------------------------------------------------------------------------------

CANAL_OPS: Final = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}
CANAL_ELEMENT: Final = "__cdc_canal_row"
CANAL_INDEX: Final = "__cdc_canal_index"


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

    def explode(self, df: DataFrame, parsed: Column) -> DataFrame:
        rows = F.when(
            F.size(parsed["data"]) > 0, F.sequence(F.lit(0), F.size(parsed["data"]) - 1)
        ).when(F.size(parsed["old"]) > 0, F.sequence(F.lit(0), F.size(parsed["old"]) - 1))
        return df.select("*", F.explode_outer(rows).alias(CANAL_INDEX))

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        index = F.col(CANAL_INDEX)
        data = F.try_element_at(j["data"], index + 1)
        old = F.try_element_at(j["old"], index + 1)
        op = op_from(j["type"], CANAL_OPS)
        control = first_control([("ddl", j["isDdl"])])
        legacy_delete = (op == F.lit("d")) & data.isNull()
        after_text: dict[str, Column] = {}
        before_text: dict[str, Column] = {}
        for name in ctx.row.field_names():
            old_has = F.coalesce(F.map_contains_key(old, F.lit(name)), F.lit(False))
            after_text[name] = data[name]
            before_text[name] = F.when(old_has, old[name]).otherwise(data[name])
        after = self.image(after_text, F.lit(True), "$.data", ctx)
        before = self.image(before_text, old.isNotNull() | (op == F.lit("d")), "$.old", ctx)
        legacy = self.image(
            {n: old[n] for n in ctx.row.field_names()},
            {
                n: F.coalesce(F.map_contains_key(old, F.lit(n)), F.lit(False))
                for n in ctx.row.field_names()
            },
            "$.old",
            ctx,
        )
        after_value = F.when(op.isin("c", "u"), after.value)
        before_value = (
            F.when(legacy_delete, legacy.value)
            .when(op == F.lit("d"), after.value)
            .when((op == F.lit("u")) & old.isNotNull(), before.value)
        )
        problems = [
            *_gated(after.problems, ~legacy_delete),
            *_gated(before.problems, (op == F.lit("u")) & old.isNotNull()),
            *_gated(legacy.problems, legacy_delete),
            Problem("$.type", "is not INSERT, UPDATE or DELETE", op.isNull() & control.isNull()),
            Problem(
                "$.data",
                "holds no rows",
                control.isNull() & op.isNotNull() & index.isNull(),
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
        )

    @staticmethod
    def image(
        texts: dict[str, Column], present: Column | dict[str, Column], path: str, ctx: Context
    ) -> Decoded:
        dialect = replace(CANAL_TEXT, time_zone=str(ctx.contract.option("time_zone", "UTC")))
        values: dict[str, Column] = {}
        problems: list[Problem] = []
        for name, text in texts.items():
            decoded = ctx.text_value(name, text, f"{path}.{name}", dialect)
            values[name] = decoded.value
            problems.extend(decoded.problems)
        here = present if isinstance(present, dict) else dict.fromkeys(values, present)
        problems += required_problems(ctx, values, here, path)
        return Decoded(F.struct(*[v.alias(n) for n, v in values.items()]), tuple(problems))


def _gated(problems: tuple[Problem, ...], gate: Column) -> list[Problem]:
    return [Problem(p.path, p.message, gate & p.condition) for p in problems]


#: Format name → its JSON decoder.
JSON_DECODERS: Final[Mapping[str, JsonDecoder]] = {
    "debezium-json": DebeziumJson(),
    "arcion-s3-json": ArcionS3Json(),
    "canal-json": CanalJson(),
}
