"""The SQL a ``--from-ddl`` path holds, in the order a migration tool applies it.

A file is read as is. A directory is a set of migrations, ordered the way its tool orders them:

- Flyway: ``V<version>__<description>.sql`` by version (``V1_1`` = ``V1.1`` < ``V1.2`` < ``V2``,
  compared as numbers), then repeatable ``R__<description>.sql`` by description; undo scripts
  (``U<version>__``) are never applied by ``migrate`` and are left out;
- plain numbered files: ``001_init.sql``, ``2-add.sql``, ``0003.sql`` by their numbers;
- Liquibase formatted SQL (first line ``--liquibase formatted sql``), when no file carries a
  number: by path, as ``includeAll`` orders them; changesets whose ``dbms:`` excludes the
  dialect are left out (their lines blanked, so line numbers stay true).

A file that fits none of these, two files with one version, or a directory that mixes Flyway
and plain numbering is an error naming the file: an order that is only a guess would derive
contracts that are only a guess.

Placeholders (Flyway's ``${key}``, also Liquibase's changelog properties) are replaced by the
values given (``--placeholder KEY=VALUE``, ``placeholders:`` in the ``derive:`` section) before
a file is read, as the tool replaces them before it runs the file; a placeholder without a
value is an error quoting it, as Flyway's "No value provided for placeholder" is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from contracts.errors import InputError
from contracts.sqltypes import Dialect

_FLYWAY: Final = re.compile(r"^V([0-9]+(?:[._][0-9]+)*)__.*\.sql$", re.IGNORECASE)
_FLYWAY_REPEATABLE: Final = re.compile(r"^R__(.+)\.sql$", re.IGNORECASE)
_FLYWAY_UNDO: Final = re.compile(r"^U[0-9]+(?:[._][0-9]+)*__.*\.sql$", re.IGNORECASE)
_NUMBERED: Final = re.compile(r"^([0-9]+(?:[._][0-9]+)*)(?:[_\-. ].*)?\.sql$", re.IGNORECASE)
_LIQUIBASE_HEADER: Final = re.compile(r"^\s*--\s*liquibase\s+formatted\s+sql", re.IGNORECASE)
_CHANGESET: Final = re.compile(r"^\s*--\s*changeset\s+\S+", re.IGNORECASE)
_DBMS: Final = re.compile(r"\bdbms:\s*([!A-Za-z0-9_,]+)", re.IGNORECASE)
_PLACEHOLDER: Final = re.compile(r"\$\{([^}\n]*)\}")

#: Liquibase's dbms names for each dialect.
_LIQUIBASE_DBMS: Final = {
    "mysql": {"mysql", "mariadb"},
    "mariadb": {"mariadb", "mysql"},
    "postgres": {"postgresql"},
}


@dataclass(frozen=True, slots=True)
class SqlScript:
    """One file's SQL, ready to apply: ``label`` names it in errors."""

    label: str
    text: str


def scripts(
    path: str | Path, dialect: Dialect, placeholders: Mapping[str, str] | None = None
) -> list[SqlScript]:
    """The scripts under ``path`` (a file, or a directory of migrations) in apply order,
    with ``placeholders`` replaced."""
    p = Path(path)
    if p.is_file():
        return [script(str(p), _read(p, str(p)), dialect, placeholders)]
    if not p.is_dir():
        raise InputError("no such file or directory", str(p))
    files = {
        f.relative_to(p).as_posix(): f
        for f in sorted(p.rglob("*.sql"))
        if not _hidden(f.relative_to(p))
    }
    texts = {rel: _read(f, str(f)) for rel, f in files.items()}
    return scripts_from(texts, dialect, lambda rel: str(files[rel]), str(p), placeholders)


def scripts_from(
    texts: Mapping[str, str],
    dialect: Dialect,
    label: Callable[[str], str],
    where: str,
    placeholders: Mapping[str, str] | None = None,
) -> list[SqlScript]:
    """Scripts from migration files given as ``{relative path: text}`` (a directory, or a
    directory at a git ref); ``label`` names a file in errors, ``where`` the whole set."""
    if not texts:
        raise InputError("holds no *.sql file", where)
    return [
        script(label(rel), texts[rel], dialect, placeholders) for rel in order(texts, label, where)
    ]


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts)


def order(
    texts: Mapping[str, str], label: Callable[[str], str] = str, where: str = "migrations"
) -> list[str]:
    """The files of ``texts`` (relative paths) in apply order; see the module docstring."""
    flyway: list[tuple[tuple[int, ...], str]] = []
    repeatable: list[tuple[str, str]] = []
    numbered: list[tuple[tuple[int, ...], str]] = []
    liquibase: list[str] = []
    for rel in texts:
        name = rel.rsplit("/", 1)[-1]
        if match := _FLYWAY.match(name):
            flyway.append((_numbers(match.group(1)), rel))
        elif match := _FLYWAY_REPEATABLE.match(name):
            repeatable.append((match.group(1).lower(), rel))
        elif _FLYWAY_UNDO.match(name):
            continue
        elif match := _NUMBERED.match(name):
            numbered.append((_numbers(match.group(1)), rel))
        elif _is_liquibase(texts[rel]):
            liquibase.append(rel)
        else:
            raise InputError(
                "cannot tell where this migration goes: name it V<version>__<description>.sql "
                "(Flyway), <number>_<description>.sql, or start it with --liquibase formatted sql",
                label(rel),
            )
    if flyway and numbered:
        raise InputError(
            f"mixes Flyway names ({_name(flyway[0][1])}) and plain numbers "
            f"({_name(numbered[0][1])}): their relative order is not defined",
            where,
        )
    if (flyway or numbered) and liquibase:
        raise InputError(
            f"mixes numbered migrations and unnumbered Liquibase files ({_name(liquibase[0])})",
            where,
        )
    versioned = flyway or numbered
    _no_duplicates(versioned, label)
    ordered = [rel for _, rel in sorted(versioned, key=lambda v: v[0])]
    ordered += [rel for _, rel in sorted(repeatable)]
    return ordered + sorted(liquibase)


def _name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def _numbers(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.split(r"[._]", text)]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()  # V1.0 is V1
    return tuple(parts)


def _no_duplicates(
    versioned: list[tuple[tuple[int, ...], str]], label: Callable[[str], str]
) -> None:
    seen: dict[tuple[int, ...], str] = {}
    for version, rel in versioned:
        if version in seen:
            raise InputError(
                f"has the same version as {_name(seen[version])}: apply order is ambiguous",
                label(rel),
            )
        seen[version] = rel


def _is_liquibase(text: str) -> bool:
    first = next((line for line in text.split("\n") if line.strip()), "")
    return bool(_LIQUIBASE_HEADER.match(first))


def _read(f: Path, label: str) -> str:
    try:
        return f.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text", label) from None
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", label) from None


def script(
    label: str, text: str, dialect: Dialect, placeholders: Mapping[str, str] | None = None
) -> SqlScript:
    """One file's SQL as its migration tool runs it (``label`` names it in errors)."""
    if _is_liquibase(text):
        text = "\n".join(_liquibase_lines(text, dialect))
    return SqlScript(label, expand_placeholders(text, placeholders or {}, label))


def expand_placeholders(text: str, values: Mapping[str, str], label: str) -> str:
    """``text`` with each ``${key}`` replaced by ``values[key]``; one without a value is an
    error at ``label:line`` quoting the line as written."""

    def value(found: re.Match[str]) -> str:
        key = found.group(1)
        if key in values:
            return values[key]
        line_no = text.count("\n", 0, found.start()) + 1
        line = text.split("\n")[line_no - 1].strip()
        raise InputError(
            f"{found.group(0)} in {line!r} is a placeholder (Flyway ${{key}} syntax) that derive "
            f"does not expand by itself: give its value with --placeholder {key}=VALUE (or "
            f"placeholders: {{{key}: VALUE}} in the derive: section of cdc-contracts.yaml)",
            f"{label}:{line_no}",
        )

    return _PLACEHOLDER.sub(value, text) if "${" in text else text


def _liquibase_lines(text: str, dialect: Dialect) -> Iterator[str]:
    """The lines of a formatted-SQL changelog; changesets for other databases blanked."""
    keep = True
    wanted = _LIQUIBASE_DBMS[dialect]
    for line in text.split("\n"):
        if _CHANGESET.match(line):
            dbms = _DBMS.search(line)
            keep = dbms is None or _dbms_allows(dbms.group(1), wanted)
        yield line if keep else ""


def _dbms_allows(spec: str, wanted: set[str]) -> bool:
    names = [n.strip().lower() for n in spec.split(",") if n.strip()]
    excluded = {n[1:] for n in names if n.startswith("!")}
    included = {n for n in names if not n.startswith("!")}
    if wanted & excluded:
        return False
    return not included or bool(wanted & included) or "all" in included
