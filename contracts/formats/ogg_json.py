"""``ogg-json``: Oracle GoldenGate for Big Data's JSON formatter (also read by Flink and Paimon).

One message per row operation::

    {"table": "SCHEMA.TABLE", "op_type": "I" | "U" | "D" | "T",
     "op_ts": "2020-05-13 15:40:06.000000", "current_ts": "2020-05-13T13:39:35.766000",
     "pos": "00000000000000000000143", "primary_keys": ["id"],
     "tokens": {...}, "before": {col: <JSON value>}, "after": {col: <JSON value>}}

Values are plain JSON with no type information: types are inferred from the values. ``T`` is a
truncate (op ``t``, no image). ``op_ts`` is when the operation was committed in the source
database (``source_ts_ms``), ``current_ts`` when the formatter wrote the message (``ts_ms``), as
Flink's ``event-timestamp`` and ``ingestion-timestamp`` read them; both are read as UTC
wall-clock text. ``pos`` (trail file sequence and offset) is the position.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Final

from contracts.contract import Contract
from contracts.events import Op
from contracts.formats._plain_json import PlainJsonFormat, names_array, row_struct
from contracts.formats.base import Derived, Message
from contracts.formats.spec import FormatSpec, Image, ImageRule, Images, Ops, Position, Time
from contracts.formats.spec import Table as TableRule
from contracts.schema import ConnectSchema, primitive, struct

#: GoldenGate ``op_type`` → canonical op.
OP_TYPES: Final[Mapping[str, Op]] = {"I": "c", "U": "u", "D": "d", "T": "t"}

_BEFORE: Final = ("before",)
_AFTER: Final = ("after",)

#: An insert has an after image, a delete a before image, an update both; a truncate none.
IMAGES_BY_OP: Final[Mapping[str, tuple[ImageRule | None, ImageRule | None]]] = {
    "c": (None, Image(_AFTER)),
    "u": (Image(_BEFORE), Image(_AFTER)),
    "d": (Image(_BEFORE), None),
    "t": (None, None),
}

SPEC: Final = FormatSpec(
    ops=Ops(("op_type",), OP_TYPES),
    images=Images(before=_BEFORE, after=_AFTER, values="json", by_op=IMAGES_BY_OP),
    table=TableRule(qualified=("table",)),
    ts_ms=(Time(("current_ts",), "iso"),),
    source_ts_ms=(Time(("op_ts",), "iso"),),
    position=Position(named={"pos": ("pos",)}),
    fields=("primary_keys", "tokens"),
)


class OggJson(PlainJsonFormat):
    """GoldenGate JSON formatter operations."""

    name: ClassVar[str] = "ogg-json"
    description: ClassVar[str] = (
        "Oracle GoldenGate JSON: op_type I/U/D/T, plain JSON before/after, op_ts, pos"
    )
    embedded_schema: ClassVar = "no"
    spec: ClassVar[FormatSpec] = SPEC
    key_names_at: ClassVar = ("primary_keys",)
    what: ClassVar = "a GoldenGate JSON operation"

    def detect(self, message: Message) -> bool:
        value = message.value
        return (
            isinstance(value, dict)
            and value.get("op_type") in OP_TYPES
            and isinstance(value.get("table"), str)
            and ("before" in value or "after" in value or value.get("op_type") == "T")
        )

    def derive(self, contract: Contract) -> Derived:
        value = struct(
            [
                primitive("string", field="table"),
                primitive("string", field="op_type"),
                primitive("string", field="op_ts"),
                primitive("string", optional=True, field="current_ts"),
                primitive("string", optional=True, field="pos"),
                names_array("primary_keys"),
                _tokens(),
                row_struct(contract, "before"),
                row_struct(contract, "after"),
            ]
        )
        return Derived(key=None, value=value)


def _tokens() -> ConnectSchema:
    return ConnectSchema(
        type="map",
        optional=True,
        keys=primitive("string"),
        values=primitive("string"),
        field="tokens",
    )
