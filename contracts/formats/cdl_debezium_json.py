"""``cdl-debezium-json``: Huawei CDL's "open-source Debezium JSON", message_version 2.0.

The Debezium envelope (``before``, ``after``, ``source``, ``op``, ``ts_ms``) plus CDL's
``message_version`` ("2.0"), ``message_type``, ``LOB_COLUMNS`` and ``unique`` (the key
columns). The after image is a struct named ``data``, the envelope is named
``<schema>.<table>``, and decimals and timestamps travel as strings under the vendor names
``com.xxx.cdc.data.Decimal`` and ``com.xxx.cdc.data.timestamp``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.events import ControlRecord
from contracts.formats._connect import Names, Plan
from contracts.formats.base import EmbeddedSchema, Message
from contracts.formats.cdl_json import cdl_heartbeat, is_heartbeat_only
from contracts.formats.debezium_json import DEBEZIUM_FIXED, DebeziumJson
from contracts.schema import ConnectSchema, primitive

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
    unique_field: ClassVar[str | None] = "unique"
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
    schema_optional: ClassVar[bool] = False
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

    def control_of(self, payload: Mapping[str, Any], plan: Plan) -> ControlRecord | None:
        heartbeat = cdl_heartbeat(payload, (self.after_field, self.before_field), "op")
        return heartbeat or super().control_of(payload, plan)

    def default_names(self, contract: Contract) -> Names:
        table = contract.table_id
        owner = table.schema or table.database
        envelope = f"{owner}.{table.name}" if owner else table.name
        return Names(envelope, "data", "before", None)

    def default_contract_name(self, table: Any, options: Mapping[str, Any]) -> str:
        return str(table.qualified())
