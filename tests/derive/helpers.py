"""Shared helpers of the derive tests: DDL in, contracts and column schemas out."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from contracts.derive.ddl import Catalog, apply_sql
from contracts.derive.debezium import column_schema, debezium_settings
from contracts.derive.model import Table
from contracts.derive.typemap import parse_version
from contracts.schema import ConnectSchema

_ROOT = Path(__file__).resolve().parents[2]
#: ``../shared/realworld`` beside the checkout (or beside the worktrees' parent), or
#: ``$CDC_CONTRACTS_REALWORLD``.
_CANDIDATES = [Path(p) for p in [os.environ.get("CDC_CONTRACTS_REALWORLD", "")] if p] + [
    _ROOT.parent / "shared" / "realworld",
    _ROOT.parent.parent / "shared" / "realworld",
]
REALWORLD = next((c for c in _CANDIDATES if c.is_dir()), _CANDIDATES[-1])


def realworld(*parts: str) -> Path:
    """A file of the shared real-world corpus; the test is skipped (saying so) when absent."""
    path = REALWORLD.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"the shared real-world corpus is not here ({path}): test not run")
    return path


def tables(sql: str, dialect: str = "mysql", database: str | None = "db") -> list[Table]:
    catalog = Catalog(dialect, database=database)  # type: ignore[arg-type]
    apply_sql(catalog, sql, "test.sql")
    return catalog.table_list()


def column(
    sql_type: str,
    dialect: str = "mysql",
    options: Mapping[str, str] | None = None,
    version: str = "3.0",
    constraints: str = "",
    prelude: str = "",
) -> ConnectSchema:
    """The Connect field Debezium writes for one column ``c <sql_type> <constraints>``."""
    table = tables(f"{prelude} CREATE TABLE t (c {sql_type} {constraints})", dialect)[0]
    settings = debezium_settings(table.dialect, "srv", dict(options or {}), parse_version(version))
    return column_schema(table, table.columns[0], settings)


def shape(schema: ConnectSchema) -> dict[str, Any]:
    """type / name / parameters (and items) of a schema: what a mapping row decides."""
    out: dict[str, Any] = {"type": schema.type}
    if schema.name:
        out["name"] = schema.name
    if schema.parameters:
        out["parameters"] = dict(schema.parameters)
    if schema.items is not None:
        out["items"] = shape(schema.items)
    return out
