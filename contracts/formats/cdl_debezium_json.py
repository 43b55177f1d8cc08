"""``cdl-debezium-json``: Huawei CDL's "open-source Debezium JSON", message_version 2.0.

The Debezium envelope (``before``, ``after``, ``source``, ``op``, ``ts_ms``) plus CDL's
``message_version`` ("2.0"), ``message_type``, ``LOB_COLUMNS`` and ``unique`` (the key
columns). The after image is a struct named ``data``, the envelope is named
``<schema>.<table>``, and decimals and timestamps travel as strings under the vendor names
``com.xxx.cdc.data.Decimal`` and ``com.xxx.cdc.data.timestamp``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.formats._connect import Names
from contracts.formats.base import EmbeddedSchema, Message
from contracts.formats.cdl_json import HEARTBEAT_FIELD, heartbeat_control, is_heartbeat_only
from contracts.formats.debezium_json import DEBEZIUM_FIXED, DebeziumJson
from contracts.formats.debezium_json import SPEC as DEBEZIUM_SPEC
from contracts.formats.spec import Connect, FormatSpec, Key
from contracts.schema import ConnectSchema, primitive

#: Debezium's envelope plus CDL's heartbeats and ``unique`` key struct.
SPEC: Final = replace(
    DEBEZIUM_SPEC,
    connect=Connect(bare=(HEARTBEAT_FIELD,)),
    controls=(heartbeat_control("op", ("after", "before")), *DEBEZIUM_SPEC.controls),
    key=Key(kafka=True, unique=("unique",)),
    fields=(*DEBEZIUM_SPEC.fields, "message_version", "message_type", "LOB_COLUMNS"),
)

#: Envelope fields whose schema never varies (CDL writes ts_ms as required).
CDL_V2_FIXED: Final[Mapping[str, ConnectSchema]] = {
    **DEBEZIUM_FIXED,
    "ts_ms": primitive("int64"),
    "message_version": primitive("string"),
    "message_type": primitive("string"),
    "LOB_COLUMNS": primitive("string", optional=True),
    "HEARTBEAT_IDENTIFIER": primitive("string", optional=True),
}


class CdlDebeziumJson(DebeziumJson):
    """Huawei CDL Debezium JSON (message_version 2.0)."""

    name = "cdl-debezium-json"
    description = "Huawei CDL open-source Debezium JSON v2.0 (Debezium envelope + unique)"
    embedded_schema: ClassVar[EmbeddedSchema] = "yes"
    spec: ClassVar[FormatSpec] = SPEC
    fixed_fields: ClassVar[Mapping[str, ConnectSchema]] = CDL_V2_FIXED
    default_layout: ClassVar[tuple[str, ...]] = (
        "before",
        "after",
        "source",
        "op",
        "ts_ms",
        "message_version",
        "message_type",
        "LOB_COLUMNS",
        "unique",
    )
    kafka_key: ClassVar[bool] = False

    def detect(self, message: Message) -> bool:
        value = message.value
        if is_heartbeat_only(value):
            return True
        if not isinstance(value, dict) or set(value) != {"schema", "payload"}:
            return False
        payload = value["payload"]
        return isinstance(payload, dict) and payload.get("message_version") == "2.0"

    def split(self, doc: Mapping[str, Any], where: str) -> tuple[Any, dict[str, Any]]:
        if set(doc) == {"HEARTBEAT_IDENTIFIER"}:
            return None, dict(doc)
        return super().split(doc, where)

    def default_names(self, contract: Contract) -> Names:
        table = contract.table_id
        owner = table.schema or table.database
        envelope = f"{owner}.{table.name}" if owner else table.name
        return Names(envelope, "data", "before", None)

    def default_contract_name(self, table: Any, options: Mapping[str, Any]) -> str:
        return str(table.qualified())
