"""Tables as a database holds them: what DDL, migrations and live catalogs are read into.

Every source of table definitions (a ``CREATE TABLE``, a directory of migrations, a live
``information_schema`` or ``pg_catalog``) produces these frozen values; the connector mappings
(:mod:`contracts.derive.debezium`, :mod:`contracts.derive.canal`) read only them, so a table
derived from its DDL and the same table read from a live database give the same contract.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from contracts.sqltypes import Dialect, SqlType

DefaultKind = Literal[
    "string", "number", "boolean", "null", "bits", "hex", "function", "expression"
]


@dataclass(frozen=True, slots=True)
class Default:
    """A column's ``DEFAULT``: a literal (its text, unquoted), a function call (``function``:
    the function's name) or another expression (its SQL text); ``written`` is the default as
    the user (or the catalog) wrote it, for messages."""

    kind: DefaultKind
    text: str = ""
    written: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its name, the type the database reports, nullability and default."""

    name: str
    type: SqlType
    nullable: bool = True
    default: Default | None = None
    auto_increment: bool = False
    comment: str | None = None
    where: str = field(default="", compare=False)

    def but(self, **changes: object) -> Column:
        return replace(self, **changes)  # type: ignore[arg-type]


KeyKind = Literal["primary", "unique"]


@dataclass(frozen=True, slots=True)
class Key:
    """A primary or unique key: its constraint/index name (when known) and its columns."""

    kind: KeyKind
    columns: tuple[str, ...]
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A table: where it lives, its columns in order, and its keys (in declaration order)."""

    dialect: Dialect
    database: str | None
    schema: str | None
    name: str
    columns: tuple[Column, ...]
    keys: tuple[Key, ...] = ()
    where: str = field(default="", compare=False)

    @property
    def qualified(self) -> str:
        """``database.name`` (MySQL) or ``schema.name`` (PostgreSQL)."""
        owner = self.schema if self.dialect == "postgres" else self.database
        return f"{owner}.{self.name}" if owner else self.name

    @property
    def primary_key(self) -> tuple[str, ...]:
        for key in self.keys:
            if key.kind == "primary":
                return key.columns
        return ()

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return tuple(k.columns for k in self.keys if k.kind == "unique")

    def column(self, name: str) -> Column | None:
        """The column called ``name`` (case-insensitively for MySQL, as MySQL compares)."""
        for col in self.columns:
            if col.name == name or (
                self.dialect != "postgres" and col.name.lower() == name.lower()
            ):
                return col
        return None

    def but(self, **changes: object) -> Table:
        return replace(self, **changes)  # type: ignore[arg-type]
