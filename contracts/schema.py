"""The Kafka Connect schema model, exactly as Kafka's JsonConverter writes it.

A :class:`ConnectSchema` is an immutable value. :func:`parse_connect` reads the JSON form
(``{"type": "struct", "fields": [...], "optional": false, "name": ...}``) and reports the JSON
path of anything malformed; :meth:`ConnectSchema.to_json` writes it back so that parsing then
dumping any embedded schema reproduces it (equal JSON value, key order aside).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from contracts.errors import SchemaError

#: The Connect types, as JsonConverter spells them.
PRIMITIVE_TYPES: Final = frozenset(
    {"boolean", "int8", "int16", "int32", "int64", "float", "double", "bytes", "string"}
)
CONTAINER_TYPES: Final = frozenset({"array", "map", "struct"})
CONNECT_TYPES: Final = PRIMITIVE_TYPES | CONTAINER_TYPES

#: Spellings seen in the wild, mapped to the canonical Connect type.
TYPE_ALIASES: Final[Mapping[str, str]] = {
    "float32": "float",
    "float64": "double",
    "bool": "boolean",
}

_KNOWN_KEYS: Final = frozenset(
    {
        "type",
        "optional",
        "name",
        "version",
        "doc",
        "parameters",
        "default",
        "field",
        "fields",
        "items",
        "keys",
        "values",
    }
)


class _Missing:
    """Sentinel type for an absent ``default`` (a JSON ``null`` default is a real value)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True, eq=True)
class ConnectSchema:
    """One Connect schema: a primitive, an array, a map or a struct, with its attributes.

    ``field`` is set when the schema is a field of a struct. ``parameters`` is kept as a tuple of
    pairs so that the model stays immutable; use :meth:`parameter` or :attr:`params` to read it.
    """

    type: str
    optional: bool = False
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: tuple[tuple[str, str], ...] | None = None
    default: Any = MISSING
    field: str | None = None
    fields: tuple[ConnectSchema, ...] | None = None
    items: ConnectSchema | None = None
    keys: ConnectSchema | None = None
    values: ConnectSchema | None = None

    # --- reading -----------------------------------------------------------------------------

    @property
    def params(self) -> dict[str, str]:
        """The ``parameters`` as a fresh dict (empty when there are none)."""
        return dict(self.parameters or ())

    def parameter(self, key: str, fallback: str | None = None) -> str | None:
        """One parameter's value, or ``fallback``."""
        for k, v in self.parameters or ():
            if k == key:
                return v
        return fallback

    @property
    def has_default(self) -> bool:
        """Whether the schema declares a default (which may be ``null``)."""
        return self.default is not MISSING

    @property
    def is_struct(self) -> bool:
        return self.type == "struct"

    def describe(self, detail: bool = False) -> str:
        """The type in a few words: ``int64``, ``Decimal(10,2)``, ``MicroTimestamp (int64)``,
        ``array<string>``. ``detail`` adds what sets two columns of that type apart (whether
        it is optional, the other parameters): ``optional Enum (string) allowed=a,b``."""
        from contracts.logical import decimal_precision, decimal_scale, lookup

        logical = lookup(self)
        decimal = logical is not None and logical.kind == "decimal" and logical.unit == "unscaled"
        if decimal:
            p = decimal_precision(self)
            text = f"Decimal({p if p is not None else '?'},{decimal_scale(self)})"
        elif self.name:
            text = f"{self.name.rsplit('.', 1)[-1]} ({self.type})"
        elif self.type == "array" and self.items is not None:
            text = f"array<{self.items.describe(detail)}>"
        elif self.type == "map" and self.keys is not None and self.values is not None:
            text = f"map<{self.keys.describe(detail)},{self.values.describe(detail)}>"
        else:
            text = self.type
        if not detail:
            return text
        shown = [
            f"{k}={v}"
            for k, v in self.parameters or ()
            if not (decimal and k in ("scale", "connect.decimal.precision"))
        ]
        return (
            ("optional " if self.optional else "required ")
            + text
            + (" " + ",".join(shown) if shown else "")
        )

    def field_names(self) -> list[str]:
        """Names of a struct's fields, in order."""
        return [f.field or "" for f in self.fields or ()]

    def get_field(self, name: str) -> ConnectSchema | None:
        """The struct field called ``name``, or None."""
        for f in self.fields or ():
            if f.field == name:
                return f
        return None

    def require_field(self, name: str) -> ConnectSchema:
        """The struct field called ``name``; raises :class:`SchemaError` when absent."""
        found = self.get_field(name)
        if found is None:
            raise SchemaError(f"struct {self.name or '(unnamed)'} has no field {name!r}")
        return found

    def walk(self, path: str = "") -> Iterator[tuple[str, ConnectSchema]]:
        """Every schema in the tree with a dotted path (``after.amount``, ``tags[]``)."""
        yield path, self
        if self.fields is not None:
            for f in self.fields:
                yield from f.walk(f"{path}.{f.field}" if path else f.field or "")
        if self.items is not None:
            yield from self.items.walk(f"{path}[]")
        if self.keys is not None:
            yield from self.keys.walk(f"{path}{{key}}")
        if self.values is not None:
            yield from self.values.walk(f"{path}{{value}}")

    # --- changing (returns copies) ------------------------------------------------------------

    def replace(self, **changes: Any) -> ConnectSchema:
        """A copy with some attributes changed."""
        return dataclasses.replace(self, **changes)

    def as_field(self, name: str) -> ConnectSchema:
        """This schema as a struct field called ``name``."""
        return dataclasses.replace(self, field=name)

    def as_optional(self, optional: bool = True) -> ConnectSchema:
        """This schema with ``optional`` set."""
        return dataclasses.replace(self, optional=optional)

    # --- writing ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The JSON value JsonConverter would write for this schema."""
        out: dict[str, Any] = {"type": self.type}
        if self.fields is not None:
            out["fields"] = [f.to_json() for f in self.fields]
        if self.items is not None:
            out["items"] = self.items.to_json()
        if self.keys is not None:
            out["keys"] = self.keys.to_json()
        if self.values is not None:
            out["values"] = self.values.to_json()
        out["optional"] = self.optional
        if self.name is not None:
            out["name"] = self.name
        if self.version is not None:
            out["version"] = self.version
        if self.doc is not None:
            out["doc"] = self.doc
        if self.parameters is not None:
            out["parameters"] = dict(self.parameters)
        if self.has_default:
            out["default"] = self.default
        if self.field is not None:
            out["field"] = self.field
        return out


def struct(
    fields: list[ConnectSchema] | tuple[ConnectSchema, ...],
    *,
    name: str | None = None,
    optional: bool = False,
    field: str | None = None,
    doc: str | None = None,
    version: int | None = None,
) -> ConnectSchema:
    """Build a struct schema from field schemas (each with ``field`` set)."""
    return ConnectSchema(
        type="struct",
        fields=tuple(fields),
        name=name,
        optional=optional,
        field=field,
        doc=doc,
        version=version,
    )


def primitive(
    type_: str,
    *,
    optional: bool = False,
    field: str | None = None,
    name: str | None = None,
    version: int | None = None,
    parameters: Mapping[str, str] | None = None,
) -> ConnectSchema:
    """Build a primitive (possibly logical) schema."""
    return ConnectSchema(
        type=type_,
        optional=optional,
        field=field,
        name=name,
        version=version,
        parameters=tuple(parameters.items()) if parameters is not None else None,
    )


def parse_connect(obj: Any, path: str = "$") -> ConnectSchema:
    """Parse a Connect schema from its JSON value.

    Raises :class:`SchemaError` naming the JSON path of the first problem found.
    """
    if isinstance(obj, str):
        return ConnectSchema(type=_canonical_type(obj, path))
    if not isinstance(obj, dict):
        raise SchemaError(f"expected a schema object, got {_json_kind(obj)}", path)
    unknown = set(obj) - _KNOWN_KEYS
    if unknown:
        raise SchemaError(f"unknown schema attribute(s) {', '.join(sorted(unknown))}", path)
    if "type" not in obj:
        raise SchemaError("schema has no 'type'", path)
    type_ = _canonical_type(obj["type"], f"{path}.type")
    return ConnectSchema(
        type=type_,
        optional=_optional_bool(obj, "optional", path),
        name=_optional_str(obj, "name", path),
        version=_optional_int(obj, "version", path),
        doc=_optional_str(obj, "doc", path),
        parameters=_parameters(obj, path),
        default=obj.get("default", MISSING),
        field=_optional_str(obj, "field", path),
        fields=_fields(obj, type_, path),
        items=_child(obj, "items", type_, "array", path),
        keys=_child(obj, "keys", type_, "map", path),
        values=_child(obj, "values", type_, "map", path),
    )


def _canonical_type(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise SchemaError(f"'type' must be a string, got {_json_kind(value)}", path)
    canonical = TYPE_ALIASES.get(value, value)
    if canonical not in CONNECT_TYPES:
        known = ", ".join(sorted(CONNECT_TYPES))
        raise SchemaError(f"unknown Connect type {value!r} (expected one of {known})", path)
    return canonical


def _optional_bool(obj: Mapping[str, Any], key: str, path: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise SchemaError(
            f"'{key}' must be true or false, got {_json_kind(value)}", f"{path}.{key}"
        )
    return value


def _optional_str(obj: Mapping[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise SchemaError(f"'{key}' must be a string, got {_json_kind(value)}", f"{path}.{key}")
    return value


def _optional_int(obj: Mapping[str, Any], key: str, path: str) -> int | None:
    value = obj.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise SchemaError(f"'{key}' must be an integer, got {_json_kind(value)}", f"{path}.{key}")
    return value


def _parameters(obj: Mapping[str, Any], path: str) -> tuple[tuple[str, str], ...] | None:
    value = obj.get("parameters")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SchemaError(
            f"'parameters' must be an object of strings, got {_json_kind(value)}",
            f"{path}.parameters",
        )
    for k, v in value.items():
        if not isinstance(v, str):
            raise SchemaError(
                f"parameter values must be strings, got {_json_kind(v)}", f"{path}.parameters.{k}"
            )
    return tuple(value.items())


def _fields(obj: Mapping[str, Any], type_: str, path: str) -> tuple[ConnectSchema, ...] | None:
    if type_ != "struct":
        if "fields" in obj:
            raise SchemaError(f"'fields' is only allowed on a struct, not on {type_}", path)
        return None
    raw = obj.get("fields")
    if raw is None:
        raise SchemaError("a struct needs 'fields'", path)
    if not isinstance(raw, list):
        raise SchemaError(f"'fields' must be an array, got {_json_kind(raw)}", f"{path}.fields")
    out: list[ConnectSchema] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        child_path = f"{path}.fields[{i}]"
        child = parse_connect(item, child_path)
        if not child.field:
            # Connect's SchemaBuilder refuses an empty field name too
            raise SchemaError("a struct field needs a non-empty 'field' name", child_path)
        if child.field in seen:
            raise SchemaError(f"duplicate field name {child.field!r}", f"{child_path}.field")
        seen.add(child.field)
        out.append(child)
    return tuple(out)


def _child(
    obj: Mapping[str, Any], key: str, type_: str, owner: str, path: str
) -> ConnectSchema | None:
    if type_ != owner:
        if key in obj:
            raise SchemaError(f"'{key}' is only allowed on {owner}, not on {type_}", path)
        return None
    if key not in obj:
        raise SchemaError(f"{owner} schema needs '{key}'", path)
    return parse_connect(obj[key], f"{path}.{key}")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def json_kind(value: Any) -> str:
    """Describe a JSON value's kind for error messages ("a string", "an array", "null")."""
    return _json_kind(value)
