"""``debezium-json``: Debezium change events as Kafka Connect's JsonConverter writes them.

With ``schemas.enable=true`` each value is ``{schema, payload}``; the payload is the envelope
``before, after, source, op, ts_ms`` (+ ``ts_us``/``ts_ns`` since 2.x, + ``transaction`` when
transaction metadata is on). With ``schemas.enable=false`` the value is the payload alone.
Tombstones (null values after deletes), ``op: m`` logical-decoding messages, heartbeats,
transaction markers and schema-change events are control records, never row changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.events import ControlRecord, TableId
from contracts.formats._connect import (
    POSITION_FIELDS,
    ROW_OPS,
    ConnectEnvelopeFormat,
    Names,
    Plan,
    _InferState,
    checked,
    is_arcion_envelope,
    is_envelope_schema,
    raw_field,
    str_or_none,
)
from contracts.formats.base import EmbeddedSchema, Message
from contracts.formats.spec import (
    AllOf,
    AnyOf,
    Connect,
    Control,
    Equals,
    FormatSpec,
    Images,
    Key,
    Only,
    Ops,
    Position,
    Present,
    Table,
    Time,
)
from contracts.schema import ConnectSchema, primitive, struct

_OPTIONAL_INT64: Final = primitive("int64", optional=True)

#: Envelope fields whose schema never varies.
DEBEZIUM_FIXED: Final[Mapping[str, ConnectSchema]] = {
    "op": primitive("string"),
    "ts_ms": _OPTIONAL_INT64,
    "ts_us": _OPTIONAL_INT64,
    "ts_ns": _OPTIONAL_INT64,
}

#: Debezium's transaction metadata block (1.x layout), for payload-only samples that never
#: show a non-null one.
TRANSACTION_BLOCK: Final = struct(
    [
        primitive("string", field="id"),
        primitive("int64", field="total_order"),
        primitive("int64", field="data_collection_order"),
    ],
    optional=True,
)

#: Keys a payload-only (schemas.enable=false) envelope may have.
ENVELOPE_KEYS: Final = frozenset(
    {"before", "after", "source", "op", "ts_ms", "ts_us", "ts_ns", "transaction", "message"}
)

#: Payload shapes of Debezium's non-row messages (tried in order when the op is not a row op).
CONTROLS: Final = (
    Control("message", Equals(("op",), frozenset({"m"})), "logical decoding message (op m)"),
    Control(
        "transaction",
        AllOf((Equals(("status",), frozenset({"BEGIN", "END"})), Present(("id",)))),
        "transaction marker",
    ),
    Control("ddl", AnyOf((Present(("ddl",)), Present(("tableChanges",)))), "schema change event"),
    Control("heartbeat", Only(("ts_ms",)), "heartbeat"),
)

#: The Debezium envelope: ``op`` codes, controls, images, ``source`` (table, position by
#: connector), ``ts_ms`` (or ``ts_us``/``ts_ns``), the Kafka key.
SPEC: Final = FormatSpec(
    connect=Connect(schema_optional=True),
    ops=Ops(("op",), ROW_OPS),
    controls=CONTROLS,
    images=Images(before=("before",), after=("after",), values="connect"),
    table=Table(
        database=("source", "db"),
        schema=("source", "schema"),
        name=("source", "table"),
        required=(("source",),),
    ),
    ts_ms=(Time(("ts_ms",)), Time(("ts_us",), "us"), Time(("ts_ns",), "ns")),
    source_ts_ms=(Time(("source", "ts_ms")),),
    position=Position(at=("source",), by_connector=POSITION_FIELDS),
    key=Key(kafka=True),
    fields=("transaction", "message"),
)


class DebeziumJson(ConnectEnvelopeFormat):
    """Debezium JSON envelopes (MySQL, PostgreSQL and other connectors)."""

    name = "debezium-json"
    description = "Debezium change events (JsonConverter, with or without embedded schema)"
    embedded_schema: ClassVar[EmbeddedSchema] = "optional"
    spec: ClassVar[FormatSpec] = SPEC
    verbatim_fields: ClassVar[tuple[str, ...]] = ("source", "transaction")
    fixed_fields: ClassVar[Mapping[str, ConnectSchema]] = DEBEZIUM_FIXED
    default_layout: ClassVar[tuple[str, ...]] = (
        "before",
        "after",
        "source",
        "transaction",
        "op",
        "ts_ms",
        "ts_us",
        "ts_ns",
    )

    # --- detect ------------------------------------------------------------------------------

    def detect(self, message: Message) -> bool:
        value = message.value
        if not isinstance(value, dict):
            return False
        if _is_mongodb(value):
            return False  # documents as extended JSON text: debezium-mongodb-json
        if "schema" in value and "payload" in value:
            return checked(lambda: self._is_envelope(value["schema"], value["payload"]))
        return checked(lambda: self._is_payload_only(value))

    def _is_envelope(self, schema: Any, payload: Any) -> bool:
        if not isinstance(payload, dict) or not is_envelope_schema(schema, ("op", "source")):
            return False
        if raw_field(schema, "message_version") is not None or is_arcion_envelope(schema, payload):
            return False
        images = any(raw_field(schema, n) is not None for n in ("after", "before", "message"))
        return images and (payload.get("op") in ROW_OPS or payload.get("op") == "m")

    @staticmethod
    def _is_payload_only(value: Mapping[str, Any]) -> bool:
        op = value.get("op")
        return (
            (op in ROW_OPS or op == "m")
            and isinstance(value.get("source"), dict)
            and set(value) <= ENVELOPE_KEYS
        )

    # --- envelope reading --------------------------------------------------------------------

    def control_of(self, payload: Mapping[str, Any], plan: Plan) -> ControlRecord | None:
        named = plan.envelope.name if plan.envelope is not None else None
        if named is not None and named.endswith(".Heartbeat") and payload.get("op") is None:
            return ControlRecord("heartbeat", "heartbeat")
        return super().control_of(payload, plan)

    def identity_options(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        source = payload.get("source")
        if not isinstance(source, dict):
            return {}
        out: dict[str, Any] = {}
        for option, key in (("server_name", "name"), ("connector", "connector")):
            value = str_or_none(source.get(key))
            if value is not None:
                out[option] = value
        return out

    # --- names -------------------------------------------------------------------------------

    def topic_prefix(self, table: TableId, server_name: str | None) -> str | None:
        """``<server>.<schema or database>.<table>``: Debezium's topic and schema-name prefix."""
        if server_name is None or table.name is None:
            return None
        return ".".join(p for p in (server_name, table.schema or table.database, table.name) if p)

    def default_names(self, contract: Contract) -> Names:
        server = contract.option("server_name")
        prefix = self.topic_prefix(contract.table_id, server) if server else contract.topic
        if prefix is None:
            return Names(None, None, None, None)
        return Names(f"{prefix}.Envelope", f"{prefix}.Value", f"{prefix}.Value", f"{prefix}.Key")

    def default_contract_name(self, table: TableId, options: Mapping[str, Any]) -> str:
        return self.topic_prefix(table, options.get("server_name")) or table.qualified()

    # --- payload-only samples ----------------------------------------------------------------

    def sketched_block(self, name: str, state: _InferState) -> ConnectSchema:
        if name == "transaction" and not state.transaction.kinds - {"null"}:
            return TRANSACTION_BLOCK.as_field(name)
        block = super().sketched_block(name, state)
        if name != "source":
            return block
        source = (state.latest_payload or {}).get("source") or {}
        connector = str_or_none(source.get("connector")) or "unknown"
        return block.replace(name=f"io.debezium.connector.{connector}.Source", optional=False)

    def _sketched_plan(self, state: _InferState, warnings: list[str]) -> Plan:
        plan = super()._sketched_plan(state, warnings)
        payload = state.latest_payload or {}
        prefix = self.topic_prefix(
            self.facts(payload, "input").table, self.identity_options(payload).get("server_name")
        )
        if prefix is None or plan.envelope is None:
            return plan
        envelope = plan.envelope
        fields = [
            f.replace(name=f"{prefix}.Value")
            if f.field in (self.after_field, self.before_field)
            else f
            for f in envelope.fields or ()
        ]
        return self.plan_of(envelope.replace(fields=tuple(fields), name=f"{prefix}.Envelope"))


def _is_mongodb(value: Mapping[str, Any]) -> bool:
    """A message of Debezium's MongoDB connector (``source.connector`` is ``mongodb``)."""
    payload = value.get("payload") if "schema" in value else value
    source = payload.get("source") if isinstance(payload, dict) else None
    return isinstance(source, dict) and source.get("connector") == "mongodb"
