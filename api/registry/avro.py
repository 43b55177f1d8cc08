"""Schema texts as the registry keeps them: parsed, checked, canonicalized.

The text the registry stores and answers with is Avro Java's ``Schema.toString()`` of the
schema as given — Confluent's ``AvroSchema.canonicalString()``, so a client comparing strings
sees the text Confluent would return: ``type``, ``name``, ``namespace`` (only where it differs
from the enclosing one), ``doc``, ``fields`` (each ``name``, ``type``, ``doc``, ``default``,
``order``, ``aliases``, then its properties), the schema's own properties in the order given, then
``aliases``; a named type met again, or one that comes from a schema reference, is written as
its name, relative to the enclosing namespace; numbers as Jackson writes them (``1.0E-7``).

Two registrations are the same schema when their parsed Avro is the same, whatever the spacing,
key order or name shorthand: they share an id (their ``fingerprint``, over the schema with its
references resolved, decides). The first text registered is the one kept.

The Python ``avro`` library checks type names, namespaces and enum symbols; what Apache Avro's
Java parser (and so Confluent, and every Java serializer) also refuses is checked here: field
names, ``aliases`` that are not arrays of names, ``NaN``/``Infinity`` and numbers beyond a
double (not JSON), and (as Karapace does, and Confluent with
``schema.providers.avro.validate.defaults=true``) field defaults that are not values of their
type. Schemas nested deeper than :data:`MAX_DEPTH` JSON levels are refused too.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final

import avro.errors
import avro.name
import avro.schema

from api.registry.errors import INVALID_SCHEMA, RegistryError, invalid_schema
from contracts.errors import SchemaError
from contracts.translate.avro_model import loads_json, scalar_default_fits

SUPPORTED_TYPES: Final = ("AVRO",)
KNOWN_TYPES: Final = ("AVRO", "JSON", "PROTOBUF")
#: the deepest JSON nesting a schema may have (the parser and the compatibility checker recurse
#: once or more per level; a record adds three levels, an array or a map one)
MAX_DEPTH: Final = 200
#: a name as Avro's Java parser accepts it: a letter or ``_``, then letters, digits or ``_``
_NAME: Final = re.compile(r"[^\W\d]\w*")
PRIMITIVES: Final = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
_NAMED: Final = frozenset({"record", "error", "enum", "fixed"})
_RECORD_KEYS: Final = frozenset({"type", "name", "namespace", "doc", "fields", "aliases"})
_FIELD_KEYS: Final = frozenset({"name", "type", "doc", "default", "order", "aliases"})
_ENUM_KEYS: Final = frozenset({"type", "name", "namespace", "doc", "symbols", "default", "aliases"})
_FIXED_KEYS: Final = frozenset({"type", "name", "namespace", "doc", "size", "aliases"})


@dataclass(frozen=True, slots=True)
class SchemaReference:
    """One entry of a request's ``references``: the type ``name`` a schema uses, defined by
    ``subject`` at ``version`` (-1: the latest)."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True, slots=True)
class CanonicalSchema:
    """A parsed schema: the text the registry answers with (references as names), the
    schema with its references resolved (what compatibility is judged on) and its identity."""

    schema_type: str
    text: str
    fingerprint: str
    resolved: str


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
def canonicalize(
    schema_text: str, schema_type: str = "AVRO", dependencies: tuple[str, ...] = ()
) -> CanonicalSchema:
    """Parse an Avro schema text; raise 42201 when it is not valid Avro.

    ``dependencies``: the resolved texts of the schemas its references name, each before the
    schemas that use it: their named types are known to this one."""
    check_type(schema_type)
    try:
        value = loads_json(schema_text, "the schema")
        check_depth(value)
        check_names(value)
        names = avro.name.Names()
        external: set[str] = set()
        for dependency in dependencies:
            parsed_dependency = avro.schema.make_avsc_object(
                _bare_references(json.loads(dependency)), names
            )
            external |= _named_types(parsed_dependency)
        parsed = avro.schema.make_avsc_object(_bare_references(value), names)
        check_defaults(parsed)
        resolved = parsed.to_json()
        text = java_text(value, external)
    except SchemaError as err:
        raise invalid_schema(err.one_line()) from None
    except RecursionError:
        raise invalid_schema(f"the schema is nested too deeply (over {MAX_DEPTH} levels)") from None
    except (avro.errors.AvroException, json.JSONDecodeError, TypeError, ValueError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise invalid_schema(reason) from None
    resolved_text = json.dumps(resolved, separators=(",", ":"), ensure_ascii=False)
    return CanonicalSchema("AVRO", text, fingerprint_of(resolved), resolved_text)


_KEYWORDS: Final = PRIMITIVES | _NAMED | {"array", "map"}


def _bare_references(schema: Any) -> Any:
    """The schema with ``{"type": "a.Named"}`` objects written as ``"a.Named"``: Avro Java reads
    such an object as a reference to the named type (Confluent's own tests register them); the
    Python library does not know the form."""
    if isinstance(schema, list):
        return [_bare_references(b) for b in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and kind not in _KEYWORDS:
        return kind
    if isinstance(kind, dict | list):
        return _bare_references(kind)
    out = dict(schema)
    if isinstance(schema.get("fields"), list):
        out["fields"] = [
            {**f, "type": _bare_references(f.get("type"))} if isinstance(f, dict) else f
            for f in schema["fields"]
        ]
    for key in ("items", "values"):
        if key in schema:
            out[key] = _bare_references(schema[key])
    return out


def _named_types(schema: Any) -> set[str]:
    """The full names of the named types defined in a parsed schema."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        name = getattr(node, "fullname", None)
        if node.type in _NAMED and name is not None:
            if name in found:
                continue
            found.add(name)
        if node.type in ("record", "error"):
            stack.extend(f.type for f in node.fields)
        elif node.type == "array":
            stack.append(node.items)
        elif node.type == "map":
            stack.append(node.values)
        elif node.type == "union":
            stack.extend(node.schemas)
    return found


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
    if kind in _NAMED:
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
    """Whether a JSON value is a valid default for a schema parsed by the ``avro`` library
    (the scalar rules are :func:`contracts.translate.avro_model.scalar_default_fits`)."""
    kind = schema.type
    scalar = scalar_default_fits(kind, value, getattr(schema, "symbols", ()) or ())
    if scalar is not None:
        return scalar
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


# --- Avro Java's Schema.toString() ---------------------------------------------------------------


def java_text(schema: Any, external: set[str] | frozenset[str] = frozenset()) -> str:
    """Avro Java's compact ``Schema.toString()`` of a (valid) schema JSON value; ``external``
    names the types schema references define (written as names, never defined here)."""
    parts: list[str] = []
    _JavaWriter(set(external), parts).schema(schema, None)
    return "".join(parts)


class _JavaWriter:
    """One ``toString`` run: the names written so far (or known from references)."""

    def __init__(self, known: set[str], parts: list[str]) -> None:
        self.known = known
        self.out = parts.append

    def schema(self, node: Any, space: str | None) -> None:
        if isinstance(node, str):
            self._reference(node, space)
        elif isinstance(node, list):
            self.out("[")
            for i, branch in enumerate(node):
                if i:
                    self.out(",")
                self.schema(branch, space)
            self.out("]")
        else:
            self._object(node, space)

    def _object(self, node: dict[str, Any], space: str | None) -> None:
        kind = node["type"]
        if isinstance(kind, dict | list):  # {"type": {...}}: the inner schema
            self.schema(kind, space)
        elif kind in _NAMED:
            self._named(node, space)
        elif kind in ("array", "map"):
            child = "items" if kind == "array" else "values"
            self.out(f'{{"type":"{kind}","{child}":')
            self.schema(node[child], space)
            self._props(node, frozenset({"type", child}), first=False)
            self.out("}")
        elif kind in PRIMITIVES:
            props = [k for k in node if k != "type"]
            if not props:
                self.out(_json(kind))
            else:
                self.out(f'{{"type":{_json(kind)}')
                self._props(node, frozenset({"type"}), first=False)
                self.out("}")
        else:  # a named type given as {"type": "Name"}: Avro reads the reference
            self._reference(kind, space)

    def _reference(self, name: str, space: str | None) -> None:
        if name in PRIMITIVES:
            self.out(_json(name))
            return
        full = f"{space}.{name}" if "." not in name and space else name
        if full not in self.known and name in self.known:
            full = name
        self.out(_json(_qualified(full, space)))

    def _named(self, node: dict[str, Any], space: str | None) -> None:
        name = node["name"]
        namespace = node.get("namespace") if "." not in name else name.rpartition(".")[0]
        if namespace is None:  # absent or null: the enclosing namespace
            namespace = space
        short = name.rpartition(".")[2]
        own = namespace or None
        full = f"{own}.{short}" if own else short
        if full in self.known:  # a second definition is refused by the parser; a guard only
            self._reference(full, space)
            return
        self.known.add(full)
        self.out(f'{{"type":{_json(node["type"])},"name":{_json(short)}')
        if own is not None:
            if own != space:
                self.out(f',"namespace":{_json(own)}')
        elif space is not None:
            self.out(',"namespace":""')
        if node.get("doc") is not None:
            self.out(f',"doc":{_json(node["doc"])}')
        kind = node["type"]
        if kind in ("record", "error"):
            self.out(',"fields":[')
            for i, field in enumerate(node["fields"]):
                if i:
                    self.out(",")
                self._field(field, own)
            self.out("]")
            reserved = _RECORD_KEYS
        elif kind == "enum":
            self.out(f',"symbols":{_json(node["symbols"])}')
            if node.get("default") is not None:
                self.out(f',"default":{_json(node["default"])}')
            reserved = _ENUM_KEYS
        else:
            self.out(f',"size":{_json(node["size"])}')
            reserved = _FIXED_KEYS
        self._props(node, reserved, first=False)
        aliases = node.get("aliases")
        if aliases:
            written = [_alias(a, own) for a in aliases]
            self.out(f',"aliases":{_json(written)}')
        self.out("}")

    def _field(self, field: dict[str, Any], space: str | None) -> None:
        self.out(f'{{"name":{_json(field["name"])},"type":')
        self.schema(field["type"], space)
        if field.get("doc") is not None:
            self.out(f',"doc":{_json(field["doc"])}')
        if "default" in field:
            self.out(f',"default":{_json(field["default"])}')
        order = field.get("order")
        if order is not None and str(order).lower() != "ascending":
            self.out(f',"order":{_json(str(order).lower())}')
        if field.get("aliases"):
            self.out(f',"aliases":{_json(field["aliases"])}')
        self._props(field, _FIELD_KEYS, first=False)
        self.out("}")

    def _props(self, node: dict[str, Any], reserved: frozenset[str], *, first: bool) -> None:
        for key, value in node.items():
            if key in reserved:
                continue
            self.out(("" if first else ",") + f"{_json(key)}:{_json(value)}")
            first = False


def _qualified(full: str, space: str | None) -> str:
    """Avro Java's ``Name.getQualified``: the short name inside its own namespace (or when it
    has none), else the full name."""
    namespace, _, short = full.rpartition(".")
    return short if not namespace or namespace == space else full


def _alias(alias: str, space: str | None) -> str:
    full = alias if "." in alias or not space else f"{space}.{alias}"
    return _qualified(full, space)


def _json(value: Any) -> str:
    """JSON text as Jackson writes it: compact, UTF-8 (no ASCII escaping), doubles as Java's
    ``Double.toString``, integers as they are."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, list):
        return "[" + ",".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json(str(k))}:{_json(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def java_double(value: float) -> str:
    """Java's ``Double.toString``: decimal notation for 10^-3 <= |x| < 10^7 (with at least one
    digit after the point), else ``d.dddE±n``; the shortest digits that round-trip."""
    if not math.isfinite(value):
        raise ValueError(f"{value} has no JSON text")
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # the position of the decimal point in ``digits``
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{text}"
        whole, fraction = text[:point].ljust(point, "0"), text[point:]
        return f"{prefix}{whole}.{fraction or '0'}"
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{point - 1}"


def fingerprint_of(value: Any) -> str:
    """A stable digest of a JSON value (object keys sorted)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str | None:
    """Key-sorted compact JSON text of an optional value (None stays None)."""
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class SchemaRequest:
    """The schema part of a register / lookup / compatibility request body."""

    schema: str | None
    schema_type: str
    references: tuple[SchemaReference, ...]


def check_request_schema(body: Any, *, schema_optional: bool = False) -> SchemaRequest:
    """The schema text, type and references of a request body.

    ``schema`` may be absent only where ``schema_optional`` (a registration carrying
    ``metadata`` or ``ruleSet``: the latest version's schema is then used); an absent or empty
    one is 42201 otherwise."""
    if not isinstance(body, dict):
        raise RegistryError(422, "The request body must be a JSON object")
    schema = body.get("schema")
    if schema is not None and not isinstance(schema, str):
        raise RegistryError(422, "Field 'schema' must be a string")
    if (schema is None and not schema_optional) or (schema is not None and not schema.strip()):
        raise RegistryError(INVALID_SCHEMA, "Empty schema")
    schema_type = body.get("schemaType")
    if schema_type is not None and not isinstance(schema_type, str):
        raise RegistryError(422, "Field 'schemaType' must be a string")
    return SchemaRequest(schema, check_type(schema_type), _references(body.get("references")))


def _references(raw: Any) -> tuple[SchemaReference, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RegistryError(422, "Field 'references' must be an array")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise RegistryError(422, f"references[{i}] must be an object")
        name, subject, version = item.get("name"), item.get("subject"), item.get("version", -1)
        if not isinstance(name, str) or not name or not isinstance(subject, str) or not subject:
            raise RegistryError(422, f"references[{i}] needs a 'name' and a 'subject'")
        if isinstance(version, bool) or not isinstance(version, int):
            raise RegistryError(422, f"references[{i}].version must be an integer")
        out.append(SchemaReference(name, subject, version))
    return tuple(out)
