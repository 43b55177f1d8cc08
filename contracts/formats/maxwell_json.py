"""``maxwell-json``: Zendesk Maxwell's JSON row events (also read by Flink and Paimon).

One message per row change::

    {"database": "test", "table": "e", "type": "insert" | "update" | "delete" | "bootstrap-insert",
     "ts": <binlog seconds>, "xid": 23396, "xoffset": 0, "commit": true,
     "position": "master.000006:800911", "gtid": ..., "server_id", "thread_id",
     "data": {col: <JSON value>}, "old": {changed col: <old JSON value>},
     "primary_key": [...], "primary_key_columns": ["id"]}

Values are plain JSON with no type information: types are inferred from the values. An
update's ``old`` holds only the changed columns; the before image is ``data`` with ``old``
over it. ``bootstrap-insert`` rows are snapshot reads (op ``r``); ``bootstrap-start`` and
``bootstrap-complete`` markers and, with ``output_ddl``, the DDL types (``table-create`` ...)
are control records. ``ts`` is in seconds (the binlog event's time: ``source_ts_ms``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Final

from contracts.contract import Contract
from contracts.events import ControlKind, Op
from contracts.formats._plain_json import PlainJsonFormat, names_array, row_struct
from contracts.formats.base import Derived, Message
from contracts.formats.spec import (
    FormatSpec,
    Image,
    ImageRule,
    Images,
    Ops,
    Overlay,
    Position,
    Time,
)
from contracts.formats.spec import Table as TableRule
from contracts.schema import primitive, struct

#: Maxwell ``type`` of a row change → canonical op.
MAXWELL_TYPES: Final[Mapping[str, Op]] = {
    "insert": "c",
    "update": "u",
    "delete": "d",
    "bootstrap-insert": "r",
}
#: Maxwell ``type`` of a message that is no row change → the kind of control record.
MAXWELL_CONTROLS: Final[Mapping[str, ControlKind]] = {
    "bootstrap-start": "other",
    "bootstrap-complete": "other",
    "database-create": "ddl",
    "database-alter": "ddl",
    "database-drop": "ddl",
    "table-create": "ddl",
    "table-alter": "ddl",
    "table-drop": "ddl",
}

_DATA: Final = ("data",)
_OLD: Final = ("old",)

#: The row is in ``data``; an update's before image is its ``old`` (the changed columns)
#: over ``data``; a delete's row is the before image.
IMAGES_BY_OP: Final[Mapping[str, tuple[ImageRule | None, ImageRule | None]]] = {
    "c": (None, Image(_DATA)),
    "r": (None, Image(_DATA)),
    "u": (Overlay(_DATA, _OLD, needs_top=True), Image(_DATA)),
    "d": (Image(_DATA), None),
}

SPEC: Final = FormatSpec(
    ops=Ops(("type",), MAXWELL_TYPES, MAXWELL_CONTROLS),
    images=Images(before=_OLD, after=_DATA, values="json", by_op=IMAGES_BY_OP),
    table=TableRule(database=("database",), name=("table",), empty_is_null=True),
    source_ts_ms=(Time(("ts",), "s"),),
    position=Position(
        named={
            "xid": ("xid",),
            "xoffset": ("xoffset",),
            "commit": ("commit",),
            "position": ("position",),
            "gtid": ("gtid",),
        }
    ),
    fields=("primary_key", "primary_key_columns", "server_id", "thread_id", "def", "sql"),
)


class MaxwellJson(PlainJsonFormat):
    """Maxwell's JSON row events."""

    name: ClassVar[str] = "maxwell-json"
    description: ClassVar[str] = (
        "Zendesk Maxwell: one row per message, plain JSON in data, changed columns in old"
    )
    embedded_schema: ClassVar = "no"
    spec: ClassVar[FormatSpec] = SPEC
    key_names_at: ClassVar = ("primary_key_columns",)
    what: ClassVar = "a Maxwell message"

    def detect(self, message: Message) -> bool:
        value = message.value
        return (
            isinstance(value, dict)
            and {"database", "table", "type"} <= value.keys()
            and (value["type"] in MAXWELL_TYPES or value["type"] in MAXWELL_CONTROLS)
            and "isDdl" not in value
        )

    def derive(self, contract: Contract) -> Derived:
        value = struct(
            [
                primitive("string", field="database"),
                primitive("string", field="table"),
                primitive("string", field="type"),
                primitive("int64", field="ts"),
                primitive("int64", optional=True, field="xid"),
                primitive("int64", optional=True, field="xoffset"),
                primitive("boolean", optional=True, field="commit"),
                primitive("string", optional=True, field="position"),
                row_struct(contract, "data"),
                row_struct(contract, "old", all_optional=True),
                names_array("primary_key_columns"),
            ]
        )
        return Derived(key=None, value=value)
