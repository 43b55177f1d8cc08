"""Schema texts as the registry keeps them: parsed, checked and canonicalized.

Two registrations are the same schema when their parsed Avro is the same, whatever the
whitespace, key order or name shorthand (``"x.y.In"`` vs ``"In"`` inside namespace ``x.y``).
The registry stores the compact canonical JSON the Avro library writes back and deduplicates
on a key-sorted form of it.

The Python ``avro`` library checks type names, namespaces and enum symbols; what Apache Avro's
Java parser (and so Confluent, and every Java serializer) also refuses is checked here: field
names, ``aliases`` that are not arrays of names, and (as Karapace does, and Confluent with
``schema.providers.avro.validate.defaults=true``) field defaults that do not match their type.
Schemas nested deeper than :data:`MAX_DEPTH` JSON levels are refused too.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import avro.errors
import avro.name
import avro.schema

from api.registry.errors import RegistryError, invalid_schema

SUPPORTED_TYPES: Final = ("AVRO",)
KNOWN_TYPES: Final = ("AVRO", "JSON", "PROTOBUF")
#: the deepest JSON nesting a schema may have (the parser and the compatibility checker recurse
#: once or more per level; a record adds three levels, an array or a map one)
MAX_DEPTH: Final = 200
#: a name as Avro's Java parser accepts it: a letter or ``_``, then letters, digits or ``_``
_NAME: Final = re.compile(r"[^\W\d]\w*")
_INT_RANGE: Final = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
_FLOAT_WORDS: Final = frozenset({"NaN", "Infinity", "-Infinity"})


@dataclass(frozen=True, slots=True)
class CanonicalSchema:
    """A parsed schema: the text the registry answers with and its identity fingerprint."""

    schema_type: str
    text: str
    fingerprint: str


def check_type(schema_type: str | None) -> str:
    """The schema type of a request (``AVRO`` when absent); others answer 42201."""
    value = (schema_type or "AVRO").upper()
    if value not in SUPPORTED_TYPES:
        known = "known" if value in KNOWN_TYPES else "unknown"
        raise invalid_schema(
            f"schemaType {value} ({known}) is not supported by this registry; only AVRO is"
        )
    return value


@lru_cache(maxsize=4096)
def canonicalize(schema_text: str, schema_type: str = "AVRO") -> CanonicalSchema:
    """Parse an Avro schema text; raise 42201 when it is not valid Avro."""
    check_type(schema_type)
    try:
        value = json.loads(schema_text)
        check_depth(value)
        check_names(value)
        parsed = avro.schema.make_avsc_object(value, avro.name.Names())
        check_defaults(parsed)
        as_json = parsed.to_json()
    except RecursionError:
        raise invalid_schema(f"the schema is nested too deeply (over {MAX_DEPTH} levels)") from None
    except (avro.errors.AvroException, json.JSONDecodeError, TypeError, ValueError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise invalid_schema(reason) from None
    text = json.dumps(as_json, separators=(",", ":"), ensure_ascii=False)
    return CanonicalSchema("AVRO", text, fingerprint_of(as_json))


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON value is nested deeper than ``limit`` levels (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        if not children:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def check_depth(value: Any) -> None:
    """Refuse (42201) a schema nested deeper than :data:`MAX_DEPTH` JSON levels."""
    if too_deep(value):
        raise invalid_schema(f"the schema is nested too deeply (over {MAX_DEPTH} levels)")


def check_names(schema: Any) -> None:
    """Field names and ``aliases`` as Avro's Java parser checks them (42201 otherwise).

    Type names, namespaces and enum symbols are left to the ``avro`` library, which checks them.
    """
    if isinstance(schema, list):
        for branch in schema:
            check_names(branch)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind in ("record", "error", "enum", "fixed"):
        _check_aliases(schema.get("aliases"), f"{kind} {schema.get('name')!r}", dotted=True)
    if kind in ("record", "error"):
        owner = schema.get("name")
        for field in schema.get("fields") or ():
            if not isinstance(field, dict):
                continue
            name = field.get("name")
            if isinstance(name, str) and not _NAME.fullmatch(name):
                raise invalid_schema(
                    f"field name {name!r} of record {owner!r} is not a valid Avro name (a letter "
                    "or '_', then letters, digits or '_')"
                )
            _check_aliases(field.get("aliases"), f"field {name!r} of record {owner!r}")
            check_names(field.get("type"))
    elif kind == "array":
        check_names(schema.get("items"))
    elif kind == "map":
        check_names(schema.get("values"))
    elif isinstance(kind, dict | list):
        check_names(kind)


def _check_aliases(aliases: Any, where: str, dotted: bool = False) -> None:
    if aliases is None:
        return
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise invalid_schema(f"the aliases of {where} must be an array of names: {aliases!r}")
    for alias in aliases:
        parts = alias.split(".") if dotted else [alias]
        if not all(_NAME.fullmatch(p) for p in parts):
            raise invalid_schema(f"alias {alias!r} of {where} is not a valid Avro name")


def check_defaults(schema: Any) -> None:
    """Every field default must be a value of the field's type (a union's: of its first
    branch), as the Avro specification requires; 42201 names the field otherwise."""
    seen: set[int] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        kind = node.type
        if kind in ("record", "error"):
            for field in node.fields:
                if field.has_default and not _valid_default(field.type, field.default):
                    raise invalid_schema(
                        f"the default of field {field.name!r} of record {node.fullname!r} does "
                        f"not match its type {_type_text(field.type)}: "
                        f"{json.dumps(field.default, ensure_ascii=False)[:200]}"
                    )
                stack.append(field.type)
        elif kind == "array":
            stack.append(node.items)
        elif kind == "map":
            stack.append(node.values)
        elif kind == "union":
            stack.extend(node.schemas)


def _valid_default(schema: Any, value: Any) -> bool:
    """Whether a JSON value is a valid default for a parsed schema (Avro spec, 'Records')."""
    kind = schema.type
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in _INT_RANGE:
        low, high = _INT_RANGE[kind]
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if kind in ("float", "double"):
        if isinstance(value, str):
            return value in _FLOAT_WORDS
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind in ("string", "bytes", "fixed"):
        return isinstance(value, str)
    if kind == "enum":
        return isinstance(value, str) and value in schema.symbols
    if kind == "array":
        return isinstance(value, list) and all(_valid_default(schema.items, v) for v in value)
    if kind == "map":
        return isinstance(value, dict) and all(
            _valid_default(schema.values, v) for v in value.values()
        )
    if kind == "union":
        return bool(schema.schemas) and _valid_default(schema.schemas[0], value)
    if kind in ("record", "error"):
        return isinstance(value, dict) and all(
            _valid_default(f.type, value[f.name]) if f.name in value else f.has_default
            for f in schema.fields
        )
    return True


def _type_text(schema: Any) -> str:
    if schema.type == "union":
        return "[" + ", ".join(_type_text(s) for s in schema.schemas) + "] (its first branch)"
    return str(getattr(schema, "fullname", None) or schema.type)


def fingerprint_of(value: Any) -> str:
    """A stable digest of a JSON value (object keys sorted)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str | None:
    """Key-sorted compact JSON text of an optional value (None stays None)."""
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def check_request_schema(body: Any) -> tuple[str, str]:
    """The schema text and type of a register / lookup / compatibility request body."""
    if not isinstance(body, dict):
        raise RegistryError(422, "The request body must be a JSON object")
    schema = body.get("schema")
    if not isinstance(schema, str) or not schema.strip():
        raise RegistryError(422, "Field 'schema' is required and must be a string")
    schema_type = body.get("schemaType")
    if schema_type is not None and not isinstance(schema_type, str):
        raise RegistryError(422, "Field 'schemaType' must be a string")
    references = body.get("references") or []
    if references:
        raise invalid_schema("schema references are not supported by this registry")
    return schema, check_type(schema_type)
