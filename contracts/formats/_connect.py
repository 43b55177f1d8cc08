"""Shared machinery for formats whose messages embed a Kafka Connect schema.

``debezium-json``, ``arcion-json``, ``cdl-json`` and ``cdl-debezium-json`` all send
``{"schema": <Connect struct>, "payload": {...}}`` where the struct is an *envelope*: row images
(``before``/``after`` or ``before``/``data``) next to producer fields (``source``, ``op``,
``ts_ms``, ``OPERATION``, ``unique`` ...). :class:`ConnectEnvelopeFormat` implements infer,
derive, validate and normalize once; a format module states its differences as class
attributes (field names, the table of fixed envelope fields, the default layout) and a few
small hooks (how to read op, table, timestamps and position from a payload).

How an envelope is kept in a contract (``options``):

- ``envelope``: the envelope's field names in order;
- ``envelope_name``, ``row_name`` (the after image), ``before_name`` (when it differs),
  ``key_name``: the Connect names;
- producer blocks whose shape varies by connector and version (``source``, ``transaction``)
  verbatim as Connect JSON under their own name;
- ``fields``: any other envelope field whose schema differs from the format's fixed table.

Deriving the envelope from such a contract gives back exactly the embedded schema.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, NamedTuple

import orjson

from contracts.contract import Contract, contract_from_schema
from contracts.errors import ContractFileError, DecodeError, InputError, SchemaError
from contracts.events import ChangeEvent, ControlRecord, Normalized, Op, TableId
from contracts.formats._typing import key_from, native_schema
from contracts.formats.base import (
    Derived,
    EmbeddedSchema,
    Format,
    Inference,
    InferOptions,
    Message,
    SchemaVersionSeen,
    Violation,
    counted,
    schema_cache_key,
)
from contracts.formats.spec import (
    FormatSpec,
    at,
    position_reader,
    table_reader,
    time_reader,
)
from contracts.jsonnumbers import as_written, integer_as_read
from contracts.schema import ConnectSchema, json_kind, parse_connect, primitive, struct
from contracts.values import ValueDecoder, compile_decoder

#: Row-change op codes as every Debezium-style envelope spells them.
ROW_OPS: Final[Mapping[str, Op]] = {"c": "c", "u": "u", "d": "d", "r": "r", "t": "t"}

#: The producer's position fields in ``source``, per connector (lower case), in order.
POSITION_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "mysql": ("file", "pos", "row", "gtid"),
    "mariadb": ("file", "pos", "row", "gtid"),
    "postgresql": ("lsn", "txId"),
    "sqlserver": ("change_lsn", "commit_lsn", "event_serial_no"),
    "oracle": ("scn", "commit_scn", "txId"),
    "db2": ("change_lsn", "commit_lsn"),
    "mongodb": ("ord", "h"),
    "vitess": ("vgtid",),
}

#: JSON value kinds each Connect base type accepts (for telling wrong types from bad values).
_KINDS_FOR_TYPE: Final[Mapping[str, tuple[type, ...]]] = {
    "int8": (int,),
    "int16": (int,),
    "int32": (int,),
    "int64": (int,),
    "float": (int, float),
    "double": (int, float),
    "boolean": (bool,),
    "string": (str,),
    "bytes": (str,),
    "struct": (dict,),
    "array": (list,),
    "map": (dict, list),
}

_PLAN_CACHE_LIMIT: Final = 4096
_NAME_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.\-]+")


@dataclass(frozen=True, slots=True)
class Names:
    """The Connect names a producer gives one table's schemas."""

    envelope: str | None
    row: str | None
    before: str | None
    key: str | None


class Facts(NamedTuple):
    """What an envelope says besides its row images (a named tuple: built for every message)."""

    op: Op
    table: TableId
    ts_ms: int | None
    source_ts_ms: int | None
    position: dict[str, Any]


def _no_field(name: str) -> ValueDecoder:
    def decode(value: Any, path: str) -> Any:
        if value is None:
            return None
        raise DecodeError(f"the embedded schema declares no {name!r} field", path)

    return decode


def _raw(value: Any, _path: str) -> Any:
    return value


@dataclass(slots=True)
class Plan:
    """How to read messages of one distinct envelope schema (built once, then cached)."""

    envelope: ConnectSchema | None
    row: ConnectSchema | None
    before: ConnectSchema | None
    unique: ConnectSchema | None
    after_decoder: ValueDecoder
    before_decoder: ValueDecoder
    unique_decoder: ValueDecoder | None
    row_key: bytes = b""


# --- small readers ----------------------------------------------------------------------------


def checked_int(value: Any, where: str, path: str) -> int | None:
    """A JSON integer (or None); anything else is a :class:`DecodeError` at ``where path``
    (``contracts.formats._typing.lenient_int`` also reads digit strings and never fails)."""
    if type(value) is int or value is None:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DecodeError(f"expected an integer, got {json_kind(value)}", f"{where} {path}")


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_SCALARS: Final = (str, int, float, bool)
_PAYLOAD_PATHS: dict[str, str] = {}


def payload_path(name: str) -> str:
    """``$.payload.<name>`` (built once per name: images are decoded for every message)."""
    path = _PAYLOAD_PATHS.get(name)
    if path is None:
        path = f"$.payload.{name}"
        if len(_PAYLOAD_PATHS) < 1024:
            _PAYLOAD_PATHS[name] = path
    return path


def safe_name(text: str) -> str:
    """``text`` made into a valid contract name."""
    cleaned = _NAME_UNSAFE.sub("_", text).strip("._-")
    return cleaned[:200] or "contract"


def field_json(schema: ConnectSchema) -> dict[str, Any]:
    """A field's Connect JSON without its ``field`` name (as kept in contract options)."""
    out = schema.to_json()
    out.pop("field", None)
    return out


def schema_of(value: Any, where: str, path: str) -> ConnectSchema:
    """Parse an embedded schema; malformed schemas become :class:`InputError` with a path."""
    try:
        return parse_connect(value, path)
    except SchemaError as err:
        raise InputError(err.what, f"{where} {err.where or path}") from None


# --- inferring types from values (payloads without an embedded schema) ------------------------


class Sketch:
    """What the JSON values of one column looked like; yields a conservative Connect type."""

    __slots__ = ("children", "int_max", "int_min", "items", "kinds")

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.children: dict[str, Sketch] = {}
        self.items: Sketch | None = None
        self.int_min = self.int_max = 0

    def add(self, value: Any) -> None:
        value = integer_as_read(value)
        if value is None:
            self.kinds.add("null")
        elif isinstance(value, bool):
            self.kinds.add("boolean")
        elif isinstance(value, int):
            self._int(value)
        elif isinstance(value, float):
            self.kinds.add("float")
        elif isinstance(value, str):
            self.kinds.add("string")
        elif isinstance(value, dict):
            self.kinds.add("object")
            for k, v in value.items():
                self.children.setdefault(k, Sketch()).add(v)
        elif isinstance(value, list):
            self.kinds.add("array")
            self.items = self.items or Sketch()
            for v in value:
                self.items.add(v)

    def _int(self, value: int) -> None:
        if "int" not in self.kinds:
            self.int_min = self.int_max = value
            self.kinds.add("int")
        self.int_min = min(self.int_min, value)
        self.int_max = max(self.int_max, value)

    def schema(self, name: str | None = None, field_name: str | None = None) -> ConnectSchema:
        """Every inferred field is optional: absent evidence is never read as NOT NULL."""
        kinds = self.kinds - {"null"}
        if kinds == {"object"}:
            fields = [c.schema(field_name=k) for k, c in self.children.items()]
            return struct(fields, name=name, optional=True, field=field_name)
        if kinds == {"array"}:
            items = (self.items or Sketch()).schema()
            return ConnectSchema(type="array", items=items, optional=True, field=field_name)
        if kinds and kinds <= _NATIVE_KINDS:
            # the same rule as a column of plain JSON values: integers beyond int64 are exact
            native = native_schema(kinds, self.int_min, self.int_max)
            return dataclasses.replace(native, optional=True, field=field_name)
        return primitive("string", optional=True, field=field_name)


#: Value kinds with a type of their own; any other mix (text, or text with numbers) is text.
_NATIVE_KINDS: Final = frozenset({"boolean", "int", "float"})


# --- the shared format ------------------------------------------------------------------------


@dataclass(slots=True)
class _InferState:
    """Running facts while inferring (bounded: one entry per distinct schema)."""

    plans: dict[Hashable, Plan] = field(default_factory=dict)
    versions: dict[bytes, list[Any]] = field(default_factory=dict)
    latest: Plan | None = None
    latest_payload: dict[str, Any] | None = None
    table: TableId | None = None
    key_schema: ConnectSchema | None = None
    key_raw: Hashable | None = None
    key_columns: tuple[str, ...] | None = None
    topic: str | None = None
    controls: Counter[str] = field(default_factory=Counter)
    rows: Sketch = field(default_factory=Sketch)
    source: Sketch = field(default_factory=Sketch)
    transaction: Sketch = field(default_factory=Sketch)
    schemaless: int = 0
    messages: int = 0


class ConnectEnvelopeFormat(Format):
    """A format whose value is ``{schema, payload}`` with a Connect envelope struct."""

    embedded_schema: ClassVar[EmbeddedSchema] = "yes"

    #: The format's facts (op codes, controls, image fields, table, times, position, key).
    spec: ClassVar[FormatSpec]
    unique_name: ClassVar[str] = "unique"
    #: Producer blocks kept verbatim in ``options.<name>`` (their shape varies by version).
    verbatim_fields: ClassVar[tuple[str, ...]] = ()
    #: Envelope fields whose schema is always the same for this format.
    fixed_fields: ClassVar[Mapping[str, ConnectSchema]] = {}
    #: The envelope's field order when a contract does not say.
    default_layout: ClassVar[tuple[str, ...]] = ()
    #: Whether the producer's Kafka key is a Connect struct of the key columns.
    kafka_key: ClassVar[bool] = True

    def __init__(self) -> None:
        self._plans: dict[Hashable, Plan] = {}
        self._keys: dict[Hashable, ValueDecoder] = {}
        self._contract_keys: dict[int, tuple[Contract, tuple[tuple[str, ValueDecoder], ...]]] = {}
        self._by_contract: dict[int, tuple[Contract, Any]] = {}
        spec = self.spec
        #: Envelope field names of the after and before images, and of an in-envelope key.
        self.after_field: str = spec.images.after[0]
        self.before_field: str = spec.images.before[0]
        self.unique_field: str | None = spec.key.unique[0] if spec.key.unique else None
        #: Whether ``{}`` as a row image means "no image" (Arcion).
        self.empty_image_is_absent = spec.images.empty_is_absent
        #: Whether messages may come without a schema (payload only).
        self.schema_optional = spec.connect is not None and spec.connect.schema_optional
        self._op_path = f"$.payload.{'.'.join(spec.ops.at)}"
        # the spec's envelope rules, compiled once for the payload (read for every message)
        self._read_ts = time_reader(spec.ts_ms, "$.payload")
        self._read_source_ts = time_reader(spec.source_ts_ms, "$.payload")
        self._read_position = position_reader(spec.position, "$.payload")
        self._read_table = table_reader(spec.table, "$.payload")

    # --- hooks a format overrides ------------------------------------------------------------

    def facts(
        self, payload: Mapping[str, Any], where: str, contract: Contract | None = None
    ) -> Facts:
        """op, table, timestamps and position of one payload, as the spec says (a contract
        naming its connector decides the position's fields)."""
        spec = self.spec
        code = at(payload, spec.ops.at)
        op, _ = spec.ops.read(code)
        if op is None:
            raise DecodeError(spec.unknown_op(code), f"{where} {self._op_path}")
        table = self.payload_table(payload, where)
        return Facts(
            op=op,
            table=table or TableId(),
            ts_ms=self._read_ts(payload, where),
            source_ts_ms=self._read_source_ts(payload, where),
            position=self._read_position(payload, where, None, _connector(contract)),
        )

    def payload_table(self, payload: Mapping[str, Any], where: str) -> TableId | None:
        """The table a payload names (interned: the same parts give the same TableId)."""
        return self._read_table(payload, where)

    def control_of(self, payload: Mapping[str, Any], plan: Plan) -> ControlRecord | None:
        """A control record when the payload is not a row change (heartbeat, message ...)."""
        op, _ = self.spec.ops.read(at(payload, self.spec.ops.at))
        rule = self.spec.control_of(payload, op)
        if rule is None:
            return None
        return ControlRecord(rule.kind, rule.reason, table=self._table_or_none(payload))

    def _table_or_none(self, payload: Mapping[str, Any]) -> TableId | None:
        try:
            return self.payload_table(payload, "")
        except DecodeError:
            return None

    def identity_options(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Producer identity options read from a payload (server name, connector ...)."""
        return {}

    def default_names(self, contract: Contract) -> Names:
        """The names the producer would use when a contract does not record them."""
        raise NotImplementedError

    def default_contract_name(self, table: TableId, options: Mapping[str, Any]) -> str:
        return table.qualified() or "contract"

    # --- reading messages --------------------------------------------------------------------

    def split(self, doc: Mapping[str, Any], where: str) -> tuple[Any, dict[str, Any]]:
        """(embedded schema or None, payload) of a message value."""
        if "payload" in doc and "schema" in doc:
            payload = doc["payload"]
            if not isinstance(payload, dict):
                raise InputError(
                    f"expected the payload to be an object, got {json_kind(payload)}",
                    f"{where} $.payload",
                )
            return doc["schema"], payload
        if self.schema_optional:
            return None, dict(doc)
        raise InputError(
            f"a {self.name} message needs 'schema' and 'payload' (found keys: "
            f"{', '.join(sorted(doc)) or 'none'})",
            f"{where} $",
        )

    def value_of(self, message: Message) -> dict[str, Any]:
        value = message.value
        if not isinstance(value, dict):
            raise InputError(
                f"expected a {self.name} message (a JSON object), got {json_kind(value)}",
                f"{message.where} $",
            )
        return value

    def plan(self, schema_raw: Any, where: str) -> Plan:
        """The cached :class:`Plan` for an embedded envelope schema."""
        cache_key = schema_cache_key(schema_raw)
        found = self._plans.get(cache_key)
        if found is None:
            envelope = schema_of(schema_raw, where, "$.schema")
            if envelope.type != "struct":
                raise InputError(
                    f"the embedded schema must be a struct, not {envelope.type}",
                    f"{where} $.schema.type",
                )
            found = self.plan_of(envelope)
            if len(self._plans) >= _PLAN_CACHE_LIMIT:
                self._plans.clear()
            self._plans[cache_key] = found
        return found

    def plan_of(self, envelope: ConnectSchema) -> Plan:
        after = envelope.get_field(self.after_field)
        before = envelope.get_field(self.before_field)
        unique = envelope.get_field(self.unique_field) if self.unique_field else None
        row = after if after is not None else before
        return Plan(
            envelope=envelope,
            row=after,
            before=before,
            unique=unique,
            after_decoder=compile_decoder(after) if after else _no_field(self.after_field),
            before_decoder=compile_decoder(before) if before else _no_field(self.before_field),
            unique_decoder=compile_decoder(unique) if unique else None,
            row_key=orjson.dumps(row.to_json(), default=as_written) if row is not None else b"",
        )

    def contract_plan(self, contract: Contract | None) -> Plan:
        """A plan for payload-only messages: typed by the contract, or raw JSON without one."""
        if contract is None:
            return Plan(None, None, None, None, _raw, _raw, _raw if self.unique_field else None)
        cached = self._by_contract.get(id(contract))
        if cached is not None and cached[0] is contract and isinstance(cached[1], Plan):
            return cached[1]
        plan = self.plan_of(self.derive(contract).value)
        self._remember(contract, plan)
        return plan

    def _remember(self, contract: Contract, value: Any) -> None:
        if len(self._by_contract) >= 64:
            self._by_contract.clear()
        self._by_contract[id(contract)] = (contract, value)

    def image(self, payload: Mapping[str, Any], name: str, decoder: ValueDecoder) -> Any:
        value = payload.get(name)
        if value is None or (self.empty_image_is_absent and _empty(value)):
            return None
        return decoder(value, payload_path(name))

    def message_key(self, message: Message) -> dict[str, Any] | None:
        """The decoded Kafka key (``{schema, payload}`` documents are decoded by their schema)."""
        key = message.key
        if isinstance(key, dict) and "payload" in key and "schema" in key:
            if key["schema"] is None:
                payload = key["payload"]
                return payload if isinstance(payload, dict) else None
            cache_key = schema_cache_key(key["schema"])
            decoder = self._keys.get(cache_key)
            if decoder is None:
                decoder = compile_decoder(schema_of(key["schema"], message.where, "$key.schema"))
                self._keys[cache_key] = decoder
            decoded = decoder(key["payload"], "$key.payload")
            return decoded if isinstance(decoded, dict) else None
        if isinstance(key, dict):
            return key
        return None

    # --- normalize ---------------------------------------------------------------------------

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        """One change event (or control record) per message."""
        where = message.where
        try:
            if message.value is None:
                return [
                    ControlRecord(
                        "tombstone", "value is null", key=self.tombstone_key(message, contract)
                    )
                ]
            schema_raw, payload = self.split(self.value_of(message), where)
            plan = (
                self.plan(schema_raw, where)
                if schema_raw is not None
                else self.contract_plan(contract)
            )
            control = self.control_of(payload, plan)
            if control is not None:
                self.check_control(payload, plan, where)
                return [control]
            facts = self.facts(payload, where, contract)
            after = self.image(payload, self.after_field, plan.after_decoder)
            before = self.image(payload, self.before_field, plan.before_decoder)
            key = self.event_key(message, payload, plan, contract, after or before)
        except DecodeError as err:
            if err.where and err.where.startswith(where):
                raise
            raise err.located(where) from None
        return [
            ChangeEvent(
                op=facts.op,
                table=facts.table,
                key=key,
                before=before,
                after=after,
                ts_ms=facts.ts_ms,
                source_ts_ms=facts.source_ts_ms,
                position=facts.position,
            )
        ]

    def check_control(self, payload: Mapping[str, Any], plan: Plan, where: str) -> None:
        """Read a control record's times, row images and key struct as a change's, and drop
        what they give: a value that does not decode makes the message bad (fail closed).

        Debezium writes none of them on a control record (a logical decoding message holds
        ``message``, a transaction marker its own fields, a heartbeat ``ts_ms``), so a
        producer that does is not one the contract describes; Spark's typed parse refuses the
        same values."""
        self._read_ts(payload, where)
        self._read_source_ts(payload, where)
        self.image(payload, self.after_field, plan.after_decoder)
        self.image(payload, self.before_field, plan.before_decoder)
        unique = payload.get(self.unique_field) if self.unique_field else None
        if unique is not None and plan.unique_decoder is not None:
            plan.unique_decoder(unique, f"$.payload.{self.unique_field}")

    def event_key(
        self,
        message: Message,
        payload: Mapping[str, Any],
        plan: Plan,
        contract: Contract | None,
        image: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        """The key: the Kafka key, else the in-envelope key struct, else the row image's —
        with a contract, the first of them holding every key column (see ``key_from``)."""
        unique = None
        if self.unique_field and plan.unique_decoder is not None:
            unique = plan.unique_decoder(
                payload.get(self.unique_field), f"$.payload.{self.unique_field}"
            )
        if contract is None:
            key = self.message_key(message)
            return key if key is not None else unique if isinstance(unique, dict) else None
        return key_from(contract.key, self.contract_key(message.key, contract), unique, image)

    def tombstone_key(self, message: Message, contract: Contract | None) -> dict[str, Any] | None:
        """The key of a tombstone (the row it deletes). With a contract it is read as every
        change's Kafka key is (:meth:`contract_key`), so a key the contract refuses makes the
        tombstone bad on every path; without one, by the key's own embedded schema."""
        if contract is None:
            return self.message_key(message)
        return key_from(contract.key, self.contract_key(message.key, contract))

    def contract_key(self, key: Any, contract: Contract) -> dict[str, Any] | None:
        """A Kafka key (a bare object, or ``{"schema": ..., "payload": ...}``) decoded by the
        contract's key columns: a key column holding null (when required) or a value of the
        wrong type (``"1.5"`` for an integer) makes the message bad, as JsonConverter refuses a
        key that does not fit the key's schema; so does an embedded key schema that does not
        state the contract's key columns (see :func:`key_signature`). A bare object holding
        none of the key columns, or a null payload, is no key."""
        if not isinstance(key, dict):
            return None
        if _has_schema(key) and contract.key:
            got, want = embedded_key_signature(key["schema"]), key_signature(contract)
            if got != want:
                raise DecodeError(
                    f"states the key {describe_key(got)}, not the contract's key columns "
                    f"{describe_key(want)}",
                    "$key.schema",
                )
        if "payload" in key and "schema" in key:
            found, path = key["payload"], "$key.payload"
            if found is None:
                return None
            if not isinstance(found, dict):
                raise DecodeError(f"is {json_kind(found)}, not a key object", path)
        elif all(key.get(k) is None for k in contract.key):
            return None
        else:
            found, path = key, "$key"
        return {
            k: decode(found.get(k), f"{path}.{k}") for k, decode in self._key_decoders(contract)
        }

    def _key_decoders(self, contract: Contract) -> tuple[tuple[str, ValueDecoder], ...]:
        cached = self._contract_keys.get(id(contract))
        if cached is not None and cached[0] is contract:
            return cached[1]
        row = contract.row_schema
        decoders = tuple((k, compile_decoder(row.require_field(k))) for k in contract.key)
        if len(self._contract_keys) >= 64:
            self._contract_keys.clear()
        self._contract_keys[id(contract)] = (contract, decoders)
        return decoders

    # --- infer -------------------------------------------------------------------------------

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        """A contract from samples; several schema versions → the latest, with the history."""
        state = _InferState()
        for message in messages:
            state.messages += 1
            self._observe(message, state)
        if state.latest is None and state.schemaless == 0:
            raise InputError(
                f"no {self.name} row change among {state.messages} message(s) to infer from",
                "input",
            )
        warnings: list[str] = []
        plan = state.latest if state.latest is not None else self._sketched_plan(state, warnings)
        contract = self._contract(plan, state, options, warnings)
        history = tuple(
            SchemaVersionSeen(version=i + 1, first_seen=v[0], messages=v[1], columns=v[2])
            for i, v in enumerate(state.versions.values())
        )
        if len(history) > 1:
            warnings.append(
                f"{len(history)} row schema versions in the samples; the contract has the latest"
            )
        return Inference(
            contract=contract,
            messages=state.messages,
            history=history,
            controls=counted(state.controls),
            warnings=tuple(warnings),
        )

    def _observe(self, message: Message, state: _InferState) -> None:
        where = message.where
        if state.topic is None and isinstance(message.meta.get("topic"), str):
            state.topic = message.meta["topic"]
        if message.value is None:
            state.controls["tombstone"] += 1
            return
        schema_raw, payload = self.split(self.value_of(message), where)
        if schema_raw is None:
            plan = self.contract_plan(None)
        else:
            cache_key = schema_cache_key(schema_raw)
            found = state.plans.get(cache_key)
            if found is None:
                found = self.plan(schema_raw, where)
                state.plans[cache_key] = found
            plan = found
        control = self.control_of(payload, plan)
        if control is not None:
            state.controls[control.kind] += 1
            return
        facts = self.facts(payload, where)
        if state.table is None:
            state.table = facts.table
        elif facts.table != state.table:
            raise InputError(
                f"the samples hold changes of more than one table ({state.table.qualified()} "
                f"and {facts.table.qualified()}); infer one table at a time (--table REGEX) or one contract per table (--split-by-table -o DIR)",
                where,
            )
        state.latest_payload = payload
        if schema_raw is None:
            self._sketch(payload, state)
        else:
            state.latest = plan
            seen = state.versions.get(plan.row_key)
            if seen is None:
                row = plan.row or plan.before
                columns = tuple(row.field_names()) if row is not None else ()
                state.versions[plan.row_key] = [where, 1, columns]
            else:
                seen[1] += 1
        self._observe_key(message, state)

    def _observe_key(self, message: Message, state: _InferState) -> None:
        key = message.key
        if isinstance(key, dict) and "schema" in key and "payload" in key:
            if isinstance(key["schema"], dict):
                cache_key = schema_cache_key(key["schema"])
                if cache_key != state.key_raw:
                    state.key_raw = cache_key
                    state.key_schema = schema_of(key["schema"], message.where, "$key.schema")
                    state.key_columns = tuple(state.key_schema.field_names())
            elif isinstance(key["payload"], dict):
                state.key_columns = tuple(key["payload"])
        elif isinstance(key, dict) and key:
            state.key_columns = tuple(key)

    def _sketch(self, payload: Mapping[str, Any], state: _InferState) -> None:
        state.schemaless += 1
        for name in (self.after_field, self.before_field):
            image = payload.get(name)
            if isinstance(image, dict) and image:
                state.rows.add(image)
        state.source.add(payload.get("source"))
        state.transaction.add(payload.get("transaction"))

    def _sketched_plan(self, state: _InferState, warnings: list[str]) -> Plan:
        """An envelope for payload-only samples, typed from the values (every column optional)."""
        if "object" not in state.rows.kinds:
            raise InputError(
                "no row image in the payload-only samples to infer columns from", "input"
            )
        warnings.append(
            "the samples carry no embedded schema: column types are inferred from values "
            "and every column is optional"
        )
        payload = state.latest_payload or {}
        layout = [k for k in payload if k in self.fixed_fields or k in self.verbatim_fields]
        for name in (self.after_field, self.before_field):
            if name not in layout:
                layout.insert(0, name)
        row = state.rows.schema().replace(field=None, optional=False)
        fields: list[ConnectSchema] = []
        for name in layout:
            if name in (self.after_field, self.before_field):
                fields.append(row.replace(optional=True, field=name))
            elif name in self.fixed_fields:
                fields.append(self.fixed_fields[name].as_field(name))
            else:
                fields.append(self.sketched_block(name, state))
        plan = self.plan_of(struct(fields, optional=False))
        state.versions[plan.row_key] = ["input", state.schemaless, tuple(row.field_names())]
        return plan

    def sketched_block(self, name: str, state: _InferState) -> ConnectSchema:
        """A producer block (``source`` ...) inferred from values for payload-only samples."""
        sketch = state.source if name == "source" else state.transaction
        return sketch.schema(field_name=name).replace(optional=name != "source")

    def _contract(
        self, plan: Plan, state: _InferState, options: InferOptions, warnings: list[str]
    ) -> Contract:
        envelope = plan.envelope
        row = plan.row or plan.before
        if envelope is None or row is None:
            raise InputError("the samples' envelope declares no row image", "input")
        table = state.table or TableId()
        opts = self.identity_options(state.latest_payload or {})
        if state.schemaless:
            opts["schemas_enable"] = False
        opts.update(self._envelope_options(plan, state))
        key = self._key_columns(plan, state, row, warnings)
        topic = options.topic or state.topic
        name = options.name or safe_name(topic or self.default_contract_name(table, opts))
        contract = contract_from_schema(
            name=name,
            format=self.name,
            table=table,
            row=row.replace(field=None, optional=False),
            key=key,
            topic=topic,
            options=opts,
        )
        if not state.schemaless:
            derived = self.derive(contract).value
            if derived != envelope:
                warnings.append("the derived envelope differs from the embedded one")
        return contract

    def _envelope_options(self, plan: Plan, state: _InferState) -> dict[str, Any]:
        envelope = plan.envelope
        assert envelope is not None
        row = plan.row or plan.before
        assert row is not None
        opts: dict[str, Any] = {}
        if envelope.name is not None:
            opts["envelope_name"] = envelope.name
        if envelope.version is not None:
            opts["envelope_version"] = envelope.version
        if row.name is not None:
            opts["row_name"] = row.name
        if plan.before is not None and plan.before.name != row.name:
            opts["before_name"] = plan.before.name
        if self.kafka_key and state.key_schema is not None and state.key_schema.name:
            opts["key_name"] = state.key_schema.name
        opts["envelope"] = envelope.field_names()
        extra: dict[str, Any] = {}
        images = {self.after_field, self.before_field, self.unique_field}
        for f in envelope.fields or ():
            name = f.field or ""
            if name in images:
                continue
            if name in self.verbatim_fields:
                opts[name] = field_json(f)
            elif self.fixed_fields.get(name, None) != f.replace(field=None):
                extra[name] = field_json(f)
        if extra:
            opts["fields"] = extra
        return opts

    def _key_columns(
        self, plan: Plan, state: _InferState, row: ConnectSchema, warnings: list[str]
    ) -> tuple[str, ...]:
        columns = set(row.field_names())
        candidates: list[tuple[str, tuple[str, ...]]] = []
        if state.key_columns:
            candidates.append(("message key", state.key_columns))
        if plan.unique is not None and plan.unique.fields:
            candidates.append((self.unique_field or "unique", tuple(plan.unique.field_names())))
        for origin, cols in candidates:
            if set(cols) <= columns:
                return cols
            warnings.append(f"{origin} columns {', '.join(cols)} are not all row columns; ignored")
        return ()

    # --- derive ------------------------------------------------------------------------------

    def names(self, contract: Contract) -> Names:
        defaults = self.default_names(contract)
        opts = contract.options
        row = opts.get("row_name", defaults.row)
        same = defaults.before == defaults.row
        return Names(
            envelope=opts.get("envelope_name", defaults.envelope),
            row=row,
            before=opts.get("before_name", row if same else defaults.before),
            key=opts.get("key_name", defaults.key),
        )

    def derive(self, contract: Contract) -> Derived:
        """The key struct (key columns) and the envelope the producer writes for a contract."""
        names = self.names(contract)
        layout = contract.option("envelope") or list(self.default_layout)
        if not isinstance(layout, list) or not all(isinstance(n, str) for n in layout):
            raise ContractFileError(
                "options.envelope must be a list of field names", contract.where("options.envelope")
            )
        fields = [self.envelope_field(n, contract, names) for n in layout]
        version = contract.option("envelope_version")
        value = struct(fields, name=names.envelope, optional=False, version=version)
        return Derived(key=self.derive_key(contract), value=value)

    def derive_key(self, contract: Contract) -> ConnectSchema | None:
        """The Kafka key: the key columns as a struct (no envelope needed)."""
        if not (self.kafka_key and contract.key):
            return None
        row = contract.row_schema
        return struct([row.require_field(k) for k in contract.key], name=self.names(contract).key)

    def envelope_field(self, name: str, contract: Contract, names: Names) -> ConnectSchema:
        row = contract.row_schema
        overrides = contract.option("fields") or {}
        if isinstance(overrides, dict) and name in overrides:
            return self._option_schema(overrides[name], f"options.fields.{name}").as_field(name)
        if name == self.after_field:
            return row.replace(name=names.row, optional=True, field=name)
        if name == self.before_field:
            return row.replace(name=names.before, optional=True, field=name)
        if name == self.unique_field:
            cols = [row.require_field(k) for k in contract.key]
            return struct(cols, name=self.unique_name, optional=True, field=name)
        if name in self.verbatim_fields:
            raw = contract.option(name)
            if raw is None:
                raise ContractFileError(
                    f"a {self.name} contract needs options.{name} (the {name} block's Connect "
                    "schema, which `cdc-contracts infer` writes) to derive the envelope",
                    contract.where(f"options.{name}"),
                )
            return self._option_schema(raw, f"options.{name}").as_field(name)
        fixed = self.fixed_fields.get(name)
        if fixed is None:
            raise ContractFileError(
                f"cannot derive envelope field {name!r}: put its Connect schema under "
                f"options.fields.{name}",
                contract.where("options.envelope"),
            )
        return fixed.as_field(name)

    @staticmethod
    def _option_schema(raw: Any, path: str) -> ConnectSchema:
        try:
            return parse_connect(raw, path)
        except SchemaError as err:
            raise ContractFileError(err.what, err.where) from None

    # --- validate ----------------------------------------------------------------------------

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        """Schema drift, missing/extra columns, wrong types and undecodable values."""
        where = message.where
        if message.value is None:
            return []
        out: list[Violation] = []
        try:
            schema_raw, payload = self.split(self.value_of(message), where)
            derived = self._derived(contract)
            plan = self.contract_plan(None) if schema_raw is None else self.plan(schema_raw, where)
            if self.control_of(payload, plan) is not None:
                return []
            if plan.envelope is not None and schema_raw is not None:
                drift = envelope_drift(plan.envelope, derived.value, self)
                out.extend(Violation(where, *d) for d in drift)
            out.extend(self._key_drift(message, derived))
            self.facts(payload, where)
        except InputError as err:
            path = (err.where or "").removeprefix(where).strip() or "$"
            return [*out, Violation(where, path, "envelope", err.what)]
        for name in (self.before_field, self.after_field):
            image = payload.get(name)
            if image is None or (self.empty_image_is_absent and _empty(image)):
                continue
            out.extend(self._check_image(image, contract, where, f"$.payload.{name}"))
        return out

    def _derived(self, contract: Contract) -> Derived:
        cached = self._by_contract.get(-id(contract))
        if cached is not None and cached[0] is contract:
            derived: Derived = cached[1]
            return derived
        derived = self.derive(contract)
        self._by_contract[-id(contract)] = (contract, derived)
        return derived

    def _key_drift(self, message: Message, derived: Derived) -> list[Violation]:
        key = message.key
        if derived.key is None or not (
            isinstance(key, dict) and isinstance(key.get("schema"), dict)
        ):
            return []
        embedded = schema_of(key["schema"], message.where, "$key.schema")
        if embedded == derived.key:
            return []
        return [
            Violation(
                message.where,
                "$key.schema",
                "schema-drift",
                f"the key schema differs from the contract's key ({', '.join(derived.key.field_names())})",
            )
        ]

    def _check_image(
        self, image: Any, contract: Contract, where: str, path: str
    ) -> list[Violation]:
        if not isinstance(image, dict):
            return [
                Violation(
                    where, path, "wrong-type", f"expected a row object, got {json_kind(image)}"
                )
            ]
        out: list[Violation] = []
        row = contract.row_schema
        for column in row.fields or ():
            name = column.field or ""
            col_path = f"{path}.{name}"
            if name not in image:
                out.append(
                    Violation(where, col_path, "missing-column", f"column {name} is missing")
                )
                continue
            try:
                column_decoder(column)(image[name], col_path)
            except DecodeError as err:
                kind = value_problem(image[name], column)
                out.append(Violation(where, err.where or col_path, kind, err.what))
        known = set(row.field_names())
        out.extend(
            Violation(where, f"{path}.{k}", "extra-column", f"column {k} is not in the contract")
            for k in image
            if k not in known
        )
        return out


_COLUMN_DECODERS: dict[int, tuple[ConnectSchema, ValueDecoder]] = {}


def column_decoder(column: ConnectSchema) -> ValueDecoder:
    """A compiled decoder per column schema object (kept while the schema lives)."""
    found = _COLUMN_DECODERS.get(id(column))
    if found is not None and found[0] is column:
        return found[1]
    if len(_COLUMN_DECODERS) > 65_536:
        _COLUMN_DECODERS.clear()
    decoder = compile_decoder(column)
    _COLUMN_DECODERS[id(column)] = (column, decoder)
    return decoder


def value_problem(value: Any, schema: ConnectSchema) -> Any:
    """``wrong-type`` when the JSON kind cannot be the declared type, else ``undecodable``."""
    kinds = _KINDS_FOR_TYPE.get(schema.type, ())
    if (
        value is None
        or not isinstance(value, kinds)
        or (isinstance(value, bool) and bool not in kinds)
    ):
        return "wrong-type"
    return "undecodable"


def envelope_drift(
    embedded: ConnectSchema, derived: ConnectSchema, fmt: ConnectEnvelopeFormat
) -> list[tuple[str, Any, str]]:
    """(path, kind, message) for every difference between an embedded and a derived envelope."""
    if embedded == derived:
        return []
    out: list[tuple[str, Any, str]] = []
    if embedded.name != derived.name:
        out.append(
            (
                "$.schema.name",
                "schema-drift",
                f"envelope name is {embedded.name!r}, the contract derives {derived.name!r}",
            )
        )
    wanted = {f.field: f for f in derived.fields or ()}
    present = embedded.field_names()
    for name in wanted:
        if name not in present:
            out.append(("$.schema.fields", "schema-drift", f"envelope field {name} is missing"))
    images = {fmt.after_field, fmt.before_field}
    for i, got in enumerate(embedded.fields or ()):
        path = f"$.schema.fields[{i}]"
        want = wanted.get(got.field)
        if want is None:
            out.append((path, "schema-drift", f"envelope field {got.field} is not in the contract"))
        elif got != want:
            if got.field in images and got.is_struct and want.is_struct:
                out.extend(row_drift(got, want, path))
            else:
                out.append(
                    (path, "schema-drift", f"envelope field {got.field} differs from the contract")
                )
    if not out and present != list(wanted):
        out.append(("$.schema.fields", "schema-drift", "envelope fields are in a different order"))
    return out


def row_drift(got: ConnectSchema, want: ConnectSchema, path: str) -> list[tuple[str, Any, str]]:
    """Column-level differences between an embedded row struct and the contract's."""
    out: list[tuple[str, Any, str]] = []
    label = got.field
    if got.name != want.name:
        out.append(
            (
                f"{path}.name",
                "schema-drift",
                f"{label} struct is named {got.name!r}, the contract says {want.name!r}",
            )
        )
    if got.optional != want.optional:
        out.append(
            (
                f"{path}.optional",
                "schema-drift",
                f"{label} optional is {got.optional}, the contract says {want.optional}",
            )
        )
    got_cols = {c.field: (j, c) for j, c in enumerate(got.fields or ())}
    for col in want.fields or ():
        if col.field not in got_cols:
            out.append(
                (f"{path}.fields", "missing-column", f"{label} column {col.field} is missing")
            )
    want_cols = {c.field: c for c in want.fields or ()}
    for j, col in enumerate(got.fields or ()):
        cpath = f"{path}.fields[{j}]"
        expected = want_cols.get(col.field)
        if expected is None:
            out.append(
                (cpath, "extra-column", f"{label} column {col.field} is not in the contract")
            )
        elif col != expected:
            out.append(
                (
                    cpath,
                    "wrong-type",
                    f"{label} column {col.field} is {col.describe(detail=True)}, the contract says {expected.describe(detail=True)}",
                )
            )
    if not out and got.field_names() != want.field_names():
        out.append((f"{path}.fields", "schema-drift", f"{label} columns are in a different order"))
    return out


def _empty(image: Any) -> bool:
    """An image of no values (``{}``, or every column null): Arcion's "no image"."""
    return isinstance(image, dict) and all(v is None for v in image.values())


def _connector(contract: Contract | None) -> str | None:
    named = contract.option("connector") if contract is not None else None
    return named if isinstance(named, str) else None


def is_envelope_schema(schema: Any, required: Iterable[str]) -> bool:
    """Whether a raw embedded schema is a struct with all ``required`` field names."""
    if not isinstance(schema, dict) or schema.get("type") != "struct":
        return False
    fields = schema.get("fields")
    if not isinstance(fields, list):
        return False
    # a field name that is not text (a damaged message) names nothing, and is unhashable
    names = {
        f.get("field") for f in fields if isinstance(f, dict) and isinstance(f.get("field"), str)
    }
    return all(r in names for r in required)


def raw_field(schema: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The raw JSON of one field of a raw struct schema."""
    for f in schema.get("fields") or ():
        if isinstance(f, dict) and f.get("field") == name:
            return f
    return None


def checked(fn: Callable[[], bool]) -> bool:
    """Run a detection predicate, answering False on any malformed input."""
    try:
        return fn()
    except (AttributeError, KeyError, TypeError, ValueError):
        return False


def is_arcion_envelope(schema: Mapping[str, Any], payload: Mapping[str, Any]) -> bool:
    """Arcion names the source struct after its connector name (``KAFKA_Connector``) where
    Debezium uses ``io.debezium.connector.<db>.Source``."""
    source_schema = raw_field(schema, "source") or {}
    source = payload.get("source")
    if not isinstance(source, dict):
        return False
    struct_name = source_schema.get("name")
    if isinstance(struct_name, str) and struct_name.startswith("io.debezium."):
        return False
    return struct_name is not None and struct_name == source.get("name")


#: What a key schema says of one field: its name, Connect type and logical name.
KeyField = tuple[Any, Any, Any]


def key_signature(contract: Contract) -> tuple[KeyField, ...]:
    """``(field, type, name)`` of the contract's key columns, in order: what the embedded
    schema of a Kafka key must state. The key is decoded by the contract's key columns on both
    paths (Spark never reads a key's schema but this), so a key schema saying otherwise
    describes another key and the message is bad."""
    row = contract.row_schema
    fields = [row.require_field(k) for k in contract.key]
    return tuple((f.field, f.type, f.name) for f in fields)


def embedded_key_signature(schema: Any) -> tuple[KeyField, ...] | None:
    """``(field, type, name)`` of each field of a key's embedded schema (raw JSON), or None
    when it is no struct of fields."""
    if not isinstance(schema, dict) or schema.get("type") != "struct":
        return None
    fields = schema.get("fields")
    if not isinstance(fields, list) or not all(isinstance(f, dict) for f in fields):
        return None
    return tuple((f.get("field"), f.get("type"), f.get("name")) for f in fields)


def describe_key(signature: tuple[KeyField, ...] | None) -> str:
    """``(id int32, at int32 io.debezium.time.Date)``, or ``(no struct of fields)``."""
    if signature is None:
        return "(no struct of fields)"
    said = (" ".join(str(p) for p in f if p is not None) for f in signature)
    return f"({', '.join(said)})"


def _has_schema(key: Any) -> bool:
    """A Kafka key ``{schema, payload}`` whose schema is given."""
    return isinstance(key, dict) and "payload" in key and key.get("schema") is not None
