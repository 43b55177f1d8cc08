"""Spark StructTypes from contracts, and ways to print them (JSON, DDL, paste-able Python)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StructField,
    StructType,
)

from contracts.contract import Contract, load_contract
from contracts.errors import SchemaError
from contracts.formats import get_format
from contracts.schema import ConnectSchema
from spark_bindings.expressions import json_wire_type, spark_type_of

Part = Literal["row", "key", "value"]
View = Literal["decoded", "wire"]


def as_contract(contract: Contract | str | Path) -> Contract:
    """A contract object, loading it when given a path."""
    return contract if isinstance(contract, Contract) else load_contract(contract)


def connect_schema_of(contract: Contract, part: Part) -> ConnectSchema:
    """The Connect schema of one part: the row, or the format's derived key / value."""
    if part not in ("row", "key", "value"):
        raise SchemaError(f"unknown part {part!r} (expected row, key or value)")
    if part == "row":
        return contract.row_schema
    derived = get_format(contract.format).derive(contract)
    if part == "value":
        return derived.value
    if derived.key is None:
        raise SchemaError(_no_key(contract))
    return derived.key


def _no_key(contract: Contract) -> str:
    """Why a contract has no message-key schema."""
    if not contract.key:
        return (
            f"contract {contract.name} names no key columns (key: [...]), so its "
            f"{contract.format} messages carry no key schema"
        )
    return (
        f"format {contract.format} sends no Kafka message key; the feed's key column holds the "
        f"contract's key columns ({', '.join(contract.key)}), typed as in --part row"
    )


def spark_type(schema: ConnectSchema, view: View = "decoded") -> DataType:
    """The Spark DataType of any Connect schema, through the core's Connect → Spark table."""
    from contracts.translate.spark import connect_to_spark

    return spark_type_of(connect_to_spark(schema, view))


def spark_schema(
    contract: Contract | str | Path, part: Part = "row", view: View = "decoded"
) -> StructType:
    """The StructType of a contract's row, key or value, as decoded or as on the wire.

    The wire view is what ``decode_changes`` hands ``from_json``: JsonConverter's JSON types,
    with a Connect Decimal as a ``VARIANT`` (as a string, the JSON number ``1234`` and the
    base64 text ``"1234"`` would be one value) and a float as a ``DOUBLE`` (so that a value
    that overflows a float is seen, not read as infinity)."""
    schema = connect_schema_of(as_contract(contract), part)
    found = spark_type(schema, view)
    if view == "wire":
        found = json_wire_type(schema, found)
    if not isinstance(found, StructType):
        raise SchemaError(f"the {part} of {as_contract(contract).name} is not a struct")
    return found


# --- printing ----------------------------------------------------------------------------------


def to_ddl(schema: StructType) -> str:
    """The schema as a Spark DDL string (``a INT NOT NULL, b STRUCT<...>``)."""
    return ", ".join(_ddl_field(f) for f in schema.fields)


def _ddl_field(f: StructField) -> str:
    text = f"{quoted(f.name)} {_ddl_type(f.dataType)}"
    return text if f.nullable else f"{text} NOT NULL"


def _ddl_type(t: DataType) -> str:
    if isinstance(t, StructType):
        inner = ", ".join(
            f"{quoted(f.name)}: {_ddl_type(f.dataType)}{'' if f.nullable else ' NOT NULL'}"
            for f in t.fields
        )
        return f"STRUCT<{inner}>"
    if isinstance(t, ArrayType):
        return f"ARRAY<{_ddl_type(t.elementType)}>"
    if isinstance(t, MapType):
        return f"MAP<{_ddl_type(t.keyType)}, {_ddl_type(t.valueType)}>"
    return t.simpleString().upper()


def quoted(name: str) -> str:
    """A column name as Spark SQL writes it (backticks, inner backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def to_python(schema: StructType, variable: str = "schema") -> str:
    """Paste-able PySpark code that builds ``schema`` (the core's printer, from its JSON)."""
    from contracts.translate.ddl import pyspark_code

    return pyspark_code(schema.jsonValue(), variable)


def render(schema: StructType, form: Literal["json", "ddl", "python"]) -> str:
    """The schema printed as ``json`` (``StructType.json()`` indented), ``ddl`` or ``python``."""
    import json

    if form == "json":
        return json.dumps(schema.jsonValue(), indent=2)
    if form == "ddl":
        return to_ddl(schema)
    return to_python(schema)


def field_type(struct_type: StructType, name: str) -> Any:
    """The DataType of one field of a struct."""
    return struct_type[name].dataType
