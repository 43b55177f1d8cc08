"""Confluent-framed Avro of a Connect envelope, decoded by spark-avro's ``from_avro``.

Used instead of the fastavro ``mapInArrow`` decoder (:mod:`spark_bindings.avro`) when the
spark-avro package is on the classpath; the output is the same feed. The decode is planned on
the driver:

1. **Writer schema ids.** ``writer_ids=`` names them; else ``subject=`` (every version of that
   registry subject); else, for a batch DataFrame, the distinct ids in its values (one extra
   pass over the data). A streaming DataFrame needs one of the first two. The key's ids come
   the same way (``key_writer_ids=``, ``key_subject=``, by default ``<topic>-key`` when
   ``subject=`` is ``<topic>-value``, or the distinct ids of a batch).
2. **One ``from_avro`` per writer id**, with that writer schema stripped of its logical types:
   logical types do not change the binary encoding, and without them every value arrives as
   its base type (epoch days and micros as integers, decimals as their unscaled bytes), the
   same wire values the JSON path parses. Each id's value is evaluated only on rows carrying
   that id, in a projection of its own.
3. **Conformed to the JSON wire schema.** Each id's Catalyst struct (whatever spark-avro made
   of that writer schema) is mapped field by field to the envelope type the JSON decoder of
   the format parses into: fields the writer lacks are null, bytes become base64 text (what
   Connect's JSON converter writes), numbers are cast. From there the JSON path's rules decode
   the row (decimals, timestamps, dates, required columns), so both encodings share one set
   of rules.

Rows in = rows out. A value that is not framed, carries an id that was not planned or is not
in the registry, or does not decode as Avro (spark-avro in ``PERMISSIVE`` mode gives a struct
of nulls; a writer record with a required field then reads as malformed) gets ``_error``.
One difference from the fastavro decoder: Java Avro's reader stops at the end of the datum, so
bytes left after it are not reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    MapType,
    NullType,
    StringType,
    StructType,
    VariantType,
)

from contracts.errors import ContractsError, InputError, UnknownFormatError
from spark_bindings.avro import HEADER_SIZE, MAGIC
from spark_bindings.build import SpecDecoder, decoder_for
from spark_bindings.context import Context
from spark_bindings.expressions import Problem
from spark_bindings.feed import ABSENT_TYPE, Feed
from spark_bindings.frame import Frame
from spark_bindings.parse import BAD_JSON_COL, Decoder, envelope_column
from spark_bindings.schema import quoted

if TYPE_CHECKING:
    from registry_sync.client import RegistryConfig

#: The most writer schema ids one decode plans for (each is a ``from_avro`` expression).
MAX_WRITER_IDS: Final = 64
#: spark-avro's Catalyst type property, removed with the logical types.
_CATALYST_TYPE_PROP: Final = "spark.sql.catalyst.type"


def spark_from_avro(data: Column, writer_schema: str) -> Column:
    """spark-avro's ``from_avro`` in ``PERMISSIVE`` mode (a malformed value: all fields null)."""
    from pyspark.sql.avro.functions import from_avro

    return from_avro(data, writer_schema, {"mode": "PERMISSIVE"})


#: How a ``from_avro`` column is built (tests without the spark-avro jar put a stand-in here).
FROM_AVRO: Callable[[Column, str], Column] = spark_from_avro


# --- planning --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Writer:
    """One writer schema id: its Avro schema without logical types, or why it cannot be read."""

    schema_id: int
    schema: str | None = None
    failure: str | None = None


@dataclass(frozen=True)
class Plan:
    """The writer schemas a decode reads, for the value and for the key."""

    values: tuple[Writer, ...]
    keys: tuple[Writer, ...] = ()


def plan(
    df: DataFrame,
    value_col: str,
    key_col: str | None,
    fetch: Callable[[int], Mapping[str, Any] | ContractsError],
    versions: Callable[[str], list[int]],
    options: Mapping[str, Any],
) -> Plan:
    """Which writer schemas to read (see the module doc): ``fetch`` gets one schema by id,
    ``versions`` the ids of every version of a subject; the ids of a batch not named by the
    options are scanned in one pass for value and key together."""
    scanned = _Scan(df, [value_col] if key_col is None else [value_col, key_col])
    value_ids = _ids(df, value_col, "", options, versions, scanned)
    key_ids = _ids(df, key_col, "key_", options, versions, scanned) if key_col else []
    return Plan(
        values=tuple(_writer(i, fetch) for i in value_ids),
        keys=tuple(_writer(i, fetch) for i in key_ids),
    )


def _ids(
    df: DataFrame,
    col: str,
    prefix: str,
    options: Mapping[str, Any],
    versions: Callable[[str], list[int]],
    scanned: _Scan,
) -> list[int]:
    """The writer ids of ``col``: ``<prefix>writer_ids=``, ``<prefix>subject=`` or a scan."""
    given: Iterable[int] | None = options.get(f"{prefix}writer_ids")
    subject: str | None = options.get(f"{prefix}subject")
    derived = given is None and subject is None and prefix == "key_"
    if derived:
        subject = _key_subject(options.get("subject"))
    if given is not None:
        ids = sorted({int(i) for i in given})
    elif subject is not None:
        try:
            ids = sorted(set(versions(subject)))
        except InputError:
            if not derived:
                raise
            ids = []  # no key subject beside the value's: keys come from the rows
    elif df.isStreaming:
        raise InputError(
            f"a streaming decode with from_avro needs {prefix}writer_ids= or {prefix}subject= "
            "(the writer schema ids cannot be read from a stream before it runs)"
        )
    else:
        ids = scanned.ids(col)
    if len(ids) > MAX_WRITER_IDS:
        raise InputError(
            f"{len(ids)} writer schema ids for {col!r}: at most {MAX_WRITER_IDS} per decode"
        )
    return ids


def _key_subject(value_subject: Any) -> str | None:
    """The key subject beside a value subject named by TopicNameStrategy (``<topic>-value``)."""
    suffix = "-value"
    if isinstance(value_subject, str) and value_subject.endswith(suffix):
        return value_subject[: -len(suffix)] + "-key"
    return None


class _Scan:
    """The distinct schema ids of the framed values of some columns, read in one pass over
    the data the first time any column's are asked for."""

    def __init__(self, df: DataFrame, columns: Sequence[str]) -> None:
        self.df = df
        self.columns = list(columns)
        self._found: dict[str, list[int]] | None = None

    def ids(self, col: str) -> list[int]:
        if self._found is None:
            sets = []
            for c in self.columns:
                raw = _binary(F.col(quoted(c)))
                sets.append(F.collect_set(F.when(_framed(raw), _schema_id(raw))).alias(c))
            row = self.df.agg(*sets).collect()[0]
            self._found = {c: sorted(int(i) for i in row[c]) for c in self.columns}
        return self._found[col]


def _writer(schema_id: int, fetch: Callable[[int], Mapping[str, Any] | ContractsError]) -> Writer:
    found = fetch(schema_id)
    if isinstance(found, ContractsError):
        return Writer(schema_id, failure=found.what)
    return Writer(schema_id, schema=json.dumps(base_types(found)))


def base_types(avro: Any) -> Any:
    """An Avro schema without logical types (and spark-avro's Catalyst type property)."""
    if isinstance(avro, list):
        return [base_types(a) for a in avro]
    if not isinstance(avro, dict):
        return avro
    return {
        k: base_types(v)
        for k, v in avro.items()
        if not (k in ("logicalType", _CATALYST_TYPE_PROP) and isinstance(v, str))
    }


# --- the frame header ------------------------------------------------------------------------------


def _binary(col: Column) -> Column:
    return col.cast("binary")


def _framed(raw: Column) -> Column:
    return (F.octet_length(raw) >= HEADER_SIZE) & (F.hex(raw.substr(1, 1)) == F.lit(f"{MAGIC:02X}"))


def _schema_id(raw: Column) -> Column:
    return F.conv(F.hex(raw.substr(2, 4)), 16, 10).cast("long")


def _payload(raw: Column) -> Column:
    return raw.substr(F.lit(HEADER_SIZE + 1), F.octet_length(raw) - HEADER_SIZE)


# --- conforming a Catalyst value to the JSON wire type ---------------------------------------------


def conform(value: Column, source: DataType, target: DataType, where: str) -> Column:
    """``value`` (of Spark type ``source``) as the JSON path's wire type ``target``."""
    if source == target:
        return value
    if isinstance(source, NullType):
        return F.lit(None).cast(target)
    if isinstance(target, StructType):
        return _conform_struct(value, source, target, where)
    if isinstance(target, ArrayType) and isinstance(source, ArrayType):
        return F.transform(
            value, lambda x: conform(x, source.elementType, target.elementType, f"{where}[]")
        )
    if isinstance(target, MapType) and isinstance(source, MapType):
        return F.transform_values(
            value, lambda _k, v: conform(v, source.valueType, target.valueType, f"{where}{{}}")
        )
    if isinstance(target, VariantType) and isinstance(source, BinaryType):
        # a Decimal's unscaled bytes: the base64 text JsonConverter would write, as a variant
        return F.base64(value).cast(target)
    if isinstance(target, StringType):
        if isinstance(source, BinaryType):
            return F.base64(value)
        if isinstance(source, StructType | ArrayType | MapType):
            return F.to_json(value)
        return value.cast(target)
    if _castable(source, target):
        return value.cast(target)
    raise InputError(
        f"{where}: the writer's {source.simpleString()} cannot be read as "
        f"the contract's {target.simpleString()}"
    )


def _conform_struct(value: Column, source: DataType, target: StructType, where: str) -> Column:
    if not isinstance(source, StructType):
        raise InputError(
            f"{where}: the writer's {source.simpleString()} is not the record the contract expects"
        )
    have = {f.name: f.dataType for f in source.fields}
    parts = [
        (
            conform(value[f.name], have[f.name], f.dataType, f"{where}.{f.name}")
            if f.name in have
            else F.lit(None).cast(f.dataType)
        ).alias(f.name)
        for f in target.fields
    ]
    return F.when(value.isNotNull(), F.struct(*parts))


def _castable(source: DataType, target: DataType) -> bool:
    """Whether a plain cast reads ``source`` as ``target`` (numbers, strings, booleans)."""
    not_scalar = (StructType, ArrayType, MapType, BinaryType)
    if isinstance(source, not_scalar) or isinstance(target, not_scalar):
        return False
    return not (
        isinstance(target, BooleanType) and not isinstance(source, BooleanType | StringType)
    )


# --- the decoder ------------------------------------------------------------------------------------

#: Working columns and fields (the parsed struct carries what the feed needs past the parse).
_ID_COL: Final = "__cdc_avro_id"
#: The message's writer schema id, carried past the parse.
_WRITER: Final = "__cdc_avro_writer"
_FRAME_COL: Final = "__cdc_avro_frame"
_KEY_ID_COL: Final = "__cdc_avro_key_id"
_KEY_FRAMED_COL: Final = "__cdc_avro_key_framed"
_OK: Final = "__cdc_avro_ok"
_ERROR: Final = "__cdc_avro_error"
_KEY: Final = "__cdc_avro_key"
_KEY_ERROR: Final = "__cdc_avro_key_error"


def _value_col(schema_id: int) -> str:
    return f"__cdc_avro_v{schema_id}"


def _key_col(schema_id: int) -> str:
    return f"__cdc_avro_k{schema_id}"


class AvroFramed(Decoder):
    """A Connect-envelope decoder reading Confluent-framed Avro through ``from_avro``.

    It plugs into the JSON decode (:func:`spark_bindings.decode.decode_json_frame`):
    ``prepare`` evaluates each writer's ``from_avro`` once (on the rows of its id), ``parse``
    picks the message's writer and conforms it to the envelope's wire type, and the wrapped
    decoder builds the feed from there."""

    texts_from_parse = False
    object_messages = False  # binary Avro

    def __init__(
        self,
        inner: SpecDecoder,
        plan: Plan,
        df: DataFrame,
        ctx: Context,
        value_col: str = "value",
        key_col: str = "key",
    ) -> None:
        self.inner = inner
        self.value_col = value_col
        self.key_col = key_col
        self.uses_key = bool(plan.keys) and key_col in df.columns and bool(ctx.contract.key)
        self._types: dict[str, DataType] = {}
        #: Each readable writer's value conformed to its target (built once, when checked).
        self._conformed: dict[str, Column] = {}
        values = self._usable(df, plan.values, _value_col, inner.envelope_type(ctx), "")
        keys = self._usable(df, plan.keys, _key_col, ctx.key_wire, "key ") if self.uses_key else ()
        self.plan = Plan(values, keys)

    def _usable(
        self,
        df: DataFrame,
        writers: Sequence[Writer],
        column: Callable[[int], str],
        target: StructType,
        what: str,
    ) -> tuple[Writer, ...]:
        """The writers, each one spark-avro cannot read or the contract cannot take marked
        failed (its messages get ``_error``; the others still decode)."""
        out = []
        for w in writers:
            if w.schema is not None:
                name = column(w.schema_id)
                try:
                    probe = df.select(FROM_AVRO(F.lit(b"").cast("binary"), w.schema).alias(name))
                    self._types[name] = probe.schema.fields[0].dataType
                    self._conformed[name] = conform(
                        F.col(name), self._types[name], target, f"{what}schema id {w.schema_id}"
                    )
                except InputError as err:
                    w = Writer(w.schema_id, failure=err.what)
                except Exception as err:  # spark-avro refused the schema at analysis
                    first = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
                    w = Writer(
                        w.schema_id,
                        failure=f"spark-avro cannot read schema id {w.schema_id}: {first}",
                    )
            out.append(w)
        return tuple(out)

    def wire_schema(self, ctx: Context) -> StructType:
        return self.inner.envelope_type(ctx)

    def prepare(self, df: Frame, text: Column, ctx: Context) -> Frame:
        raw = _binary(F.col(quoted(self.value_col)))
        framed = _framed(raw)
        schema_id = F.when(framed, _schema_id(raw))
        columns = [
            schema_id.alias(_ID_COL),
            _frame_error(raw, framed, schema_id, self.plan.values).alias(_FRAME_COL),
        ]
        for i, schema in _readable(self.plan.values):
            parsed = F.when(schema_id == i, FROM_AVRO(_payload(raw), schema))
            columns.append(parsed.alias(_value_col(i)))
        if self.uses_key:
            columns += self._key_columns()
        return df.select("*", *columns)

    def _key_columns(self) -> list[Column]:
        raw = _binary(F.col(quoted(self.key_col)))
        framed = F.coalesce((F.octet_length(raw) > HEADER_SIZE) & _framed(raw), F.lit(False))
        key_id = F.when(framed, _schema_id(raw))
        columns = [key_id.alias(_KEY_ID_COL), framed.alias(_KEY_FRAMED_COL)]
        for i, schema in _readable(self.plan.keys):
            parsed = F.when(key_id == i, FROM_AVRO(_payload(raw), schema))
            columns.append(parsed.alias(_key_col(i)))
        return columns

    def parse(self, text: Column, ctx: Context) -> Column:
        """The message's envelope (its writer's, conformed to the wire type), why it could not
        be read (null when it could), and the same two for the Kafka key."""
        target = self.inner.envelope_type(ctx)
        env, ok = self._pick(self.plan.values, _ID_COL, _value_col, target)
        error = F.coalesce(F.col(_FRAME_COL), F.when(~ok, _malformed(F.col(_ID_COL))))
        parts = [env[f.name].alias(f.name) for f in target.fields]
        parts += [error.alias(_ERROR), F.col(_ID_COL).alias(_WRITER)]
        if self.uses_key:
            key, key_ok = self._pick(self.plan.keys, _KEY_ID_COL, _key_col, ctx.key_wire)
            framed, key_id = F.col(_KEY_FRAMED_COL), F.col(_KEY_ID_COL)
            key_error = F.when(
                framed,
                F.coalesce(
                    _id_failure(key_id, self.plan.keys), F.when(~key_ok, _malformed(key_id))
                ),
            )
            parts += [F.when(framed & key_ok, key).alias(_KEY), key_error.alias(_KEY_ERROR)]
        return F.struct(*parts)

    def _pick(
        self,
        writers: Sequence[Writer],
        id_col: str,
        column: Callable[[int], str],
        target: StructType,
    ) -> tuple[Column, Column]:
        """The value of the row's writer conformed to ``target``, and whether it decoded."""
        value: Column = F.lit(None).cast(target)
        ok: Column = F.lit(False)
        for i, schema in reversed(_readable(writers)):
            name = column(i)
            mine = F.col(id_col) == i
            value = F.when(mine, self._conformed[name]).otherwise(value)
            ok = F.when(mine, _decoded(F.col(name), self._types[name], schema)).otherwise(ok)
        return value, F.coalesce(ok, F.lit(False))

    def explode(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        """Envelope fields as the columns the wrapped decoder reads, the errors beside them."""
        from spark_bindings.feed import PARSED_COL

        names = self.inner.envelope_type(ctx).fieldNames()
        keep = [F.col(quoted(c)) for c in df.columns if c != PARSED_COL]
        extra = [_ERROR, _WRITER]
        if self.uses_key:
            extra += [_KEY, _KEY_ERROR]
        return df.select(
            *keep,
            F.lit(False).alias(BAD_JSON_COL),
            *[parsed[n].alias(envelope_column(n)) for n in names],
            *[parsed[n].alias(n) for n in extra],
        )

    def parse_problem(self, present: Column, j: Column) -> Problem:
        error = F.col(_ERROR)
        return Problem("$", error, present & error.isNotNull())

    def parse_report(self, parsed: Column, ctx: Context) -> Column | None:
        return None  # the frame and writer errors say what they are

    def unreadable(self, text: Column, ctx: Context) -> Column:
        return F.lit(None).cast("string")  # binary Avro

    def key_unreadable(self, key_text: Column) -> Column:
        return F.lit(None).cast("string")  # binary Avro

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        feed = self.inner.feed(j, None, ctx)
        feed = replace(feed, absent=self.absent(feed, ctx))
        if not self.uses_key:
            return feed
        key = ctx.key_from_image(ctx.json_key(F.col(_KEY), "$key").value)
        problem = Problem("$key", F.col(_KEY_ERROR), F.col(_KEY_ERROR).isNotNull())
        return replace(feed, key=F.coalesce(key, feed.key), problems=(*feed.problems, problem))

    def absent(self, feed: Feed, ctx: Context) -> Column:
        """The contract's columns a message's writer schema has no field for (an older
        version): absent from its images, as the core's decoder leaves them out."""
        images = self.inner.spec.images
        columns = ctx.row.field_names()
        out: Column = F.array().cast(ABSENT_TYPE)
        for schema_id, schema in _readable(self.plan.values):
            known = _image_fields(json.loads(schema), images.after[0])
            missing = [c for c in columns if known is not None and c not in known]
            if not missing:
                continue
            listed = [
                F.when(side.isNotNull(), F.lit(f"{label}.{c}"))
                for label, side in (("before", feed.before), ("after", feed.after))
                for c in missing
            ]
            found = F.filter(F.array(*listed), lambda x: x.isNotNull())
            out = F.when(F.col(_WRITER) == F.lit(schema_id), found).otherwise(out)
        return out


def _image_fields(avro: Any, name: str) -> set[str] | None:
    """The field names of the row record in an envelope record's field ``name`` (None when
    the writer has no such field); a record named earlier is referred to by its name."""
    records: dict[str, Any] = {}

    def collect(node: Any, namespace: str) -> None:
        if isinstance(node, list):
            for n in node:
                collect(n, namespace)
        elif isinstance(node, dict):
            space = node.get("namespace", namespace)
            if node.get("type") == "record":
                short = str(node.get("name", ""))
                records[short] = records[f"{space}.{short}" if space else short] = node
                for f in node.get("fields", []):
                    collect(f.get("type"), space)
            else:
                for key in ("items", "values"):
                    collect(node.get(key), space)

    collect(avro, "")
    if not isinstance(avro, dict):
        return None
    for f in avro.get("fields", []):
        if isinstance(f, dict) and f.get("name") == name:
            types = f.get("type")
            for t in types if isinstance(types, list) else [types]:
                found = records.get(t) if isinstance(t, str) else t
                if isinstance(found, dict) and found.get("type") == "record":
                    return {str(x.get("name")) for x in found.get("fields", [])}
    return None


def _readable(writers: Sequence[Writer]) -> list[tuple[int, str]]:
    """(id, schema) of the writers that can be read."""
    return [(w.schema_id, w.schema) for w in writers if w.schema is not None]


def _malformed(schema_id: Column) -> Column:
    return F.concat(
        F.lit("not valid Avro for schema id "),
        schema_id.cast("string"),
        F.lit(" (truncated or malformed)"),
    )


def _decoded(value: Column, source: DataType, schema: str) -> Column:
    """Whether ``from_avro`` read the value: in ``PERMISSIVE`` mode a malformed value is a
    struct of nulls, told apart from a record by the writer's required fields."""
    required = _required_fields(json.loads(schema))
    if not isinstance(source, StructType) or not required:
        return value.isNotNull()
    out = F.lit(False)
    for name in required:
        out = out | value[name].isNotNull()
    return value.isNotNull() & out


def _required_fields(avro: Any) -> list[str]:
    """The fields of a record schema that cannot be null."""
    if not isinstance(avro, dict) or avro.get("type") != "record":
        return []
    return [f["name"] for f in avro.get("fields", []) if not _may_be_null(f.get("type"))]


def _may_be_null(avro: Any) -> bool:
    if avro == "null":
        return True
    if isinstance(avro, list):
        return any(_may_be_null(a) for a in avro)
    return isinstance(avro, dict) and avro.get("type") == "null"


def _frame_error(
    raw: Column, framed: Column, schema_id: Column, writers: Sequence[Writer]
) -> Column:
    """Why a present value cannot be read with any planned writer (null when it can)."""
    size = F.octet_length(raw)
    short = F.concat(
        F.lit("not Confluent wire format: "),
        size.cast("string"),
        F.lit(f" bytes, the header alone needs {HEADER_SIZE}"),
    )
    magic = F.concat(
        F.lit("not Confluent wire format: magic byte is "),
        F.conv(F.hex(raw.substr(1, 1)), 16, 10),
        F.lit(f", expected {MAGIC}"),
    )
    return (
        F.when(raw.isNull(), F.lit(None).cast("string"))
        .when(size < HEADER_SIZE, short)
        .when(~framed, magic)
        .otherwise(_id_failure(schema_id, writers))
    )


def _id_failure(schema_id: Column, writers: Sequence[Writer]) -> Column:
    """Why the writer of ``schema_id`` cannot be read (null when it can)."""
    failures = {w.schema_id: w.failure for w in writers if w.failure is not None}
    readable = [w.schema_id for w in writers if w.schema is not None]
    unplanned = F.concat(
        F.lit("schema id "),
        schema_id.cast("string"),
        F.lit(" was not planned for this decode (pass writer_ids= or subject=)"),
    )
    out = F.when(schema_id.isNull() | schema_id.isin(*readable), F.lit(None).cast("string"))
    for schema_id_, failure in failures.items():
        out = out.when(schema_id == schema_id_, F.lit(failure))
    return out.otherwise(unplanned)


def decode_from_avro(
    df: DataFrame,
    ctx: Context,
    value_col: str,
    key_col: str,
    drop_control_records: bool,
    registry: RegistryConfig,
    options: Mapping[str, Any],
) -> DataFrame:
    """The canonical feed of a Confluent-framed Connect-envelope topic, read with
    ``from_avro`` (see the module doc; ``registry`` is the registry's settings)."""
    from registry_sync.client import RegistryClient
    from spark_bindings.avro import fetch_avro_schema, subject_schema_ids
    from spark_bindings.decode import decode_json_frame

    inner = connect_decoder(ctx)
    client = RegistryClient(registry)
    with_key = key_col in df.columns and bool(ctx.contract.key)
    planned = plan(
        df,
        value_col,
        key_col if with_key else None,
        lambda schema_id: fetch_avro_schema(client, schema_id, "$"),
        lambda subject: subject_schema_ids(client, subject),
        options,
    )
    decoder = AvroFramed(inner, planned, df, ctx, value_col, key_col)
    frame = decode_json_frame(Frame(df), ctx, decoder, value_col, key_col, drop_control_records)
    return frame.df


def connect_decoder(ctx: Context) -> SpecDecoder:
    """The decoder of a Connect-envelope format (the ones with an Avro encoding)."""
    decoder = decoder_for(ctx.contract.format)
    if decoder.spec.connect is None:
        raise UnknownFormatError(
            f"format {ctx.contract.format!r} cannot be read with from_avro (only Connect-envelope "
            "formats; dts-avro is read by the fastavro decoder)"
        )
    return decoder
