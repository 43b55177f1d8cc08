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
from contracts.errors import DecodeError
from contracts.events import ControlRecord, Op, TableId
from contracts.formats._connect import (
    ConnectEnvelopeFormat,
    Facts,
    Names,
    Plan,
    checked_int,
    pick_position,
    str_or_none,
)
from contracts.formats.base import Message
from contracts.schema import ConnectSchema, json_kind, primitive, struct

TIMESTAMP_NAME: Final = "org.apache.kafka.connect.data.Timestamp"

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
    "TIMESTAMP": primitive("int64", name=TIMESTAMP_NAME, version=1),
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


def cdl_heartbeat(
    payload: Mapping[str, Any], images: tuple[str, ...], op_field: str
) -> ControlRecord | None:
    """A heartbeat record when the payload has a heartbeat identifier and no row change."""
    if payload.get(HEARTBEAT_FIELD) is None:
        return None
    if payload.get(op_field) is None and all(payload.get(i) is None for i in images):
        return ControlRecord("heartbeat", f"CDL heartbeat {payload[HEARTBEAT_FIELD]}")
    return None


class CdlJson(ConnectEnvelopeFormat):
    """Huawei CDL JSON (message_version 1.0)."""

    name = "cdl-json"
    description = "Huawei CDL JSON v1.0 (DATA_STORE, OPERATION, data/before, unique)"
    after_field: ClassVar[str] = "data"
    unique_field: ClassVar[str | None] = "unique"
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

    def control_of(self, payload: Mapping[str, Any], plan: Plan) -> ControlRecord | None:
        return cdl_heartbeat(payload, (self.after_field, self.before_field), "OPERATION")

    def facts(self, payload: Mapping[str, Any], where: str) -> Facts:
        operation = payload.get("OPERATION")
        op = CDL_OPERATIONS.get(operation) if isinstance(operation, str) else None
        if op is None:
            raise DecodeError(
                f"unknown OPERATION {operation!r} (expected INSERT, UPDATE or DELETE)",
                f"{where} $.payload.OPERATION",
            )
        table = TableId(
            None, str_or_none(payload.get("SEG_OWNER")), str_or_none(payload.get("TABLE_NAME"))
        )
        return Facts(
            op=op,
            table=table,
            ts_ms=None,
            source_ts_ms=checked_int(payload.get("TIMESTAMP"), where, "$.payload.TIMESTAMP"),
            position=self._position(payload.get("transaction"), where),
        )

    @staticmethod
    def _position(transaction: Any, where: str) -> dict[str, Any]:
        """``transaction.properties`` ([{name, value}, ...]) as ``{lsn: ..., txId: ...}``."""
        if not isinstance(transaction, dict):
            return {}
        properties = transaction.get("properties")
        if properties is None:
            properties = []
        if not isinstance(properties, list):
            raise DecodeError(
                f"expected an array of {{name, value}} objects, got {json_kind(properties)}",
                f"{where} $.payload.transaction.properties",
            )
        pairs = {
            p["name"]: p.get("value")
            for p in properties
            if isinstance(p, dict) and isinstance(p.get("name"), str)
        }
        return pick_position(pairs, pairs)

    def identity_options(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        store = str_or_none(payload.get("DATA_STORE"))
        return {"data_store": store} if store else {}

    def default_names(self, contract: Contract) -> Names:
        table = contract.table_id
        owner = table.schema or table.database
        envelope = f"{owner}.{table.name}" if owner else table.name
        return Names(envelope, self.after_field, self.before_field, None)
