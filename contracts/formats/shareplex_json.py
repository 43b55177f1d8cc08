"""``shareplex-json``: Quest SharePlex change records as JSON (as DTS writes them to Kafka).

One operation per message::

    {"meta": {"time": "<commit time, UTC>", "userid", "op": "ins" | "upd" | "del" | ...,
              "scn", "rowid", "trans", "seq", "size", "table": "OWNER.TABLE",
              "idx": "seq/size", "posttime": "<time written to the target>"},
     "data": {col: "<text>" | null},
     "key": {col: "<text>" | null}}

``data`` is the row on insert and delete and the changed columns on update; ``key`` is the
before image on update. The normalized update has ``before`` = ``key`` and ``after`` = ``key``
overlaid with ``data`` (columns the producer did not send stay absent). ``UPDATE BEFORE`` halves
are control records (their ``UPDATE AFTER`` partner is the row change); DDL such as
``DROP COLUMN`` is a control record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent, ControlKind, ControlRecord, Normalized, Op, TableId
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
    FirstOf,
    FormatSpec,
    Image,
    ImageRule,
    Images,
    Ops,
    Overlay,
    Path,
    Position,
    Table,
    Time,
    raw_image,
    read_position,
    read_table,
    read_time,
    rule_paths,
)
from contracts.schema import ConnectSchema, json_kind, primitive, struct

#: meta.op spellings (lower case, single spaces) of row changes → the op.
OP_SPELLINGS: Final[Mapping[str, Op]] = {
    "ins": "c",
    "insert": "c",
    "upd": "u",
    "update": "u",
    "update after": "u",
    "del": "d",
    "delete": "d",
    "trunc": "t",
    "truncate": "t",
}
#: meta.op spellings of control records: the ``UPDATE BEFORE`` half of a split update (its
#: ``UPDATE AFTER`` is the row change) and DDL.
CONTROL_SPELLINGS: Final[Mapping[str, ControlKind]] = {
    "update before": "other",
    "drop column": "ddl",
    "add column": "ddl",
    "modify column": "ddl",
    "rename column": "ddl",
    "ddl": "ddl",
}

#: meta fields that locate the operation in the source's redo stream.
POSITION_FIELDS: Final = ("scn", "rowid", "trans", "seq", "idx")

_DATA: Final = ("data",)
_KEY: Final = ("key",)

#: ``data`` is the row on insert and delete and the changed columns on update; ``key`` is an
#: update's before image (and a delete's row when ``data`` is empty).
IMAGES_BY_OP: Final[Mapping[str, tuple[ImageRule | None, ImageRule | None]]] = {
    "c": (None, Image(_DATA, empty=True)),
    "u": (Image(_KEY), Overlay(_KEY, _DATA)),
    "d": (FirstOf((_DATA, _KEY), empty=True), None),
    "t": (None, None),
}

#: SharePlex's ``{meta, data, key}`` with text values.
SPEC: Final = FormatSpec(
    ops=Ops(("meta", "op"), OP_SPELLINGS, CONTROL_SPELLINGS, spelling="words"),
    images=Images(
        before=_KEY,
        after=_DATA,
        values="text",
        by_op=IMAGES_BY_OP,
        cell_refuses=frozenset({"json"}),
        typed_cells=True,
    ),
    table=Table(qualified=("meta", "table"), fallback=True),
    ts_ms=(Time(("meta", "posttime"), "iso"),),
    source_ts_ms=(Time(("meta", "time"), "iso"),),
    position=Position(at=("meta",), keys=POSITION_FIELDS, keep_nulls=True),
    text_blocks=(("meta",),),
)


@dataclass(frozen=True, slots=True)
class SharePlexRecord:
    """One parsed message."""

    op: Op | None
    control: ControlKind | None
    op_text: str
    table: TableId | None
    data: dict[str, Any] | None
    key: dict[str, Any] | None
    meta: dict[str, Any]


def parse_record(message: Message) -> SharePlexRecord:
    """Parse one message; raises InputError (with the JSON path) when it is malformed."""
    where = message.where
    doc = require_dict(message.value, where, "$", "a SharePlex JSON message")
    meta = require_dict(doc.get("meta"), where, "$.meta", "meta")
    op_text = meta.get("op")
    if not isinstance(op_text, str):
        raise InputError(
            f"meta.op must be a string, got {json_kind(op_text)}", f"{where} $.meta.op"
        )
    op, control = SPEC.ops.read(op_text)
    if op is None and control is None:
        raise InputError(SPEC.unknown_op(op_text), f"{where} $.meta.op")
    data = _image(doc, "data", where)
    key = _image(doc, "key", where)
    if op is not None:  # a control record's images are not read: their cells are not judged
        found: dict[Path, dict[str, Any] | None] = {_DATA: data, _KEY: key}
        for path in dict.fromkeys(p for rule in SPEC.images.rules(op) for p in rule_paths(rule)):
            _refuse_cells(found[path], where, path[0])
    try:
        table = read_table(SPEC.table, doc, where)
    except DecodeError:
        if control is None:
            raise
        table = None  # a control record's table is read as far as it can be (as everywhere)
    return SharePlexRecord(op, control, op_text, table, data, key, meta)


def _image(doc: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    value = doc.get(name)
    if value is None:
        return None
    return require_dict(value, where, f"$.{name}", name)


def _refuse_cells(image: dict[str, Any] | None, where: str, name: str) -> None:
    """A cell of a kind no column holds (``Images.cell_refuses``), in an image a row change
    reads."""
    for col, cell in (image or {}).items():
        if isinstance(cell, dict | list) and "json" in SPEC.images.cell_refuses:
            raise InputError(
                f"expected a column value, got {json_kind(cell)}", f"{where} $.{name}.{col}"
            )


def images(record: SharePlexRecord) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(before, after) of a row change."""
    if record.op is None:
        return None, None
    found: dict[Path, Any] = {_DATA: record.data, _KEY: record.key}
    before, after = SPEC.images.rules(record.op)
    return raw_image(before, found), raw_image(after, found)


def _optional_strings(names: Iterable[str]) -> ConnectSchema:
    return struct([primitive("string", optional=True, field=n) for n in names], optional=True)


def meta_schema() -> ConnectSchema:
    """The ``meta`` struct (everything but ``op`` may be left out by the producer)."""
    strings = ("time", "op", "scn", "rowid", "trans", "table", "idx", "posttime")
    fields = [primitive("string", optional=name != "op", field=name) for name in strings]
    fields.insert(1, primitive("int64", optional=True, field="userid"))
    fields.insert(6, primitive("int32", optional=True, field="seq"))
    fields.insert(7, primitive("int32", optional=True, field="size"))
    return struct(fields, field="meta")


class ShareplexJson(Format):
    """Quest SharePlex JSON (meta + data + key)."""

    name: ClassVar[str] = "shareplex-json"
    description: ClassVar[str] = (
        "Quest SharePlex JSON: meta{op, scn, table...}, data, key (string values)"
    )
    embedded_schema: ClassVar = "no"
    spec: ClassVar[FormatSpec] = SPEC

    def detect(self, message: Message) -> bool:
        value = message.value
        if not isinstance(value, dict):
            return False
        meta = value.get("meta")
        return isinstance(meta, dict) and "op" in meta and ("data" in value or "key" in value)

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        types = RowTypes()
        seen = TableSeen()
        count = 0
        controls: dict[str, int] = {}
        for message in messages:
            count += 1
            if message.value is None:  # a tombstone: nothing to infer from
                continue
            record = parse_record(message)
            if record.table is not None:
                seen.see(record.table, message.where)
            kind = _CONTROL_COUNTS.get(record.control or record.op or "")
            if kind is not None:
                controls[kind] = controls.get(kind, 0) + 1
            for image in (record.data, record.key):
                if image:
                    types.observe_row(image)
        contract = build_contract(
            fmt=self.name,
            options=options,
            table=seen.table,
            fields=types.fields(options.infer_types),
        )
        return Inference(contract=contract, messages=count, controls=controls)

    def derive(self, contract: Contract) -> Derived:
        names = contract.row_schema.field_names()
        value = struct(
            [
                meta_schema(),
                _optional_strings(names).as_field("data"),
                _optional_strings(names).as_field("key"),
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
        if record.table is not None and record.table != _contract_table(contract):
            found.append(
                Violation(
                    where,
                    "$.meta.table",
                    "envelope",
                    f"table {record.table.qualified()} is not the contract's "
                    f"{contract.table_id.qualified()}",
                )
            )
        codec = RowCodec.of(contract)
        found += codec.check(record.data, "$.data", where, full=False)
        found += codec.check(record.key, "$.key", where, full=False)
        return found

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        if message.value is None:
            return [tombstone(message)]
        record = parse_record(message)
        table = record.table or (_contract_table(contract) if contract else TableId())
        if record.control == "ddl":
            return [ControlRecord("ddl", f"{record.op_text} on {table.qualified()}", table)]
        if record.control is not None:
            return [
                ControlRecord(
                    record.control,
                    "UPDATE BEFORE half of a split update (its UPDATE AFTER is the row change)",
                    table,
                )
            ]
        assert record.op is not None
        codec = RowCodec.of(contract) if contract is not None else None
        before_raw, after_raw = images(record)
        before_path = "$.key" if record.op != "d" else "$.data"
        before = decode_located(codec, before_raw, before_path, message.where)
        after = decode_located(codec, after_raw, "$.data", message.where)
        return [
            ChangeEvent(
                op=record.op,
                table=table,
                key=key_from(contract.key if contract else (), after, before),
                before=before,
                after=after,
                ts_ms=read_time(SPEC.ts_ms, {"meta": record.meta}, message.where),
                source_ts_ms=read_time(SPEC.source_ts_ms, {"meta": record.meta}, message.where),
                position=read_position(SPEC.position, {"meta": record.meta}, message.where),
            )
        ]


#: What infer counts, by control kind or op.
_CONTROL_COUNTS: Final[Mapping[str, str]] = {
    "ddl": "ddl",
    "other": "update-before",
    "t": "truncate",
}


def _contract_table(contract: Contract) -> TableId:
    return TableId(None, contract.table.schema_, contract.table.name)
