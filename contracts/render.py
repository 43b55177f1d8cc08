"""Rendering schemas and contracts as Connect JSON, Avro JSON, Spark JSON or Spark DDL.

:func:`load_schema_input` auto-detects what a file holds: a Connect schema JSON, an Avro
schema (``.avsc``), a message with an embedded schema (``{"schema": ..., "payload": ...}``, the
first document of the file) or a contract file. :func:`render_schema` and
:func:`render_contract` turn the result into text; :func:`contract_avro` gives the Avro
schemas to register for a contract's key and value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, Literal

from contracts.contract import Contract, load_contract, parse_contract
from contracts.errors import ContractsError, InputError, SchemaError, UnknownFormatError
from contracts.formats.base import Derived, Format
from contracts.schema import CONNECT_TYPES, TYPE_ALIASES, ConnectSchema, parse_connect
from contracts.translate.avro import avro_to_connect, connect_to_avro
from contracts.translate.ddl import spark_ddl
from contracts.translate.spark import connect_to_spark

RenderTarget = Literal["connect", "avro", "spark-json", "spark-ddl"]
Part = Literal["row", "key", "value"]

RENDER_TARGETS: Final[tuple[str, ...]] = ("connect", "avro", "spark-json", "spark-ddl")
PARTS: Final[tuple[str, ...]] = ("row", "key", "value")

_CONTRACT_SUFFIXES: Final = frozenset({".yaml", ".yml"})
_AVRO_SUFFIXES: Final = frozenset({".avsc"})
_AVRO_COMPLEX: Final = frozenset({"record", "error", "enum", "fixed", "array", "map"})
_AVRO_PRIMITIVES: Final = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)


# --- loading ----------------------------------------------------------------------------------


def load_schema_input(path: str | Path) -> ConnectSchema | Contract:
    """Read a schema-bearing file, detecting its kind.

    Raises a :class:`ContractsError` (exit code 2) naming the file when it holds none of the
    supported kinds, or when the schema inside is malformed (with its JSON path).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", str(p)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a schema file", str(p)) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", str(p)) from None
    if p.suffix.lower() in _CONTRACT_SUFFIXES:
        return load_contract(p)
    doc = _first_json_document(text)
    if doc is _NOT_JSON:
        if _looks_like_contract_yaml(text):
            return parse_contract(text, str(p))
        raise InputError(
            "not a Connect schema, Avro schema, message with an embedded schema or contract "
            "file (it is neither JSON nor a contract YAML)",
            str(p),
        )
    try:
        return _detect(doc, avro_hint=p.suffix.lower() in _AVRO_SUFFIXES, source=str(p), text=text)
    except ContractsError as err:
        if err.where and err.where.startswith(str(p)):
            raise
        raise err.located(str(p)) from None


_NOT_JSON: Final = object()


def _first_json_document(text: str) -> Any:
    stripped = text.lstrip()
    if not stripped:
        return _NOT_JSON
    try:
        value, _end = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError:
        return _NOT_JSON
    return value


def _looks_like_contract_yaml(text: str) -> bool:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and "columns" in data


def _detect(doc: Any, *, avro_hint: bool, source: str, text: str) -> ConnectSchema | Contract:
    if avro_hint:
        return avro_to_connect(doc)
    if isinstance(doc, dict):
        if "schema" in doc and "payload" in doc:
            if doc["schema"] is None:
                raise InputError(
                    "the message's schema is null (the producer ran with schemas.enable=false)",
                    f"{source} $.schema",
                )
            return parse_connect(doc["schema"], "$.schema")
        if "columns" in doc and "format" in doc:
            return parse_contract(text, source)
        if _is_connect_object(doc):
            return parse_connect(doc)
        if _is_avro_object(doc):
            return avro_to_connect(doc)
    if isinstance(doc, list) and doc and all(_is_avro_like(d) for d in doc):
        return avro_to_connect(doc)
    raise InputError(
        "not a Connect schema, Avro schema, message with an embedded schema or contract file",
        source,
    )


def _is_connect_object(doc: dict[str, Any]) -> bool:
    """Connect JSON: a Connect type name, and for arrays/maps Connect's own keys."""
    type_ = doc.get("type")
    if not isinstance(type_, str) or (type_ not in CONNECT_TYPES and type_ not in TYPE_ALIASES):
        return False
    if type_ not in ("array", "map"):
        return True
    items = doc.get("items")
    return (
        "optional" in doc
        or "keys" in doc
        or (isinstance(items, dict) and ("optional" in items or items.get("type") in CONNECT_TYPES))
    )


def _is_avro_object(doc: dict[str, Any]) -> bool:
    type_ = doc.get("type")
    if type_ in _AVRO_COMPLEX:
        return True
    if type_ in _AVRO_PRIMITIVES and type_ not in CONNECT_TYPES:
        return True  # "int", "long", "null": Avro spellings Connect does not use
    fields = doc.get("fields")
    return isinstance(fields, list) and any(isinstance(f, dict) and "name" in f for f in fields)


def _is_avro_like(doc: Any) -> bool:
    return isinstance(doc, str) or (isinstance(doc, dict) and _is_avro_object(doc))


# --- rendering --------------------------------------------------------------------------------


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def render_schema(schema: ConnectSchema, to: RenderTarget) -> str:
    """A Connect schema as text in the target language (JSON is indented, ends with a newline)."""
    if to == "connect":
        return _dump(schema.to_json())
    if to == "avro":
        return _dump(connect_to_avro(schema))
    if to == "spark-json":
        return _dump(connect_to_spark(schema))
    if to == "spark-ddl":
        return spark_ddl(connect_to_spark(schema)) + "\n"
    raise SchemaError(f"unknown render target {to!r} (expected one of {', '.join(RENDER_TARGETS)})")


def render_contract(contract: Contract, to: RenderTarget, part: Part = "value") -> str:
    """One part of a contract rendered: the row, or the key/value schema its format emits."""
    return render_schema(contract_part(contract, part), to)


def contract_part(contract: Contract, part: Part) -> ConnectSchema:
    """The Connect schema of a contract's row, key or value (the format's derived schemas)."""
    if part == "row":
        return contract.row_schema
    if part == "key":
        key = _derived_key(contract)
        if key is None:
            raise SchemaError(_no_key(contract), "key")
        return key
    if part == "value":
        return _derive(contract).value
    raise SchemaError(f"unknown part {part!r} (expected one of {', '.join(PARTS)})")


def contract_avro(contract: Contract, part: Literal["key", "value"]) -> Any:
    """The Avro schema to register for a contract's key or value (None: the key has no schema).

    This is AvroData's translation of the Connect schemas the contract's format emits.
    """
    if part == "key":
        key = _derived_key(contract)
        return None if key is None else connect_to_avro(key)
    if part == "value":
        return connect_to_avro(_derive(contract).value)
    raise SchemaError(f"unknown part {part!r} (expected key or value)")


def _no_key(contract: Contract) -> str:
    """Why a contract has no key schema, and what to do about it."""
    if not contract.key:
        return (
            f"contract {contract.name!r} has no key columns (its sample messages carried no "
            "Kafka key): list the table's primary key in the contract, e.g. key: [id]"
        )
    return f"{contract.format} messages carry no Kafka key, so contract {contract.name!r} has no key schema"


def _derived_key(contract: Contract) -> ConnectSchema | None:
    """The format's derived key; the contract's key columns when the format is not available."""
    try:
        fmt = _format_of(contract)
    except UnknownFormatError:
        return contract.key_schema
    try:
        return fmt.derive_key(contract)
    except NotImplementedError:
        return contract.key_schema


def _format_of(contract: Contract) -> Format:
    from contracts.formats import get_format

    try:
        return get_format(contract.format)
    except ModuleNotFoundError as err:
        raise UnknownFormatError(
            f"format {contract.format!r} is registered but not available ({err.name} is missing)",
            "format",
        ) from None


def _derive(contract: Contract) -> Derived:
    fmt = _format_of(contract)
    try:
        return fmt.derive(contract)
    except NotImplementedError:
        raise UnknownFormatError(
            f"format {contract.format!r} cannot derive key and value schemas yet", "format"
        ) from None
