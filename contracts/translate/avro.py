"""Connect ⇄ Avro, following Confluent's AvroData (``io.confluent.connect.avro.AvroData``).

:func:`connect_to_avro` writes the Avro schema Confluent's AvroConverter registers for a Connect
schema (default converter settings: ``connect.meta.data=true``, no enhanced schema support),
with AvroData's property order:

- optional → ``["null", T]`` (field ``"default": null``), or ``[T, "null"]`` when the Connect
  default is not null;
- ``connect.doc``, ``connect.version``, ``connect.parameters``, ``connect.default``,
  ``connect.name``, ``connect.type`` properties on the non-union type;
- int8/int16 → ``int`` + ``connect.type``; Decimal → ``bytes`` + ``scale``/``precision``
  (``connect.decimal.precision``, default 64) + ``logicalType: decimal``; Date/Time/Timestamp
  → ``date`` / ``time-millis`` / ``timestamp-millis``; every other name (Debezium semantic
  types, vendor names) keeps the base type plus ``connect.name``;
- maps with non-string (or optional) keys → array of ``MapEntry`` records (key, value);
- unnamed structs → ``io.confluent.connect.avro.ConnectDefault``, ``ConnectDefault2``, ... in
  the order AvroData meets them; dotted struct names split into namespace + name;
- a named type met again (Debezium ``before``/``after`` both ``X.Value``) is written once and
  then referenced by its full name.

Avro Java writes a nested definition's ``namespace`` only when it differs from the enclosing
one (``""`` for no namespace inside a namespace); we do the same. It writes references relative
to the enclosing namespace; we write full names, which parse to the same schema.

:func:`avro_to_connect` is AvroData's reverse (``toConnectSchema``).
"""

from __future__ import annotations

import base64
import binascii
import decimal
import json
import math
import warnings
from collections.abc import Mapping
from typing import Any, Final

from contracts.errors import SchemaError
from contracts.logical import (
    CONNECT_DATE_NAME,
    CONNECT_DEFAULT_DECIMAL_PRECISION,
    CONNECT_TIME_NAME,
    CONNECT_TIMESTAMP_NAME,
    DECIMAL_NAME,
    PRECISION_PARAM,
)
from contracts.schema import MISSING, ConnectSchema, json_kind
from contracts.translate.avro_model import (
    NAME_RE,
    AvroNode,
    default_fits,
    loads_json,
    parse_avro,
)

NAMESPACE: Final = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME: Final = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME: Final = f"{NAMESPACE}.{DEFAULT_SCHEMA_NAME}"
MAP_ENTRY_TYPE_NAME: Final = "MapEntry"
UNION_NAME: Final = f"{NAMESPACE}.Union"
ENUM_PARAM: Final = f"{NAMESPACE}.Enum"
RECORD_DOC_PARAM: Final = f"{NAMESPACE}.record.doc"
FIELD_DOC_PREFIX: Final = f"{NAMESPACE}.field.doc."
ENUM_DOC_PREFIX: Final = f"{NAMESPACE}.enum.doc."
ENUM_DEFAULT_PREFIX: Final = f"{NAMESPACE}.enum.default."
FIELD_DEFAULT_FLAG: Final = f"{NAMESPACE}.field.default"
FIXED_SIZE_PARAM: Final = "connect.fixed.size"
INTERNAL_TYPE_PROP: Final = "connect.internal.type"


#: Connect base type → Avro type.
AVRO_BASE_TYPES: Final[Mapping[str, str]] = {
    "boolean": "boolean",
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "long",
    "float": "float",
    "double": "double",
    "bytes": "bytes",
    "string": "string",
}

#: Connect types Avro cannot tell apart from ``int``: AvroData adds ``connect.type``.
CONNECT_TYPE_ANNOTATIONS: Final[Mapping[str, str]] = {"int8": "int8", "int16": "int16"}

#: Kafka Connect logical names (matched case-insensitively, as AvroData does) → (Avro logical
#: type, the Connect base type it requires). Decimal is handled on its own.
AVRO_LOGICAL_TYPES: Final[Mapping[str, tuple[str, str]]] = {
    CONNECT_DATE_NAME.lower(): ("date", "int32"),
    CONNECT_TIME_NAME.lower(): ("time-millis", "int32"),
    CONNECT_TIMESTAMP_NAME.lower(): ("timestamp-millis", "int64"),
}

#: Avro logical type on (Avro type) → the Connect logical schema AvroData reads it back as.
CONNECT_LOGICAL_FROM_AVRO: Final[Mapping[tuple[str, str], str]] = {
    ("int", "date"): CONNECT_DATE_NAME,
    ("int", "time-millis"): CONNECT_TIME_NAME,
    ("long", "timestamp-millis"): CONNECT_TIMESTAMP_NAME,
}

#: Avro types that map to one Connect type (``int``, ``bytes``/``fixed`` and ``enum`` are read
#: by their own functions: ``connect.type``, decimals, fixed sizes and enum symbols).
SIMPLE_FROM_AVRO: Final[Mapping[str, str]] = {
    "boolean": "boolean",
    "long": "int64",
    "float": "float",
    "double": "double",
    "string": "string",
}


# ==============================================================================================
# Connect → Avro
# ==============================================================================================


class AvroDefaultWarning(UserWarning):
    """A default was left out of a translation because it is not a value of its Avro type."""


def connect_to_avro(schema: ConnectSchema) -> Any:
    """The Avro schema (JSON value) Confluent's AvroData derives from a Connect schema.

    Raises :class:`SchemaError` (with the Connect schema path) for schemas AvroData refuses:
    invalid Avro names, a Decimal without ``scale``, a Kafka logical name on the wrong base
    type, two different Connect schemas that map to the same Avro name, or a NaN or infinite
    default (no JSON text holds it). A field default that is not a value of the Avro type it
    gets (e.g. non-null items for an array of optional values, whose union starts with
    ``null``) is left out of the field, as AvroData does, with an :class:`AvroDefaultWarning`;
    ``connect.default`` keeps it.
    """
    out = _ToAvro().convert(schema, None, "$", ignore_optional=False)
    _drop_invalid_defaults(out)
    return out


def _drop_invalid_defaults(avro: Any) -> None:
    """Remove the field defaults Avro's parser would refuse (AvroData catches the refusal and
    writes the field without its default)."""
    seen: set[int] = set()
    stack = [parse_avro(avro)]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for f in node.fields or ():
            if f.has_default and not default_fits(f.type, f.default) and f.raw is not None:
                del f.raw["default"]
                warnings.warn(
                    f"{f.path}: default {json.dumps(f.default)[:80]} is not a value of the "
                    "field's Avro type; the field is written without it, as AvroData does",
                    AvroDefaultWarning,
                    stacklevel=3,
                )
            stack.append(f.type)
        stack.extend(n for n in (node.items, node.values) if n is not None)
        stack.extend(node.branches or ())


def _cache_key(schema: ConnectSchema) -> str:
    return json.dumps(schema.replace(field=None, optional=False).to_json(), sort_keys=True)


def _has_default(schema: ConnectSchema) -> bool:
    """Connect treats a null default as no default."""
    return schema.has_default and schema.default is not None


class _ToAvro:
    """One AvroData ``fromConnectSchema`` run: named types written so far, ConnectDefault index."""

    def __init__(self) -> None:
        self.default_index = 0
        #: Avro full name → (Connect cache key, where it was first defined)
        self.named: dict[str, tuple[str, str]] = {}

    # --- dispatch ---------------------------------------------------------------------------

    def convert(
        self, schema: ConnectSchema, space: str | None, path: str, *, ignore_optional: bool
    ) -> Any:
        if schema.type == "struct":
            if schema.name == UNION_NAME:
                return self._union(schema, space, path)
            if schema.optional:
                return ["null", self._record(schema.as_optional(False), space, path)]
            return self._record(schema, space, path)
        base: Any
        if schema.type == "array":
            assert schema.items is not None
            base = {"type": "array", "items": self._child(schema.items, space, f"{path}.items")}
        elif schema.type == "map":
            base = self._map(schema, space, path)
        elif schema.type == "bytes" and _is_fixed(schema):
            base = self._fixed(schema, space, path)
            if isinstance(base, str):  # already written: a reference carries no properties
                return _wrap_optional(schema, base, ignore_optional)
        else:
            base = {"type": AVRO_BASE_TYPES[schema.type]}
            if _is_decimal(schema):
                scale, precision = _decimal_scale_precision(schema, path)
                base["scale"] = scale
                base["precision"] = precision
        self._metadata(schema, base, path)
        if len(base) == 1:
            base = base["type"]
        return _wrap_optional(schema, base, ignore_optional)

    def _child(self, schema: ConnectSchema, space: str | None, path: str) -> Any:
        return self.convert(schema, space, path, ignore_optional=False)

    # --- named types --------------------------------------------------------------------------

    def _name_for(self, name: str | None, path: str) -> tuple[str | None, str]:
        if name is None:
            self.default_index += 1
            suffix = str(self.default_index) if self.default_index > 1 else ""
            return NAMESPACE, f"{DEFAULT_SCHEMA_NAME}{suffix}"
        namespace, _, short = name.rpartition(".")
        for part in [*(namespace.split(".") if namespace else []), short]:
            if not NAME_RE.match(part):
                raise SchemaError(
                    f"schema name {name!r} is not a valid Avro name "
                    "(dot-separated parts of letters, digits and '_')",
                    f"{path}.name",
                )
        return (namespace or None), short

    def _seen(self, full: str, key: str, space: str | None, path: str) -> str | None:
        """The reference to write if ``full`` was already written (None: define it now)."""
        found = self.named.get(full)
        if found is None:
            self.named[full] = (key, path)
            return None
        if found[0] != key:
            raise SchemaError(
                f"Avro name {full!r} is used by two different Connect schemas "
                f"(first at {found[1]}); Avro needs one definition per name",
                path,
            )
        if "." not in full and space:
            raise SchemaError(
                f"{full!r} has no namespace and repeats inside namespace {space!r}: "
                "Avro cannot reference it",
                path,
            )
        return full

    def _cached_struct(self, key: str) -> str | None:
        for full, (k, _) in self.named.items():
            if k == key:
                return full
        return None

    def _record(self, schema: ConnectSchema, space: str | None, path: str) -> Any:
        key = _cache_key(schema)
        if schema.name is None:
            cached = self._cached_struct(key)
            if cached is not None:
                return cached
        namespace, short = self._name_for(schema.name, path)
        full = f"{namespace}.{short}" if namespace else short
        ref = self._seen(full, key, space, path)
        if ref is not None:
            return ref
        out: dict[str, Any] = {"type": "record", "name": short}
        _write_namespace(out, namespace, space)
        params = schema.params
        if RECORD_DOC_PARAM in params:
            out["doc"] = params[RECORD_DOC_PARAM]
        fields = []
        for i, f in enumerate(schema.fields or ()):
            doc = params.get(f"{FIELD_DOC_PREFIX}{f.field}")
            fields.append(self._field(f, namespace, f"{path}.fields[{i}]", doc))
        out["fields"] = fields
        self._metadata(schema, out, path)
        return out

    def _field(
        self, schema: ConnectSchema, space: str | None, path: str, doc: str | None
    ) -> dict[str, Any]:
        name = schema.field or ""
        if not NAME_RE.match(name):
            raise SchemaError(
                f"field name {name!r} is not a valid Avro name (letters, digits and '_', "
                "not starting with a digit)",
                f"{path}.field",
            )
        avro_type = self._child(schema, space, path)
        out: dict[str, Any] = {"name": name, "type": avro_type}
        if doc is not None:
            out["doc"] = doc
        if _has_default(schema):
            # Avro requires a union default to match the first branch; AvroData drops (with a
            # warning) a default it cannot write, e.g. on an optional struct (["null", record]).
            if not (isinstance(avro_type, list) and avro_type[0] == "null"):
                out["default"] = _default_to_avro(schema, schema.default, f"{path}.default")
        elif schema.optional:
            out["default"] = None
        return out

    def _fixed(self, schema: ConnectSchema, space: str | None, path: str) -> Any:
        namespace, short = self._name_for(schema.name, path)
        full = f"{namespace}.{short}" if namespace else short
        size_text = schema.parameter(FIXED_SIZE_PARAM) or ""
        if not size_text.isdigit():
            raise SchemaError(
                f"parameter {FIXED_SIZE_PARAM} must be a non-negative integer, got {size_text!r}",
                f"{path}.parameters",
            )
        ref = self._seen(full, _cache_key(schema), space, path)
        if ref is not None:
            return ref
        out: dict[str, Any] = {"type": "fixed", "name": short}
        _write_namespace(out, namespace, space)
        out["size"] = int(size_text)
        if _is_decimal(schema):
            # a fixed decimal is still a decimal: readers need its scale and precision
            out["scale"], out["precision"] = _decimal_scale_precision(schema, path)
        return out

    def _map(self, schema: ConnectSchema, space: str | None, path: str) -> Any:
        assert schema.keys is not None and schema.values is not None
        if schema.keys.type == "string" and not schema.keys.optional:
            return {"type": "map", "values": self._child(schema.values, space, f"{path}.values")}
        if schema.name is None:
            namespace: str | None = NAMESPACE
            short = MAP_ENTRY_TYPE_NAME
        else:
            namespace, short = self._name_for(schema.name, path)
        full = f"{namespace}.{short}" if namespace else short
        ref = self._seen(full, _cache_key(schema), space, path)
        if ref is not None:
            return {"type": "array", "items": ref}
        entry: dict[str, Any] = {"type": "record", "name": short}
        _write_namespace(entry, namespace, space)
        entry["fields"] = [
            self._field(schema.keys.as_field("key"), namespace, f"{path}.keys", None),
            self._field(schema.values.as_field("value"), namespace, f"{path}.values", None),
        ]
        if schema.name is not None:
            entry[INTERNAL_TYPE_PROP] = MAP_ENTRY_TYPE_NAME
        return {"type": "array", "items": entry}

    def _union(self, schema: ConnectSchema, space: str | None, path: str) -> list[Any]:
        branches: list[Any] = ["null"] if schema.optional else []
        for i, f in enumerate(schema.fields or ()):
            member = f.as_optional(False).replace(field=None)
            branches.append(
                self.convert(member, space, f"{path}.fields[{i}]", ignore_optional=True)
            )
        return branches

    # --- properties ---------------------------------------------------------------------------

    def _metadata(self, schema: ConnectSchema, out: dict[str, Any], path: str) -> None:
        """AvroData's properties on a non-union type, in AvroData's order."""
        params = schema.params
        if schema.doc is not None:
            out["connect.doc"] = schema.doc
        if schema.version is not None:
            out["connect.version"] = schema.version
        kept = {k: v for k, v in params.items() if k != FIELD_DEFAULT_FLAG}
        if kept:
            out["connect.parameters"] = kept
        if _has_default(schema) and FIELD_DEFAULT_FLAG not in params:
            out["connect.default"] = _default_to_avro(schema, schema.default, f"{path}.default")
        if schema.name is not None:
            out["connect.name"] = schema.name
        annotation = CONNECT_TYPE_ANNOTATIONS.get(schema.type)
        if annotation is not None:
            out["connect.type"] = annotation
        _logical_type(schema, out, path)
        for key, value in params.items():
            if key.startswith("avro"):
                out[key] = value


def _logical_type(schema: ConnectSchema, out: dict[str, Any], path: str) -> None:
    if schema.name is None:
        return
    lowered = schema.name.lower()
    if lowered == DECIMAL_NAME.lower():
        if schema.type != "bytes":
            raise SchemaError(f"{schema.name} must be bytes, not {schema.type}", f"{path}.type")
        scale, precision = _decimal_scale_precision(schema, path)
        if 0 <= scale <= precision:
            out["logicalType"] = "decimal"  # precision and scale are already there
        # An out-of-spec scale (negative, or above the precision): AvroData's legacy path still
        # writes logicalType decimal, which Avro readers (fastavro, Avro Java) reject or drop.
        # We leave it out so the schema parses; connect.name and connect.parameters still say
        # Decimal and its scale, so AvroData's reader restores the same Connect schema.
        return
    found = AVRO_LOGICAL_TYPES.get(lowered)
    if found is None:
        return
    logical, base = found
    if schema.type != base:
        raise SchemaError(f"{schema.name} must be {base}, not {schema.type}", f"{path}.type")
    out["logicalType"] = logical


def _decimal_scale_precision(schema: ConnectSchema, path: str) -> tuple[int, int]:
    raw_scale = schema.parameter("scale")
    if raw_scale is None:
        raise SchemaError(f"{schema.name} needs a 'scale' parameter", f"{path}.parameters")
    raw_precision = schema.parameter(PRECISION_PARAM, str(CONNECT_DEFAULT_DECIMAL_PRECISION))
    try:
        return int(raw_scale), int(raw_precision or "")
    except ValueError:
        raise SchemaError(
            f"decimal scale {raw_scale!r} and precision {raw_precision!r} must be integers",
            f"{path}.parameters",
        ) from None


def _wrap_optional(schema: ConnectSchema, base: Any, ignore_optional: bool) -> Any:
    """AvroData's optional union: null first, unless the default is not null."""
    if ignore_optional or not schema.optional:
        return base
    return [base, "null"] if _has_default(schema) else ["null", base]


def _is_decimal(schema: ConnectSchema) -> bool:
    return schema.name is not None and schema.name.lower() == DECIMAL_NAME.lower()


def _is_fixed(schema: ConnectSchema) -> bool:
    return schema.name is not None and FIXED_SIZE_PARAM in schema.params


def _write_namespace(out: dict[str, Any], namespace: str | None, space: str | None) -> None:
    """Avro Java's rule: write the namespace only where it differs from the enclosing one."""
    if namespace is not None:
        if namespace != space:
            out["namespace"] = namespace
    elif space is not None:
        out["namespace"] = ""


# --- default values ---------------------------------------------------------------------------


def check_default(schema: ConnectSchema, path: str) -> None:
    """Raise :class:`SchemaError` at ``path`` when ``schema``'s default does not fit its type
    (the rule AvroData applies when it writes the default)."""
    if _has_default(schema):
        _default_to_avro(schema, schema.default, path)


def _bad_default(schema: ConnectSchema, value: Any, path: str) -> SchemaError:
    return SchemaError(f"default {json_kind(value)} does not fit a {schema.type} schema", path)


def _default_to_avro(schema: ConnectSchema, value: Any, path: str) -> Any:
    """A Connect default (as JsonConverter writes it) in Avro's JSON form (AvroData rules)."""
    if value is None:
        return None
    t = schema.type
    if t in ("int8", "int16", "int32", "int64"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _bad_default(schema, value, path)
    if t in ("float", "double"):
        if isinstance(value, float) and not math.isfinite(value):
            raise SchemaError(
                f"default {value} is not a JSON number (Avro's and Java's parsers refuse it)", path
            )
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise _bad_default(schema, value, path)
    if t == "boolean":
        if isinstance(value, bool):
            return value
        raise _bad_default(schema, value, path)
    if t == "string":
        if isinstance(value, str):
            return value
        raise _bad_default(schema, value, path)
    if t == "bytes":
        return _bytes_default(schema, value, path).decode("latin-1")
    if t == "array":
        assert schema.items is not None
        if not isinstance(value, list):
            raise _bad_default(schema, value, path)
        return [_default_to_avro(schema.items, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if t == "map":
        return _map_default(schema, value, path)
    return _struct_default(schema, value, path)


def _bytes_default(schema: ConnectSchema, value: Any, path: str) -> bytes:
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise SchemaError("a bytes default must be base64 text", path) from None
    if isinstance(value, int | float) and not isinstance(value, bool) and schema.name:
        # a Decimal default written as a number (decimal.format=NUMERIC)
        scale = int(schema.parameter("scale", "0") or "0")
        unscaled = int(decimal.Decimal(str(value)).scaleb(scale).to_integral_value())
        length = max(1, (unscaled.bit_length() + 8) // 8)
        return unscaled.to_bytes(length, "big", signed=True)
    raise _bad_default(schema, value, path)


def _map_default(schema: ConnectSchema, value: Any, path: str) -> Any:
    assert schema.keys is not None and schema.values is not None
    if schema.keys.type == "string" and not schema.keys.optional:
        if not isinstance(value, dict):
            raise _bad_default(schema, value, path)
        return {k: _default_to_avro(schema.values, v, f"{path}.{k}") for k, v in value.items()}
    pairs = value.items() if isinstance(value, dict) else value
    out = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise SchemaError("a map default with non-string keys must be [key, value] pairs", path)
        out.append(
            [
                _default_to_avro(schema.keys, pair[0], f"{path}[{i}][0]"),
                _default_to_avro(schema.values, pair[1], f"{path}[{i}][1]"),
            ]
        )
    return out


def _struct_default(schema: ConnectSchema, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise _bad_default(schema, value, path)
    node: dict[str, Any] = {}
    for f in schema.fields or ():
        name = f.field or ""
        member = value.get(name)
        if member is None and _has_default(f):
            member = f.default  # Connect's Struct.get: an unset member reads as its default
        converted = _default_to_avro(f, member, f"{path}.{name}")
        if schema.name == UNION_NAME:
            if converted is not None:
                return converted
            continue
        node[name] = converted
    return None if schema.name == UNION_NAME else node


# ==============================================================================================
# Avro → Connect
# ==============================================================================================


def avro_to_connect(avro: Any) -> ConnectSchema:
    """The Connect schema AvroData's ``toConnectSchema`` derives from an Avro schema.

    ``avro`` is the schema's JSON value (or its JSON text). Raises :class:`SchemaError` with
    the JSON path of anything malformed or untranslatable (recursive types, standalone null).
    """
    if isinstance(avro, str) and avro.lstrip().startswith(("{", "[", '"')):
        avro = loads_json(avro, "Avro schema")
    return _to_connect(parse_avro(avro), force_optional=False, field_default=MISSING)


def _to_connect(node: AvroNode, *, force_optional: bool, field_default: Any) -> ConnectSchema:
    if node.type == "union":
        return _union_to_connect(node, force_optional=force_optional, field_default=field_default)
    builder = _base_to_connect(node)
    _read_metadata(node, builder)
    _read_default(node, builder, field_default)
    _read_name(node, builder)
    if force_optional:
        builder["optional"] = True
    return _build(builder)


def _build(b: dict[str, Any]) -> ConnectSchema:
    params = b.get("parameters")
    return ConnectSchema(
        type=b["type"],
        optional=b.get("optional", False),
        name=b.get("name"),
        version=b.get("version"),
        doc=b.get("doc"),
        parameters=tuple(params.items()) if params else None,
        default=b.get("default", MISSING),
        fields=b.get("fields"),
        items=b.get("items"),
        keys=b.get("keys"),
        values=b.get("values"),
    )


def _base_to_connect(node: AvroNode) -> dict[str, Any]:
    t = node.type
    logical = node.logical_type
    if t in ("bytes", "fixed"):
        return _bytes_to_connect(node)
    if t == "int":
        return _int_to_connect(node)
    if t == "long" and logical is not None:
        name = CONNECT_LOGICAL_FROM_AVRO.get((t, logical.lower()))
        if name is not None:
            return {"type": "int64", "name": name, "version": 1}
    if t in SIMPLE_FROM_AVRO:
        return {"type": SIMPLE_FROM_AVRO[t]}
    if t == "enum":
        return _enum_to_connect(node)
    if t == "array":
        return _array_to_connect(node)
    if t == "map":
        assert node.values is not None
        values = _to_connect(node.values, force_optional=False, field_default=MISSING)
        return {"type": "map", "keys": ConnectSchema(type="string"), "values": values}
    if t == "record":
        return _record_to_connect(node)
    raise SchemaError("a standalone null schema cannot be translated to Connect", node.path)


def _bytes_to_connect(node: AvroNode) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "bytes"}
    logical = node.logical_type
    if logical is not None and logical.lower() == "decimal":
        scale = node.props.get("scale")
        scale = scale if isinstance(scale, int) and not isinstance(scale, bool) else 0
        out.update(name=DECIMAL_NAME, version=1, parameters={"scale": str(scale)})
        precision = node.props.get("precision")
        if precision is not None:
            if not isinstance(precision, int) or isinstance(precision, bool):
                raise SchemaError(
                    "decimal 'precision' must be an integer", f"{node.path}.precision"
                )
            if precision != CONNECT_DEFAULT_DECIMAL_PRECISION:
                out["parameters"][PRECISION_PARAM] = str(precision)
    if node.type == "fixed":
        out.setdefault("parameters", {})[FIXED_SIZE_PARAM] = str(node.size)
    return out


def _int_to_connect(node: AvroNode) -> dict[str, Any]:
    annotation = node.props.get("connect.type")
    logical = node.logical_type
    if annotation is None and logical is None:
        return {"type": "int32"}
    if logical is not None:
        name = CONNECT_LOGICAL_FROM_AVRO.get(("int", logical.lower()))
        return {"type": "int32", "name": name, "version": 1} if name else {"type": "int32"}
    if annotation not in CONNECT_TYPE_ANNOTATIONS:
        raise SchemaError(
            f"unknown connect.type annotation {annotation!r} on an Avro int",
            f"{node.path}.connect.type",
        )
    return {"type": annotation}


def _enum_to_connect(node: AvroNode) -> dict[str, Any]:
    params: dict[str, str] = {}
    if node.doc is not None:
        params[f"{ENUM_DOC_PREFIX}{node.name}"] = node.doc
    if node.enum_default is not None:
        params[f"{ENUM_DEFAULT_PREFIX}{node.name}"] = node.enum_default
    params[ENUM_PARAM] = node.fullname
    for symbol in node.symbols or ():
        params[f"{ENUM_PARAM}.{symbol}"] = symbol
    return {"type": "string", "parameters": params}


def _is_map_entry(node: AvroNode) -> bool:
    if node.type != "record":
        return False
    return (node.namespace == NAMESPACE and node.name == MAP_ENTRY_TYPE_NAME) or node.props.get(
        INTERNAL_TYPE_PROP
    ) == MAP_ENTRY_TYPE_NAME


def _array_to_connect(node: AvroNode) -> dict[str, Any]:
    assert node.items is not None
    items = node.items
    if _is_map_entry(items):
        fields = {f.name: f for f in items.fields or ()}
        if len(fields) != 2 or "key" not in fields or "value" not in fields:
            raise SchemaError(
                "a MapEntry array must have exactly the fields 'key' and 'value'", items.path
            )
        keys = _to_connect(fields["key"].type, force_optional=False, field_default=MISSING)
        values = _to_connect(fields["value"].type, force_optional=False, field_default=MISSING)
        return {"type": "map", "keys": keys, "values": values}
    converted = _to_connect(items, force_optional=False, field_default=MISSING)
    return {"type": "array", "items": converted}


def _record_to_connect(node: AvroNode) -> dict[str, Any]:
    params: dict[str, str] = {}
    if node.doc is not None:
        params[RECORD_DOC_PARAM] = node.doc
    fields = []
    for f in node.fields or ():
        if f.doc is not None:
            params[f"{FIELD_DOC_PREFIX}{f.name}"] = f.doc
        schema = _to_connect(f.type, force_optional=False, field_default=f.default)
        fields.append(schema.as_field(f.name))
    out: dict[str, Any] = {"type": "struct", "fields": tuple(fields)}
    if params:
        out["parameters"] = params
    return out


def _union_to_connect(node: AvroNode, *, force_optional: bool, field_default: Any) -> ConnectSchema:
    branches = node.branches or []
    if len(branches) == 1:  # AvroData flattens a one-branch union to its branch
        return _to_connect(branches[0], force_optional=force_optional, field_default=field_default)
    non_null = [b for b in branches if b.type != "null"]
    if len(branches) == 2 and len(non_null) == 1:
        return _to_connect(non_null[0], force_optional=True, field_default=MISSING)
    fields = []
    seen: set[str] = set()
    for b in non_null:
        name = b.name if b.type in ("record", "enum", "fixed") and b.name else b.type
        if name in seen:
            raise SchemaError("two union branches map to the same Connect field name", node.path)
        seen.add(name)
        fields.append(_to_connect(b, force_optional=True, field_default=MISSING).as_field(name))
    builder: dict[str, Any] = {"type": "struct", "name": UNION_NAME, "fields": tuple(fields)}
    if len(non_null) != len(branches) or force_optional:
        builder["optional"] = True
    if field_default is not MISSING:
        builder["parameters"] = {FIELD_DEFAULT_FLAG: "true"}
    return _build(builder)


def _read_metadata(node: AvroNode, b: dict[str, Any]) -> None:
    props = node.props
    doc = props.get("connect.doc")
    if isinstance(doc, str):
        b["doc"] = doc
    if "connect.version" in props:
        version = props["connect.version"]
        if not isinstance(version, int) or isinstance(version, bool):
            raise SchemaError("connect.version must be an integer", f"{node.path}.connect.version")
        if b.get("version") is not None and b["version"] != version:
            raise SchemaError(
                f"connect.version {version} differs from the logical type's version {b['version']}",
                f"{node.path}.connect.version",
            )
        b["version"] = version
    params = props.get("connect.parameters")
    if params is not None:
        if not isinstance(params, dict):
            raise SchemaError(
                "connect.parameters must be an object", f"{node.path}.connect.parameters"
            )
        target = b.setdefault("parameters", {})
        for k, v in params.items():
            if not isinstance(v, str):
                raise SchemaError(
                    "connect.parameters values must be strings",
                    f"{node.path}.connect.parameters.{k}",
                )
            target[k] = v
    for key, value in props.items():
        if key.startswith("avro"):
            b.setdefault("parameters", {})[key] = (
                value if isinstance(value, str) else json.dumps(value)
            )


def _read_default(node: AvroNode, b: dict[str, Any], field_default: Any) -> None:
    """The Connect default: the field's Avro default, else ``connect.default``; one that is not
    a value of the Avro type is ignored (with an :class:`AvroDefaultWarning`), as AvroData
    ignores it."""
    connect_default = node.props.get("connect.default", MISSING)
    if field_default is not MISSING and not default_fits(node, field_default):
        _ignored_default(node, field_default)
        field_default = MISSING
    if connect_default is not MISSING and not default_fits(node, connect_default):
        _ignored_default(node, connect_default)
        connect_default = MISSING
    value = field_default
    if field_default is MISSING:
        value = connect_default
    elif connect_default is MISSING:
        b.setdefault("parameters", {})[FIELD_DEFAULT_FLAG] = "true"
    if value is MISSING or value is None:
        return
    b["default"] = _default_from_avro(node, value)


def _ignored_default(node: AvroNode, value: Any) -> None:
    warnings.warn(
        f"{node.path}: default {json.dumps(value)[:80]} is not a value of its Avro type "
        f"{node.type}; ignored, as AvroData ignores it",
        AvroDefaultWarning,
        stacklevel=5,
    )


def _is_avro_decimal(node: AvroNode) -> bool:
    logical = node.logical_type
    return node.type in ("bytes", "fixed") and logical is not None and logical.lower() == "decimal"


def _read_name(node: AvroNode, b: dict[str, Any]) -> None:
    name = node.props.get("connect.name")
    if name is not None and not isinstance(name, str):
        raise SchemaError("connect.name must be a string", f"{node.path}.connect.name")
    if name is None and node.type in ("record", "enum", "fixed") and not _is_avro_decimal(node):
        name = node.fullname  # a fixed decimal is named Decimal whatever the fixed's own name
    if name is None or name.startswith(DEFAULT_SCHEMA_FULL_NAME):
        return
    if b.get("name") is not None and b["name"] != name:
        raise SchemaError(
            f"connect.name {name!r} differs from the logical type {b['name']!r}",
            f"{node.path}.connect.name",
        )
    b["name"] = name


def _default_from_avro(node: AvroNode, value: Any) -> Any:
    """An Avro default (JSON) in the form JsonConverter writes Connect defaults."""
    t = node.type
    if value is None:
        return None
    if t in ("bytes", "fixed") and isinstance(value, str):
        return base64.b64encode(value.encode("latin-1")).decode("ascii")
    if t == "array" and isinstance(value, list) and node.items is not None:
        items = node.items
        return [_default_from_avro(items, v) for v in value]
    if t == "map" and isinstance(value, dict) and node.values is not None:
        values = node.values
        return {k: _default_from_avro(values, v) for k, v in value.items()}
    if t == "record" and isinstance(value, dict):
        # a member the default leaves out takes the member's own default (Avro's rule)
        return {
            f.name: _default_from_avro(f.type, value.get(f.name, f.default))
            for f in node.fields or ()
        }
    if t == "union" and node.branches:
        first = node.branches[0]
        return None if first.type == "null" else _default_from_avro(first, value)
    return value
