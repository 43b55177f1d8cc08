"""Text views of the ``registry`` commands: one row per subject, the reasons as a numbered list.

A plan or push is a table with one row per subject (action or outcome, current → new version,
compatibility level, ``BACKWARD → FULL`` when it changes), then every reason a subject was
refused or failed, numbered and wrapped at the terminal width. Identical reasons (the same
registry error for many subjects) are listed once with every subject they concern.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from registry_sync.sync import Action, Outcome, SubjectPlan, SubjectResult


def width() -> int:
    """The terminal's width (80 when the output is not a terminal)."""
    if not sys.stdout.isatty():
        return 80
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def version_change(item: SubjectPlan, done: int | None = None) -> str:
    """``3 → 4`` (a new version), ``new → 1`` (a new subject), ``3`` (unchanged)."""
    now = str(item.version) if item.version is not None else "new"
    if item.action in (Action.CREATE, Action.NEW_VERSION, Action.METADATA):
        after = done if done is not None else (item.version or 0) + 1
        return f"{now} → {after}"
    return now


def level_text(item: SubjectPlan) -> str:
    """The level in force after the push: ``BACKWARD``, or ``BACKWARD → FULL`` when it changes."""
    if item.level_change and item.level_from:
        return f"{item.level_from} → {item.level_to}"
    level = item.level_to or item.level_from
    if level is None and item.desired is not None:
        level = item.desired.level  # unchanged: the contract's level, which it was pushed with
    return level or ""


def reasons(item: SubjectPlan, error: str | None = None) -> list[str]:
    """Why a subject is refused or failed: the verdict's one-line refusal, then each finding
    that refuses it, then the registry verdict's reasons."""
    lines: list[str] = []
    if error:
        lines.append(error)
    elif item.verdict is not None and item.verdict.failed:
        lines.append(item.verdict.headline if item.findings else item.verdict.refusal())
    lines += [f"{f['rule']} at {f['path']}: {f['message']}" for f in item.findings]
    if not error:
        lines += list(item.messages)
    return list(dict.fromkeys(lines))


def numbered(groups: Sequence[tuple[list[str], list[str]]], columns: int) -> str:
    """``1. subject, subject: first line`` and the rest indented, wrapped at ``columns``."""
    out: list[str] = []
    for i, (subjects, lines) in enumerate(groups, 1):
        lead = f"{i}. "
        indent = " " * len(lead)
        first = ", ".join(subjects) + ": " + (lines[0] if lines else "")
        out += textwrap.wrap(
            first, columns, initial_indent=lead, subsequent_indent=indent, break_on_hyphens=False
        )
        for line in lines[1:]:
            out += textwrap.wrap(
                line,
                columns,
                initial_indent=indent + "- ",
                subsequent_indent=indent + "  ",
                break_on_hyphens=False,
            )
    return "\n".join(out)


def grouped(items: Iterable[tuple[str, list[str]]]) -> list[tuple[list[str], list[str]]]:
    """Subjects with the same reasons together (the order of first appearance)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for subject, lines in items:
        if lines:
            groups.setdefault(tuple(lines), []).append(subject)
    return [(subjects, list(lines)) for lines, subjects in groups.items()]


def plan_view(url: str, planned: Sequence[SubjectPlan]) -> str:
    """The text of ``registry plan``."""
    rows = [
        [p.subject, p.contract, p.action.value, version_change(p), level_text(p)] for p in planned
    ]
    why = grouped(
        (p.subject, reasons(p)) for p in planned if p.action in (Action.INCOMPATIBLE, Action.ERROR)
    )
    headers = ["subject", "contract", "action", "version", "level"]
    return _page(f"registry plan: {url}", headers, rows, why)


def push_view(url: str, results: Sequence[SubjectResult], dry_run: bool) -> str:
    """The text of ``registry push``."""
    rows = []
    for r in results:
        done = r.version if r.outcome in (Outcome.CREATED, Outcome.REGISTERED) else None
        result = r.plan.action.value if r.outcome is Outcome.WOULD_APPLY else r.outcome.value
        rows.append(
            [
                r.plan.subject,
                r.plan.contract,
                result,
                version_change(r.plan, done),
                level_text(r.plan),
            ]
        )
    why = grouped((r.plan.subject, reasons(r.plan, r.error)) for r in results if not r.ok)
    title = f"registry push{' (dry run)' if dry_run else ''}: {url}"
    return _page(title, ["subject", "contract", "result", "version", "level"], rows, why)


def _page(
    title: str, headers: list[str], rows: list[list[str]], why: list[tuple[list[str], list[str]]]
) -> str:
    columns = width()
    text = [title, *_table(headers, rows)]
    if why:
        text += ["", "why:", numbered(why, columns)]
    return "\n".join(text) + "\n"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Plain aligned columns, never cut (subject names must stay whole in CI logs)."""
    if not rows:
        return ["(no subjects)"]
    sizes = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = []
    for row in [headers, *rows]:
        cells = [cell.ljust(size) for cell, size in zip(row, sizes, strict=True)]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * s for s in sizes))
    return lines


def summary(values: Iterable[str]) -> str:
    """``2 create, 1 unchanged``."""
    from collections import Counter

    counts = Counter(values)
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing"


def describe_view(found: dict[str, Any]) -> str:
    """The text of ``registry describe``: the version's facts, then its schema."""
    import json

    facts = [
        ("subject", found["subject"]),
        ("version", f"{found['version']} of {', '.join(map(str, found['versions']))}"),
        ("id", found["id"]),
        ("type", found["schemaType"]),
        ("compatibility", found["compatibility"]),
    ]
    contract = (found.get("metadata") or {}).get("cdc.contract.name")
    if contract:
        facts.append(("contract", contract))
    size = max(len(k) for k, _ in facts)
    lines = [f"{k.ljust(size)}  {v}" for k, v in facts]
    schema = found["schema"]
    text = json.dumps(schema, indent=2) if not isinstance(schema, str) else schema
    return "\n".join([*lines, "", text]) + "\n"
