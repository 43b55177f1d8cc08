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
