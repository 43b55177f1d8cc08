"""Contracts before the first message: derived from DDL, migrations or a live database.

How the parts fit::

    migrations.scripts(path)  ─┐                      ┌─ debezium.debezium_contract (debezium-json)
    ddl.apply_sql → Catalog   ─┼─> model.Table ... ───┤
    live.read_tables(url)     ─┘                      ├─ canal.canal_contract     (canal-json)
                                                      └─ maxwell.maxwell_contract (maxwell-json)

Every source yields the same :class:`~contracts.derive.model.Table` values (types as the
database reports them, :mod:`contracts.sqltypes`), so a table derived from its DDL and the same
table read from a live server give equal contracts. The connector mappings are declarative
tables (:mod:`.debezium_mysql`, :mod:`.debezium_postgres`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from contracts.contract import Contract
from contracts.derive.canal import canal_contract
from contracts.derive.ddl import Catalog, apply_sql
from contracts.derive.debezium import DEFAULT_VERSION, debezium_contract, debezium_settings
from contracts.derive.envelopes import profile_from_message
from contracts.derive.maxwell import maxwell_contract
from contracts.derive.migrations import scripts
from contracts.derive.model import Table
from contracts.derive.typemap import Version
from contracts.errors import InputError
from contracts.sqltypes import Dialect

__all__ = [
    "DERIVE_FORMATS",
    "DeriveRequest",
    "DerivedSet",
    "contracts_for",
    "derive_from_db",
    "derive_from_ddl",
    "read_ddl",
]

#: The formats derive writes.
DERIVE_FORMATS: Final = ("debezium-json", "canal-json", "maxwell-json")


@dataclass(frozen=True, slots=True)
class DeriveRequest:
    """What to derive: the format and, for Debezium, the connector's configuration."""

    format: str
    dialect: Dialect
    server_name: str | None = None
    connector_options: Mapping[str, str] = field(default_factory=dict)
    debezium_version: Version = DEFAULT_VERSION
    envelope_from: Path | None = None
    database: str | None = None
    tables: str | None = None
    placeholders: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DerivedSet:
    """The contracts derived from one source, with what was read and skipped."""

    contracts: tuple[Contract, ...]
    tables: tuple[Table, ...]
    sources: tuple[str, ...]
    skipped: Mapping[str, int]
    notes: tuple[str, ...] = ()


def read_ddl(
    path: str | Path,
    dialect: Dialect,
    database: str | None = None,
    placeholders: Mapping[str, str] | None = None,
) -> tuple[list[Table], Counter[str], list[str]]:
    """The tables a DDL file or migrations directory leaves, the statements skipped, the files
    (``placeholders``: the values of the files' ``${key}`` placeholders)."""
    catalog = Catalog(dialect, database=database)
    read = []
    for script in scripts(path, dialect, placeholders):
        apply_sql(catalog, script.text, script.label)
        read.append(script.label)
    return catalog.table_list(), catalog.skipped, read


def derive_from_ddl(path: str | Path, request: DeriveRequest) -> DerivedSet:
    """Contracts for the tables that the DDL at ``path`` defines."""
    tables, skipped, read = read_ddl(path, request.dialect, request.database, request.placeholders)
    if not tables:
        raise InputError("defines no table (no CREATE TABLE statement)", str(path))
    return contracts_for(tables, request, read, skipped)


def derive_from_db(url: str, request: DeriveRequest) -> DerivedSet:
    """Contracts for the tables of the live database at ``url`` (its dialect is detected)."""
    from contracts.derive.live import read_tables, redacted

    dialect, database, tables = read_tables(url)
    if not tables:
        raise InputError("has no table to derive a contract for", redacted(url))
    found = replace(request, dialect=dialect, database=request.database or database)
    return contracts_for(tables, found, [redacted(url)])


def contracts_for(
    tables: Sequence[Table],
    request: DeriveRequest,
    sources: Sequence[str] = (),
    skipped: Mapping[str, int] | None = None,
) -> DerivedSet:
    """One contract per table (those matching ``request.tables``) in ``request.format``."""
    chosen = select_tables(tables, request.tables)
    build = _builder(request)
    notes = tuple(
        f"{t.qualified}: no primary key; its messages have no key"
        for t in chosen
        if not t.primary_key
    )
    return DerivedSet(
        contracts=tuple(build(t) for t in chosen),
        tables=tuple(chosen),
        sources=tuple(sources),
        skipped=dict(skipped or {}),
        notes=notes,
    )


def select_tables(tables: Sequence[Table], pattern: str | None) -> list[Table]:
    """Tables whose qualified name (``db.table`` / ``schema.table``) matches ``pattern``."""
    if pattern is None:
        return list(tables)
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error as err:
        raise InputError(f"{pattern!r} is not a regular expression: {err}", "--tables") from None
    chosen = [t for t in tables if regex.fullmatch(t.qualified) or regex.fullmatch(t.name)]
    if not chosen:
        names = ", ".join(t.qualified for t in tables[:10])
        raise InputError(f"no table matches {pattern!r} (tables: {names})", "--tables")
    return chosen


def _builder(request: DeriveRequest) -> Callable[[Table], Contract]:
    if request.format == "debezium-json":
        envelope = profile_from_message(request.envelope_from) if request.envelope_from else None
        settings = debezium_settings(
            request.dialect,
            request.server_name,
            request.connector_options,
            request.debezium_version,
            envelope,
        )
        return lambda table: debezium_contract(table, settings, request.database)
    builder = _BUILDERS.get(request.format)
    if builder is None:
        names = ", ".join(DERIVE_FORMATS[:-1]) + " or " + DERIVE_FORMATS[-1]
        raise InputError(f"derive writes {names}, not {request.format!r}", "--format")
    if request.server_name or request.connector_options or request.envelope_from:
        raise InputError(
            "--server-name, --connector-option and --envelope-from configure a Debezium "
            f"connector; {request.format} takes none of them",
            f"--format {request.format}",
        )
    return builder


#: The formats whose contract depends on the table alone.
_BUILDERS: Final[Mapping[str, Callable[[Table], Contract]]] = {
    "canal-json": canal_contract,
    "maxwell-json": maxwell_contract,
}
