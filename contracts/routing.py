"""Multi-table topics: which table a message is of, which tables a run keeps, and which
contract each table's messages are checked against.

Canal's default setup writes every table of an instance to one topic, and Debezium's topic
routing does the same. A run over such a topic either keeps some tables (:class:`TableFilter`,
``--table`` / ``--database``: regular expressions that must match the WHOLE name, as Flink's
``canal-json.table.include`` / ``database.include``), or routes each message to the contract
that names its table (:class:`Routes`). A message whose table no contract names is an error
or, when the run says so, skipped; either way it is counted, never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from contracts.contract import Contract, load_contract
from contracts.errors import ContractFileError, InputError
from contracts.events import TableId

Unmatched = Literal["error", "skip"]
UNMATCHED_CHOICES: Final = ("error", "skip")

#: The per-table key of a message that names no table.
NO_TABLE: Final = "(no table)"


def table_key(table: TableId | None) -> str:
    """A table as the key of per-table counts: ``db.schema.name`` (absent parts left out)."""
    if table is None:
        return NO_TABLE
    return table.qualified() or NO_TABLE


# --- filters ----------------------------------------------------------------------------------


def _compile(pattern: str | None, flag: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as err:
        raise InputError(f"is not a regular expression: {err}", f"{flag} {pattern}") from None


@dataclass(frozen=True)
class TableFilter:
    """Which tables a run keeps: ``database`` and ``table`` are regular expressions that must
    match the whole database (catalog) and table name; a message with no such name is not kept
    by a filter on it. No pattern keeps every table."""

    database: re.Pattern[str] | None = None
    table: re.Pattern[str] | None = None

    @classmethod
    def of(cls, database: str | None = None, table: str | None = None) -> TableFilter:
        """A filter from the patterns' text (``--database`` / ``--table``)."""
        return cls(_compile(database, "--database"), _compile(table, "--table"))

    @property
    def active(self) -> bool:
        return self.database is not None or self.table is not None

    def keeps(self, table: TableId | None) -> bool:
        """Whether messages of ``table`` are kept."""
        if not self.active:
            return True
        if table is None:
            return False
        return _full(self.database, table.database) and _full(self.table, table.name)

    def describe(self) -> str:
        parts = [
            f"{flag} {p.pattern}"
            for flag, p in (("--database", self.database), ("--table", self.table))
            if p is not None
        ]
        return " ".join(parts)


def _full(pattern: re.Pattern[str] | None, name: str | None) -> bool:
    if pattern is None:
        return True
    return name is not None and pattern.fullmatch(name) is not None


# --- contracts by table -----------------------------------------------------------------------


def contract_files(paths: Iterable[Path]) -> list[Path]:
    """The contract files a run reads: each path given, or every ``*.yaml``/``*.yml`` under a
    directory (hidden directories and ``cdc-contracts.yaml`` left out), sorted."""
    from contracts.diff.catalog import _is_contract_path

    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            found.append(path)
            continue
        inside = [
            p
            for p in sorted(path.rglob("*"))
            if p.is_file() and _is_contract_path(p.relative_to(path).as_posix())
        ]
        if not inside:
            raise ContractFileError("is a directory with no contract files (*.yaml)", str(path))
        found.extend(inside)
    return found


@dataclass(frozen=True)
class Routes:
    """The contract of each table: every contract names one table, no two the same, and all
    read one format."""

    by_table: Mapping[TableId, Contract]
    format: str
    sources: Mapping[TableId, str] = field(default_factory=dict)

    @classmethod
    def of(cls, contracts: Sequence[tuple[Contract, str]]) -> Routes:
        """Routes from (contract, where it was read) pairs; two contracts of one table, or of
        different formats, are an error."""
        if not contracts:
            raise InputError("no contracts given")
        by_table: dict[TableId, Contract] = {}
        sources: dict[TableId, str] = {}
        first, first_source = contracts[0]
        for contract, source in contracts:
            if contract.format != first.format:
                raise ContractFileError(
                    f"is a {contract.format} contract, but {first_source} is {first.format}: "
                    "the contracts of one run read one format",
                    source,
                )
            table = contract.table_id
            if table in by_table:
                raise ContractFileError(
                    f"names the table {table_key(table)}, as {sources[table]} does: one "
                    "contract per table",
                    source,
                )
            by_table[table] = contract
            sources[table] = source
        return cls(by_table, first.format, sources)

    @classmethod
    def load(cls, paths: Iterable[Path]) -> Routes:
        """Routes from contract files and directories of them."""
        files = contract_files(paths)
        return cls.of([(load_contract(p), str(p)) for p in files])

    def contract_for(self, table: TableId | None) -> Contract | None:
        """The contract of ``table``, or None when no contract names it."""
        return None if table is None else self.by_table.get(table)

    def names(self) -> str:
        return ", ".join(sorted(table_key(t) for t in self.by_table))

    def unmatched_reason(self, table: TableId | None) -> str:
        """Why a message has no contract (the violation's text)."""
        if table is None:
            return f"the message names no table, so no contract applies (contracts for: {self.names()})"
        return f"no contract names the table {table_key(table)} (contracts for: {self.names()})"


@dataclass(frozen=True)
class Routing:
    """How a run treats the tables of a multi-table topic: which it keeps (``filter``), the
    contract of each (``routes``; None: the run's one contract, or none), and what a message
    of a table no contract names is (``unmatched``: an error, or skipped and counted)."""

    filter: TableFilter = field(default_factory=TableFilter)
    routes: Routes | None = None
    unmatched: Unmatched = "error"

    @property
    def active(self) -> bool:
        return self.filter.active or self.routes is not None

    def decide(self, table: TableId | None) -> Decision:
        """Where the messages of ``table`` (None: a message naming no table) go. The one rule
        both the core's pipeline and Spark's ``decode_changes`` apply."""
        key = table_key(table)
        if not self.filter.keeps(table):
            return Decision(key, skip=True)
        if self.routes is None:
            return Decision(key)
        if table is None:
            return Decision(key, untabled=True)
        found = self.routes.contract_for(table)
        if found is not None:
            return Decision(key, found)
        return self.unmatched_decision(table)

    def unmatched_decision(self, table: TableId | None) -> Decision:
        """A message of a table no contract names (None: a row change naming no table):
        skipped, or refused with the ``unmatched-table`` text."""
        key = table_key(table)
        if self.unmatched == "skip":
            return Decision(key, skip=True)
        assert self.routes is not None
        return Decision(key, refused=self.routes.unmatched_reason(table))


@dataclass(frozen=True, slots=True)
class Decision:
    """Where one table's messages go: ``key`` (the per-table count key), and either its
    ``contract`` (None: the run's one contract), or skipped, or ``refused`` (why), or
    ``untabled`` (it names no table: control records pass, row changes are unmatched)."""

    key: str
    contract: Contract | None = None
    skip: bool = False
    refused: str | None = None
    untabled: bool = False
