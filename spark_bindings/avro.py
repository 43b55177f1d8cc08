"""Avro-encoded topics → the canonical change feed (same columns as the JSON path).

Two kinds of Avro message values:

- **DTS Avro** (``dts-avro``): one ``com.alibaba.dts.formats.avro.Record`` per message,
  optionally behind the Confluent wire header. The schema is fixed; records are decoded and
  normalized by the core's own format code (:mod:`contracts.formats.dts_avro`).
- **Confluent-framed Avro of a Connect envelope** (e.g. ``debezium-json`` with the
  ``AvroConverter``; say so with ``options.value_encoding: avro`` in the contract or
  ``encoding="avro"`` in the call): magic byte 0, the writer schema id (4 bytes big-endian), then
  the Avro binary of the envelope as AvroData writes it. Writer schemas are fetched from the
  registry by id (``registry=`` a URL, a ``SchemaRegistryClient`` config dict or a client) and
  each id gets its own reader, so a topic that mixes schema versions decodes correctly.

Decoding runs in ``mapInArrow`` over Arrow batches: each value is read with fastavro's
``schemaless_reader``, normalized by the core format, and the batch's output columns are built
as Arrow arrays of the feed's Spark types. Rows in = rows out; a value that does not decode
(wrong magic byte, unknown schema id, truncated bytes, a value that does not fit its column)
becomes a row with ``_error`` set, never a failed job.

When spark-avro is on the classpath (:func:`spark_avro_available`), Confluent-framed
envelopes are read with its ``from_avro`` instead (:mod:`spark_bindings.from_avro`: one
expression per writer schema id, conformed to the JSON path's wire types, same feed). DTS
records always use fastavro: their column values are multi-type unions spark-avro would turn
into ``member0..N`` structs.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from pyspark.sql import DataFrame, SparkSession

if TYPE_CHECKING:
    from registry_sync.client import RegistryClient, RegistryConfig
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
    DecimalType,
    FloatType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from contracts.contract import Contract
from contracts.errors import ContractsError, InputError, UnknownFormatError, reason_of
from contracts.events import ChangeEvent, ControlRecord, Normalized, TableId
from contracts.formats import get_format
from contracts.formats.base import Format, Message, SharedJson
from contracts.schema import ConnectSchema
from spark_bindings.context import Context
from spark_bindings.feed import (
    ABSENT_COL,
    ABSENT_TYPE,
    CANONICAL,
    CONTROL_COL,
    ERROR_COL,
    LAST_COLUMNS,
    POSITION_TYPE,
    TABLE_TYPE,
    all_nullable,
)


def avro_records(format_name: str) -> bool:
    """Whether a format's messages are Avro records whatever the contract says (its
    registered ``input_kind``)."""
    return get_format(format_name).input_kind == "avro"


#: ``encoding`` values (call option, or ``options.value_encoding`` in the contract).
ENCODINGS: Final = ("json", "avro")
ENCODING_OPTION: Final = "value_encoding"
MAGIC: Final = 0
HEADER_SIZE: Final = 5
#: Avro logical types fastavro keeps: the others are read as their base type, the wire value
#: the Connect decoders of the core expect (epoch days / millis / micros as integers).
KEPT_LOGICAL_TYPES: Final = frozenset({"decimal"})


def wants_avro(contract: Contract, options: Mapping[str, Any]) -> bool:
    """Whether a contract's topic is Avro-encoded (format, ``encoding=`` or the contract option)."""
    if avro_records(contract.format):
        return True
    encoding = options.get("encoding") or contract.options.get(ENCODING_OPTION) or "json"
    if encoding not in ENCODINGS:
        raise InputError(f"unknown encoding {encoding!r} (expected one of: {', '.join(ENCODINGS)})")
    return bool(encoding == "avro")


#: the class ``from_avro`` builds: present exactly when the spark-avro jar is loaded
SPARK_AVRO_CLASS: Final = "org.apache.spark.sql.avro.AvroDataToCatalyst"


def spark_avro_available(spark: SparkSession) -> bool:
    """Whether spark-avro's ``from_avro`` can be used in this session.

    The class is looked up through the thread's context class loader (Spark's own, which holds
    the jars of ``--packages`` and ``spark.jars``), not the system class path: jars added the
    usual way are not on the latter, and a one-argument ``Class.forName`` would miss them.
    """
    jvm = spark._jvm
    if jvm is None:
        return False
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        if loader is None:
            loader = jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
        jvm.java.lang.Class.forName(SPARK_AVRO_CLASS, False, loader)
    except Exception:  # py4j's Py4JJavaError (ClassNotFoundException) and friends
        return False
    return True


def decode_avro(
    df: DataFrame,
    ctx: Context,
    value_col: str,
    key_col: str,
    drop_control_records: bool,
    *,
    registry: Any = None,
    use_spark_avro: bool | None = None,
    encoding: str | None = None,
    **options: Any,
) -> DataFrame:
    """Decode Avro message values of ``df`` into the canonical change feed (see module doc).

    ``use_spark_avro``: None (default) reads Confluent-framed envelopes with spark-avro's
    ``from_avro`` when it is on the classpath and with fastavro otherwise; True insists on
    ``from_avro``, False on fastavro. The ``from_avro`` decode takes ``writer_ids=`` /
    ``subject=`` (and ``key_writer_ids=`` / ``key_subject=``), see
    :mod:`spark_bindings.from_avro`."""
    contract = ctx.contract
    if _with_from_avro(df, contract, use_spark_avro):
        from spark_bindings.from_avro import decode_from_avro

        if registry is None:
            raise InputError(_NEEDS_REGISTRY)
        return decode_from_avro(
            df, ctx, value_col, key_col, drop_control_records, registry_config(registry), options
        )
    spec = _DecoderSpec(
        contract=contract,
        registry=registry_config(registry) if registry is not None else None,
        has_key=key_col in df.columns,
    )
    spec.check()
    passthrough = [c for c in df.columns if c not in (value_col, key_col)]
    out_schema = _output_schema(df, ctx, passthrough)
    run = _batch_runner(spec, value_col, key_col, passthrough, out_schema)
    out = df.mapInArrow(run, out_schema)
    if drop_control_records:
        out = out.where(F.col(CONTROL_COL).isNull())
    return out


_NEEDS_REGISTRY: Final = (
    "Confluent-framed Avro needs registry= (a Schema Registry URL or client) to fetch writer "
    "schemas by id"
)


def _with_from_avro(df: DataFrame, contract: Contract, wanted: bool | None) -> bool:
    """Whether to decode with spark-avro's ``from_avro`` (see :func:`decode_avro`)."""
    if wanted is False:
        return False
    if avro_records(contract.format):
        if wanted:
            raise InputError(
                f"{contract.format} records are read by the fastavro decoder only (their "
                "column values are multi-type unions); drop use_spark_avro=True"
            )
        return False
    available = spark_avro_available(df.sparkSession)
    if wanted and not available:
        raise InputError("use_spark_avro=True but spark-avro is not on the classpath")
    return available


def registry_config(registry: Any) -> RegistryConfig:
    """The registry settings from a URL, a Confluent ``SchemaRegistryClient`` config dict or
    client, a :class:`~registry_sync.client.RegistryConfig` or a client of ours (shipped to
    executors, which open their own client). The driver probes the registry once here: a URL
    that does not answer like a registry fails the decode at once (exit 2), before any row."""
    from registry_sync.client import RegistryClient, RegistryConfig

    if isinstance(registry, RegistryConfig):
        config = registry
    elif isinstance(registry, RegistryClient):
        config = registry.config
    elif isinstance(registry, str):
        config = RegistryConfig(url=registry)
    elif isinstance(registry, Mapping) and "url" in registry:
        config = RegistryConfig.from_confluent(registry)
    else:
        conf = getattr(registry, "_conf", None)  # Confluent's SchemaRegistryClient keeps it there
        if not isinstance(conf, Mapping) or "url" not in conf:
            raise InputError("registry= must be a URL, a SchemaRegistryClient config or a client")
        config = RegistryConfig.from_confluent(conf)
    with RegistryClient(config) as client:
        client.ensure_registry()
    return config


# --- output schema ------------------------------------------------------------------------------


def _output_schema(df: DataFrame, ctx: Context, passthrough: Sequence[str]) -> StructType:
    types: dict[str, DataType] = {
        "op": StringType(),
        "table": TABLE_TYPE,
        "key": all_nullable(ctx.key_type),
        "before": all_nullable(ctx.row_type),
        "after": all_nullable(ctx.row_type),
        "ts_ms": _LONG,
        "source_ts_ms": _LONG,
        "position": POSITION_TYPE,
    }
    fields = [StructField(name, types[name]) for name in CANONICAL]
    by_name = {f.name: f for f in df.schema.fields}
    fields += [by_name[name] for name in passthrough]
    fields += [
        StructField(CONTROL_COL, StringType()),
        StructField(ERROR_COL, StringType()),
        StructField(ABSENT_COL, ABSENT_TYPE),
    ]
    return StructType(fields)


_LONG: Final = LongType()


# --- what runs on the executors -----------------------------------------------------------------


@dataclass(frozen=True)
class _DecoderSpec:
    """Everything an executor needs to build its :class:`_RowDecoder` (picklable)."""

    contract: Contract
    registry: RegistryConfig | None
    has_key: bool

    def check(self) -> None:
        fmt = get_format(self.contract.format)
        if avro_records(self.contract.format):
            return
        from contracts.formats._connect import ConnectEnvelopeFormat

        if not isinstance(fmt, ConnectEnvelopeFormat):
            raise UnknownFormatError(
                f"format {self.contract.format!r} has no Avro encoding (Connect-envelope "
                "formats and dts-avro do)"
            )
        if self.registry is None:
            raise InputError(_NEEDS_REGISTRY)

    def cache_key(self) -> str:
        return json.dumps(
            [self.contract.model_dump(mode="json"), self.registry], sort_keys=True, default=str
        )


_DECODERS: dict[str, _RowDecoder] = {}
_DECODERS_LOCK = threading.Lock()


def _decoder_for(spec: _DecoderSpec) -> _RowDecoder:
    """One decoder per (contract, registry) per Python worker, reused across batches."""
    key = spec.cache_key()
    with _DECODERS_LOCK:
        found = _DECODERS.get(key)
        if found is None:
            if len(_DECODERS) > 16:
                _DECODERS.clear()
            found = _DECODERS[key] = _RowDecoder.of(spec)
        return found


def _batch_runner(
    spec: _DecoderSpec,
    value_col: str,
    key_col: str,
    passthrough: Sequence[str],
    out_schema: StructType,
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow_schema = to_arrow_schema(out_schema, timezone="UTC")
        decoder = _decoder_for(spec)
        for batch in batches:
            values = batch.column(value_col).to_pylist()
            keys = batch.column(key_col).to_pylist() if spec.has_key else [None] * len(values)
            rows = [decoder.decode(v, k) for v, k in zip(values, keys, strict=True)]
            columns = _feed_arrays(rows, arrow_schema, decoder)
            arrays = [
                *columns[: len(CANONICAL)],
                *[batch.column(name) for name in passthrough],
                *columns[len(CANONICAL) :],
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)

    return run


# --- one message → one output row ----------------------------------------------------------------


@dataclass
class _Row:
    """The canonical fields of one output row, as Python values of the feed's Spark types."""

    op: str | None = None
    table: dict[str, Any] | None = None
    key: dict[str, Any] | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    ts_ms: int | None = None
    source_ts_ms: int | None = None
    position: list[tuple[str, str]] | None = field(default_factory=list)
    control: str | None = None
    error: str | None = None
    absent: list[str] = field(default_factory=list)

    def failed(self, text: str) -> _Row:
        self.op = self.key = self.before = self.after = self.control = None
        self.error = text
        self.absent = []
        return self


@dataclass
class _Envelope:
    """A decoded message ready for the core format's ``normalize``, and its known facts."""

    message: Message
    table: TableId | None = None
    ts_ms: int | None = None
    source_ts_ms: int | None = None
    position: Mapping[str, Any] | None = None


class _RowDecoder:
    """Decodes one message value (and key) into a :class:`_Row` with the core format."""

    def __init__(
        self,
        spec: _DecoderSpec,
        read: Callable[[bytes, bytes | None], _Envelope],
        read_key: Callable[[bytes], Any] | None = None,
    ):
        self.contract = spec.contract
        self.format: Format = get_format(spec.contract.format)
        self.read = read
        self.read_key = read_key
        self.image = _image_converter(spec.contract.row_schema)
        self.columns = spec.contract.row_schema.field_names()
        self.key_names = list(spec.contract.key)
        self.required = [
            f.field or "" for f in spec.contract.row_schema.fields or () if not _nullable(f)
        ]

    @classmethod
    def of(cls, spec: _DecoderSpec) -> _RowDecoder:
        if avro_records(spec.contract.format):
            return cls(spec, _read_dts)
        assert spec.registry is not None
        reader = _ConfluentReader(spec.registry, spec.has_key)
        return cls(spec, reader.read, reader.read_key)

    def decode(self, value: bytes | None, key: bytes | None) -> _Row:
        row = _Row()
        if value is None:
            row.position = None
            row = self._normalized(row, [ControlRecord("tombstone", "value is null")])
            row.key = self._tombstone_key(key)
            return row
        try:
            envelope = self.read(bytes(value), None if key is None else bytes(key))
        except ContractsError as err:
            return row.failed(_error_text(err))
        except Exception as err:  # fastavro raises plain exceptions on malformed bytes
            return row.failed(f"$: not valid Avro ({reason_of(err)})")
        row.table = envelope.table.to_json() if envelope.table is not None else None
        row.ts_ms, row.source_ts_ms = envelope.ts_ms, envelope.source_ts_ms
        row.position = _position(envelope.position)
        try:
            events = self.format.normalize(envelope.message, self.contract)
        except ContractsError as err:
            return row.failed(_error_text(err))
        except Exception as err:
            return row.failed(f"$: cannot be normalized ({reason_of(err)})")
        return self._normalized(row, events)

    def _tombstone_key(self, key: bytes | None) -> dict[str, Any] | None:
        """The key of a tombstone (the row it deletes); null when it cannot be read."""
        if key is None or self.read_key is None:
            return None
        try:
            return self._key(self.read_key(bytes(key)))
        except Exception:
            return None

    def _normalized(self, row: _Row, events: list[Normalized]) -> _Row:
        if len(events) != 1:
            return row.failed(f"$: decoded to {len(events)} events, expected one")
        event = events[0]
        if isinstance(event, ControlRecord):
            row.control = event.kind
            if event.table is not None:
                row.table = event.table.to_json()
            row.key = self._key(event.key)
            return row
        return self._change(row, event)

    def _change(self, row: _Row, event: ChangeEvent) -> _Row:
        row.op, row.table = event.op, event.table.to_json()
        row.ts_ms, row.source_ts_ms = event.ts_ms, event.source_ts_ms
        row.position = _position(event.position)
        problems: list[str] = []
        for name, values in (("before", event.before), ("after", event.after)):
            if values is None:
                continue
            row.absent += [f"{name}.{col}" for col in self.columns if col not in values]
            problems += [
                f"$.{name}.{col}: is null but the column is required"
                for col in self.required
                if values.get(col) is None
            ]
            try:
                setattr(row, name, self.image(values, f"$.{name}"))
            except ContractsError as err:
                problems.append(_error_text(err))
        if problems:
            return row.failed("; ".join(problems))
        image = row.after if row.after is not None else row.before
        key = event.key if event.key is not None else image
        row.key = self._key(key)
        return row

    def _key(self, values: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The key struct (null unless every key column has a value)."""
        if not self.key_names or not isinstance(values, Mapping):
            return None
        picked = {k: values.get(k) for k in self.key_names}
        if any(v is None for v in picked.values()):
            return None
        try:
            return self.image(picked, "$key", partial=True)
        except ContractsError:
            return None


def _nullable(f: ConnectSchema) -> bool:
    return f.optional or f.has_default


def _error_text(err: ContractsError) -> str:
    where = (err.where or "").strip() or "$"
    return f"{where}: {err.what}"


def _position(values: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """``map<string,string>`` entries: strings as they are, other values as JSON text."""
    return [(k, _json_text(v)) for k, v in (values or {}).items() if v is not None]


def _json_text(value: Any) -> str:
    """A position value as text: a string itself, an integer its digits (what ``json.dumps``
    gives, at a tenth of the cost), anything else its JSON text."""
    if isinstance(value, str):
        return value
    if type(value) is int:
        return str(value)
    return json.dumps(value)


# --- DTS ------------------------------------------------------------------------------------------


def _read_dts(value: bytes, _key: bytes | None) -> _Envelope:
    """One DTS record (plain or behind the Confluent header) and its envelope facts."""
    from contracts.formats import dts_avro

    try:
        messages = list(dts_avro.split_records(value, "value"))
    except InputError as err:
        raise InputError(err.what, "$") from None
    if len(messages) != 1:
        raise InputError(f"a message must hold one DTS record, found {len(messages)}", "$")
    record = messages[0].value
    try:
        facts = dts_avro.envelope_facts(record)
    except ContractsError:
        facts = None  # normalize reports it
    return _Envelope(
        message=Message(value=record, where=""),
        table=facts.table if facts else None,
        ts_ms=facts.ts_ms if facts else None,
        source_ts_ms=facts.source_ts_ms if facts else None,
        position=facts.position if facts else None,
    )


# --- Confluent-framed Connect envelopes -----------------------------------------------------------


@dataclass(frozen=True)
class _WriterSchema:
    """One registry schema id: its fastavro reader and its Connect schema (as JSON)."""

    parsed: Any
    connect: SharedJson


class _ConfluentReader:
    """Reads Confluent-framed values (and keys) with one reader per writer schema id."""

    def __init__(self, registry: RegistryConfig, has_key: bool) -> None:
        self.conf = registry
        self.has_key = has_key
        self._client: Any = None
        self._schemas: dict[int, _WriterSchema | ContractsError] = {}

    def read(self, value: bytes, key: bytes | None) -> _Envelope:
        payload = self._decode(value, "$")
        schema_id = int.from_bytes(value[1:HEADER_SIZE], "big")
        writer = self._writer(schema_id, "$")
        message_key = None
        if key is not None and _framed_key(key):
            key_id = int.from_bytes(key[1:HEADER_SIZE], "big")
            message_key = {"schema": self._writer(key_id, "$key").connect}
            message_key["payload"] = self._decode(key, "$key")
        return _Envelope(
            message=Message(
                value={"schema": writer.connect, "payload": payload}, key=message_key, where=""
            ),
            **_connect_facts(payload),
        )

    def read_key(self, key: bytes) -> Any:
        """A framed key's decoded payload (None when the key is not framed)."""
        return self._decode(key, "$key") if _framed_key(key) else None

    def _decode(self, data: bytes, where: str) -> Any:
        if len(data) < HEADER_SIZE:
            raise InputError(
                f"not Confluent wire format: {len(data)} bytes, the header alone needs "
                f"{HEADER_SIZE}",
                where,
            )
        if data[0] != MAGIC:
            raise InputError(
                f"not Confluent wire format: magic byte is {data[0]}, expected {MAGIC}", where
            )
        schema_id = int.from_bytes(data[1:HEADER_SIZE], "big")
        writer = self._writer(schema_id, where)
        import fastavro

        buffer = io.BytesIO(data)
        buffer.seek(HEADER_SIZE)
        try:
            decoded = fastavro.schemaless_reader(buffer, writer.parsed, None)
        except Exception as err:
            raise InputError(
                f"not valid Avro for schema id {schema_id} (truncated or malformed: "
                f"{reason_of(err)})",
                where,
            ) from None
        if buffer.tell() != len(data):
            raise InputError(
                f"{len(data) - buffer.tell()} bytes left after the Avro value of schema id "
                f"{schema_id}",
                where,
            )
        return decoded

    def _writer(self, schema_id: int, where: str) -> _WriterSchema:
        found = self._schemas.get(schema_id)
        if found is None:
            found = self._fetch(schema_id, where)
            if not isinstance(found, ContractsError) or getattr(found, "permanent", False):
                self._schemas[schema_id] = found
        if isinstance(found, ContractsError):
            raise found
        return found

    def _fetch(self, schema_id: int, where: str) -> _WriterSchema | ContractsError:
        from contracts.translate.avro import avro_to_connect
        from registry_sync.client import RegistryClient

        if self._client is None:
            self._client = RegistryClient(self.conf)
        avro = fetch_avro_schema(self._client, schema_id, where)
        if isinstance(avro, ContractsError):
            return avro
        import fastavro

        try:
            parsed = fastavro.parse_schema(_base_types(avro))
            connect = SharedJson(avro_to_connect(avro).to_json())
        except Exception as err:
            return InputError(f"schema id {schema_id} is not usable: {reason_of(err)}", where)
        return _WriterSchema(parsed, connect)


def fetch_avro_schema(client: RegistryClient, schema_id: int, where: str) -> Any:
    """The Avro schema (parsed JSON) of a registry schema id, or the error saying why not
    (``permanent`` when the registry answered that the id does not exist: only its own
    "not found", 40403). A registry that cannot be used is raised, not made a row error."""
    from registry_sync.protocol import RegistryError, RegistryUnavailableError

    try:
        found = client.schema_by_id(schema_id)
    except RegistryUnavailableError as err:  # may pass: this row fails, the next one retries
        return InputError(f"registry unreachable for schema id {schema_id}: {err.what}", where)
    except RegistryError:
        raise
    if found is None:
        failure = InputError(f"schema id {schema_id} is not in the registry (40403)", where)
        failure.permanent = True  # type: ignore[attr-defined]
        return failure
    if found.schema_type not in (None, "AVRO"):
        return InputError(f"schema id {schema_id} is {found.schema_type}, not AVRO", where)
    try:
        return json.loads(found.schema or "")
    except ValueError as err:
        return InputError(f"schema id {schema_id} is not JSON: {reason_of(err)}", where)


def subject_schema_ids(client: RegistryClient, subject: str) -> list[int]:
    """The schema ids of every version of a registry subject."""
    ids: list[int] = []
    for number in client.versions(subject):
        found = client.version(subject, number)
        if found is not None and found.schema_id is not None:
            ids.append(found.schema_id)
    if not ids:
        raise InputError(f"subject {subject!r} has no versions in the registry", subject)
    return ids


def _framed_key(key: bytes) -> bool:
    return len(key) > HEADER_SIZE and key[0] == MAGIC


def _base_types(avro: Any) -> Any:
    """The schema with logical types other than :data:`KEPT_LOGICAL_TYPES` removed."""
    if isinstance(avro, list):
        return [_base_types(a) for a in avro]
    if not isinstance(avro, dict):
        return avro
    out = {k: _base_types(v) for k, v in avro.items()}
    if out.get("logicalType") not in (None, *KEPT_LOGICAL_TYPES):
        del out["logicalType"]
    return out


def _connect_facts(payload: Any) -> dict[str, Any]:
    """Table, timestamps and position of a Debezium-style payload (kept on error rows)."""
    if not isinstance(payload, dict):
        return {}
    source = payload.get("source")
    if not isinstance(source, dict):
        return {"ts_ms": _int(payload.get("ts_ms"))}
    return {
        "table": TableId(
            database=source.get("db"), schema=source.get("schema"), name=source.get("table")
        ),
        "ts_ms": _int(payload.get("ts_ms")),
        "source_ts_ms": _int(source.get("ts_ms")),
    }


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- Python values → values of the feed's Spark types ---------------------------------------------

Converter = Callable[[Any, str], Any]


def _image_converter(row: ConnectSchema) -> Callable[..., dict[str, Any]]:
    """A row image (dict of core-decoded values) → a dict of the feed's Spark-typed values."""
    from spark_bindings.schema import spark_type

    fields = [(f.field or "", _converter(spark_type(f, "decoded"))) for f in row.fields or ()]
    by_name = dict(fields)

    def convert(values: Mapping[str, Any], path: str, partial: bool = False) -> dict[str, Any]:
        items = ((n, by_name[n]) for n in values) if partial else iter(fields)
        out: dict[str, Any] = {}
        for name, conv in items:
            value = values.get(name)
            # the path is built only for the values that need a conversion (it names a misfit)
            out[name] = value if value is None or conv is _same else conv(value, f"{path}.{name}")
        return out

    return convert


def _converter(target: DataType) -> Converter:
    """A function fitting one core-decoded value to ``target`` (raising DecodeError)."""
    if isinstance(target, DecimalType):
        return _decimal_converter(target)
    if isinstance(target, StructType):
        inner = [(f.name, _converter(f.dataType)) for f in target.fields]

        def struct(value: Any, path: str) -> Any:
            if not isinstance(value, Mapping):
                raise _misfit(value, target, path)
            return {
                n: v if (v := value.get(n)) is None or c is _same else c(v, f"{path}.{n}")
                for n, c in inner
            }

        return struct
    for kind, conv in _LEAF_CONVERTERS:
        if isinstance(target, kind):
            return conv
    return _same


def _same(value: Any, _path: str) -> Any:
    return value


#: Enough digits to quantize any Decimal a writer sends to a Spark decimal (precision ≤ 38)
#: without rounding; one context for every conversion (building one costs a microsecond).
_WIDE_DECIMALS: Final = decimal.Context(prec=80)


def _decimal_converter(target: DecimalType) -> Converter:
    quantum = decimal.Decimal(1).scaleb(-target.scale)
    limit = decimal.Decimal(10) ** (target.precision - target.scale)

    def convert(value: Any, path: str) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            value = decimal.Decimal(value)
        if not isinstance(value, decimal.Decimal):
            raise _misfit(value, target, path)
        try:
            fitted = value.quantize(quantum, context=_WIDE_DECIMALS)
        except decimal.InvalidOperation:
            raise _misfit(value, target, path) from None
        if fitted != value or abs(fitted) >= limit:
            raise _misfit(value, target, path)
        return fitted

    return convert


def _timestamp(value: Any, path: str) -> Any:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    raise _misfit(value, TimestampType(), path)


def _text(value: Any, path: str) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, dt.time):
        return value.isoformat(timespec="microseconds")
    raise _misfit(value, StringType(), path)


def _float(value: Any, path: str) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _misfit(value, FloatType(), path)


_LEAF_CONVERTERS: Final[tuple[tuple[type, Converter], ...]] = (
    (TimestampType, _timestamp),
    (StringType, _text),
    (FloatType, _float),
)


def _misfit(value: Any, target: DataType, path: str) -> ContractsError:
    from contracts.errors import DecodeError

    shown = repr(value)
    shown = shown if len(shown) <= 50 else shown[:47] + "..."
    return DecodeError(f"{shown} does not fit Spark type {target.simpleString()}", path)


# --- rows → Arrow arrays ----------------------------------------------------------------------------


def _feed_arrays(rows: list[_Row], arrow_schema: Any, decoder: _RowDecoder) -> list[Any]:
    """The canonical columns and ``_control``/``_error``/``_absent`` of a batch, as Arrow
    arrays."""
    import pyarrow as pa

    names = [*CANONICAL, "control", "error", "absent"]
    types = [arrow_schema.field(n).type for n in (*CANONICAL, *LAST_COLUMNS)]
    try:
        return [
            pa.array([getattr(r, n) for r in rows], type=t)
            for n, t in zip(names, types, strict=True)
        ]
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        # A value Arrow refuses: find the rows, report them, build the batch again.
        for r in rows:
            for n, t in zip(names, types, strict=True):
                try:
                    pa.array([getattr(r, n)], type=t)
                except (pa.ArrowException, ValueError, TypeError, OverflowError) as err:
                    r.failed(f"$.{n}: cannot be represented in Spark ({reason_of(err)})")
                    break
        return [
            pa.array([getattr(r, n) for r in rows], type=t)
            for n, t in zip(names, types, strict=True)
        ]


# --- files → one value per message ------------------------------------------------------------------


def dts_values(data: bytes, name: str = "input") -> list[tuple[bytes, str]]:
    """The Kafka message values a DTS file holds, with where each is (``file@offset``,
    ``file#n``): each record's own bytes (with its Confluent header when the file has one);
    container-file records are re-encoded as Avro binary."""
    import fastavro

    from contracts.formats import dts_avro

    messages = list(dts_avro.split_records(data, name))
    if data.startswith(b"Obj\x01"):
        schema = dts_avro.parsed_record_schema()
        out = []
        for m in messages:
            buffer = io.BytesIO()
            fastavro.schemaless_writer(buffer, schema, m.value)
            out.append((buffer.getvalue(), m.where))
        return out
    starts = [int(m.meta["offset"]) for m in messages]
    ends = [*starts[1:], len(data)]
    return [(data[a:b], m.where) for a, b, m in zip(starts, ends, messages, strict=True)]
