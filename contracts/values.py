"""Decoding wire values by their Connect schema, and writing decoded values as JSON.

:func:`compile_decoder` turns a schema into a fast closure once (formats cache it per distinct
schema), so decoding a message costs no schema walk. Errors carry the JSON path of the value.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import sys
from collections.abc import Callable, Mapping
from typing import Any

from contracts.errors import DecodeError
from contracts.logical import FLOAT32_MAX, decode_base, fast_decoder, lookup
from contracts.schema import ConnectSchema, json_kind

ValueDecoder = Callable[[Any, str], Any]


def compile_decoder(schema: ConnectSchema) -> ValueDecoder:
    """A function ``(wire_value, json_path) -> python_value`` for ``schema``.

    Nulls are accepted where the schema is optional (or has a default) and rejected otherwise.
    Struct values must be JSON objects; unknown keys are rejected (schema drift).
    """
    inner = _compile_non_null(schema)
    nullable = schema.optional
    exact = _EXACT_PY_TYPES.get(schema.type) if lookup(schema) is None else None

    if exact is not None:
        # Hot path: a primitive whose wire value already has the right Python type.
        def decode_fast(value: Any, path: str) -> Any:
            if type(value) is exact:
                return value
            if value is None:
                if nullable:
                    return None
                raise DecodeError("null is not allowed for a required value", path)
            return inner(value, path)

        return decode_fast

    logical = lookup(schema)
    if logical is not None:
        # One closure per logical column (no wrapper): these run for every value.
        fast = fast_decoder(schema)
        if fast is None:
            generic = logical.decode

            def generic_for_schema(value: Any) -> Any:
                return generic(value, schema)

            fast = generic_for_schema
        fn = fast
        # an integer logical type (Year, Date, the epoch counts) holds its base type's range
        # first, as Connect's and Spark's typed readers do
        ranged = schema.type in _INT_BOUNDS
        int_low, int_high = _INT_BOUNDS.get(schema.type, (0, 0))

        def decode_logical(value: Any, path: str) -> Any:
            if value is None:
                if nullable:
                    return None
                raise DecodeError("null is not allowed for a required value", path)
            if ranged and type(value) is int and not int_low <= value <= int_high:
                raise DecodeError(
                    f"{value} is not in the {schema.type} range ({schema.name})", path
                )
            try:
                return fn(value)
            except DecodeError as err:
                raise DecodeError(f"{err.what} ({schema.name})", path) from None

        return decode_logical

    bounds = _INT_BOUNDS.get(schema.type) or _FLOAT_BOUNDS.get(schema.type)
    if bounds is not None:
        low, high = bounds
        kind = type(low)

        def decode_bounded(value: Any, path: str) -> Any:
            if type(value) is kind and low <= value <= high:
                return value
            if value is None:
                if nullable:
                    return None
                raise DecodeError("null is not allowed for a required value", path)
            return inner(value, path)

        return decode_bounded

    def decode(value: Any, path: str) -> Any:
        if value is None:
            if nullable:
                return None
            raise DecodeError("null is not allowed for a required value", path)
        return inner(value, path)

    return decode


#: Connect types whose wire value passes unchanged when it has exactly this Python type
#: (ints and float32 still go through a range check; see decode_base).
_EXACT_PY_TYPES: dict[str, type] = {
    "string": str,
    "boolean": bool,
}
#: Floating columns pass a float within these bounds unchanged (others, float32 overflows
#: among them, take the checked path of decode_base).
_FLOAT_BOUNDS: dict[str, tuple[float, float]] = {
    "float": (-FLOAT32_MAX, FLOAT32_MAX),
    "double": (-sys.float_info.max, sys.float_info.max),
}
_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _compile_non_null(schema: ConnectSchema) -> ValueDecoder:
    logical = lookup(schema)
    if logical is not None:
        fn = logical.decode

        def decode_logical(value: Any, path: str) -> Any:
            try:
                return fn(value, schema)
            except DecodeError as err:
                raise DecodeError(f"{err.what} ({schema.name})", path) from None

        return decode_logical
    if schema.type == "struct":
        return _compile_struct(schema)
    if schema.type == "array":
        return _compile_array(schema)
    if schema.type == "map":
        return _compile_map(schema)

    def decode_primitive(value: Any, path: str) -> Any:
        try:
            return decode_base(value, schema)
        except DecodeError as err:
            raise DecodeError(err.what, path) from None

    return decode_primitive


def _compile_struct(schema: ConnectSchema) -> ValueDecoder:
    fields = [(f.field or "", compile_decoder(f), f) for f in schema.fields or ()]
    general = _general_struct(fields)
    return _generated_struct(fields, general)


StructField = tuple[str, ValueDecoder, ConnectSchema]


def _general_struct(fields: list[StructField]) -> ValueDecoder:
    """The complete struct decoder: defaults for absent fields, missing and extra fields."""
    names = {name for name, _, _ in fields}

    def decode_struct(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise DecodeError(f"expected an object, got {json_kind(value)}", path)
        out: dict[str, Any] = {}
        for name, dec, field_schema in fields:
            if name in value:
                out[name] = dec(value[name], f"{path}.{name}")
            elif field_schema.optional or field_schema.has_default:
                out[name] = field_schema.default if field_schema.has_default else None
            else:
                raise DecodeError(f"required field {name!r} is missing", path)
        if len(value) > len(names):
            extra = sorted(set(value) - names)
            if extra:
                raise DecodeError(f"unexpected field(s) {', '.join(extra)}", path)
        return out

    return decode_struct


def _generated_struct(fields: list[StructField], general: ValueDecoder) -> ValueDecoder:
    """A struct decoder generated as Python source for this one struct.

    The common case (a plain ``dict`` holding exactly the declared fields) reads each field
    into a local, checks plain values inline (exact Python type, integer range), calls a
    logical type's specialized decoder directly on non-null values and the field's compiled
    decoder for anything else. When any of that raises :class:`DecodeError`, or the value is
    not such a dict, ``general`` decodes the value again: it reports the first bad field with
    its JSON path, and missing and extra fields.
    """
    namespace: dict[str, Any] = {
        "names": {name for name, _, _ in fields},
        "general": general,
        "DecodeError": DecodeError,
    }
    body: list[str] = []
    for i, (name, dec, field_schema) in enumerate(fields):
        namespace[f"d{i}"] = dec
        var, call = f"v{i}", f"d{i}(v{i}, path + {'.' + name!r})"
        body.append(f"        {var} = value[{name!r}]")
        fast = fast_decoder(field_schema)
        check = _inline_check(field_schema, var)
        if fast is not None:
            namespace[f"f{i}"] = fast
            ready = f"{var} is not None"
            bounds = _INT_BOUNDS.get(field_schema.type)
            if bounds is not None:  # beyond the base type's range: the full decoder refuses it
                ready = f"type({var}) is int and {bounds[0]} <= {var} <= {bounds[1]}"
            body.append(f"        {var} = f{i}({var}) if {ready} else {call}")
        elif check is not None:
            body.append(f"        if {check}:")
            body.append(f"            {var} = {call}")
        else:
            body.append(f"        {var} = {call}")
    items = ", ".join(f"{name!r}: v{i}" for i, (name, _, _) in enumerate(fields))
    source = "\n".join(
        [
            "def decode_struct(value, path):",
            "    if type(value) is not dict or value.keys() != names:",
            "        return general(value, path)",
            "    try:",
            *(body or ["        pass"]),
            "    except DecodeError:",
            "        return general(value, path)",
            f"    return {{{items}}}",
        ]
    )
    # The source is ours: names and paths enter only as repr() literals.
    exec(compile(source, "<struct decoder>", "exec"), namespace)
    decoder: ValueDecoder = namespace["decode_struct"]
    return decoder


def _inline_check(schema: ConnectSchema, var: str) -> str | None:
    """Source of a condition that is False when ``var`` needs no decoding (None: always decode)."""
    if lookup(schema) is not None:
        return None
    floating = _FLOAT_BOUNDS.get(schema.type)
    if floating is not None:  # beyond the column's range (or not finite): checked
        low, high = floating
        return f"type({var}) is not float or not {low!r} <= {var} <= {high!r}"
    exact = _EXACT_PY_TYPES.get(schema.type)
    if exact is not None:
        return f"type({var}) is not {exact.__name__}"
    bounds = _INT_BOUNDS.get(schema.type)
    if bounds is not None:
        return f"type({var}) is not int or not {bounds[0]} <= {var} <= {bounds[1]}"
    return None


def _compile_array(schema: ConnectSchema) -> ValueDecoder:
    assert schema.items is not None
    item = compile_decoder(schema.items)

    def decode_array(value: Any, path: str) -> Any:
        if not isinstance(value, list):
            raise DecodeError(f"expected an array, got {json_kind(value)}", path)
        return [item(v, f"{path}[{i}]") for i, v in enumerate(value)]

    return decode_array


def _compile_map(schema: ConnectSchema) -> ValueDecoder:
    assert schema.keys is not None and schema.values is not None
    key_dec = compile_decoder(schema.keys)
    val_dec = compile_decoder(schema.values)
    string_keys = schema.keys.type == "string"

    def decode_map(value: Any, path: str) -> Any:
        # JsonConverter writes string-keyed maps as objects, others as [[k, v], ...] arrays.
        if isinstance(value, dict):
            pairs = list(value.items())
        elif isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 for p in value):
            pairs = [(p[0], p[1]) for p in value]
        else:
            raise DecodeError(f"expected a map, got {json_kind(value)}", path)
        out: dict[Any, Any] = {}
        for k, v in pairs:
            key = k if string_keys else key_dec(_coerce_key(k, schema.keys), f"{path}{{key}}")
            out[key] = val_dec(v, f"{path}.{k}")
        return out

    return decode_map


def _coerce_key(key: Any, schema: ConnectSchema | None) -> Any:
    if isinstance(key, str) and schema is not None and schema.type.startswith("int"):
        try:
            return int(key)
        except ValueError:
            return key
    return key


def decode_value(value: Any, schema: ConnectSchema, path: str = "$") -> Any:
    """Decode one wire value (convenience; compile once with :func:`compile_decoder` in loops)."""
    return compile_decoder(schema)(value, path)


# --- writing decoded values as JSON -----------------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """A decoded value as plain JSON: decimals as strings, temporal values as ISO-8601,
    bytes as base64."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, decimal.Decimal):
        return _decimal_text(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return str(value)


def _decimal_text(value: decimal.Decimal) -> str:
    text = format(value, "f")
    return text
