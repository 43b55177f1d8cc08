"""Spark type JSON (as ``DataType.jsonValue()`` writes it) from Connect and Avro, and back.

- :func:`connect_to_spark` — two views of a Connect schema: ``decoded`` (what jobs want:
  dates, timestamps, decimals) and ``wire`` (what ``from_json`` must parse on the wire:
  longs, base64 strings, ISO strings).
- :func:`avro_to_spark` — what spark-avro's ``SchemaConverters.toSqlType`` (and so
  ``from_avro``) yields for an Avro schema.
- :func:`spark_to_connect` — a Connect schema for teams starting from a Spark table.

Spark JSON: a primitive is its type name (``"long"``, ``"decimal(10,2)"``); a struct is
``{"type": "struct", "fields": [{"name", "type", "nullable", "metadata"}]}``; an array is
``{"type": "array", "elementType", "containsNull"}``; a map is ``{"type": "map", "keyType",
"valueType", "valueContainsNull"}``. Nothing here imports pyspark.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Mapping
from typing import Any, Final, Literal

from contracts.errors import SchemaError
from contracts.logical import (
    CONNECT_DATE_NAME,
    DECIMAL_NAME,
    MAX_SPARK_DECIMAL_PRECISION,
    MICRO_TIMESTAMP_NAME,
    PRECISION_PARAM,
    SPARK_BASE_TYPES,
    SPARK_WIRE_BASE_TYPES,
    LogicalTypeWarning,
    lookup_or_warn,
)
from contracts.schema import ConnectSchema, json_kind
from contracts.translate.avro_model import AvroNode, loads_json, parse_avro

View = Literal["decoded", "wire"]

#: Spark's catalyst-type property on Avro int/long types (set by Spark's own Avro writer).
CATALYST_TYPE_PROP: Final = "spark.sql.catalyst.type"
#: Spark's own logical type: a long holding the unscaled value of decimal(precision, scale)
CUSTOM_DECIMAL: Final = "custom-decimal"


def struct_field(name: str, type_: Any, nullable: bool) -> dict[str, Any]:
    """One StructField as ``StructField.jsonValue()`` writes it."""
    return {"name": name, "type": type_, "nullable": nullable, "metadata": {}}


def array_type(element: Any, contains_null: bool) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": contains_null}


def map_type(key: Any, value: Any, value_contains_null: bool) -> dict[str, Any]:
    return {
        "type": "map",
        "keyType": key,
        "valueType": value,
        "valueContainsNull": value_contains_null,
    }


# ==============================================================================================
# Connect → Spark
# ==============================================================================================


def connect_to_spark(schema: ConnectSchema, view: View = "decoded") -> Any:
    """The Spark type JSON for a Connect schema; a struct gives a StructType dict.

    ``decoded``: logical types become their Spark types (Decimal → ``decimal(p,s)`` with p
    capped at 38 and a :class:`LogicalTypeWarning` when unknown or larger; Date → ``date``;
    timestamps → ``timestamp``); int8 → ``byte``, int16 → ``short``; maps keep their key type.
    ``wire``: the types ``from_json`` parses in the JSON JsonConverter writes: bytes and
    Decimal are base64 ``string``, temporal types their base ``integer``/``long``/``string``,
    and maps with non-string keys (written as ``[[key, value], ...]``) arrays of string pairs.
    """
    if view not in ("decoded", "wire"):
        raise SchemaError(f"unknown Spark view {view!r} (expected decoded or wire)")
    return _connect_type(schema, view)


def _connect_type(schema: ConnectSchema, view: View) -> Any:
    entry = lookup_or_warn(schema) if schema.name is not None else None
    if entry is not None:
        if view == "decoded" and entry.spark is not None:
            return entry.spark(schema) if callable(entry.spark) else entry.spark
        if view == "wire" and entry.spark_wire is not None:
            return entry.spark_wire
    if schema.type == "struct":
        return {
            "type": "struct",
            "fields": [
                struct_field(f.field or "", _connect_type(f, view), f.optional)
                for f in schema.fields or ()
            ],
        }
    if schema.type == "array":
        assert schema.items is not None
        return array_type(_connect_type(schema.items, view), schema.items.optional)
    if schema.type == "map":
        assert schema.keys is not None and schema.values is not None
        if view == "wire" and schema.keys.type != "string":
            return array_type(array_type("string", True), False)
        return map_type(
            _connect_type(schema.keys, view),
            _connect_type(schema.values, view),
            schema.values.optional,
        )
    table = SPARK_BASE_TYPES if view == "decoded" else SPARK_WIRE_BASE_TYPES
    return table[schema.type]


# ==============================================================================================
# Avro → Spark (spark-avro SchemaConverters.toSqlType)
# ==============================================================================================


def avro_to_spark(avro: Any) -> Any:
    """The Spark type JSON spark-avro's ``SchemaConverters.toSqlType`` gives an Avro schema.

    Union with null → nullable; ``[int, long]`` → long; ``[float, double]`` → double; other
    unions → struct ``member0, member1, ...`` (all nullable); enum → string; fixed/bytes →
    binary; decimal → ``decimal(p,s)``; date → date; timestamp-millis/micros → timestamp;
    local-timestamp-millis/micros → timestamp_ntz; map → map<string, V>. Logical types Avro
    Java rejects (e.g. ``date`` on a long) are ignored, as Spark ignores them. A decimal wider
    than Spark's 38 digits raises :class:`SchemaError` (``from_avro`` fails on it too).
    """
    if isinstance(avro, str) and avro.lstrip().startswith(("{", "[", '"')):
        avro = loads_json(avro, "Avro schema")
    type_, _nullable = _sql_type(parse_avro(avro))
    return type_


#: Avro primitive → Spark type, before logical types.
_AVRO_PRIMITIVE_SPARK: Final[Mapping[str, str]] = {
    "boolean": "boolean",
    "int": "integer",
    "long": "long",
    "float": "float",
    "double": "double",
    "bytes": "binary",
    "fixed": "binary",
    "string": "string",
    "enum": "string",
}

#: (Avro type, logicalType) → Spark type, for the logical types SchemaConverters maps.
_AVRO_LOGICAL_SPARK: Final[Mapping[tuple[str, str], str]] = {
    ("int", "date"): "date",
    ("long", "timestamp-millis"): "timestamp",
    ("long", "timestamp-micros"): "timestamp",
    ("long", "local-timestamp-millis"): "timestamp_ntz",
    ("long", "local-timestamp-micros"): "timestamp_ntz",
}


def _sql_type(node: AvroNode) -> tuple[Any, bool]:
    t = node.type
    if t == "null":
        return "void", True
    if t == "record":
        fields = []
        for f in node.fields or ():
            ftype, nullable = _sql_type(f.type)
            fields.append(struct_field(f.name, ftype, nullable))
        return {"type": "struct", "fields": fields}, False
    if t == "array":
        assert node.items is not None
        element, contains_null = _sql_type(node.items)
        return array_type(element, contains_null), False
    if t == "map":
        assert node.values is not None
        value, value_null = _sql_type(node.values)
        return map_type("string", value, value_null), False
    if t == "union":
        return _sql_union(node)
    logical = node.logical_type
    if logical is not None:
        if t in ("bytes", "fixed") and logical == "decimal":
            decimal_type = _avro_decimal(node)
            if decimal_type is not None:
                return decimal_type, False
        if t == "long" and logical == CUSTOM_DECIMAL:
            custom = _custom_decimal(node)
            if custom is not None:
                return custom, False
        found = _AVRO_LOGICAL_SPARK.get((t, logical))
        if found is not None:
            return found, False
    if t in ("int", "long") and isinstance(node.props.get(CATALYST_TYPE_PROP), str):
        return _catalyst_type(node.props[CATALYST_TYPE_PROP], node.path), False
    return _AVRO_PRIMITIVE_SPARK[t], False


def _sql_union(node: AvroNode) -> tuple[Any, bool]:
    branches = node.branches or []
    non_null = [b for b in branches if b.type != "null"]
    if len(non_null) != len(branches):
        if len(non_null) == 1:
            type_, _ = _sql_type(non_null[0])
        else:
            type_, _ = _sql_union(AvroNode(type="union", path=node.path, branches=non_null))
        return type_, True
    kinds = {b.type for b in branches}
    if len(branches) == 1:
        return _sql_type(branches[0])
    if len(branches) == 2 and kinds == {"int", "long"}:
        return "long", False
    if len(branches) == 2 and kinds == {"float", "double"}:
        return "double", False
    fields = [struct_field(f"member{i}", _sql_type(b)[0], True) for i, b in enumerate(branches)]
    return {"type": "struct", "fields": fields}, False


def _custom_decimal(node: AvroNode) -> str | None:
    """Spark's own ``custom-decimal`` on a long (the unscaled value): decimal(p,s) when its
    precision and scale are valid for Spark (0 < p <= 38, 0 <= s <= p), else None (a long)."""
    precision, scale = node.props.get("precision"), node.props.get("scale")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (precision, scale)):
        return None
    assert isinstance(precision, int) and isinstance(scale, int)
    if not 0 < precision <= MAX_SPARK_DECIMAL_PRECISION or not 0 <= scale <= precision:
        return None
    return f"decimal({precision},{scale})"


def _avro_decimal(node: AvroNode) -> str | None:
    """decimal(p,s) when Avro Java accepts the decimal logical type, else None (binary)."""
    precision = node.props.get("precision", 0)
    scale = node.props.get("scale", 0)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (precision, scale)):
        return None
    if precision <= 0 or scale < 0 or scale > precision:
        return None
    if node.type == "fixed" and node.size is not None:
        max_digits = math.floor(math.log10(2) * (8 * node.size - 1)) if node.size else 0
        if precision > max_digits:
            return None
    if precision > MAX_SPARK_DECIMAL_PRECISION:
        raise SchemaError(
            f"decimal precision {precision} exceeds Spark's maximum of "
            f"{MAX_SPARK_DECIMAL_PRECISION}; from_avro cannot read this schema",
            node.path,
        )
    return f"decimal({precision},{scale})"


#: Spark SQL type names (as the parser accepts them) → Spark JSON type names.
DDL_TO_JSON: Final[Mapping[str, str]] = {
    "boolean": "boolean",
    "tinyint": "byte",
    "byte": "byte",
    "smallint": "short",
    "short": "short",
    "int": "integer",
    "integer": "integer",
    "bigint": "long",
    "long": "long",
    "float": "float",
    "real": "float",
    "double": "double",
    "string": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ltz": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
}


def _catalyst_type(text: str, path: str) -> str:
    lowered = " ".join(text.lower().split())
    if lowered in DDL_TO_JSON:
        return DDL_TO_JSON[lowered]
    if lowered.startswith("interval"):
        return lowered
    raise SchemaError(f"unsupported {CATALYST_TYPE_PROP} {text!r}", path)


# ==============================================================================================
# Spark → Connect
# ==============================================================================================

#: Spark primitive → Connect schema JSON.
SPARK_TO_CONNECT: Final[Mapping[str, Mapping[str, Any]]] = {
    "boolean": {"type": "boolean"},
    "byte": {"type": "int8"},
    "short": {"type": "int16"},
    "integer": {"type": "int32"},
    "long": {"type": "int64"},
    "float": {"type": "float"},
    "double": {"type": "double"},
    "string": {"type": "string"},
    "binary": {"type": "bytes"},
    "date": {"type": "int32", "name": CONNECT_DATE_NAME, "version": 1},
    "timestamp": {"type": "int64", "name": MICRO_TIMESTAMP_NAME, "version": 1},
    "timestamp_ntz": {"type": "int64", "name": MICRO_TIMESTAMP_NAME, "version": 1},
}

_DECIMAL_RE: Final = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$")
_CHAR_RE: Final = re.compile(r"^(var)?char\(\s*\d+\s*\)$")


def spark_to_connect(spark_json: Any) -> ConnectSchema:
    """A Connect schema for a Spark type JSON (a StructType dict gives a struct).

    timestamp (and timestamp_ntz) → ``io.debezium.time.MicroTimestamp`` int64; date → Connect
    Date; decimal(p,s) → Connect Decimal with ``scale`` and ``connect.decimal.precision``;
    byte/short → int8/int16; nullable → optional. Types Connect cannot carry (intervals,
    variant, void, time) raise :class:`SchemaError` naming the path.
    """
    if isinstance(spark_json, str) and spark_json.lstrip().startswith(("{", '"')):
        try:
            spark_json = json.loads(spark_json)
        except json.JSONDecodeError as err:
            raise SchemaError(f"invalid JSON: {err.msg}", f"line {err.lineno}") from None
    return _from_spark(spark_json, "$", optional=False)


def _from_spark(value: Any, path: str, *, optional: bool) -> ConnectSchema:
    if isinstance(value, str):
        return _primitive_from_spark(value, path, optional)
    if not isinstance(value, dict):
        raise SchemaError(f"expected a Spark type, got {json_kind(value)}", path)
    kind = value.get("type")
    if kind == "struct":
        return _struct_from_spark(value, path, optional)
    if kind == "array":
        element = _from_spark(
            _require(value, "elementType", path),
            f"{path}.elementType",
            optional=bool(value.get("containsNull", True)),
        )
        return ConnectSchema(type="array", items=element, optional=optional)
    if kind == "map":
        keys = _from_spark(_require(value, "keyType", path), f"{path}.keyType", optional=False)
        values = _from_spark(
            _require(value, "valueType", path),
            f"{path}.valueType",
            optional=bool(value.get("valueContainsNull", True)),
        )
        return ConnectSchema(type="map", keys=keys, values=values, optional=optional)
    if kind == "udt" and "sqlType" in value:
        return _from_spark(value["sqlType"], f"{path}.sqlType", optional=optional)
    raise SchemaError(f"unknown Spark type {kind!r}", f"{path}.type")


def _require(value: dict[str, Any], key: str, path: str) -> Any:
    if key not in value:
        raise SchemaError(f"a Spark {value.get('type')} type needs {key!r}", path)
    return value[key]


def _struct_from_spark(value: dict[str, Any], path: str, optional: bool) -> ConnectSchema:
    raw = _require(value, "fields", path)
    if not isinstance(raw, list):
        raise SchemaError(f"'fields' must be an array, got {json_kind(raw)}", f"{path}.fields")
    fields = []
    seen: set[str] = set()
    for i, f in enumerate(raw):
        fpath = f"{path}.fields[{i}]"
        if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
            raise SchemaError("a struct field needs 'name' and 'type'", fpath)
        if f["name"] in seen:
            raise SchemaError(f"duplicate field name {f['name']!r}", f"{fpath}.name")
        seen.add(f["name"])
        nullable = f.get("nullable", True)
        if not isinstance(nullable, bool):
            raise SchemaError("'nullable' must be true or false", f"{fpath}.nullable")
        child = _from_spark(f["type"], f"{fpath}.type", optional=nullable)
        fields.append(child.as_field(f["name"]))
    return ConnectSchema(type="struct", fields=tuple(fields), optional=optional)


def _primitive_from_spark(name: str, path: str, optional: bool) -> ConnectSchema:
    lowered = name.strip().lower()
    if lowered.startswith("string collate") or _CHAR_RE.match(lowered):
        lowered = "string"
    base = SPARK_TO_CONNECT.get(lowered)
    if base is not None:
        if lowered == "timestamp_ntz":
            warnings.warn(
                f"{path}: timestamp_ntz becomes {MICRO_TIMESTAMP_NAME} (Connect has no separate "
                "local-timestamp type)",
                LogicalTypeWarning,
                stacklevel=4,
            )
        return ConnectSchema(
            type=base["type"],
            name=base.get("name"),
            version=base.get("version"),
            optional=optional,
        )
    if lowered == "decimal":
        lowered = "decimal(10,0)"  # Spark's DecimalType.USER_DEFAULT
    match = _DECIMAL_RE.match(lowered)
    if match:
        precision, scale = match.group(1), match.group(2)
        return ConnectSchema(
            type="bytes",
            name=DECIMAL_NAME,
            version=1,
            parameters=(("scale", scale), (PRECISION_PARAM, precision)),
            optional=optional,
        )
    raise SchemaError(f"Spark type {name!r} has no Connect equivalent", path)
