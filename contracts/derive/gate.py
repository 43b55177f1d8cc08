"""Contracts derived from the repository's DDL on each side of ``check`` (``derive:`` in the config).

``check --against git:REF`` compares the contract files of the working tree (or the index) with
those at ``REF``. With a ``derive:`` section it also derives contracts from the DDL the section
names — the migrations as they are now, and as they were at ``REF`` (read from git, never
checked out) — and compares those the same way: a migration that narrows a column, drops one or
changes a key shows up as the breaking change it is, before any message is produced.

A derived contract is keyed ``<ddl path>:<contract name>`` (relative to the repository root),
so reports name the DDL it came from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from contracts.config import DeriveSettings
from contracts.contract import dump_contract
from contracts.derive import DeriveRequest, contracts_for, derive_from_ddl
from contracts.derive.ddl import Catalog, apply_sql
from contracts.derive.migrations import script, scripts_from
from contracts.derive.typemap import parse_version
from contracts.errors import InputError

#: The sides :func:`derived_texts` knows besides a git ref.
WORKTREE: Final = "worktree"
INDEX: Final = "index"


def request_of(settings: DeriveSettings) -> DeriveRequest:
    """The derive request a configuration's ``derive:`` section describes."""
    return DeriveRequest(
        format=settings.format,
        dialect=settings.dialect,
        server_name=settings.server_name,
        connector_options=dict(settings.connector_options),
        debezium_version=parse_version(settings.debezium_version),
        database=settings.database,
        tables=settings.tables,
        placeholders=dict(settings.placeholders),
    )


def skipped_note(skipped: Mapping[str, int], where: str = "") -> str:
    """One line saying which statements derive skipped (they cannot change a table)."""
    shown = ", ".join(f"{head} {n}" for head, n in sorted(skipped.items()))
    count = sum(skipped.values())
    said = (
        f"{count} statement{'s' if count != 1 else ''} that cannot change a table's columns "
        f"or keys skipped ({shown})"
    )
    return f"{where}: {said}" if where else said


def derived_texts(
    settings: DeriveSettings,
    base_dir: Path,
    side: str,
    skipped: Counter[str] | None = None,
) -> dict[str, bytes]:
    """``{"<ddl path>:<name>": contract YAML}`` derived from the DDL on ``side``: the working
    tree, the git index, or a git ref (where the DDL may not exist yet: no contracts).
    The statements skipped on the way are counted into ``skipped`` when given."""
    from contracts.diff.catalog import git_repo

    path = (base_dir / settings.from_ddl).resolve()
    anchor = path if path.is_dir() else path.parent
    if not anchor.exists():
        raise InputError("no such file or directory", f"derive.from_ddl {settings.from_ddl}")
    repo = git_repo(anchor)
    ddl_rel = path.relative_to(repo.root).as_posix()
    request = request_of(settings)
    if side == WORKTREE:
        result = derive_from_ddl(path, request)
        if skipped is not None:
            skipped.update(result.skipped)
    else:
        found = _sql_at(repo.root, anchor, ddl_rel, path.is_dir(), side)
        if not found:
            return {}

        def label(rel: str) -> str:
            return f"{rel} (staged)" if side == INDEX else f"{side}:{rel}"

        catalog = Catalog(request.dialect, database=request.database)
        values = request.placeholders
        if path.is_dir():
            applied = scripts_from(found, request.dialect, label, f"{side}:{ddl_rel}", values)
        else:
            applied = [script(label(ddl_rel), found[ddl_rel], request.dialect, values)]
        for one in applied:
            apply_sql(catalog, one.text, one.label)
        if skipped is not None:
            skipped.update(catalog.skipped)
        if not catalog.table_list():
            return {}
        result = contracts_for(catalog.table_list(), request)
    return {f"{ddl_rel}:{c.name}": dump_contract(c).encode("utf-8") for c in result.contracts}


def _sql_at(root: Path, anchor: Path, ddl_rel: str, is_dir: bool, side: str) -> dict[str, str]:
    """The DDL files at a git ref (or in the index), keyed by path from the repository root."""
    from contracts.diff.catalog import git_baseline, staged_texts

    def want(rel: str) -> bool:
        if not is_dir:
            return rel == ddl_rel
        inside = rel.startswith(ddl_rel.rstrip("/") + "/")
        return (
            inside and rel.endswith(".sql") and not any(p.startswith(".") for p in rel.split("/"))
        )

    if side == INDEX:
        texts = staged_texts(anchor, want)[1]
    else:
        texts = dict(git_baseline(anchor, side, want).texts)
    return {rel: data.decode("utf-8-sig", errors="replace") for rel, data in texts.items()}
