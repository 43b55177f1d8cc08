"""Loading diff sides from files or parsed JSON, auto-detecting what they are.

A side may be a contract file (YAML or JSON), an Avro schema (``.avsc`` or JSON), a Connect
schema (JSON), or messages carrying an embedded Connect schema (kcat ``-J`` records contribute the
key's schema too). Every message of a messages file is read: a malformed line is an error naming
it, and so is a file whose messages carry more than one schema (a side is one schema; split the
file where the schema changes, or infer a contract from it). Tombstones are skipped.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import orjson

from contracts.diff.loading import load_contract_text
from contracts.diff.side import Side
from contracts.errors import InputError, SchemaError
from contracts.formats.base import Message, schema_cache_key
from contracts.io import input_name, is_stdin, open_input, read_json_messages
from contracts.schema import CONNECT_TYPES, ConnectSchema, json_kind, parse_connect

__all__ = ["detect_kind", "load_side", "load_side_obj", "read_text"]

_CONTRACT_SUFFIXES: Final = frozenset({".yaml", ".yml"})
_AVRO_SUFFIXES: Final = frozenset({".avsc"})
_JSON_SUFFIXES: Final = _AVRO_SUFFIXES | {".json", ".jsonl", ".ndjson"}
_AVRO_TYPES: Final = frozenset(
    {"record", "enum", "fixed", "array", "map", "null", "boolean", "int", "long", "float"}
    | {"double", "bytes", "string"}
)
_CONNECT_ONLY: Final = frozenset({"struct", "int8", "int16", "int32", "int64"})
_CONTRACT_KEYS: Final = frozenset({"name", "format", "table", "columns"})


def load_side(path: str | Path) -> Side:
    """A diff side from a file: contract, ``.avsc``, Connect schema JSON, or messages.

    ``-`` is standard input; it, a pipe or a FIFO (``<(git show HEAD:c.yaml)``) is read once
    (:func:`contracts.io.open_input`). Without a telling suffix, a text that does not start
    like JSON is a contract in YAML.
    """
    p = Path(path)
    suffix = p.suffix.lower() if not is_stdin(path) else ""
    if suffix in _CONTRACT_SUFFIXES or (suffix not in _JSON_SUFFIXES and _yaml_head(p)):
        return _contract_side(read_text(p), input_name(p), p)
    if suffix in _AVRO_SUFFIXES:
        return _avro_obj(_read_json(p), str(p))
    documents = iter(read_json_messages(p))
    first = next(documents, None)
    while first is not None and first.value is None and first.has_key:
        first = next(documents, None)  # a tombstone leading a kcat dump
    if first is None:
        raise InputError("the file holds no JSON document", str(p))
    if _looks_like(first.value) == "message":
        return _messages_side(itertools.chain([first], documents), str(p))
    extra = next(documents, None)  # a schema file holds one document (reading it checks it all)
    if extra is not None:
        raise InputError(
            f"a second JSON document follows the {_looks_like(first.value) or 'first'} one: a "
            "schema file holds one document, a messages file messages with an embedded schema",
            extra.where,
        )
    return dataclasses.replace(load_side_obj(first.value, str(p)), path=str(p))


def load_side_obj(obj: Any, source: str = "input") -> Side:
    """A diff side from an already-parsed JSON value (or contract YAML text)."""
    if isinstance(obj, str) and "\n" in obj:
        return _contract_side(obj, source, None)
    kind = _looks_like(obj)
    loader = _LOADERS.get(kind)
    if loader is None:
        raise InputError(
            f"cannot tell what {json_kind(obj)} is: expected a contract, an Avro schema, a "
            "Connect schema or a message with an embedded schema",
            source,
        )
    return loader(obj, source)


def detect_kind(obj: Any) -> str | None:
    """``contract``, ``avro``, ``connect``, ``message`` or None for a parsed JSON value."""
    return _looks_like(obj)


# --- detection --------------------------------------------------------------------------------


def _looks_like(obj: Any) -> str | None:
    if isinstance(obj, list):
        return "avro"  # a union
    if isinstance(obj, str):
        return "avro" if obj in _AVRO_TYPES else None
    if not isinstance(obj, dict):
        return None
    if obj.keys() >= _CONTRACT_KEYS:
        return "contract"
    if "payload" in obj and "schema" in obj:
        return "message"
    type_ = obj.get("type")
    if isinstance(type_, dict | list):
        return "avro"
    if not isinstance(type_, str):
        return None
    if type_ in _CONNECT_ONLY or "optional" in obj or "field" in obj:
        return "connect"
    fields = obj.get("fields")
    if isinstance(fields, list) and fields and isinstance(fields[0], dict):
        return "connect" if "field" in fields[0] else "avro"
    if type_ in _AVRO_TYPES:
        return "avro"
    return "connect" if type_ in CONNECT_TYPES else None


# --- loaders ----------------------------------------------------------------------------------


def _contract_obj(obj: Any, source: str) -> Side:
    try:
        text = orjson.dumps(obj).decode()
    except TypeError as err:
        raise InputError(f"contract is not JSON-able: {err}", source) from None
    return _contract_side(text, source, None)


def _contract_side(text: str, source: str, path: Path | None) -> Side:
    side = Side.of_contract(load_contract_text(text, source).contract, source)
    return dataclasses.replace(side, path=str(path)) if path is not None else side


def _avro_obj(obj: Any, source: str) -> Side:
    from contracts.diff.compat import parse_avro

    parse_avro(obj, source)  # fail early, with the source named
    return Side.of_avro(obj, source)


def _connect_obj(obj: Any, source: str) -> Side:
    try:
        return Side.of_connect(parse_connect(obj), source)
    except SchemaError as err:
        raise err.located(source) from None


def _message_obj(obj: Any, source: str) -> Side:
    return _messages_side([Message(value=obj, where=source)], source)


class _Versions:
    """The distinct schemas seen in one part (value or key) of a file's messages."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.parsed: dict[Any, ConnectSchema] = {}
        self.first: tuple[ConnectSchema, str] | None = None

    def add(self, doc: Any, where: str) -> None:
        raw = doc.get("schema") if isinstance(doc, dict) else None
        schema = self.parsed.get(schema_cache_key(raw)) if isinstance(raw, dict) else None
        if schema is None:
            schema = _embedded(doc, f"{where} {self.part}$.schema")
            if len(self.parsed) < 1024:
                self.parsed[schema_cache_key(raw)] = schema
        if self.first is None:
            self.first = (schema, where)
        elif schema != self.first[0]:
            raise InputError(
                f"the {self.part or 'value '}schema differs from the one at {self.first[1]}: a diff "
                "side is one schema; split the file where the schema changes, or infer a contract "
                "from it (cdc-contracts infer) and diff that",
                where,
            )


def _messages_side(messages: Iterable[Message], source: str) -> Side:
    """The one schema every message carries (value, and key for kcat records)."""
    values, keys = _Versions(""), _Versions("key ")
    has_key = False
    for message in messages:
        if message.has_key:
            has_key = True
            if message.key is not None:
                keys.add(message.key, message.where)
        if message.value is not None:
            values.add(message.value, message.where)
    if values.first is None:
        raise InputError("the file holds only tombstones: no message with a schema", source)
    key = keys.first[0] if keys.first is not None else None
    return Side.of_message(values.first[0], key, has_key and key is not None, source)


def _embedded(doc: Any, where: str) -> ConnectSchema:
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), dict):
        raise InputError(
            "the message carries no embedded schema (is the converter's schemas.enable off?)",
            where,
        )
    try:
        return parse_connect(doc["schema"], "$.schema")
    except SchemaError as err:
        raise err.located(where) from None


_LOADERS: Final[Mapping[str | None, Callable[[Any, str], Side]]] = {
    "contract": _contract_obj,
    "avro": _avro_obj,
    "connect": _connect_obj,
    "message": _message_obj,
}


# --- reading ----------------------------------------------------------------------------------


def _read_bytes(p: Path) -> bytes:
    with open_input(p) as handle:
        return handle.read()


def _yaml_head(p: Path) -> bool:
    """Whether the input starts like YAML, not JSON (an object, array or string)."""
    with open_input(p) as handle:
        head = handle.read(4096).lstrip()
    return bool(head) and head[:1] not in (b"{", b"[", b'"')


def read_text(path: str | Path) -> str:
    """An input's whole text (``-``, pipes and FIFOs read once, then replayed)."""
    try:
        return _read_bytes(Path(path)).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("file is not UTF-8 text", input_name(path)) from None


def _read_json(p: Path) -> Any:
    try:
        return orjson.loads(_read_bytes(p))
    except orjson.JSONDecodeError as err:
        line = getattr(err, "lineno", 1) or 1
        raise InputError(f"malformed JSON: {str(err).split(':')[0]}", f"{p}:{line}") from None
