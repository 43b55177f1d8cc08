"""Contracts for tables as Maxwell writes them (``maxwell-json``): plain JSON values.

Maxwell's messages carry no types: ``maxwell-json`` infers each column's type from the JSON
values it sees (:class:`contracts.formats._typing.ColumnSummary`). So the contract derived
from a table is the one ``infer`` gives once it has seen the values Maxwell can write for each
column: the JSON kind of each MySQL type (the table below) and, for integers, the type's
extreme values. Both paths resolve types in one place, inference's.

What Maxwell writes per type is read from its column definitions (zendesk/maxwell
``src/main/java/com/zendesk/maxwell/schema/columndef/``: ``ColumnDef.build`` picks the class,
each class's ``asJSON`` the value): integers, ``year`` and ``bit`` as JSON integers (a
``bigint unsigned`` above 2^63 as a BigInteger), ``float``/``double``/``decimal`` as JSON
numbers (a decimal with a scale carries its fraction), ``set`` as an array of its members,
``json`` as the document itself, everything else (strings, base64 of binaries, dates and times,
enums, WKT geometry) as a JSON string.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from contracts.contract import Contract, contract_from_schema
from contracts.derive.model import Column, Table
from contracts.errors import InputError
from contracts.events import TableId
from contracts.formats._typing import ColumnSummary
from contracts.schema import ConnectSchema, struct
from contracts.sqltypes import SqlType

#: The JSON value Maxwell writes: an integer (within the type's range), a number with a
#: fraction, a string, or a JSON array/object.
JsonValue = Literal["integer", "fraction", "string", "document"]

_COLUMNDEF: Final = "zendesk/maxwell src/main/java/com/zendesk/maxwell/schema/columndef/"


@dataclass(frozen=True, slots=True)
class MaxwellValue:
    """What Maxwell writes for a MySQL type, and where that is stated."""

    value: JsonValue
    source: str


_INTEGER: Final = MaxwellValue("integer", _COLUMNDEF + "IntColumnDef.java, BigIntColumnDef.java")
_STRING: Final = MaxwellValue("string", _COLUMNDEF + "StringColumnDef.java")

#: MySQL type (as :mod:`contracts.sqltypes` normalizes it: ``bool`` is ``tinyint(1)``,
#: ``serial`` ``bigint unsigned``, ``real`` ``double``) → the JSON value Maxwell writes.
# fmt: off
MAXWELL_VALUES: Final[Mapping[str, MaxwellValue]] = {
    "tinyint": _INTEGER,
    "smallint": _INTEGER,
    "mediumint": _INTEGER,
    "int": _INTEGER,
    "bigint": _INTEGER,
    "year": MaxwellValue("integer", _COLUMNDEF + "YearColumnDef.java"),
    "bit": MaxwellValue("integer", _COLUMNDEF + "BitColumnDef.java (a Long, a BigInteger at 64 bits)"),
    "float": MaxwellValue("fraction", _COLUMNDEF + "FloatColumnDef.java"),
    "double": MaxwellValue("fraction", _COLUMNDEF + "FloatColumnDef.java"),
    "decimal": MaxwellValue("fraction", _COLUMNDEF + "DecimalColumnDef.java (a BigDecimal)"),
    "char": _STRING,
    "varchar": _STRING,
    "tinytext": _STRING,
    "text": _STRING,
    "mediumtext": _STRING,
    "longtext": _STRING,
    "binary": MaxwellValue("string", _COLUMNDEF + "StringColumnDef.java (base64)"),
    "varbinary": MaxwellValue("string", _COLUMNDEF + "StringColumnDef.java (base64)"),
    "tinyblob": MaxwellValue("string", _COLUMNDEF + "StringColumnDef.java (base64)"),
    "blob": MaxwellValue("string", _COLUMNDEF + "StringColumnDef.java (base64)"),
    "mediumblob": MaxwellValue("string", _COLUMNDEF + "StringColumnDef.java (base64)"),
    "longblob": MaxwellValue("string", _COLUMNDEF + "StringColumnDef.java (base64)"),
    "enum": MaxwellValue("string", _COLUMNDEF + "EnumColumnDef.java"),
    "set": MaxwellValue("document", _COLUMNDEF + "SetColumnDef.java (a list of members)"),
    "json": MaxwellValue("document", _COLUMNDEF + "JsonColumnDef.java (the raw document)"),
    "date": MaxwellValue("string", _COLUMNDEF + "DateColumnDef.java"),
    "datetime": MaxwellValue("string", _COLUMNDEF + "DateTimeColumnDef.java"),
    "timestamp": MaxwellValue("string", _COLUMNDEF + "DateTimeColumnDef.java"),
    "time": MaxwellValue("string", _COLUMNDEF + "TimeColumnDef.java"),
    **{
        name: MaxwellValue("string", _COLUMNDEF + "GeometryColumnDef.java (WKT)")
        for name in (
            "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
            "multipolygon", "geometrycollection",
        )
    },
}
# fmt: on

#: Bytes of MySQL's integer types (MySQL reference manual, "Integer Types (Exact Value)").
INTEGER_BYTES: Final[Mapping[str, int]] = {
    "tinyint": 1,
    "smallint": 2,
    "mediumint": 3,
    "int": 4,
    "bigint": 8,
}
#: ``YEAR``'s values: 1901 to 2155, and 0 (MySQL reference manual, "The YEAR Type").
YEAR_RANGE: Final = (0, 2155)


def integer_range(sql: SqlType) -> tuple[int, int]:
    """The least and greatest value of an integer-valued MySQL type."""
    if sql.name == "year":
        return YEAR_RANGE
    if sql.name == "bit":
        return 0, 2 ** (sql.length or 1) - 1
    if sql.name == "decimal":
        bound = 10 ** (sql.length or 10) - 1
        return (0 if sql.unsigned else -bound), bound
    bits = 8 * INTEGER_BYTES[sql.name]
    if sql.unsigned:
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def written_values(sql: SqlType, value: JsonValue) -> tuple[Any, ...]:
    """Values Maxwell may write for a column of type ``sql`` that span its inferred type."""
    if value == "fraction" and sql.name == "decimal" and not sql.scale:
        value = "integer"  # a BigDecimal of scale 0 is written without a fraction
    if value == "integer":
        return integer_range(sql)
    if value == "fraction":
        return (0.5,)
    if value == "document":
        return ([],)
    return ("",)


def maxwell_column(column: Column, table: Table) -> ConnectSchema:
    """The column's Connect field as ``infer`` types the values Maxwell writes for it."""
    found = MAXWELL_VALUES.get(column.type.name)
    if found is None or column.type.array:
        raise InputError(
            f"column {column.name}: maxwell-json has no type for {column.type.spelled()!r}",
            column.where or table.where or None,
        )
    summary = ColumnSummary()
    for value in written_values(column.type, found.value):
        summary.observe(value)
    return summary.schema(infer_types=False).as_optional(column.nullable).as_field(column.name)


def maxwell_contract(table: Table) -> Contract:
    """The ``maxwell-json`` contract of a MySQL table."""
    if table.dialect == "postgres":
        raise InputError(
            f"table {table.name}: Maxwell reads MySQL binlogs; derive maxwell-json from MySQL "
            "DDL (--dialect mysql)",
            table.where or None,
        )
    return contract_from_schema(
        name=table.qualified,
        format="maxwell-json",
        table=TableId(table.database, None, table.name),
        row=struct([maxwell_column(col, table) for col in table.columns]),
        key=table.primary_key,
    )
