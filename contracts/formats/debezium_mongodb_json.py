"""``debezium-mongodb-json``: Debezium's MongoDB connector, as Kafka's JsonConverter writes it.

The envelope is Debezium's (``op`` c/u/d/r, ``source``, ``ts_ms``; with or without the
``{schema, payload}`` wrapper), but the documents are MongoDB Extended JSON *text*: ``after``
and ``before`` (2.x), ``patch`` (1.x) and ``updateDescription.updatedFields`` (2.x) are strings
holding a document. The table is ``source.collection`` in ``source.db``. The Kafka key is
``{"id": "<extended JSON of _id>"}``. An update carries the full document in ``after`` when the
connector looks it up; otherwise its changed fields (``updatedFields``/``removedFields`` in 2.x,
``$set``/``$unset`` in 1.x ``patch``) are the after image, and removed fields are null there.

Typing (see :mod:`contracts.formats.ejson`): ``$oid`` and strings are strings, ``$numberInt``
int32, ``$numberLong`` int64, ``$numberDouble`` and fractions double, ``$numberDecimal`` a
Connect Decimal (scale: the largest seen), ``$date`` a Connect Timestamp (milliseconds),
``$binary`` bytes, ``$timestamp`` a struct ``{t, i}``, documents structs and arrays arrays.
"""

from __future__ import annotations

import decimal
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent, ControlRecord, Normalized, Op, TableId
from contracts.formats._typing import (
    TableSeen,
    build_contract,
    decimal_schema,
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
    counted,
    require_dict,
)
from contracts.formats.ejson import (
    TIMESTAMP_PARTS,
    Kind,
    Typed,
    parse_document,
    parse_value,
    plain,
)
from contracts.formats.spec import (
    Connect,
    FormatSpec,
    Images,
    Key,
    Ops,
    Position,
    Table,
    Time,
    read_position,
    read_table,
    read_time,
)
from contracts.logical import CONNECT_TIMESTAMP_NAME, DECIMAL_NAME, JSON_NAME
from contracts.schema import ConnectSchema, primitive, struct

#: Debezium's MongoDB op codes.
OPS: Final[Mapping[str, Op]] = {"c": "c", "u": "u", "d": "d", "r": "r"}
#: ``source`` fields that place a change in the oplog / change stream.
POSITION_FIELDS: Final = ("rs", "ord", "h", "tord", "lsid", "txnNumber", "snapshot")
KEY_COLUMN: Final = "_id"
#: The struct a BSON ``$timestamp`` becomes.
BSON_TIMESTAMP: Final = "io.debezium.connector.mongodb.BsonTimestamp"

SPEC: Final = FormatSpec(
    connect=Connect(schema_optional=True),
    ops=Ops(("op",), OPS),
    images=Images(before=("before",), after=("after",), values="ejson"),
    table=Table(database=("source", "db"), name=("source", "collection"), required=(("source",),)),
    ts_ms=(Time(("ts_ms",)), Time(("ts_us",), "us"), Time(("ts_ns",), "ns")),
    source_ts_ms=(Time(("source", "ts_ms")),),
    position=Position(at=("source",), keys=POSITION_FIELDS),
    key=Key(kafka=True),
    fields=("patch", "filter", "updateDescription", "transaction"),
)

#: Keys a payload may have (any other key: not this format).
ENVELOPE_KEYS: Final = frozenset(
    {
        "before",
        "after",
        "patch",
        "filter",
        "updateDescription",
        "source",
        "op",
        "ts_ms",
        "ts_us",
        "ts_ns",
        "transaction",
    }
)


# --- one message -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MongoChange:
    """One parsed change: typed documents (None: not in the message)."""

    op: Op
    table: TableId
    before: dict[str, Typed] | None
    after: dict[str, Typed] | None
    payload: dict[str, Any]
    prefix: str


def payload_of(value: Any, where: str) -> tuple[dict[str, Any], str]:
    """The envelope and the JSON path it is at (``$.payload`` under a Connect wrapper)."""
    doc = require_dict(value, where, "$", "a Debezium MongoDB change event")
    if "payload" in doc and "schema" in doc:
        return require_dict(doc["payload"], where, "$.payload", "payload"), "$.payload"
    return doc, "$"


def parse_change(message: Message) -> MongoChange:
    """Parse one message (not a tombstone); raises InputError with the JSON path."""
    where = message.where
    payload, prefix = payload_of(message.value, where)
    op, _ = SPEC.ops.read(payload.get("op"))
    if op is None:
        raise InputError(SPEC.ops.unknown(payload.get("op")), f"{where} {prefix}.op")
    table = read_table(SPEC.table, payload, where, prefix)
    assert table is not None
    try:
        before = _document(payload, "before", prefix)
        after = _document(payload, "after", prefix)
        if op == "u" and after is None:
            after = _update_image(payload, prefix)
    except DecodeError as err:
        raise err.located(where) from None
    return MongoChange(op, table, before, after, payload, prefix)


def _document(payload: Mapping[str, Any], name: str, prefix: str) -> dict[str, Typed] | None:
    text = payload.get(name)
    return None if text is None else parse_document(text, f"{prefix}.{name}")


def _update_image(payload: Mapping[str, Any], prefix: str) -> dict[str, Typed] | None:
    """The changed fields of an update whose full document was not looked up (removed fields
    as null); dotted paths set a field inside a document."""
    out: dict[str, Typed] = {}
    described = payload.get("updateDescription")
    if described is not None:
        at = f"{prefix}.updateDescription"
        described = require_dict(described, "", at, "updateDescription")
        updated = described.get("updatedFields")
        if updated is not None:
            for name, value in parse_document(updated, f"{at}.updatedFields").items():
                _set(out, name, value)
        removed = described.get("removedFields") or []
        if not isinstance(removed, list) or not all(isinstance(r, str) for r in removed):
            raise DecodeError("expected an array of field names", f"{at}.removedFields")
        for name in removed:
            _set(out, name, Typed("null", None))
        return out
    patch = payload.get("patch")
    if patch is None:
        return None
    doc = parse_document(patch, f"{prefix}.patch")
    if not any(k.startswith("$") for k in doc):
        return doc  # a replacement document
    for operator, fields in doc.items():
        if operator == "$v":
            continue
        if operator not in ("$set", "$unset") or fields.kind != "document":
            raise DecodeError(f"{operator} is not an update this tool reads", f"{prefix}.patch")
        for name, value in fields.value.items():
            _set(out, name, value if operator == "$set" else Typed("null", None))
    return out


def _set(image: dict[str, Typed], dotted: str, value: Typed) -> None:
    head, dot, rest = dotted.partition(".")
    if not dot:
        image[head] = value
        return
    inner = image.get(head)
    fields = dict(inner.value) if inner is not None and inner.kind == "document" else {}
    _set(fields, rest, value)
    image[head] = Typed("document", fields)


def message_key(message: Message) -> Typed | None:
    """The ``_id`` in the Kafka key (``{"id": "<extended JSON>"}``, bare or Connect-wrapped)."""
    key = message.key
    if key is None:
        return None
    if isinstance(key, dict) and "payload" in key and "schema" in key:
        key = key["payload"]
    if not isinstance(key, dict) or "id" not in key:
        raise InputError("expected a key document {id: <extended JSON>}", f"{message.where} $key")
    try:
        return parse_value(key["id"], "$key.id")
    except DecodeError as err:
        raise err.located(message.where) from None


# --- inference -----------------------------------------------------------------------------------


@dataclass
class Shape:
    """What one field held across the sample: kinds (first place each was seen), how often it
    was there, nested fields (documents) and elements (arrays), decimal digits."""

    kinds: dict[str, str] = field(default_factory=dict)
    present: int = 0
    nulls: int = 0
    fields: dict[str, Shape] = field(default_factory=dict)
    documents: int = 0
    items: Shape | None = None
    scale: int = 0
    digits: int = 1

    def see(self, value: Typed, where: str, path: str, warnings: list[str]) -> None:
        self.present += 1
        if value.kind == "null":
            self.nulls += 1
            return
        kind = "string" if value.kind == "objectId" else value.kind
        self.kinds.setdefault(kind, where)
        self._check(path, warnings)
        if value.kind == "document":
            self.documents += 1
            for name, inner in value.value.items():
                self.fields.setdefault(name, Shape()).see(inner, where, f"{path}.{name}", warnings)
        elif value.kind == "array":
            self.items = self.items or Shape()
            for i, inner in enumerate(value.value):
                self.items.see(inner, where, f"{path}[{i}]", warnings)
        elif value.kind == "decimal":
            exponent = value.value.as_tuple().exponent
            assert isinstance(exponent, int)
            scale = max(0, -exponent)
            self.scale = max(self.scale, scale)
            self.digits = max(self.digits, len(value.value.as_tuple().digits) - scale)

    def _check(self, path: str, warnings: list[str]) -> None:
        kinds = set(self.kinds)
        if len(kinds) < 2 or kinds == {"int32", "int64"}:
            return
        (a, wa), (b, wb) = list(self.kinds.items())[:2]
        raise InputError(
            f"{path}: type conflict: {a} at {wa}, {b} here; a contract column holds one type "
            f"(use one type in the collection, or write the contract by hand)",
            wb,
        )

    def schema(self, name: str, optional: bool, path: str, warnings: list[str]) -> ConnectSchema:
        kinds = set(self.kinds)
        if kinds == {"int32", "int64"}:
            warnings.append(
                f"{path}: int32 and int64 values (first at {self.kinds['int32']} "
                f"and {self.kinds['int64']}): typed int64"
            )
        optional = optional or self.nulls > 0
        kind = next(iter(sorted(kinds)), None)
        return self._schema(kind, path, warnings).replace(optional=optional, field=name)

    def _schema(self, kind: str | None, path: str, warnings: list[str]) -> ConnectSchema:
        if kind is None:
            warnings.append(f"{path}: only null seen: typed string")
            return primitive("string")
        if kind in ("int32", "int64"):
            return primitive("int64" if "int64" in self.kinds else "int32")
        if kind == "decimal":
            return decimal_schema(self.digits + self.scale, self.scale)
        if kind == "date":
            return primitive("int64", name=CONNECT_TIMESTAMP_NAME, version=1)
        if kind == "binary":
            return primitive("bytes")
        if kind == "timestamp":
            return struct(
                [primitive("int64", field=part) for part in TIMESTAMP_PARTS], name=BSON_TIMESTAMP
            )
        if kind == "document":
            return struct(
                [
                    s.schema(n, s.present < self.documents, f"{path}.{n}", warnings)
                    for n, s in self.fields.items()
                ]
            )
        if kind == "array":
            items = self.items or Shape()
            element = items.schema("", False, f"{path}[]", warnings)
            return ConnectSchema(type="array", items=element.replace(field=None))
        return primitive(kind)


# --- decoding against a contract ---------------------------------------------------------------


def decode(value: Typed, schema: ConnectSchema, path: str) -> Any:
    """The Python value of ``value`` as the contract's ``schema`` says (DecodeError at
    ``path`` when the kinds differ)."""
    if value.kind == "null":
        if not schema.optional:
            raise DecodeError("null in a required column", path)
        return None
    want = kind_of(schema)
    got: Kind = "string" if value.kind == "objectId" else value.kind
    if got == "int32" and want == "int64":
        got = "int64"
    if got != want:
        raise DecodeError(f"{value.kind} where the contract says {want}", path)
    if want == "document":
        return decode_document(value.value, schema, path, whole=True)
    if want == "array":
        assert schema.items is not None
        return [decode(v, schema.items, f"{path}[{i}]") for i, v in enumerate(value.value)]
    if want == "decimal":
        scale = int(schema.params.get("scale", "0"))
        exact = value.value.quantize(decimal.Decimal(1).scaleb(-scale))
        if exact != value.value:
            raise DecodeError(f"{value.value} has more than the contract's {scale} decimals", path)
        return exact
    return value.value


def decode_document(
    doc: Mapping[str, Typed], schema: ConnectSchema, path: str, whole: bool = False
) -> dict[str, Any]:
    """A document's fields decoded as ``schema``'s; a field it does not name is an error.
    ``whole`` (a document nested in a column, a struct value): every field of the struct,
    absent ones null, and a required one absent is an error (a row image keeps absent columns
    out: they are what an update left unchanged)."""
    fields = {f.field or "": f for f in schema.fields or ()}
    out: dict[str, Any] = {}
    for name, value in doc.items():
        column = fields.get(name)
        if column is None:
            raise DecodeError(f"field {name!r} is not in the contract", f"{path}.{name}")
        out[name] = decode(value, column, f"{path}.{name}")
    if whole:
        for name, column in fields.items():
            if name not in out:
                if not column.optional:
                    raise DecodeError("a required field is missing", f"{path}.{name}")
                out[name] = None
    return out


def kind_of(schema: ConnectSchema) -> Kind:
    """The BSON kind a contract column holds (``null``: none this format writes)."""
    if schema.name == DECIMAL_NAME:
        return "decimal"
    if schema.name == CONNECT_TIMESTAMP_NAME:
        return "date"
    if schema.name == BSON_TIMESTAMP:
        return "timestamp"
    by_type: Mapping[str, Kind] = {
        "struct": "document",
        "array": "array",
        "bytes": "binary",
        "boolean": "boolean",
        "string": "string",
        "int32": "int32",
        "int64": "int64",
        "double": "double",
        "float": "double",
    }
    return by_type.get(schema.type, "null")


def _missing(doc: Mapping[str, Typed], schema: ConnectSchema, path: str) -> list[str]:
    """Paths of required fields a full document leaves out."""
    out = []
    for f in schema.fields or ():
        name = f.field or ""
        if name not in doc and not f.optional:
            out.append(f"{path}.{name}")
        elif f.type == "struct" and f.name is None and name in doc and doc[name].kind == "document":
            out += _missing(doc[name].value, f, f"{path}.{name}")
    return out


class DebeziumMongodbJson(Format):
    """Debezium MongoDB connector change events (documents as extended JSON text)."""

    name: ClassVar[str] = "debezium-mongodb-json"
    description: ClassVar[str] = (
        "Debezium MongoDB change events: documents as MongoDB Extended JSON text"
    )
    embedded_schema: ClassVar = "optional"
    spec: ClassVar[FormatSpec] = SPEC

    def detect(self, message: Message) -> bool:
        value = message.value
        if not isinstance(value, dict):
            return False
        payload = value.get("payload") if "schema" in value else value
        if not isinstance(payload, dict) or not set(payload) <= ENVELOPE_KEYS:
            return False
        source = payload.get("source")
        return (
            payload.get("op") in OPS
            and isinstance(source, dict)
            and isinstance(source.get("collection"), str)
            and all(isinstance(payload.get(n), str | None) for n in ("after", "before", "patch"))
        )

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        root = Shape()
        seen = TableSeen()
        controls: Counter[str] = Counter()
        warnings: list[str] = []
        count = 0
        wrapped = False
        for message in messages:
            count += 1
            if message.value is None:
                controls["tombstone"] += 1
                continue
            change = parse_change(message)
            wrapped = wrapped or change.prefix != "$"
            seen.see(change.table, message.where)
            for name, doc in (("before", change.before), ("after", change.after)):
                if doc is None or (
                    change.op == "u" and name == "after" and change.payload.get("after") is None
                ):
                    continue  # partial update images say nothing about absent fields
                root.see(Typed("document", doc), message.where, "$", warnings)
        schema = root.schema("", False, "$", warnings) if root.documents else None
        fields = list(schema.fields or ()) if schema is not None else []
        key = [KEY_COLUMN] if any(f.field == KEY_COLUMN for f in fields) else []
        fields = [f.as_optional(False) if f.field == KEY_COLUMN else f for f in fields]
        if not fields:
            raise InputError(
                "no documents in the sample (only deletes, partial updates or tombstones): "
                "nothing to infer fields from"
            )
        # payload-only messages (JsonConverter's schemas.enable=false), as debezium-json says it
        contract = build_contract(
            fmt=self.name,
            options=options,
            table=seen.table,
            fields=fields,
            key=key,
            format_options=None if wrapped else {"schemas_enable": False},
        )
        return Inference(
            contract=contract, messages=count, controls=counted(controls), warnings=tuple(warnings)
        )

    def derive(self, contract: Contract) -> Derived:
        json_text = primitive("string", optional=True, name=JSON_NAME, version=1)
        value = struct(
            [
                json_text.as_field("before"),
                json_text.as_field("after"),
                json_text.as_field("patch"),
                json_text.as_field("filter"),
                struct(
                    [
                        ConnectSchema(
                            type="array",
                            optional=True,
                            items=primitive("string"),
                            field="removedFields",
                        ),
                        json_text.as_field("updatedFields"),
                    ],
                    optional=True,
                    field="updateDescription",
                ),
                primitive("string", optional=True, field="op"),
                primitive("int64", optional=True, field="ts_ms"),
            ]
        )
        key = struct([primitive("string", field="id")])
        return Derived(key=key, value=value)

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        where = message.where
        if message.value is None:
            return []
        try:
            change = parse_change(message)
        except InputError as err:
            return [Violation(where, path_of(err), "envelope", err.what)]
        found: list[Violation] = []
        expected = contract.table_id
        if (change.table.database, change.table.name) != (expected.database, expected.name):
            found.append(
                Violation(
                    where,
                    f"{change.prefix}.source",
                    "envelope",
                    f"collection {change.table.qualified()} is not the contract's "
                    f"{expected.qualified()}",
                )
            )
        row = contract.row_schema
        partial = change.op == "u" and change.payload.get("after") is None
        for name, doc in (("before", change.before), ("after", change.after)):
            if doc is None:
                continue
            path = f"{change.prefix}.{name}"
            for field_name, value in doc.items():
                column = next((f for f in row.fields or () if f.field == field_name), None)
                at = f"{path}.{field_name}"
                if column is None:
                    found.append(
                        Violation(
                            where,
                            at,
                            "extra-column",
                            f"field {field_name!r} is not in the contract",
                        )
                    )
                    continue
                try:
                    decode(value, column, at)
                except DecodeError as err:
                    found.append(Violation(where, err.where or at, "wrong-type", err.what))
            if not partial:
                found += [
                    Violation(
                        where,
                        p,
                        "missing-column",
                        f"required field {p.rsplit('.', 1)[1]!r} is missing",
                    )
                    for p in _missing(doc, row, path)
                ]
        return found

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        where = message.where
        key = message_key(message)
        if message.value is None:
            plain_key = None if key is None else {KEY_COLUMN: _plain(key)}
            return [ControlRecord("tombstone", "value is null", key=plain_key)]
        change = parse_change(message)
        row = contract.row_schema if contract is not None else None

        def typed_image(doc: dict[str, Typed] | None, name: str) -> dict[str, Any] | None:
            if doc is None:
                return None
            path = f"{change.prefix}.{name}"
            try:
                if row is None:
                    return {k: _plain(v) for k, v in doc.items()}
                return decode_document(doc, row, path)
            except DecodeError as err:
                raise err.located(where) from None

        before = typed_image(change.before, "before")
        after = typed_image(change.after, "after")
        kafka = _key_value(key, row, where)
        if contract is not None:
            # the contract's key columns, from the first source holding them all
            key_value = key_from(contract.key, kafka, after, before)
        else:
            key_value = kafka or key_from([KEY_COLUMN], after, before)
        payload, prefix = change.payload, change.prefix
        return [
            ChangeEvent(
                op=change.op,
                table=change.table,
                key=key_value,
                before=before,
                after=after,
                ts_ms=read_time(SPEC.ts_ms, payload, where, prefix),
                source_ts_ms=read_time(SPEC.source_ts_ms, payload, where, prefix),
                position=read_position(SPEC.position, payload, where, prefix),
            )
        ]


def _key_value(key: Typed | None, row: ConnectSchema | None, where: str) -> dict[str, Any] | None:
    if key is None:
        return None
    column = next((f for f in (row.fields or ()) if f.field == KEY_COLUMN), None) if row else None
    if column is None:
        return {KEY_COLUMN: _plain(key)}
    try:
        return {KEY_COLUMN: decode(key, column, "$key.id")}
    except DecodeError as err:
        raise err.located(where) from None


def _plain(value: Typed) -> Any:
    return plain(value)
