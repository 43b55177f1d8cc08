"""``opencdc-json``: Conduit's OpenCDC record, JSON-encoded.

::

    {"position": "<base64>", "operation": "create" | "update" | "delete" | "snapshot",
     "metadata": {"opencdc.createdAt": "<ns>", "opencdc.readAt": "<ns>",
                  "opencdc.collection": "<table>", "opencdc.key.schema.subject": ..., ...},
     "key": {...} | "<base64 raw data>",
     "payload": {"before": {...} | "<base64>" | null, "after": {...} | "<base64>" | null}}

Structured data is a JSON object; raw data is base64. Raw bytes that decode as a JSON object are
read as structured data; other raw bytes stay bytes and normalize to ``{"raw": <bytes>}``.
``opencdc.{key,payload}.schema.{subject,version}`` name schemas registered elsewhere: infer
records them in the contract's options and, until they are resolved, infers column types from
the values (JSON booleans, numbers and strings).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import orjson

from contracts.contract import Contract
from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent, Normalized, Op, TableId
from contracts.formats._typing import (
    RowCodec,
    RowTypes,
    TableSeen,
    build_contract,
    decode_located,
    key_from,
    path_of,
)
from contracts.formats.base import (
    Derived,
    Format,
    Inference,
    InferOptions,
    Message,
    Violation,
    require_dict,
    tombstone,
)
from contracts.formats.spec import (
    FormatSpec,
    Images,
    Key,
    Ops,
    Position,
    Table,
    Time,
    at,
    read_position,
    read_table,
    read_time,
)
from contracts.jsonnumbers import as_written
from contracts.schema import ConnectSchema, json_kind, primitive, struct

#: OpenCDC operation → canonical op.
OPERATIONS: Final[Mapping[str, Op]] = {
    "create": "c",
    "update": "u",
    "delete": "d",
    "snapshot": "r",
}

RAW_COLUMN: Final = "raw"
COLLECTION: Final = "opencdc.collection"
CREATED_AT: Final = "opencdc.createdAt"
READ_AT: Final = "opencdc.readAt"

#: An OpenCDC record: ``operation``, structured (object) or raw (base64) data in
#: ``payload.before``/``after`` and ``key`` (raw bytes that are not a JSON object fill the
#: contract's bytes column :data:`RAW_COLUMN`), the table and times (ns) in ``metadata``, the
#: base64 ``position``.
SPEC: Final = FormatSpec(
    ops=Ops(("operation",), OPERATIONS),
    images=Images(
        before=("payload", "before"), after=("payload", "after"), values="json", raw=RAW_COLUMN
    ),
    table=Table(name=("metadata", COLLECTION), empty_is_null=True, fallback=True),
    ts_ms=(Time(("metadata", READ_AT), "ns", text=True),),
    source_ts_ms=(Time(("metadata", CREATED_AT), "ns", text=True),),
    position=Position(named={"position": ("position",)}, default=""),
    key=Key(record=("key",)),
    base64=(("position",),),
    text_blocks=(("metadata",),),
)
#: metadata keys naming registered schemas → the contract option that records them.
SCHEMA_REFERENCES: Final[Mapping[str, tuple[str, str]]] = {
    "opencdc.key.schema.subject": ("key_schema", "subject"),
    "opencdc.key.schema.version": ("key_schema", "version"),
    "opencdc.payload.schema.subject": ("payload_schema", "subject"),
    "opencdc.payload.schema.version": ("payload_schema", "version"),
}


@dataclass(frozen=True, slots=True)
class Data:
    """Structured data (``fields``) or raw bytes (``raw``)."""

    fields: dict[str, Any] | None = None
    raw: bytes | None = None

    def image(self) -> dict[str, Any]:
        return self.fields if self.fields is not None else {RAW_COLUMN: self.raw}


@dataclass(frozen=True, slots=True)
class OpenCdcRecord:
    """One parsed record."""

    op: Op
    position: str
    metadata: dict[str, str | None]
    key: Data | None
    before: Data | None
    after: Data | None

    @property
    def table(self) -> TableId:
        return TableId(name=self.metadata.get(COLLECTION) or None)


def decode_base64(value: str, where: str, path: str) -> bytes:
    """Strict base64 → bytes (InputError naming the path otherwise)."""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise InputError("invalid base64", f"{where} {path}") from None


def parse_data(value: Any, where: str, path: str) -> Data | None:
    """Structured (object) or raw (base64) data; raw bytes holding a JSON object are structured."""
    if value is None:
        return None
    if isinstance(value, dict):
        return Data(fields=value)
    if not isinstance(value, str):
        raise InputError(
            f"expected structured data (an object) or raw data (base64), got {json_kind(value)}",
            f"{where} {path}",
        )
    raw = decode_base64(value, where, path)
    if raw[:1] == b"{":
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return Data(fields=parsed)
    return Data(raw=raw)


def parse_record(message: Message) -> OpenCdcRecord:
    """Parse one record; raises InputError (with the JSON path) when it is malformed."""
    where = message.where
    doc = require_dict(message.value, where, "$", "an OpenCDC record")
    op, _ = SPEC.ops.read(doc.get("operation"))
    if op is None:
        raise InputError(SPEC.unknown_op(doc.get("operation")), f"{where} $.operation")
    for path in SPEC.base64:
        text = at(doc, path)
        if text is not None:
            if not isinstance(text, str):
                raise InputError("must be a base64 string", f"{where} $.{'.'.join(path)}")
            decode_base64(text, where, f"$.{'.'.join(path)}")
    position = doc.get("position")
    metadata = require_dict(_or_empty(doc.get("metadata")), where, "$.metadata", "metadata")
    payload = require_dict(_or_empty(doc.get("payload")), where, "$.payload", "payload")
    return OpenCdcRecord(
        op=op,
        position=position or "",
        metadata={k: _text(v) for k, v in metadata.items()},
        key=parse_data(doc.get("key"), where, "$.key"),
        before=parse_data(payload.get("before"), where, "$.payload.before"),
        after=parse_data(payload.get("after"), where, "$.payload.after"),
    )


def _text(value: Any) -> str | None:
    """A metadata value as text: a string itself, another JSON value its JSON text."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value, default=as_written).decode("utf-8")


def _kind(data: Data) -> str:
    return "structured" if data.fields is not None else "raw"


class OpencdcJson(Format):
    """Conduit OpenCDC records as JSON."""

    name: ClassVar[str] = "opencdc-json"
    description: ClassVar[str] = (
        "Conduit OpenCDC record: position, operation, metadata, key, payload.before/after"
    )
    embedded_schema: ClassVar = "referenced"
    spec: ClassVar[FormatSpec] = SPEC

    def detect(self, message: Message) -> bool:
        value = message.value
        return (
            isinstance(value, dict)
            and value.get("operation") in OPERATIONS
            and isinstance(value.get("payload"), dict)
            and "position" in value
        )

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        types = RowTypes()
        keys = RowTypes()
        seen = TableSeen()
        refs: dict[str, dict[str, str]] = {}
        payload_kinds: set[str] = set()
        key_kinds: set[str] = set()
        count = 0
        for message in messages:
            count += 1
            if message.value is None:  # a tombstone: nothing to infer from
                continue
            record = parse_record(message)
            if record.table.name:
                seen.see(record.table, message.where)
            for meta_key, (option, part) in SCHEMA_REFERENCES.items():
                value = record.metadata.get(meta_key)
                if value is not None:
                    refs.setdefault(option, {})[part] = value
            for data in (record.before, record.after):
                if data is not None:
                    payload_kinds.add(_kind(data))
                    if data.fields is not None:
                        types.observe_row(data.fields)
            if record.key is not None:
                key_kinds.add(_kind(record.key))
                if record.key.fields is not None:
                    keys.observe_row(record.key.fields)
        key = [k for k in keys.columns if k in types.columns] if key_kinds == {"structured"} else []
        fields = types.fields(options.infer_types, required=key)
        if "raw" in payload_kinds and RAW_COLUMN not in types.columns:
            # raw data (bytes that are not a JSON object) fills this column
            fields.append(primitive("bytes", optional=True, field=RAW_COLUMN))
        fmt_options: dict[str, Any] = {"payload_data": "/".join(sorted(payload_kinds))}
        if key_kinds:
            fmt_options["key_data"] = "/".join(sorted(key_kinds))
        fmt_options.update(refs)
        contract = build_contract(
            fmt=self.name,
            options=options,
            table=seen.table,
            fields=fields,
            key=key,
            format_options=fmt_options,
        )
        return Inference(contract=contract, messages=count)

    def derive(self, contract: Contract) -> Derived:
        row = struct(
            [f.as_optional(f.optional) for f in contract.row_schema.fields or ()], optional=True
        )
        key_schema = contract.key_schema
        key: ConnectSchema = (
            key_schema.as_optional(True).as_field("key")
            if key_schema is not None and contract.option("key_data") == "structured"
            else primitive("bytes", optional=True, field="key")
        )
        value = struct(
            [
                primitive("bytes", field="position"),
                primitive("string", field="operation"),
                ConnectSchema(
                    type="map",
                    optional=True,
                    keys=primitive("string"),
                    values=primitive("string"),
                    field="metadata",
                ),
                key,
                struct([row.as_field("before"), row.as_field("after")], field="payload"),
            ]
        )
        return Derived(key=None, value=value)

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        if message.value is None:
            return []  # a tombstone
        where = message.where
        try:
            record = parse_record(message)
        except InputError as err:
            return [Violation(where, path_of(err), "envelope", err.what)]
        found: list[Violation] = []
        if record.table.name and record.table.name != contract.table.name:
            found.append(
                Violation(
                    where,
                    "$.metadata",
                    "envelope",
                    f"collection {record.table.name} is not the contract's {contract.table.name}",
                )
            )
        for meta_key, (option, part) in SCHEMA_REFERENCES.items():
            declared = (contract.option(option) or {}).get(part)
            if declared is not None and record.metadata.get(meta_key, declared) != declared:
                found.append(
                    Violation(
                        where,
                        f"$.metadata['{meta_key}']",
                        "schema-drift",
                        f"{meta_key} is {record.metadata[meta_key]!r}, the contract says {declared!r}",
                    )
                )
        codec = RowCodec.of(contract)
        for name, data in (("before", record.before), ("after", record.after)):
            if data is None:
                continue
            path = f"$.payload.{name}"
            if data.fields is not None:
                found += [
                    v
                    for v in codec.check(data.fields, path, where, full=True)
                    # the raw-data column is only filled by raw data
                    if not (v.kind == "missing-column" and v.path == f"{path}.{RAW_COLUMN}")
                ]
            elif RAW_COLUMN not in codec.columns:
                found.append(
                    Violation(
                        where,
                        path,
                        "envelope",
                        f"raw data where the contract has no bytes column {RAW_COLUMN!r}",
                    )
                )
        return found

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        if message.value is None:
            return [tombstone(message)]
        record = parse_record(message)
        codec = RowCodec.of(contract) if contract is not None else None
        where = message.where
        before = _decoded(codec, record.before, "$.payload.before", where)
        after = _decoded(codec, record.after, "$.payload.after", where)
        key = _image(record.key)
        if contract is not None:
            # the contract's key columns: from the row image, else the record's own key
            key = key_from(contract.key, after, before, _typed_key(codec, record.key, contract))
        table = read_table(SPEC.table, {"metadata": record.metadata}, where)
        if table is None:
            table = _contract_table(contract)
        facts = {"metadata": record.metadata}
        return [
            ChangeEvent(
                op=record.op,
                table=table,
                key=key,
                before=before,
                after=after,
                ts_ms=read_time(SPEC.ts_ms, facts, where),
                source_ts_ms=read_time(SPEC.source_ts_ms, facts, where),
                position=read_position(SPEC.position, {"position": record.position}),
            )
        ]


def _decoded(
    codec: RowCodec | None, data: Data | None, path: str, where: str
) -> dict[str, Any] | None:
    """Typed data: structured data as the contract's columns, raw data as the contract's
    bytes column ``raw`` (no column: an error). Without a contract, ``{"raw": bytes}``."""
    if data is None:
        return None
    return decode_located(codec, data.image(), path, where)


def _typed_key(
    codec: RowCodec | None, data: Data | None, contract: Contract
) -> dict[str, Any] | None:
    """The key columns of a structured record key, decoded (None: raw, or a value that does
    not decode — the key then comes from nowhere, as in the Spark feed)."""
    if codec is None or data is None or data.fields is None:
        return None
    wanted = {k: data.fields[k] for k in contract.key if k in data.fields}
    try:
        return codec.decode(wanted, "$.key")
    except DecodeError:
        return None


def _image(data: Data | None) -> dict[str, Any] | None:
    return None if data is None else data.image()


def _contract_table(contract: Contract | None) -> TableId:
    return contract.table_id if contract is not None else TableId()


def _or_empty(value: Any) -> Any:
    """``{}`` for an absent (null) object; anything else as it is, to be checked."""
    return {} if value is None else value
