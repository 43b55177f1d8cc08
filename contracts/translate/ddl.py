"""Spark DDL text from Spark type JSON.

:func:`spark_ddl` writes what ``StructType.fromDDL`` / ``_parse_datatype_string`` accept:
``` `id` INT NOT NULL, `name` STRING, `tags` ARRAY<STRING> ```. Names are backtick-quoted,
non-nullable fields get ``NOT NULL``, a ``comment`` in a field's metadata becomes ``COMMENT``.
DDL cannot say whether array elements or map values may be null: that part of the JSON is lost.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from contracts.errors import SchemaError
from contracts.schema import json_kind

#: Spark JSON type names → DDL keywords.
DDL_TYPES: Final[Mapping[str, str]] = {
    "boolean": "BOOLEAN",
    "byte": "TINYINT",
    "short": "SMALLINT",
    "integer": "INT",
    "long": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "binary": "BINARY",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamp_ntz": "TIMESTAMP_NTZ",
    "void": "VOID",
    "variant": "VARIANT",
}

_PARAMETRIC: Final = re.compile(r"^(decimal|char|varchar)\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)$")


def spark_ddl(spark_json: Any) -> str:
    """The DDL for a Spark type JSON: a field list for a struct, a type otherwise."""
    if isinstance(spark_json, dict) and spark_json.get("type") == "struct":
        return ", ".join(
            _field(f, f"$.fields[{i}]") for i, f in enumerate(_fields(spark_json, "$"))
        )
    return _type(spark_json, "$")


def quote(name: str) -> str:
    """A backtick-quoted identifier (backticks inside are doubled)."""
    return "`" + name.replace("`", "``") + "`"


def _fields(struct: dict[str, Any], path: str) -> list[Any]:
    fields = struct.get("fields")
    if not isinstance(fields, list):
        raise SchemaError("a struct needs a 'fields' array", path)
    return fields


def _field(field: Any, path: str, sep: str = " ") -> str:
    if not isinstance(field, dict) or not isinstance(field.get("name"), str) or "type" not in field:
        raise SchemaError("a struct field needs 'name' and 'type'", path)
    text = f"{quote(field['name'])}{sep}{_type(field['type'], f'{path}.type')}"
    if field.get("nullable", True) is False:
        text += " NOT NULL"
    comment = (field.get("metadata") or {}).get("comment")
    if isinstance(comment, str):
        text += " COMMENT '" + comment.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return text


def _type(value: Any, path: str) -> str:
    if isinstance(value, str):
        return _primitive(value, path)
    if not isinstance(value, dict):
        raise SchemaError(f"expected a Spark type, got {json_kind(value)}", path)
    kind = value.get("type")
    if kind == "struct":
        inner = ", ".join(
            _field(f, f"{path}.fields[{i}]", sep=": ") for i, f in enumerate(_fields(value, path))
        )
        return f"STRUCT<{inner}>"
    if kind == "array":
        return f"ARRAY<{_type(value.get('elementType'), f'{path}.elementType')}>"
    if kind == "map":
        key = _type(value.get("keyType"), f"{path}.keyType")
        val = _type(value.get("valueType"), f"{path}.valueType")
        return f"MAP<{key}, {val}>"
    if kind == "udt" and "sqlType" in value:
        return _type(value["sqlType"], f"{path}.sqlType")
    raise SchemaError(f"unknown Spark type {kind!r}", f"{path}.type")


def _primitive(name: str, path: str) -> str:
    lowered = name.strip().lower()
    if lowered in DDL_TYPES:
        return DDL_TYPES[lowered]
    if lowered.startswith("string collate "):
        return "STRING COLLATE " + name.strip()[len("string collate ") :]
    if lowered.startswith("interval"):
        return lowered.upper()
    match = _PARAMETRIC.match(lowered)
    if match:
        kind, first, second = match.groups()
        args = first if second is None else f"{first},{second}"
        return f"{kind.upper()}({args})"
    raise SchemaError(f"unknown Spark type {name!r}", path)


#: Spark JSON type names → the ``pyspark.sql.types`` classes that build them.
PYSPARK_TYPES: Final[Mapping[str, str]] = {
    "boolean": "BooleanType",
    "byte": "ByteType",
    "short": "ShortType",
    "integer": "IntegerType",
    "long": "LongType",
    "float": "FloatType",
    "double": "DoubleType",
    "string": "StringType",
    "binary": "BinaryType",
    "date": "DateType",
    "timestamp": "TimestampType",
    "timestamp_ntz": "TimestampNTZType",
    "void": "NullType",
    "variant": "VariantType",
}


def pyspark_code(spark_json: Any, variable: str = "schema") -> str:
    """Paste-able PySpark code that builds a Spark type given as JSON (no pyspark needed)."""
    names: set[str] = set()
    body = _py_type(spark_json, 0, names, "$")
    imports = ", ".join(sorted(names))
    return f"from pyspark.sql.types import {imports}\n\n{variable} = {body}\n"


def _py_type(node: Any, depth: int, names: set[str], path: str) -> str:
    pad, close = "    " * (depth + 1), "    " * depth
    if isinstance(node, str):
        if node in PYSPARK_TYPES:
            names.add(PYSPARK_TYPES[node])
            return f"{PYSPARK_TYPES[node]}()"
        match = _PARAMETRIC.match(node)
        if match and match.group(1) == "decimal":
            names.add("DecimalType")
            return f"DecimalType({match.group(2)}, {match.group(3) or 0})"
        raise SchemaError(f"unknown Spark type {node!r}", path)
    if not isinstance(node, dict):
        raise SchemaError("a Spark type is a name or an object", path)
    kind = node.get("type")
    if kind == "struct":
        names.update(("StructType", "StructField"))
        fields = "".join(
            f"{pad}StructField({f['name']!r}, "
            f"{_py_type(f['type'], depth + 1, names, f'{path}.fields[{i}]')}, "
            f"{bool(f.get('nullable', True))}),\n"
            for i, f in enumerate(_fields(node, path))
        )
        return f"StructType([\n{fields}{close}])"
    if kind == "array":
        names.add("ArrayType")
        element = _py_type(node.get("elementType"), depth, names, f"{path}.elementType")
        return f"ArrayType({element}, {bool(node.get('containsNull', True))})"
    if kind == "map":
        names.add("MapType")
        key = _py_type(node.get("keyType"), depth, names, f"{path}.keyType")
        value = _py_type(node.get("valueType"), depth, names, f"{path}.valueType")
        return f"MapType({key}, {value}, {bool(node.get('valueContainsNull', True))})"
    raise SchemaError(f"unknown Spark type {kind!r}", path)
