"""``arcion-s3-json``: Arcion Replicant's internal CDC format for Amazon S3, JSON files.

One document per DML::

    {"tableName": {"namespace": {"catalog", "schema", "hash"}, "name", "hash"},
     "opType": "I" | "U" | "D",
     "cursor": "<JSON text: timestamp, extractionTimestamp, log/position or dscId/mutId ...>",
     "before": {col: "<text>" | "null"}, "after": {...}, "exists": {col: "0".."3"},
     "operationcount": "<JSON text: insertCount, updateCount, ...>"}

Every value is a string; the literal ``"null"`` is SQL NULL. ``exists`` tells which image really
holds a column (0 neither, 1 after, 2 before, 3 both), so a NULL the DML provided and a column the
DML never mentioned stay distinguishable: absent columns are left out of the normalized images,
provided NULLs are None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.errors import InputError
from contracts.events import ChangeEvent, Normalized, Op, TableId
from contracts.formats._typing import (
    RowCodec,
    RowTypes,
    TableSeen,
    build_contract,
    decode_located,
    key_from,
    parse_json_text,
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
    Exists,
    FormatSpec,
    Image,
    ImageRule,
    Images,
    Ops,
    Position,
    Table,
    Time,
    read_position,
    read_table,
    read_time,
)
from contracts.schema import ConnectSchema, json_kind, primitive, struct

#: opType → canonical op.
OP_TYPES: Final[Mapping[str, Op]] = {"I": "c", "U": "u", "D": "d"}

#: exists flag → (present in before, present in after).
EXISTS_FLAGS: Final[Mapping[str, tuple[bool, bool]]] = {
    "0": (False, False),
    "1": (False, True),
    "2": (True, False),
    "3": (True, True),
}

NULL_LITERAL: Final = "null"
_ENVELOPE_KEYS: Final = frozenset({"tableName", "opType", "cursor"})

#: Which image an op carries (an insert has no before image, a delete no after image).
IMAGES_BY_OP: Final[Mapping[str, tuple[ImageRule | None, ImageRule | None]]] = {
    "c": (None, Image(("after",))),
    "u": (Image(("before",)), Image(("after",))),
    "d": (Image(("before",)), None),
    "r": (None, Image(("after",))),
}

#: Arcion S3's document: ``opType``, text images with ``exists`` flags and the ``null``
#: literal, ``tableName``, and the ``cursor`` (a JSON object in a string) holding the times
#: and the position.
SPEC: Final = FormatSpec(
    ops=Ops(("opType",), OP_TYPES),
    images=Images(
        before=("before",),
        after=("after",),
        values="text",
        by_op=IMAGES_BY_OP,
        null_text=NULL_LITERAL,
        exists=Exists(("exists",), EXISTS_FLAGS),
        cell_refuses=frozenset({"json"}),
    ),
    table=Table(
        database=("tableName", "namespace", "catalog"),
        schema=("tableName", "namespace", "schema"),
        name=("tableName", "name"),
        empty_is_null=True,
        required=(("tableName", "name"),),
    ),
    ts_ms=(Time(("cursor", "extractionTimestamp"), text=True),),
    source_ts_ms=(Time(("cursor", "timestamp"), text=True),),
    position=Position(at=("cursor",), keys=None, keep_nulls=True),
    json_texts=(("cursor",),),
    fields=("operationcount",),
)


@dataclass(frozen=True, slots=True)
class ArcionS3Change:
    """One parsed document: table, op, cursor fields and the two images (absent columns left out)."""

    table: TableId
    op: Op
    cursor: dict[str, Any]
    before: dict[str, str | None] | None
    after: dict[str, str | None] | None
    columns: tuple[str, ...]


def parse_table_name(value: Any, where: str) -> TableId:
    """``tableName{namespace{catalog, schema}, name}`` → TableId (catalog is the database)."""
    table = read_table(SPEC.table, {"tableName": value}, where)
    assert table is not None
    return table


def _text_or_null(value: Any, where: str, path: str) -> str | None:
    if value is None or value == SPEC.images.null_text:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list) and "json" in SPEC.images.cell_refuses:
        raise InputError(f"expected a string value, got {json_kind(value)}", f"{where} {path}")
    # a number or boolean is read as its text, as Spark reads it (a wide integer's digits)
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _exists_flag(value: Any, where: str, path: str) -> tuple[bool, bool]:
    flags = SPEC.images.exists.flags if SPEC.images.exists else {}
    flag = flags.get(str(value)) if isinstance(value, str | int) else None
    if flag is None:
        raise InputError(f"exists flag must be 0, 1, 2 or 3, got {value!r}", f"{where} {path}")
    return flag


def parse_change(message: Message) -> ArcionS3Change:
    """Parse one document; raises InputError (with the JSON path) when it is malformed."""
    where = message.where
    doc = require_dict(message.value, where, "$", "an Arcion S3 JSON document")
    table = parse_table_name(doc.get("tableName"), where)
    op, _ = SPEC.ops.read(doc.get("opType"))
    if op is None:
        raise InputError(SPEC.unknown_op(doc.get("opType")), f"{where} $.opType")
    cursor = parse_json_text(doc.get("cursor"), where, "$.cursor", "cursor")
    before_raw = require_dict(_or_empty(doc.get("before")), where, "$.before", "before")
    after_raw = require_dict(_or_empty(doc.get("after")), where, "$.after", "after")
    exists = require_dict(_or_empty(doc.get("exists")), where, "$.exists", "exists")
    columns = tuple(dict.fromkeys([*exists, *after_raw, *before_raw]))
    before: dict[str, str | None] = {}
    after: dict[str, str | None] = {}
    for col in columns:
        if col not in exists:
            raise InputError(f"column {col!r} has no exists flag", f"{where} $.exists.{col}")
        in_before, in_after = _exists_flag(exists[col], where, f"$.exists.{col}")
        if in_before:
            before[col] = _text_or_null(before_raw.get(col), where, f"$.before.{col}")
        if in_after:
            after[col] = _text_or_null(after_raw.get(col), where, f"$.after.{col}")
    return ArcionS3Change(
        table=table,
        op=op,
        cursor=cursor,
        before=before if SPEC.images.rules(op)[0] is not None else None,
        after=after if SPEC.images.rules(op)[1] is not None else None,
        columns=columns,
    )


def _image_struct(names: Iterable[str]) -> ConnectSchema:
    return struct([primitive("string", field=n) for n in names])


def table_name_schema() -> ConnectSchema:
    """The ``tableName`` struct as Replicant writes it (hash codes are Java ints)."""
    namespace = struct(
        [
            primitive("string", optional=True, field="catalog"),
            primitive("string", optional=True, field="schema"),
            primitive("int32", field="hash"),
        ],
        field="namespace",
    )
    return struct([namespace, primitive("string", field="name"), primitive("int32", field="hash")])


class ArcionS3Json(Format):
    """Arcion Replicant's internal CDC format for S3, JSON flavour."""

    name: ClassVar[str] = "arcion-s3-json"
    description: ClassVar[str] = (
        "Arcion Replicant S3 JSON: tableName/opType/cursor, string images with an exists map"
    )
    embedded_schema: ClassVar = "no"
    spec: ClassVar[FormatSpec] = SPEC

    def detect(self, message: Message) -> bool:
        value = message.value
        return isinstance(value, dict) and value.keys() >= _ENVELOPE_KEYS and "exists" in value

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        types = RowTypes()
        seen = TableSeen()
        count = 0
        for message in messages:
            count += 1
            if message.value is None:  # a tombstone: nothing to infer from
                continue
            change = parse_change(message)
            seen.see(change.table, message.where)
            types.declare(change.columns)
            for image in (change.before, change.after):
                if image:
                    types.observe_row(image)
        contract = build_contract(
            fmt=self.name,
            options=options,
            table=seen.table,
            fields=types.fields(options.infer_types),
        )
        return Inference(contract=contract, messages=count)

    def derive(self, contract: Contract) -> Derived:
        names = contract.row_schema.field_names()
        value = struct(
            [
                table_name_schema().as_field("tableName"),
                primitive("string", field="opType"),
                primitive("string", field="cursor"),
                _image_struct(names).as_field("before"),
                _image_struct(names).as_field("after"),
                _image_struct(names).as_field("exists"),
                primitive("string", field="operationcount"),
            ]
        )
        return Derived(key=None, value=value)

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        if message.value is None:
            return []  # a tombstone
        where = message.where
        try:
            change = parse_change(message)
        except InputError as err:
            return [Violation(where, path_of(err), "envelope", err.what)]
        found: list[Violation] = []
        if change.table != contract.table_id:
            found.append(
                Violation(
                    where,
                    "$.tableName",
                    "envelope",
                    f"table {change.table.qualified()} is not the contract's "
                    f"{contract.table_id.qualified()}",
                )
            )
        codec = RowCodec.of(contract)
        listed = set(change.columns)
        for name in codec.names:
            if name not in listed:
                found.append(
                    Violation(
                        where, f"$.exists.{name}", "missing-column", f"column {name!r} is missing"
                    )
                )
        found += codec.check(change.before, "$.before", where, full=False)
        found += codec.check(change.after, "$.after", where, full=False)
        for name in change.columns:
            if name not in codec.columns and not _in_image(name, change):
                found.append(
                    Violation(
                        where,
                        f"$.exists.{name}",
                        "extra-column",
                        f"column {name!r} is not in the contract",
                    )
                )
        return found

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        if message.value is None:
            return [tombstone(message)]
        change = parse_change(message)
        codec = RowCodec.of(contract) if contract is not None else None
        before = decode_located(codec, change.before, "$.before", message.where)
        after = decode_located(codec, change.after, "$.after", message.where)
        key = key_from(contract.key if contract else (), after, before)
        return [
            ChangeEvent(
                op=change.op,
                table=change.table,
                key=key,
                before=before,
                after=after,
                ts_ms=read_time(SPEC.ts_ms, {"cursor": change.cursor}, message.where),
                source_ts_ms=read_time(SPEC.source_ts_ms, {"cursor": change.cursor}, message.where),
                position=read_position(SPEC.position, {}, block=change.cursor),
            )
        ]


def _in_image(name: str, change: ArcionS3Change) -> bool:
    return name in (change.before or {}) or name in (change.after or {})


def _or_empty(value: Any) -> Any:
    """``{}`` for an absent (null) object; anything else as it is, to be checked."""
    return {} if value is None else value
