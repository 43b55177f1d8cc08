"""Formats whose row images are plain JSON objects, one row change per message.

Maxwell's and GoldenGate's JSON formatters write a message per row: an op code, the table,
times, a position, the key's column names and one or two images whose values are plain JSON
(numbers, strings, booleans, null) with no type information. Everything about such a format is
in its :class:`~contracts.formats.spec.FormatSpec` (``images.values == "json"``, no ``rows``);
:class:`PlainJsonFormat` reads those tables for ``infer``, ``validate`` and ``normalize``, so a
format module states its facts, its ``detect`` and its ``derive`` only.

Column types are inferred from the values (as ``canal-json`` does without ``mysqlType``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

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
    Format,
    Inference,
    InferOptions,
    Message,
    Violation,
    counted,
    require_dict,
    tombstone,
)
from contracts.formats.spec import (
    FirstOf,
    Image,
    ImageRule,
    Overlay,
    Path,
    at,
    raw_image,
    reach,
    read_position,
    read_table,
    read_time,
    rule_paths,
)
from contracts.schema import ConnectSchema, json_kind, primitive

RawImage = dict[str, Any]


def dotted(path: Path) -> str:
    """A field path as a JSON path (``("data",)`` → ``$.data``)."""
    return "$" + "".join(f".{p}" for p in path)


def reported_at(rule: ImageRule) -> Path:
    """Where an image's own values are: an overlay's are its top's (the base is another
    image, decoded and reported there)."""
    if isinstance(rule, Image):
        return rule.at
    if isinstance(rule, Overlay):
        return rule.top
    return rule.images[0]


@dataclass(frozen=True, slots=True)
class PlainMessage:
    """One parsed message: a control record (``control`` set) or one row change."""

    table: TableId | None
    op: Op | None
    control: ControlKind | None
    code: str
    before: RawImage | None
    after: RawImage | None
    #: Every image the message holds, by path (an update's partial ``old`` too).
    images: Mapping[Path, RawImage | None]
    key_names: tuple[str, ...]
    doc: dict[str, Any]


class PlainJsonFormat(Format):
    """A format of one row change per message with plain JSON images (see the module doc).

    A subclass sets ``spec`` and ``key_names_at`` (the field listing the key's column names)
    and implements ``detect`` and ``derive``."""

    key_names_at: ClassVar[Path]
    #: What the message is called in errors ("a Maxwell message").
    what: ClassVar[str]

    # --- reading ------------------------------------------------------------------------------

    def parse(self, message: Message) -> PlainMessage:
        """Parse one message; raises InputError (with the JSON path) when it is malformed."""
        spec = self.spec
        where = message.where
        doc = require_dict(message.value, where, "$", self.what)
        code = at(doc, spec.ops.at)
        op, kind = spec.ops.read(code)
        rule = spec.control_of(doc, op) if kind is None else None
        if kind is None and rule is not None:
            kind = rule.kind
        if kind is not None:
            try:
                table = read_table(spec.table, doc, where)
            except DecodeError:
                table = None  # a control record's table is read as far as it can be
            return PlainMessage(table, None, kind, str(code), None, None, {}, (), doc)
        table = read_table(spec.table, doc, where)
        if op is None:
            raise InputError(spec.ops.unknown(code), f"{where} {dotted(spec.ops.at)}")
        before_rule, after_rule = spec.images.rules(op)
        images = {
            path: self._image(doc, path, where)
            for path in (*rule_paths(before_rule), *rule_paths(after_rule))
        }
        for label, image_rule in (("before", before_rule), ("after", after_rule)):
            needed = _needed(image_rule)
            if needed is not None and images.get(needed) is None:
                raise InputError(
                    f"a {code} change needs its {label} image here", f"{where} {dotted(needed)}"
                )
        return PlainMessage(
            table=table,
            op=op,
            control=None,
            code=str(code),
            before=raw_image(before_rule, images),
            after=raw_image(after_rule, images),
            images=images,
            key_names=self._key_names(doc, where),
            doc=doc,
        )

    def _image(self, doc: dict[str, Any], path: Path, where: str) -> RawImage | None:
        value = reach(doc, path, where)
        if value is None:
            return None
        return require_dict(value, where, dotted(path), "a row image")

    def _key_names(self, doc: dict[str, Any], where: str) -> tuple[str, ...]:
        value = at(doc, self.key_names_at)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
            raise InputError(
                f"expected an array of column names, got {json_kind(value)}",
                f"{where} {dotted(self.key_names_at)}",
            )
        return tuple(value)

    # --- the five operations ------------------------------------------------------------------

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        types = RowTypes()
        seen = TableSeen()
        controls: Counter[str] = Counter()
        key_names: tuple[str, ...] = ()
        count = 0
        changes = 0
        for message in messages:
            count += 1
            if message.value is None:  # a tombstone: nothing to infer from
                continue
            msg = self.parse(message)
            if msg.control is not None:
                controls[msg.control] += 1
                continue
            changes += 1
            if msg.table is not None:
                seen.see(msg.table, message.where)
            for image in (msg.after, msg.before):
                if image:
                    types.observe_row(image)
            key_names = msg.key_names or key_names
        if not changes:
            raise InputError("no row changes in the sample: nothing to infer columns from")
        key = [k for k in key_names if k in types.columns]
        contract = build_contract(
            fmt=self.name,
            options=options,
            table=seen.table,
            fields=types.fields(options.infer_types, required=key),
            key=key,
        )
        return Inference(contract=contract, messages=count, controls=counted(controls))

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        if message.value is None:
            return []  # a tombstone
        where = message.where
        try:
            msg = self.parse(message)
        except InputError as err:
            return [Violation(where, path_of(err), "envelope", err.what)]
        if msg.control is not None or msg.op is None:
            return []
        found: list[Violation] = []
        table = self.spec.table
        if msg.table is not None and msg.table != contract.table_id:
            part = table.qualified or table.name or ()
            found.append(
                Violation(
                    where,
                    dotted(part),
                    "envelope",
                    f"table {msg.table.qualified()} is not the contract's "
                    f"{contract.table_id.qualified()}",
                )
            )
        codec = RowCodec.of(contract)
        partial = {r.top for r in self.spec.images.rules(msg.op) if isinstance(r, Overlay)}
        for path, image in msg.images.items():
            found += codec.check(image, dotted(path), where, full=path not in partial)
        return found

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        if message.value is None:
            return [tombstone(message)]
        msg = self.parse(message)
        spec = self.spec
        where = message.where
        if msg.control is not None:
            # a control record's times are read as a change's (Spark's typed parse too)
            for times in (spec.ts_ms, spec.source_ts_ms):
                read_time(times, msg.doc, where)
            return [ControlRecord(msg.control, msg.code, msg.table or TableId())]
        assert msg.op is not None
        codec = RowCodec.of(contract) if contract is not None else None
        before_rule, after_rule = spec.images.rules(msg.op)
        # the after image first: an overlay's base values are reported where they are written
        after = _decoded(codec, msg.after, after_rule, where)
        before = _decoded(codec, msg.before, before_rule, where)
        names = contract.key if contract is not None and contract.key else msg.key_names
        table = msg.table
        if table is None:
            table = contract.table_id if contract is not None else TableId()
        return [
            ChangeEvent(
                op=msg.op,
                table=table,
                key=key_from(names, after, before),
                before=before,
                after=after,
                ts_ms=read_time(spec.ts_ms, msg.doc, where),
                source_ts_ms=read_time(spec.source_ts_ms, msg.doc, where),
                position=read_position(spec.position, msg.doc, where),
            )
        ]


def _needed(rule: ImageRule | None) -> Path | None:
    """The image a rule cannot do without (None: it makes do with none)."""
    if isinstance(rule, Image) and not rule.empty:
        return rule.at
    if isinstance(rule, Overlay):
        return rule.base
    if isinstance(rule, FirstOf) and not rule.empty:
        return rule.images[0]
    return None


def _decoded(
    codec: RowCodec | None, image: RawImage | None, rule: ImageRule | None, where: str
) -> dict[str, Any] | None:
    if image is None or rule is None:
        return None
    return decode_located(codec, image, dotted(reported_at(rule)), where)


def row_struct(contract: Contract, field: str, *, all_optional: bool = False) -> ConnectSchema:
    """The row image as the producer writes it: the contract's columns (every one optional
    for a partial image), the image itself optional."""
    from contracts.schema import struct

    columns = contract.row_schema.fields or ()
    return struct(
        [c.as_optional(True) if all_optional else c for c in columns], optional=True
    ).as_field(field)


def names_array(field: str) -> ConnectSchema:
    """An optional array of column names."""
    return ConnectSchema(type="array", optional=True, items=primitive("string"), field=field)
