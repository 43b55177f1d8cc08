"""One side of a diff: a contract, an Avro schema, a Connect schema or a message's embedded schema.

A :class:`Side` answers the questions the engine asks, whatever it was made from: its value and
key schemas in Avro (for the registry verdict) and in Connect (for the CDC rules), and its row
(the columns) with the finding path the row sits at (``value.after`` for envelopes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from contracts.contract import Contract
from contracts.errors import ContractsError, SchemaError, UnknownFormatError
from contracts.schema import ConnectSchema

SideKind = Literal["contract", "avro", "connect", "message"]


def _connect_to_avro(schema: ConnectSchema) -> Any:
    from contracts.translate.avro import connect_to_avro

    return connect_to_avro(schema)


def _avro_to_connect(avro: Any) -> ConnectSchema:
    from contracts.translate.avro import avro_to_connect

    return avro_to_connect(avro)


def _contract_avro(contract: Contract, part: Literal["key", "value"]) -> Any:
    from contracts.render import contract_avro

    return contract_avro(contract, part)


def _contract_value_avro(contract: Contract) -> Any:
    """The contract's value Avro; its row's Avro when the format cannot derive a value schema."""
    try:
        return _contract_avro(contract, "value")
    except UnknownFormatError:
        return _connect_to_avro(contract.row_schema)


@dataclass(frozen=True, eq=False)
class Side:
    """One side of a comparison. Build it with the ``of_*`` constructors or :mod:`.inputs`."""

    kind: SideKind
    source: str
    contract: Contract | None = None
    connect_value: ConnectSchema | None = None
    avro_value: Any = None
    connect_key: ConnectSchema | None = None
    keys_known: bool = False
    path: str | None = field(default=None, compare=False)

    # --- constructors -------------------------------------------------------------------------

    @classmethod
    def of_contract(cls, contract: Contract, source: str | None = None) -> Side:
        return cls("contract", source or contract.name, contract=contract, keys_known=True)

    @classmethod
    def of_connect(cls, schema: ConnectSchema, source: str = "connect schema") -> Side:
        return cls("connect", source, connect_value=schema)

    @classmethod
    def of_avro(cls, schema: Any, source: str = "avro schema") -> Side:
        return cls("avro", source, avro_value=schema)

    @classmethod
    def of_message(
        cls,
        value: ConnectSchema,
        key: ConnectSchema | None,
        has_key: bool,
        source: str = "message",
    ) -> Side:
        return cls("message", source, connect_value=value, connect_key=key, keys_known=has_key)

    # --- what the engine asks -----------------------------------------------------------------

    @property
    def format(self) -> str | None:
        return self.contract.format if self.contract is not None else None

    @property
    def topic(self) -> str | None:
        """The topic a contract side's messages are on (its ``topic``, else its name)."""
        return self.contract.kafka_topic if self.contract is not None else None

    @cached_property
    def value_avro(self) -> Any:
        """The value schema in Avro (what the registry compares)."""
        if self.contract is not None:
            contract = self.contract
            return self._located(lambda: _contract_value_avro(contract))
        if self.avro_value is not None:
            return self.avro_value
        assert self.connect_value is not None
        value = self.connect_value
        return self._located(lambda: _connect_to_avro(value))

    @cached_property
    def value_connect(self) -> ConnectSchema:
        """The value schema in Connect terms."""
        if self.connect_value is not None:
            return self.connect_value
        if self.contract is not None:
            derived = _derived_value(self.contract)
            if derived is not None:
                return derived
        avro = self.value_avro
        return self._located(lambda: _avro_to_connect(avro))  # type: ignore[no-any-return]

    @cached_property
    def key_connect(self) -> ConnectSchema | None:
        """The key schema in Connect terms (None: no key, or this side does not say)."""
        if self.contract is not None:
            return self.contract.key_schema
        return self.connect_key

    @cached_property
    def key_avro(self) -> Any:
        """The key schema in Avro, or None when there is no key."""
        if self.contract is not None:
            if not self.contract.key:
                return None
            contract = self.contract
            return self._located(lambda: _contract_avro(contract, "key"))
        if self.connect_key is None:
            return None
        key = self.connect_key
        return self._located(lambda: _connect_to_avro(key))

    @cached_property
    def row(self) -> tuple[ConnectSchema, str]:
        """The columns as a struct, and the finding path of that struct."""
        if self.contract is not None:
            return self.contract.row_schema, _row_prefix(self.value_connect, self.contract)
        return row_view(self.value_connect)

    def _located(self, make: Any) -> Any:
        try:
            return make()
        except ContractsError as err:
            raise err.located(self.source) from None
        except (KeyError, TypeError, ValueError) as err:
            raise SchemaError(f"cannot translate the schema: {err}", self.source) from None


def row_view(value: ConnectSchema) -> tuple[ConnectSchema, str]:
    """The row inside a value schema: an envelope's ``after`` struct, or the value itself."""
    after = value.get_field("after") if value.is_struct else None
    if after is not None and after.is_struct:
        return after, "value.after"
    return value, "value"


def _row_prefix(value: ConnectSchema, contract: Contract) -> str:
    """Where a contract's row sits in its value schema (``value.after`` for envelopes)."""
    names = contract.row_schema.field_names()
    _, prefix = row_view(value)
    if prefix != "value":
        return prefix
    for path, schema in value.walk():
        if schema.is_struct and schema.field_names() == names:
            return f"value.{path}" if path else "value"
    return "value"


def _derived_value(contract: Contract) -> ConnectSchema | None:
    """The exact value schema the contract's producer emits, when its format module is there."""
    try:
        from contracts.formats import get_format

        return get_format(contract.format).derive(contract).value
    except (ContractsError, ImportError, NotImplementedError):
        return None
