"""Statements whose effect on tables derive cannot read: DO blocks, routine bodies, dynamic SQL.

A PostgreSQL ``DO $$ ... $$`` block, a ``CREATE PROCEDURE``/``FUNCTION``/``TRIGGER``/``EVENT``
body, ``EXECUTE`` of SQL built at run time and MySQL's ``PREPARE ... FROM @var`` may change a
table in ways derive cannot follow (a conditional ``ALTER``, a name built from a variable).
When such a statement holds DDL that changes a table, or runs dynamic SQL, applying the
migrations without it would derive a table that is not the database's: :func:`refusal` says so,
naming the line and quoting the text as written. A statement the author has checked can be
marked with a ``-- cdc-contracts: derive-skip`` comment just before it (or inside it); it is
then counted among the skipped statements.

MySQL client ``DELIMITER`` lines are read here too (:func:`client_delimiters`), and a routine
whose ``BEGIN ... END`` body holds semicolons is kept as one statement (:func:`with_bodies`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from contracts.sqltypes import Dialect, Token

#: The comment that marks a statement as checked by its author: derive skips it.
SKIP_MARK: Final = "cdc-contracts: derive-skip"

#: What follows ``CREATE`` in a routine definition (its body runs later, when called).
ROUTINE_WORDS: Final = frozenset({"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "RULE"})
#: Object words that end the search for what a ``CREATE`` defines.
_OBJECT_WORDS: Final = ROUTINE_WORDS | frozenset(
    {"TABLE", "VIEW", "INDEX", "TYPE", "DOMAIN", "SCHEMA", "SEQUENCE", "DATABASE", "EXTENSION"}
)

#: DDL that changes a table's columns or keys, as it appears in a body or an SQL string.
_TABLE_CHANGE: Final = re.compile(
    r"\b(?:ALTER\s+(?:TABLE|TYPE|DOMAIN)|RENAME\s+TABLE|DROP\s+(?:TABLE|TYPE|DOMAIN|INDEX)"
    r"|CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:GLOBAL|LOCAL|UNLOGGED)\s+)*(?:TABLE|TYPE|DOMAIN)"
    r"|CREATE\s+UNIQUE\s+INDEX)\b",
    re.IGNORECASE,
)
#: SQL built at run time: EXECUTE of anything but a lone string literal (PL/pgSQL, MariaDB's
#: EXECUTE IMMEDIATE), PREPARE from a variable (MySQL). A trigger's EXECUTE FUNCTION is a call.
_DYNAMIC: Final = re.compile(
    r"\bEXECUTE\s+(?:IMMEDIATE\s+)?+(?!(?:FUNCTION|PROCEDURE)\b)"
    r"(?!'[^']*'\s*(?:;|\bINTO\b|\bUSING\b|\$|$))"
    r"|\bPREPARE\s+\w+\s+FROM\s+(?!['\"])",
    re.IGNORECASE,
)
_CLIENT_DELIMITER: Final = re.compile(r"\s*DELIMITER\s+(\S+)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a statement cannot be applied: the line it names and the message."""

    line: int
    what: str


def client_delimiters(text: str) -> str:
    """MySQL ``text`` with client ``DELIMITER x`` lines blanked and each statement-ending ``x``
    written as ``;`` (same length, so lines and offsets stay true)."""
    out: list[str] = []
    delimiter: str | None = None
    for line in text.split("\n"):
        found = _CLIENT_DELIMITER.fullmatch(line)
        if found:
            delimiter = None if found.group(1) == ";" else found.group(1)
            out.append(" " * len(line))
            continue
        stripped = line.rstrip()
        if delimiter and stripped.endswith(delimiter):
            cut = len(stripped) - len(delimiter)
            line = stripped[:cut] + ";" + " " * (len(delimiter) - 1) + line[len(stripped) :]
        out.append(line)
    return "\n".join(out)


def routine_word(tokens: Sequence[Token]) -> str | None:
    """``PROCEDURE``, ``FUNCTION`` ... when ``tokens`` define a routine, else None."""
    if not tokens or tokens[0].upper != "CREATE":
        return None
    for tok in tokens[1:12]:
        if tok.is_word and tok.upper in _OBJECT_WORDS:
            return tok.upper if tok.upper in ROUTINE_WORDS else None
    return None


def with_bodies(statements: list[list[Token]]) -> list[list[Token]]:
    """``statements`` with a routine's ``BEGIN ... END`` body (split at its inner semicolons)
    joined back into the one statement it is."""
    out: list[list[Token]] = []
    pending: list[Token] | None = None
    depth = 0
    for statement in statements:
        if pending is not None:
            pending.extend(statement)
            depth += _block_depth(statement)
            if depth <= 0:
                out.append(pending)
                pending = None
            continue
        if routine_word(statement) is not None and (depth := _block_depth(statement)) > 0:
            pending = list(statement)
            continue
        out.append(statement)
    if pending is not None:
        out.append(pending)
    return out


def _block_depth(tokens: Sequence[Token]) -> int:
    """BEGIN/CASE blocks opened minus those closed (``END IF``, ``END LOOP`` ... close
    statements that were not counted as opened)."""
    depth = 0
    for i, tok in enumerate(tokens):
        word = tok.upper if tok.is_word else ""
        if word in ("BEGIN", "CASE") and not (
            word == "CASE" and i and tokens[i - 1].upper == "END"
        ):
            depth += 1
        elif word == "END":
            after = tokens[i + 1].upper if i + 1 < len(tokens) else ""
            if after not in ("IF", "LOOP", "WHILE", "REPEAT", "FOR"):
                depth -= 1
    return depth


def quoted(text: str, limit: int = 90) -> str:
    """``text`` on one line, shortened to ``limit`` characters."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def refusal(
    tokens: Sequence[Token], text: str, first_line: int, dialect: Dialect
) -> Refusal | None:
    """Why the statement ``tokens`` (of source ``text``) cannot be applied, or None."""
    if not tokens or tokens[0].start < 0:
        return None
    first = tokens[0].upper
    body = text[tokens[0].start : tokens[-1].end + 1]
    routine = routine_word(tokens)
    if first == "DO":
        kind = "a DO block"
    elif routine is not None:
        kind = f"a {routine.lower()} body (CREATE {routine})"
    elif first in ("EXECUTE", "PREPARE") and dialect != "postgres":
        kind = f"{first} (dynamic SQL)"
    elif first == "EXECUTE":
        kind = "EXECUTE"  # PostgreSQL's PREPARE takes no DDL: only a literal can hold some
    elif first == "ALTER" and len(tokens) > 1 and tokens[1].upper == "DOMAIN":
        return _at(text, tokens[0].start, first_line, _domain(body))
    else:
        return None
    change = _TABLE_CHANGE.search(body)
    if change is not None:
        shown = quoted(_statement_at(body, change.start()))
        what = (
            f"{kind} changes a table ({shown}): derive cannot apply it, nor tell what it does "
            "when it runs. Write the change as a plain statement derive can read"
        )
        return _at(text, tokens[0].start + change.start(), first_line, what + _MARK_HINT)
    dynamic = _DYNAMIC.search(body) if kind != "EXECUTE" else None
    if dynamic is not None and (first != "EXECUTE" or "IMMEDIATE" in body[:30].upper()):
        shown = quoted(_statement_at(body, dynamic.start()))
        what = (
            f"{kind} runs SQL built at run time ({shown}), which may change a table: "
            "derive cannot tell what it runs"
        )
        return _at(text, tokens[0].start + dynamic.start(), first_line, what + _MARK_HINT)
    return None


_MARK_HINT: Final = (
    f"; if it changes no captured table, put the comment -- {SKIP_MARK} just before it"
)


def _domain(body: str) -> str:
    return (
        f"{quoted(body)}: ALTER DOMAIN changes the columns of that domain, which derive does "
        "not apply; write the change as ALTER TABLE ... ALTER COLUMN statements" + _MARK_HINT
    )


def _statement_at(body: str, start: int) -> str:
    """The statement of ``body`` that begins at ``start``, up to its end or the line's end."""
    rest = body[start:]
    marks = [";", "\n", "$$"]
    if start and body[start - 1] in "'\"":  # DDL inside a string literal ends with it
        marks.append(body[start - 1])
    ends = [at for at in (rest.find(m) for m in marks) if at >= 0]
    return rest[: min(ends)] if ends else rest


def _at(text: str, offset: int, first_line: int, what: str) -> Refusal:
    return Refusal(first_line + text.count("\n", 0, offset), what)


def marked(text: str, since: int, tokens: Sequence[Token]) -> bool:
    """Whether the skip mark is in ``text`` between ``since`` and the statement's end."""
    return bool(tokens) and SKIP_MARK in text[since : tokens[-1].end + 1]
