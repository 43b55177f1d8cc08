"""``cdl-json``: Huawei CDL JSON, message_version 1.0.

One flat envelope per change: ``DATA_STORE`` (the source database type), ``SEG_OWNER`` (schema),
``TABLE_NAME``, ``TIMESTAMP`` (when the change happened), ``OPERATION`` (INSERT, UPDATE,
DELETE), ``data`` (after image), ``before``, ``unique`` (the key columns),
``transaction.properties`` (``[{name: lsn, value}, {name: txId, value}]``), ``LOB_COLUMNS``,
``message_version``, ``message_type`` and ``HEARTBEAT_IDENTIFIER``. A message with a heartbeat
identifier and no row image is a heartbeat, never a row change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.events import Op
from contracts.formats._connect import ConnectEnvelopeFormat, Names, str_or_none
from contracts.formats.base import Message
from contracts.formats.spec import (
    Absent,
    AllOf,
    Connect,
    Control,
    FormatSpec,
    Images,
    Key,
    Ops,
    Position,
    Present,
    Table,
    Time,
)
from contracts.logical import CONNECT_TIMESTAMP_NAME
from contracts.schema import ConnectSchema, primitive, struct

#: OPERATION values and the op codes they stand for.
CDL_OPERATIONS: Final[Mapping[str, Op]] = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}

_TRANSACTION: Final = struct(
    [
        ConnectSchema(
            type="array",
            items=struct([primitive("string", field="name"), primitive("int64", field="value")]),
            field="properties",
        )
    ],
    name="transaction",
)

#: The CDL v1 envelope fields whose schema never varies.
CDL_V1_FIXED: Final[Mapping[str, ConnectSchema]] = {
    "DATA_STORE": primitive("string"),
    "SEG_OWNER": primitive("string"),
    "TABLE_NAME": primitive("string"),
    "TIMESTAMP": primitive("int64", name=CONNECT_TIMESTAMP_NAME, version=1),
    "OPERATION": primitive("string"),
    "LOB_COLUMNS": primitive("string", optional=True),
    "transaction": _TRANSACTION,
    "message_version": primitive("string"),
    "message_type": primitive("string"),
    "HEARTBEAT_IDENTIFIER": primitive("string", optional=True),
}

HEARTBEAT_FIELD: Final = "HEARTBEAT_IDENTIFIER"


def is_heartbeat_only(value: Any) -> bool:
    """A document (or payload) that carries nothing but a heartbeat identifier."""
    if not isinstance(value, dict):
        return False
    body = value.get("payload") if set(value) == {"schema", "payload"} else value
    return isinstance(body, dict) and set(body) == {HEARTBEAT_FIELD}


def heartbeat_control(op_field: str, images: tuple[str, ...]) -> Control:
    """CDL's heartbeat: a heartbeat identifier with no op and no row image."""
    quiet = tuple(Absent((name,)) for name in (op_field, *images))
    return Control("heartbeat", AllOf((Present((HEARTBEAT_FIELD,)), *quiet)), "CDL heartbeat")


#: CDL v1: ``OPERATION``, ``data``/``before``, ``unique``, ``SEG_OWNER``/``TABLE_NAME``,
#: ``TIMESTAMP`` and the position in ``transaction.properties`` (``[{name, value}]``).
SPEC: Final = FormatSpec(
    connect=Connect(bare=(HEARTBEAT_FIELD,)),
    ops=Ops(("OPERATION",), CDL_OPERATIONS),
    controls=(heartbeat_control("OPERATION", ("data", "before")),),
    images=Images(before=("before",), after=("data",), values="connect"),
    table=Table(schema=("SEG_OWNER",), name=("TABLE_NAME",)),
    source_ts_ms=(Time(("TIMESTAMP",)),),
    position=Position(at=("transaction", "properties"), keys=None, pairs=True),
    key=Key(kafka=True, unique=("unique",)),
    fields=("DATA_STORE", "LOB_COLUMNS", "message_version", "message_type"),
)


class CdlJson(ConnectEnvelopeFormat):
    """Huawei CDL JSON (message_version 1.0)."""

    name = "cdl-json"
    description = "Huawei CDL JSON v1.0 (DATA_STORE, OPERATION, data/before, unique)"
    spec: ClassVar[FormatSpec] = SPEC
    fixed_fields: ClassVar[Mapping[str, ConnectSchema]] = CDL_V1_FIXED
    default_layout: ClassVar[tuple[str, ...]] = (
        "DATA_STORE",
        "SEG_OWNER",
        "TABLE_NAME",
        "TIMESTAMP",
        "OPERATION",
        "LOB_COLUMNS",
        "transaction",
        "unique",
        "data",
        "before",
        "message_version",
        "message_type",
        "HEARTBEAT_IDENTIFIER",
    )
    kafka_key: ClassVar[bool] = False

    def detect(self, message: Message) -> bool:
        value = message.value
        if is_heartbeat_only(value):
            return True
        if not isinstance(value, dict) or set(value) != {"schema", "payload"}:
            return False
        payload = value["payload"]
        return (
            isinstance(payload, dict)
            and payload.get("message_version") == "1.0"
            and "OPERATION" in payload
        )

    def split(self, doc: Mapping[str, Any], where: str) -> tuple[Any, dict[str, Any]]:
        if set(doc) == {HEARTBEAT_FIELD}:
            return None, dict(doc)
        return super().split(doc, where)

    def identity_options(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        store = str_or_none(payload.get("DATA_STORE"))
        return {"data_store": store} if store else {}

    def default_names(self, contract: Contract) -> Names:
        table = contract.table_id
        owner = table.schema or table.database
        envelope = f"{owner}.{table.name}" if owner else table.name
        return Names(envelope, self.after_field, self.before_field, None)
