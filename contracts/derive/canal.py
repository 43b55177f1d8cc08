"""Contracts for tables as Canal types them (``canal-json``): ``mysqlType`` and its Connect type.

Canal carries no schema, only each column's ``mysqlType`` text beside text values. With its
table-meta store on (the default), Canal spells ``mysqlType`` from the ``CREATE TABLE`` it
applied: the type words as written, arguments without spaces, ``unsigned``/``zerofill`` in lower
case (Paimon's Canal sample: ``TINYINT(2) unsigned``, ``DOUBLE PRECISION(10,7) unsigned
zerofill``, ``ENUM('value1','value2','value3')``, ``SERIAL``; ``DECIMAL(8)`` is reported as
``DECIMAL(8, 0)``). The Connect type of each column is what ``canal-json`` itself reads that
text as (:func:`contracts.formats.canal_json.mysql_type_schema`): one table for both paths.
"""

from __future__ import annotations

from typing import Any

from contracts.contract import Contract, contract_from_schema
from contracts.derive.model import Column, Table
from contracts.errors import InputError
from contracts.events import TableId
from contracts.logical import ZONED_TIMESTAMP_NAME
from contracts.schema import ConnectSchema, struct


def canal_type_text(column: Column) -> str:
    """``mysqlType`` as Canal spells it for a column declared as ``column.type.written``."""
    written = column.type.written or column.type.spelled()
    head, sep, rest = written.partition("(")
    if head.strip().upper() == "DECIMAL" and sep and "," not in rest.split(")")[0]:
        precision, _, tail = rest.partition(")")
        return f"{head}({precision}, 0){tail}"
    return written


def canal_column(column: Column, table: Table) -> ConnectSchema:
    """The column's Connect field as ``canal-json`` types its ``mysqlType``."""
    from contracts.formats.canal_json import mysql_type_schema

    text = canal_type_text(column)
    schema = mysql_type_schema(text)
    if schema is None:
        raise InputError(
            f"column {column.name}: canal-json has no type for mysqlType {text!r}",
            column.where or table.where or None,
        )
    return schema.as_optional(column.nullable).as_field(column.name)


def canal_contract(table: Table) -> Contract:
    """The ``canal-json`` contract of a MySQL table."""
    if table.dialect == "postgres":
        raise InputError(
            f"table {table.name}: Canal reads MySQL binlogs; derive canal-json from MySQL DDL "
            "(--dialect mysql)",
            table.where or None,
        )
    columns = [canal_column(col, table) for col in table.columns]
    options: dict[str, Any] = {"mysql_types": {c.name: canal_type_text(c) for c in table.columns}}
    if any(c.name == ZONED_TIMESTAMP_NAME for c in columns):
        options["time_zone"] = "UTC"
    return contract_from_schema(
        name=table.qualified,
        format="canal-json",
        table=TableId(table.database, None, table.name),
        row=struct(columns),
        key=table.primary_key,
        options=options,
    )
