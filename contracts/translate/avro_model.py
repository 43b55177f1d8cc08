"""A resolved view of an Avro schema, shared by the Avro → Connect and Avro → Spark translations.

:func:`parse_avro` reads Avro's JSON form (a type name, an object or a union array), resolves
named-type references by Avro's namespace rules and reports malformed input with its JSON path.
Named types used twice become the same :class:`AvroNode` instance; recursive types are refused
(neither Connect nor Spark can express them by default).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Final

from contracts.errors import SchemaError
from contracts.schema import MISSING, json_kind

PRIMITIVES: Final = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
NAMED_TYPES: Final = frozenset({"record", "error", "enum", "fixed"})

#: Attributes that are part of each Avro construct; anything else is a property.
_RESERVED: Final[dict[str, frozenset[str]]] = {
    "record": frozenset({"type", "name", "namespace", "doc", "fields", "aliases"}),
    "enum": frozenset({"type", "name", "namespace", "doc", "symbols", "default", "aliases"}),
    "fixed": frozenset({"type", "name", "namespace", "doc", "size", "aliases"}),
    "array": frozenset({"type", "items"}),
    "map": frozenset({"type", "values"}),
}
_PRIMITIVE_RESERVED: Final = frozenset({"type"})

NAME_RE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def loads_json(text: str | bytes, what: str = "JSON") -> Any:
    """Parse JSON text as Java's parsers (Jackson, and so Avro and Confluent) read it.

    ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON and a number beyond a double's range
    (``1e400``) has no JSON value: both are refused (:class:`SchemaError` with the line), where
    Python's ``json`` would accept them and then write text no Java client can read.
    """

    def constant(word: str) -> Any:
        raise SchemaError(f"{what} holds {word}, which is not a JSON number")

    def number(token: str) -> float:
        value = float(token)
        if math.isinf(value):
            raise SchemaError(f"{what} holds {token}, beyond the range of a double")
        return value

    try:
        return json.loads(text, parse_constant=constant, parse_float=number)
    except json.JSONDecodeError as err:
        raise SchemaError(f"invalid {what}: {err.msg}", f"line {err.lineno}") from None


def non_finite_path(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first NaN or infinite float inside a JSON-like value, if any
    (such a value has no JSON text: Java's parsers refuse what Python would write for it)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, float):
            if not math.isfinite(node):
                return where
        elif isinstance(node, dict):
            stack.extend((v, f"{where}.{k}") for k, v in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))
    return None


@dataclass(slots=True, eq=False)
class AvroField:
    """One record field: its name, type, doc and default (``MISSING`` when absent)."""

    name: str
    type: AvroNode
    doc: str | None
    default: Any
    path: str
    #: the field's JSON object as given (so a caller can edit what it wrote)
    raw: dict[str, Any] | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not MISSING


@dataclass(slots=True, eq=False)
class AvroNode:
    """One Avro type with its properties (``logicalType``, ``connect.*``, ...)."""

    type: str
    path: str
    props: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    namespace: str | None = None
    doc: str | None = None
    fields: list[AvroField] | None = None
    items: AvroNode | None = None
    values: AvroNode | None = None
    branches: list[AvroNode] | None = None
    symbols: list[str] | None = None
    size: int | None = None
    enum_default: str | None = None

    @property
    def fullname(self) -> str:
        if self.name is None:
            return self.type
        return f"{self.namespace}.{self.name}" if self.namespace else self.name

    @property
    def logical_type(self) -> str | None:
        value = self.props.get("logicalType")
        return value if isinstance(value, str) else None


def parse_avro(obj: Any, path: str = "$", *, recursive: bool = False) -> AvroNode:
    """Parse an Avro schema from its JSON value, resolving named references.

    A NaN or infinite number anywhere in it is refused: it has no JSON text. A record that
    refers to itself is refused unless ``recursive`` (then the reference is the record's own
    node, and the graph has a cycle: walk it with care)."""
    bad = non_finite_path(obj, path)
    if bad is not None:
        raise SchemaError("NaN and infinite numbers are not JSON: Avro's parsers refuse them", bad)
    return _Parser(recursive).parse(obj, None, path)


#: Avro's spellings of the non-finite float and double defaults (the spec allows them as text)
FLOAT_WORDS: Final = frozenset({"NaN", "Infinity", "-Infinity"})
_INT_RANGES: Final = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}


def scalar_default_fits(kind: str, value: Any, symbols: Any = ()) -> bool | None:
    """Whether a JSON value is a valid default for a non-composite Avro type (``symbols``: an
    enum's), by Avro's ``Schema.isValidDefault``; None for composite types (array, map, union,
    record), which the caller walks."""
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if kind in ("float", "double"):
        if isinstance(value, str):
            return value in FLOAT_WORDS
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind in ("string", "bytes", "fixed"):
        return isinstance(value, str)
    if kind == "enum":
        return isinstance(value, str) and value in symbols
    return None


def default_fits(node: AvroNode, value: Any) -> bool:
    """Whether a JSON value is a valid default for an Avro type, by the rules of Avro's
    ``Schema.isValidDefault``: a union's default is one of its first branch, a record's holds
    every field without a default of its own, an enum's is one of its symbols."""
    kind = node.type
    scalar = scalar_default_fits(kind, value, node.symbols or ())
    if scalar is not None:
        return scalar
    if kind == "array":
        assert node.items is not None
        items = node.items
        return isinstance(value, list) and all(default_fits(items, v) for v in value)
    if kind == "map":
        assert node.values is not None
        values = node.values
        return isinstance(value, dict) and all(default_fits(values, v) for v in value.values())
    if kind == "union":
        branches = node.branches or []
        return bool(branches) and default_fits(branches[0], value)
    if kind == "record":
        return isinstance(value, dict) and all(
            default_fits(f.type, value[f.name]) if f.name in value else f.has_default
            for f in node.fields or ()
        )
    return False


class _Parser:
    def __init__(self, recursive: bool = False) -> None:
        self.named: dict[str, AvroNode] = {}
        self.pending: set[str] = set()
        self.recursive = recursive

    def parse(self, obj: Any, space: str | None, path: str) -> AvroNode:
        if isinstance(obj, str):
            return self._reference(obj, space, path)
        if isinstance(obj, list):
            return self._union(obj, space, path)
        if not isinstance(obj, dict):
            raise SchemaError(f"expected an Avro schema, got {json_kind(obj)}", path)
        type_ = obj.get("type")
        if isinstance(type_, dict | list):
            return self.parse(type_, space, f"{path}.type")
        if not isinstance(type_, str):
            raise SchemaError("an Avro schema object needs a string 'type'", path)
        if type_ in PRIMITIVES:
            return AvroNode(type=type_, path=path, props=_props(obj, _PRIMITIVE_RESERVED))
        if type_ in ("record", "error"):
            return self._record(obj, space, path)
        if type_ == "enum":
            return self._enum(obj, space, path)
        if type_ == "fixed":
            return self._fixed(obj, space, path)
        if type_ == "array":
            if "items" not in obj:
                raise SchemaError("an array needs 'items'", path)
            items = self.parse(obj["items"], space, f"{path}.items")
            return AvroNode(
                type="array", path=path, props=_props(obj, _RESERVED["array"]), items=items
            )
        if type_ == "map":
            if "values" not in obj:
                raise SchemaError("a map needs 'values'", path)
            values = self.parse(obj["values"], space, f"{path}.values")
            return AvroNode(
                type="map", path=path, props=_props(obj, _RESERVED["map"]), values=values
            )
        return self._reference(type_, space, f"{path}.type")

    # --- named types ----------------------------------------------------------------------------

    def _define(self, obj: dict[str, Any], space: str | None, path: str) -> tuple[str, str | None]:
        name = obj.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(f"a {obj.get('type')} needs a non-empty string 'name'", path)
        namespace = obj.get("namespace", space)
        if namespace is not None and not isinstance(namespace, str):
            raise SchemaError("'namespace' must be a string", f"{path}.namespace")
        if "." in name:
            namespace, name = name.rsplit(".", 1)
        namespace = namespace or None
        _check_name(name, f"{path}.name")
        for part in (namespace or "").split(".") if namespace else ():
            _check_name(part, f"{path}.namespace")
        full = f"{namespace}.{name}" if namespace else name
        if full in self.named or full in self.pending:
            raise SchemaError(f"named type {full!r} is defined twice", f"{path}.name")
        return name, namespace

    def _record(self, obj: dict[str, Any], space: str | None, path: str) -> AvroNode:
        name, namespace = self._define(obj, space, path)
        node = AvroNode(
            type="record",
            path=path,
            props=_props(obj, _RESERVED["record"]),
            name=name,
            namespace=namespace,
            doc=_opt_str(obj, "doc", path),
        )
        if self.recursive:
            self.named[node.fullname] = node
        else:
            self.pending.add(node.fullname)
        raw_fields = obj.get("fields")
        if not isinstance(raw_fields, list):
            raise SchemaError("a record needs a 'fields' array", path)
        fields: list[AvroField] = []
        seen: set[str] = set()
        for i, raw in enumerate(raw_fields):
            fpath = f"{path}.fields[{i}]"
            if not isinstance(raw, dict):
                raise SchemaError(f"a field must be an object, got {json_kind(raw)}", fpath)
            fname = raw.get("name")
            if not isinstance(fname, str):
                raise SchemaError("a field needs a string 'name'", fpath)
            _check_name(fname, f"{fpath}.name")
            if fname in seen:
                raise SchemaError(f"duplicate field name {fname!r}", f"{fpath}.name")
            seen.add(fname)
            if "type" not in raw:
                raise SchemaError("a field needs a 'type'", fpath)
            ftype = self.parse(raw["type"], namespace, f"{fpath}.type")
            fields.append(
                AvroField(
                    name=fname,
                    type=ftype,
                    doc=_opt_str(raw, "doc", fpath),
                    default=raw.get("default", MISSING),
                    path=fpath,
                    raw=raw,
                )
            )
        node.fields = fields
        self.pending.discard(node.fullname)
        self.named[node.fullname] = node
        return node

    def _enum(self, obj: dict[str, Any], space: str | None, path: str) -> AvroNode:
        name, namespace = self._define(obj, space, path)
        symbols = obj.get("symbols")
        if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
            raise SchemaError("an enum needs a 'symbols' array of strings", path)
        default = obj.get("default")
        if default is not None and default not in symbols:
            raise SchemaError(f"enum default {default!r} is not a symbol", f"{path}.default")
        node = AvroNode(
            type="enum",
            path=path,
            props=_props(obj, _RESERVED["enum"]),
            name=name,
            namespace=namespace,
            doc=_opt_str(obj, "doc", path),
            symbols=list(symbols),
            enum_default=default,
        )
        self.named[node.fullname] = node
        return node

    def _fixed(self, obj: dict[str, Any], space: str | None, path: str) -> AvroNode:
        name, namespace = self._define(obj, space, path)
        size = obj.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise SchemaError("a fixed needs a non-negative integer 'size'", path)
        node = AvroNode(
            type="fixed",
            path=path,
            props=_props(obj, _RESERVED["fixed"]),
            name=name,
            namespace=namespace,
            doc=_opt_str(obj, "doc", path),
            size=size,
        )
        self.named[node.fullname] = node
        return node

    def _reference(self, ref: str, space: str | None, path: str) -> AvroNode:
        if ref in PRIMITIVES:
            return AvroNode(type=ref, path=path)
        candidates = [ref] if "." in ref else ([f"{space}.{ref}"] if space else []) + [ref]
        for full in candidates:
            if full in self.pending:
                raise SchemaError(
                    f"recursive reference to {full!r}: recursive types cannot be translated", path
                )
            found = self.named.get(full)
            if found is not None:
                return found
        raise SchemaError(f"unknown Avro type {ref!r}", path)

    def _union(self, items: list[Any], space: str | None, path: str) -> AvroNode:
        branches = [self.parse(item, space, f"{path}[{i}]") for i, item in enumerate(items)]
        seen: set[str] = set()
        for i, b in enumerate(branches):
            if b.type == "union":
                raise SchemaError("a union cannot directly contain a union", f"{path}[{i}]")
            key = b.fullname
            if key in seen:
                raise SchemaError(f"union contains {key!r} twice", f"{path}[{i}]")
            seen.add(key)
        return AvroNode(type="union", path=path, branches=branches)


def _props(obj: dict[str, Any], reserved: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in reserved}


def _opt_str(obj: dict[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise SchemaError(f"'{key}' must be a string, got {json_kind(value)}", f"{path}.{key}")
    return value


def _check_name(name: str, path: str) -> None:
    if not NAME_RE.match(name):
        raise SchemaError(
            f"{name!r} is not a valid Avro name (letters, digits and '_', not starting with a digit)",
            path,
        )
