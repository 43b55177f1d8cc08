"""Rendering diff results: text, JSON, GitHub annotations, JUnit XML and Markdown.

A :class:`Report` holds one :class:`Entry` per compared thing (one for ``diff``, one per contract
file for ``check``), and notes on files that are not entries (:attr:`Report.skipped`), which every
renderer prints. Renderers are plain functions from a report to text, listed in
:data:`RENDERERS`.

``--fail-on`` decides the exit code (:attr:`Report.failed`); it does not hide findings: a
breaking finding is an error annotation and a JUnit ``<failure>`` even with ``--fail-on never``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal
from xml.sax.saxutils import escape, quoteattr

from contracts.diff.model import DiffResult, Finding, Severity
from contracts.diff.rules import RULES

if TYPE_CHECKING:
    from contracts.diff.verdict import ContractVerdict

Status = Literal["changed", "unchanged", "added", "removed"]
FailOn = Literal["breaking", "warning", "never"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One compared thing: a label (contract name or file), where it lives, and its result.

    ``lines`` maps a finding to the line of ``file`` to annotate (None: the file as a whole).
    ``verdict`` is the contract's verdict (:mod:`contracts.diff.verdict`) when the entry judges
    a contract against its previous versions: it decides whether the entry fails the gate.
    """

    label: str
    file: str | None
    status: Status
    result: DiffResult
    lines: Callable[[Finding], int | None] | None = None
    verdict: ContractVerdict | None = None

    def fails(self, fail_on: str) -> bool:
        """Whether this entry fails a gate set to ``fail_on``."""
        if self.verdict is not None:
            return self.verdict.fails(fail_on)
        return self.result.fails(fail_on)

    def line_of(self, finding: Finding) -> int | None:
        return self.lines(finding) if self.lines is not None else None


@dataclass(frozen=True, slots=True)
class Report:
    """Everything one ``diff`` or ``check`` run found.

    ``skipped`` holds one-line notes on files that are not entries (a removed file that was not
    a contract at the baseline); renderers print them.
    """

    entries: list[Entry]
    fail_on: FailOn = "breaking"
    against: str | None = None
    skipped: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(e.fails(self.fail_on) for e in self.entries)

    @property
    def breaking(self) -> bool:
        return any(e.result.breaking for e in self.entries)

    def failing(self, entry: Entry, finding: Finding) -> bool:
        """Whether a finding is reported as a failure (error annotation, JUnit ``<failure>``).

        Breaking findings always are, whatever ``--fail-on`` says (it sets the exit code only);
        warnings are too with ``--fail-on warning``.
        """
        if finding.severity is Severity.breaking:
            return True
        return self.fail_on == "warning" and finding.severity is Severity.warning


# --- text -------------------------------------------------------------------------------------

_MARK: Final = {"breaking": "✗", "warning": "!", "info": "·"}


def _verdict_line(entry: Entry) -> str:
    r = entry.result
    verdict = "compatible" if r.compatible else "NOT compatible"
    state = "breaking" if r.breaking else "not breaking"
    counts = ", ".join(f"{n} {s}" for s, n in r.counts().items() if n)
    head = f"{entry.label}: " if entry.label else ""
    status = f" [{entry.status}]" if entry.status in ("added", "removed") else ""
    return f"{head}{r.level.value} {verdict}; {state}{status}" + (f" ({counts})" if counts else "")


def render_text(report: Report) -> str:
    """Readable lines: a verdict per entry, then one line per finding."""
    lines: list[str] = []
    for entry in report.entries:
        if entry.status == "unchanged":
            continue
        lines.append(_verdict_line(entry))
        for f in entry.result.findings:
            lines.append(f"  {_MARK[f.severity.value]} {f.severity.value:<8} {f.rule:<26} {f.path}")
            lines.append(f"      {f.message}")
    unchanged = sum(1 for e in report.entries if e.status == "unchanged")
    if len(report.entries) > 1 or report.against:
        changed = len(report.entries) - unchanged
        lines.append(
            f"{len(report.entries)} contract(s): {changed} changed or added/removed, "
            f"{unchanged} unchanged" + (f", against {report.against}" if report.against else "")
        )
    if not report.entries:
        lines.append("no contracts found")
    lines += [f"note: {note}" for note in report.skipped]
    lines.append(
        "result: " + ("FAIL" if report.failed else "ok") + f" (--fail-on {report.fail_on})"
    )
    return "\n".join(lines) + "\n"


# --- json -------------------------------------------------------------------------------------


def render_json(report: Report) -> str:
    """One DiffResult object for a single diff; for ``check`` an object listing every contract."""
    if report.against is None and len(report.entries) == 1 and not report.skipped:
        return json.dumps(report.entries[0].result.to_json(), indent=2, ensure_ascii=False) + "\n"
    out: dict[str, Any] = {
        "against": report.against,
        "breaking": report.breaking,
        "failed": report.failed,
        "contracts": [
            {"file": e.file, "name": e.label, "status": e.status, **e.result.to_json()}
            for e in report.entries
        ],
        "skipped": list(report.skipped),
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


# --- github -----------------------------------------------------------------------------------

_GITHUB_LEVEL: Final = {"breaking": "error", "warning": "warning", "info": "notice"}


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    """GitHub Actions workflow commands: ``::error file=…,line=…,title=…::message``."""
    lines: list[str] = []
    for entry in report.entries:
        for f in entry.result.findings:
            level = _GITHUB_LEVEL[f.severity.value]
            if f.severity is not Severity.info and report.failing(entry, f):
                level = "error"
            props = []
            if entry.file:
                props.append(f"file={_gh_prop(entry.file)}")
                line = entry.line_of(f)
                if line:
                    props.append(f"line={line}")
            props.append(f"title={_gh_prop(f'{f.rule} ({f.path})')}")
            lines.append(f"::{level} {','.join(props)}::{_gh_data(f.message)}")
        if not entry.result.compatible and not any(
            f.rule.startswith("avro-") for f in entry.result.findings
        ):
            where = f"file={_gh_prop(entry.file)}," if entry.file else ""
            msg = "; ".join(entry.result.verdict_messages) or "the registry would refuse it"
            lines.append(f"::error {where}title=registry-verdict::{_gh_data(msg)}")
    for note in report.skipped:
        lines.append(f"::notice title=not compared::{_gh_data(note)}")
    lines.append(render_text(report).rstrip("\n"))
    return "\n".join(lines) + "\n"


# --- markdown ---------------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    """A Markdown summary: a verdict line per entry and a table of findings."""
    out = ["## cdc-contracts: schema changes", ""]
    status = "❌ failed" if report.failed else "✅ passed"
    out.append(
        f"**{status}** (fail on: {report.fail_on})"
        + (f", against `{report.against}`" if report.against else "")
    )
    out.append("")
    out.append("| Contract | Level | Compatible | Breaking | Findings |")
    out.append("|---|---|---|---|---|")
    for e in report.entries:
        r = e.result
        counts = ", ".join(f"{n} {s}" for s, n in r.counts().items() if n) or "none"
        label = e.label + (f" ({e.status})" if e.status in ("added", "removed") else "")
        out.append(
            f"| {_md(label)} | {r.level.value} | {'yes' if r.compatible else 'no'} | "
            f"{'yes' if r.breaking else 'no'} | {counts} |"
        )
    rows = [(e, f) for e in report.entries for f in e.result.findings]
    if rows:
        out += ["", "| Contract | Severity | Rule | Path | Message |", "|---|---|---|---|---|"]
        for e, f in rows:
            out.append(
                f"| {_md(e.label)} | {f.severity.value} | `{f.rule}` | `{_md(f.path)}` | "
                f"{_md(f.message)} |"
            )
    if report.skipped:
        out += ["", "Not compared:", ""] + [f"- {_md(note)}" for note in report.skipped]
    return "\n".join(out) + "\n"


# --- junit ------------------------------------------------------------------------------------

_JUNIT_RULES: Final = tuple(r for r in RULES if r.scope != "catalog")


def render_junit(report: Report) -> str:
    """JUnit XML: one test suite per contract, one test case per rule (plus the verdict)."""
    suites: list[str] = []
    total = failures = 0
    for e in report.entries:
        cases = _junit_cases(report, e)
        n_fail = sum(1 for _, failed, _ in cases if failed)
        total += len(cases)
        failures += n_fail
        body = "\n".join(xml for _, _, xml in cases)
        suites.append(
            f'  <testsuite name={quoteattr(e.label)} tests="{len(cases)}" '
            f'failures="{n_fail}" errors="0" skipped="0"'
            + (f" file={quoteattr(e.file)}" if e.file else "")
            + f">\n{body}\n  </testsuite>"
        )
    if report.skipped:
        cases_xml = "\n".join(
            f'    <testcase classname="not compared" name={quoteattr(note.split(":", 1)[0])}>\n'
            f"      <skipped message={quoteattr(note)}/>\n    </testcase>"
            for note in report.skipped
        )
        total += len(report.skipped)
        suites.append(
            f'  <testsuite name="not compared" tests="{len(report.skipped)}" failures="0" '
            f'errors="0" skipped="{len(report.skipped)}">\n{cases_xml}\n  </testsuite>'
        )
    head = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="cdc-contracts" '
        f'tests="{total}" failures="{failures}" errors="0">'
    )
    return "\n".join([head, *suites, "</testsuites>"]) + "\n"


def _junit_cases(report: Report, e: Entry) -> list[tuple[str, bool, str]]:
    by_rule: dict[str, list[Finding]] = {}
    for f in e.result.findings:
        by_rule.setdefault(f.rule, []).append(f)
    cases: list[tuple[str, bool, str]] = []
    verdict_fails = not e.result.compatible  # the registry would refuse it: always a failure
    verdict_text = "\n".join(e.result.verdict_messages)
    cases.append(
        _junit_case(
            e, f"registry-compatibility ({e.result.level.value})", verdict_fails, verdict_text
        )
    )
    rules = list(_JUNIT_RULES)
    if e.status in ("added", "removed"):
        rules = [r for r in RULES if r.id in by_rule]
    for rule in rules:
        found = by_rule.get(rule.id, [])
        failed = any(report.failing(e, f) for f in found)
        text = "\n".join(f"{f.severity.value}: {f.path}: {f.message}" for f in found)
        cases.append(_junit_case(e, rule.id, failed, text))
    return cases


def _junit_case(e: Entry, name: str, failed: bool, text: str) -> tuple[str, bool, str]:
    attrs = f"classname={quoteattr(e.label)} name={quoteattr(name)}"
    if failed:
        first = text.splitlines()[0] if text else name
        xml = (
            f"    <testcase {attrs}>\n      <failure message={quoteattr(first)} "
            f'type="breaking-change">{escape(text)}</failure>\n    </testcase>'
        )
    elif text:
        xml = f"    <testcase {attrs}>\n      <system-out>{escape(text)}</system-out>\n    </testcase>"
    else:
        xml = f"    <testcase {attrs}/>"
    return name, failed, xml


#: Output name → renderer.
RENDERERS: Final[Mapping[str, Callable[[Report], str]]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "junit": render_junit,
    "markdown": render_markdown,
}


def step_summary(report: Report) -> str:
    """The Markdown appended to ``$GITHUB_STEP_SUMMARY``."""
    return render_markdown(report)
