"""What every CDC format module provides, and helpers they share.

A format is a subclass of :class:`Format` with five operations:

- :meth:`Format.detect` — does this message look like this format?
- :meth:`Format.infer` — a contract from sample messages (streaming, bounded memory);
- :meth:`Format.derive` — the exact key and value Connect schemas the producer emits;
- :meth:`Format.validate` — every deviation of a message from a contract, with JSON paths;
- :meth:`Format.normalize` — canonical :class:`~contracts.events.ChangeEvent` values.
"""

from __future__ import annotations

import abc
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import orjson

from contracts.contract import Contract
from contracts.errors import InputError, SchemaError
from contracts.events import ControlRecord, Normalized, TableId
from contracts.formats.spec import FormatSpec
from contracts.jsonnumbers import as_written
from contracts.schema import ConnectSchema, parse_connect
from contracts.values import ValueDecoder, compile_decoder

EmbeddedSchema = Literal["yes", "optional", "no", "referenced"]
#: Told of each input error found while assembling, after which assembling goes on.
InputErrorSink = Callable[[InputError], None]
InputKind = Literal["json", "csv", "avro"]


@dataclass(frozen=True, slots=True)
class Message:
    """One input message: its decoded value (None for a tombstone), its key, and where it is.

    ``where`` is ``file:line`` (or ``message N``); ``meta`` holds transport facts when the
    input carried them (kcat's topic, partition, offset, timestamp).
    """

    value: Any
    key: Any = None
    where: str = "message 1"
    meta: dict[str, Any] = field(default_factory=dict)
    has_key: bool = False


@dataclass(frozen=True, slots=True)
class Violation:
    """One deviation of a message from a contract."""

    where: str
    path: str
    kind: Literal[
        "missing-column",
        "extra-column",
        "wrong-type",
        "undecodable",
        "schema-drift",
        "envelope",
        "unmatched-table",
    ]
    message: str

    def one_line(self) -> str:
        return f"{self.where}: {self.path}: {self.message}"

    def to_json(self) -> dict[str, str]:
        return {"where": self.where, "path": self.path, "kind": self.kind, "message": self.message}


@dataclass(frozen=True, slots=True)
class SchemaVersionSeen:
    """One distinct row schema seen while inferring, with how often and where first."""

    version: int
    first_seen: str
    messages: int
    columns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Inference:
    """The result of :meth:`Format.infer`."""

    contract: Contract
    messages: int
    history: tuple[SchemaVersionSeen, ...] = ()
    controls: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InferOptions:
    """Knobs for :meth:`Format.infer`."""

    name: str | None = None
    infer_types: bool = False
    topic: str | None = None


@dataclass(frozen=True, slots=True)
class Derived:
    """The key and value schemas a producer emits for a contract (key None: no key)."""

    key: ConnectSchema | None
    value: ConnectSchema


class Format(abc.ABC):
    """Base of every format module's format class."""

    name: ClassVar[str]
    description: ClassVar[str]
    embedded_schema: ClassVar[EmbeddedSchema]
    input_kind: ClassVar[InputKind] = "json"
    #: The format's facts, which every path (Python, Spark) reads: see
    #: :mod:`contracts.formats.spec`.
    spec: ClassVar[FormatSpec]

    def assemble(
        self, messages: Iterable[Message], on_error: InputErrorSink | None = None
    ) -> Iterator[Message]:
        """Turn raw input documents into messages (e.g. pair separate key and value documents).

        A document that cannot be assembled (a key document with no value after it) is handed
        to ``on_error`` and the next one is read; without ``on_error`` it raises."""
        return iter(messages)

    @abc.abstractmethod
    def detect(self, message: Message) -> bool:
        """Whether ``message`` looks like this format."""

    @abc.abstractmethod
    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        """A contract describing what the producer emits, from sample messages."""

    @abc.abstractmethod
    def derive(self, contract: Contract) -> Derived:
        """The exact key and value Connect schemas the producer emits for ``contract``."""

    def derive_key(self, contract: Contract) -> ConnectSchema | None:
        """The key schema alone (a format whose key needs less of the contract than its value
        overrides it)."""
        return self.derive(contract).key

    @abc.abstractmethod
    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        """Every deviation of ``message`` from ``contract`` (empty: conforms)."""

    @abc.abstractmethod
    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        """Canonical change events (and control records) for one message."""

    def table_of(self, message: Message) -> TableId | None:
        """The table ``message`` is of, as the format reads it (None: it names none, e.g. a
        tombstone); raises a :class:`~contracts.errors.ContractsError` when the message cannot
        be read. Routes multi-table topics; formats with a cheaper read override it."""
        for item in self.normalize(message):
            table = item.table
            if table is not None and table.qualified():
                return table
        return None


# --- shared helpers ---------------------------------------------------------------------------


class SharedJson(dict[str, Any]):
    """A JSON object parsed once and shared by every message that repeats it (read-only).

    The JSON reader hands out the same instance for every message whose embedded ``schema``
    has the same text. It hashes by identity, so caches find it without serializing it.
    """

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return id(self)


def schema_cache_key(raw: Any) -> Hashable:
    """A cache key for an embedded schema: the shared object itself, or its compact JSON."""
    return raw if type(raw) is SharedJson else orjson.dumps(raw, default=as_written)


#: How many distinct schemas a cache remembers before starting afresh (bounded memory).
SCHEMA_CACHE_LIMIT = 1024


class SchemaCache:
    """Parse each distinct embedded schema once.

    Keys come from :func:`schema_cache_key`, so messages that repeat a schema cost one dict
    lookup instead of a parse.
    """

    __slots__ = ("_decoders", "_schemas")

    def __init__(self) -> None:
        self._schemas: dict[Hashable, ConnectSchema] = {}
        self._decoders: dict[int, ValueDecoder] = {}

    def key_of(self, raw: Any) -> Hashable:
        return schema_cache_key(raw)

    def parse(self, raw: Any, where: str, path: str = "$.schema") -> ConnectSchema:
        """The parsed schema for a raw schema object (cached)."""
        key = schema_cache_key(raw)
        found = self._schemas.get(key)
        if found is None:
            try:
                found = parse_connect(raw, path)
            except SchemaError as err:
                raise err.located(where) from None
            if len(self._schemas) >= SCHEMA_CACHE_LIMIT:
                self._schemas.clear()
                self._decoders.clear()
            self._schemas[key] = found
        return found

    def decoder(self, schema: ConnectSchema) -> ValueDecoder:
        """A compiled decoder for a schema held by this cache."""
        dec = self._decoders.get(id(schema))
        if dec is None:
            dec = compile_decoder(schema)
            self._decoders[id(schema)] = dec
        return dec

    def __len__(self) -> int:
        return len(self._schemas)


def tombstone(message: Message) -> ControlRecord:
    """A message whose value is null (or empty, or JSON ``null``): a Kafka tombstone, whatever
    the format (as every path reads it)."""
    key = message.key if isinstance(message.key, dict) else None
    return ControlRecord("tombstone", "value is null", key=key)


def counted(kinds: Counter[str]) -> dict[str, int]:
    """A Counter as a plain sorted dict."""
    return dict(sorted(kinds.items()))


def require_dict(value: Any, where: str, path: str, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an :class:`InputError` naming where and what."""
    if not isinstance(value, dict):
        from contracts.schema import json_kind

        raise InputError(f"expected {what} (an object), got {json_kind(value)}", f"{where} {path}")
    return value


def first_or_none(values: Iterable[Any], predicate: Callable[[Any], bool]) -> Any:
    """The first value matching ``predicate``, or None."""
    for v in values:
        if predicate(v):
            return v
    return None
