"""Rendering diff results: text, JSON, GitHub annotations, JUnit XML, Markdown, SARIF 2.1.0
and GitLab Code Quality JSON.

A :class:`Report` holds one :class:`Entry` per compared thing (one for ``diff``, one per contract
file for ``check``), notes on files that are not entries (:attr:`Report.skipped`) and warnings
about the configuration (:attr:`Report.notices`, e.g. an exception that matches nothing), which
every renderer prints. Renderers are plain functions from a report to text, listed in
:data:`RENDERERS`; :func:`render_error` writes a run that could not judge (an unreachable
registry, a file that does not load) as one annotation, notification or issue in each format.

``--fail-on`` decides the exit code (:attr:`Report.failed`); it does not hide findings: a
breaking finding is an error annotation and a JUnit ``<failure>`` even with ``--fail-on never``.
A finding a configured exception excuses is shown everywhere with its reason (a SARIF
suppression, a GitHub notice, JUnit ``<system-out>``) and fails nothing; one whose exception
expired fails again, saying so.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from contracts.diff.model import DiffResult, Finding, Severity
from contracts.diff.rules import RULES, Rule
from contracts.errors import ContractsError

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
class Notice:
    """A warning about the run's configuration (not a finding): it fails nothing.

    ``file``/``line`` locate it (``cdc-contracts.yaml``, 14) when it is about a file.
    """

    message: str
    file: str | None = None
    line: int | None = None

    def located(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else self.file
        return f"{where}: {self.message}" if where else self.message


@dataclass(frozen=True, slots=True)
class Report:
    """Everything one ``diff`` or ``check`` run found.

    ``skipped`` holds one-line notes on files that are not entries (a removed file that was not
    a contract at the baseline); ``notices`` warnings about the configuration (an exception
    that matches nothing). Renderers print both.
    """

    entries: list[Entry]
    fail_on: FailOn = "breaking"
    against: str | None = None
    skipped: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(e.fails(self.fail_on) for e in self.entries)

    @property
    def breaking(self) -> bool:
        return any(e.result.breaking for e in self.entries)

    def failing(self, entry: Entry, finding: Finding) -> bool:
        """Whether a standing finding is reported as a failure (error annotation, JUnit
        ``<failure>``).

        Breaking findings always are, whatever ``--fail-on`` says (it sets the exit code only);
        warnings are too with ``--fail-on warning``. (A waived finding is not: see :func:`rows`.)
        """
        if finding.severity is Severity.breaking:
            return True
        return self.fail_on == "warning" and finding.severity is Severity.warning

    def row_fails(self, entry: Entry, row: Row) -> bool:
        """Whether a row is reported as a failure: a standing finding that fails."""
        return not row.excepted and self.failing(entry, row.finding)


@dataclass(frozen=True, slots=True)
class Row:
    """A finding as reports show it, with the configured exception that covers it, if any.

    ``waiver`` has ``reason`` and ``expired`` (and, from ``cdc-contracts.yaml``, ``until``,
    ``where`` and ``describe()``): an excepted row is shown with its reason and fails nothing;
    an expired one stands, saying when its exception expired.
    """

    finding: Finding
    waiver: Any = None

    @property
    def excepted(self) -> bool:
        return self.waiver is not None and not self.waiver.expired

    def waiver_line(self) -> str:
        """``excepted until DATE: REASON (where)`` / ``exception expired on DATE: ...``."""
        w = self.waiver
        if w is None:
            return ""
        describe = getattr(w, "describe", None)
        if callable(describe):
            return str(describe())
        return ("exception expired: " if w.expired else "excepted: ") + str(w.reason)

    def waiver_json(self) -> dict[str, Any] | None:
        w = self.waiver
        if w is None:
            return None
        to_json = getattr(w, "to_json", None)
        if callable(to_json):
            return dict(to_json())
        return {"reason": w.reason, "expired": w.expired}


def rows(entry: Entry) -> list[Row]:
    """The entry's findings: those that stand (an expired exception named beside its finding),
    then those its verdict waived, with their exceptions."""
    verdict = entry.verdict
    if verdict is None:
        return [Row(f) for f in entry.result.findings]
    expired = list(verdict.expired)
    out = [
        Row(f, next((w.waiver for w in expired if w.finding == f), None))
        for f in entry.result.findings
    ]
    return out + [Row(w.finding, w.waiver) for w in verdict.waived]


def _counts(entry: Entry) -> dict[str, int]:
    counts = entry.result.counts()
    if entry.verdict is not None and entry.verdict.waived:
        counts["excepted"] = len(entry.verdict.waived)
    return counts


def _verdict_failure(entry: Entry) -> str | None:
    """The registry's refusal when no ``avro-*`` finding explains it (then it needs its own
    annotation or result), else None."""
    if entry.result.compatible or any(f.rule.startswith("avro-") for f in entry.result.findings):
        return None
    return "; ".join(entry.result.verdict_messages) or "the registry would refuse it"


# --- text -------------------------------------------------------------------------------------

_MARK: Final = {"breaking": "✗", "warning": "!", "info": "·", "excepted": "✓"}


def _verdict_line(entry: Entry) -> str:
    r = entry.result
    verdict = "compatible" if r.compatible else "NOT compatible"
    state = "breaking" if r.breaking else "not breaking"
    counts = ", ".join(f"{n} {s}" for s, n in _counts(entry).items() if n)
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
        for row in rows(entry):
            f = row.finding
            shown = "excepted" if row.excepted else f.severity.value
            lines.append(f"  {_MARK[shown]} {shown:<8} {f.rule:<26} {f.path}")
            lines.append(f"      {f.message}")
            if row.waiver is not None:
                lines.append(f"      {row.waiver_line()}")
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
    lines += [f"warning: {notice.located()}" for notice in report.notices]
    lines.append(
        "result: " + ("FAIL" if report.failed else "ok") + f" (--fail-on {report.fail_on})"
    )
    return "\n".join(lines) + "\n"


# --- json -------------------------------------------------------------------------------------


def render_json(report: Report) -> str:
    """One DiffResult object for a single diff; for ``check`` an object listing every contract
    (each as its verdict's JSON, the API's too). Findings a configured exception waived are
    listed under ``waived`` (with ``reason``, ``until``, ``where``); a standing finding whose
    exception expired is listed under ``expired`` too; ``warnings`` are the configuration's."""
    warnings = [_notice_json(n) for n in report.notices]
    if report.against is None and len(report.entries) == 1 and not report.skipped:
        entry = report.entries[0]
        single = entry.result.to_json()
        if entry.verdict is not None and (entry.verdict.waived or entry.verdict.expired):
            judged = entry.verdict.to_json()
            single.update(waived=judged["waived"], expired=judged["expired"])
        if warnings:
            single["warnings"] = warnings
        return json.dumps(single, indent=2, ensure_ascii=False) + "\n"
    out: dict[str, Any] = {
        "against": report.against,
        "breaking": report.breaking,
        "failed": report.failed,
        "contracts": [_entry_json(e) for e in report.entries],
        "skipped": list(report.skipped),
        "warnings": warnings,
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _entry_json(entry: Entry) -> dict[str, Any]:
    if entry.verdict is not None:
        return {"file": entry.file, **entry.verdict.to_json()}
    return {
        "file": entry.file,
        "name": entry.label,
        "status": entry.status,
        **entry.result.to_json(),
    }


def _notice_json(notice: Notice) -> dict[str, Any]:
    return {"file": notice.file, "line": notice.line, "message": notice.message}


# --- github -----------------------------------------------------------------------------------

_GITHUB_LEVEL: Final = {"breaking": "error", "warning": "warning", "info": "notice"}


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _gh_location(file: str | None, line: int | None) -> list[str]:
    props = [f"file={_gh_prop(file)}"] if file else []
    if file and line:
        props.append(f"line={line}")
    return props


def render_github(report: Report) -> str:
    """GitHub Actions workflow commands: ``::error file=…,line=…,title=…::message``."""
    lines: list[str] = []
    for entry in report.entries:
        for row in rows(entry):
            f = row.finding
            level = "notice" if row.excepted else _GITHUB_LEVEL[f.severity.value]
            if f.severity is not Severity.info and report.row_fails(entry, row):
                level = "error"
            title = f"{f.rule} ({f.path})" + (" excepted" if row.excepted else "")
            props = _gh_location(entry.file, entry.line_of(f))
            props.append(f"title={_gh_prop(title)}")
            message = f.message + (f" ({row.waiver_line()})" if row.waiver is not None else "")
            lines.append(f"::{level} {','.join(props)}::{_gh_data(message)}")
        refusal = _verdict_failure(entry)
        if refusal is not None:
            where = f"file={_gh_prop(entry.file)}," if entry.file else ""
            lines.append(f"::error {where}title=registry-verdict::{_gh_data(refusal)}")
    for note in report.skipped:
        lines.append(f"::notice title=not compared::{_gh_data(note)}")
    for notice in report.notices:
        props = _gh_location(notice.file, notice.line)
        props.append("title=cdc-contracts configuration")
        lines.append(f"::warning {','.join(props)}::{_gh_data(notice.message)}")
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
        counts = ", ".join(f"{n} {s}" for s, n in _counts(e).items() if n) or "none"
        label = e.label + (f" ({e.status})" if e.status in ("added", "removed") else "")
        out.append(
            f"| {_md(label)} | {r.level.value} | {'yes' if r.compatible else 'no'} | "
            f"{'yes' if r.breaking else 'no'} | {counts} |"
        )
    table = [(e, row) for e in report.entries for row in rows(e)]
    if table:
        out += ["", "| Contract | Severity | Rule | Path | Message |", "|---|---|---|---|---|"]
        for e, row in table:
            f = row.finding
            severity = f.severity.value + (" (excepted)" if row.excepted else "")
            message = f.message + (f" — {row.waiver_line()}" if row.waiver is not None else "")
            out.append(
                f"| {_md(e.label)} | {severity} | `{f.rule}` | `{_md(f.path)}` | {_md(message)} |"
            )
    if report.skipped:
        out += ["", "Not compared:", ""] + [f"- {_md(note)}" for note in report.skipped]
    if report.notices:
        out += ["", "Warnings:", ""] + [f"- {_md(n.located())}" for n in report.notices]
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
    if report.notices:
        cases_xml = "\n".join(
            f'    <testcase classname="configuration" name={quoteattr(n.located())}>\n'
            f"      <system-out>{escape(n.message)}</system-out>\n    </testcase>"
            for n in report.notices
        )
        total += len(report.notices)
        suites.append(
            f'  <testsuite name="configuration" tests="{len(report.notices)}" failures="0" '
            f'errors="0" skipped="0">\n{cases_xml}\n  </testsuite>'
        )
    return _junit_document(total, failures, 0, suites)


def _junit_document(total: int, failures: int, errors: int, suites: list[str]) -> str:
    head = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="cdc-contracts" '
        f'tests="{total}" failures="{failures}" errors="{errors}">'
    )
    return "\n".join([head, *suites, "</testsuites>"]) + "\n"


def _junit_cases(report: Report, e: Entry) -> list[tuple[str, bool, str]]:
    by_rule: dict[str, list[Row]] = {}
    for row in rows(e):
        by_rule.setdefault(row.finding.rule, []).append(row)
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
        # failing findings first: the <failure> message is the first line
        found.sort(key=lambda row: not report.row_fails(e, row))
        failed = any(report.row_fails(e, row) for row in found)
        text = "\n".join(_junit_line(row) for row in found)
        cases.append(_junit_case(e, rule.id, failed, text))
    return cases


def _junit_line(row: Row) -> str:
    f = row.finding
    line = f"{f.severity.value}: {f.path}: {f.message}"
    return f"{line} ({row.waiver_line()})" if row.waiver is not None else line


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


# --- sarif ------------------------------------------------------------------------------------

SARIF_SCHEMA: Final = (
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
)
_SARIF_LEVEL: Final = {"breaking": "error", "warning": "warning", "info": "note"}
_FINGERPRINT: Final = "cdcContractsFinding/v1"
#: The registry's refusal when no avro-* finding explains it (a result needs a rule).
_VERDICT_RULE: Final = (
    "registry-verdict",
    "Schema Registry would refuse the new schema at the subject's compatibility level.",
)


def _tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cdc-contracts")
    except PackageNotFoundError:
        return "0"


def _artifact(file: str) -> dict[str, str]:
    """A file as a SARIF artifact location: a relative path stays relative to the checkout
    (``%SRCROOT%``, as GitHub code scanning reads it); an absolute one is a ``file:`` URI."""
    path = PurePath(file)
    if path.is_absolute():
        return {"uri": Path(file).as_uri()}
    return {"uri": quote(path.as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


def _fingerprint(*parts: str) -> str:
    """A hash of what identifies an issue across runs (never its line, which moves)."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _sarif_location(file: str | None, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(file or ".")}
    if line:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    breaks = ", ".join(rule.breaks)
    how = (
        "The Schema Registry refuses such a change at the subject's level: it cannot be "
        "excepted; change the contract's compatibility level, or the change."
        if rule.scope == "registry"
        else "To make a deliberate change, add an exception for this contract, rule and column "
        "to cdc-contracts.yaml, with the reason (and optionally an until date)."
    )
    text = f"{rule.purpose} Severity: {rule.severity.value}. Breaks: {breaks}. {how}"
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.purpose},
        "fullDescription": {"text": f"{rule.purpose} Breaks: {breaks}."},
        "help": {"text": text, "markdown": f"**{rule.id}**: {rule.purpose}\n\n{how}"},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity.value]},
        "properties": {"tags": [rule.scope, *rule.breaks], "severity": rule.severity.value},
    }


def _sarif_rules() -> list[dict[str, Any]]:
    rules = [_sarif_rule(r) for r in RULES]
    rule_id, purpose = _VERDICT_RULE
    rules.append(
        {
            "id": rule_id,
            "name": "RegistryVerdict",
            "shortDescription": {"text": purpose},
            "help": {"text": purpose, "markdown": purpose},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["registry"], "severity": "breaking"},
        }
    )
    return rules


def _sarif_result(report: Report, entry: Entry, row: Row, index: int) -> dict[str, Any]:
    f = row.finding
    if row.excepted:
        level = "note"
    elif report.failing(entry, f):
        level = "error"
    else:
        level = _SARIF_LEVEL[f.severity.value]
    message = f"{entry.label}: {f.message}"
    if row.waiver is not None and not row.excepted:
        message += f" ({row.waiver_line()})"
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": level,
        "message": {"text": message},
        "locations": [
            {
                **(_sarif_location(entry.file, entry.line_of(f)) if entry.file else {}),
                "logicalLocations": [
                    {
                        "name": f.path,
                        "fullyQualifiedName": f"{entry.label}/{f.path}",
                        "kind": "member",
                    }
                ],
            }
        ],
        "partialFingerprints": {_FINGERPRINT: _fingerprint(entry.label, f.rule, f.path)},
        "properties": {"severity": f.severity.value, "contract": entry.label, "path": f.path},
    }
    if row.waiver is not None:
        result["properties"]["exception"] = row.waiver_json()
    if row.excepted:
        suppression: dict[str, Any] = {
            "kind": "external",
            "status": "accepted",
            "justification": str(row.waiver.reason),
        }
        where = _split_where(getattr(row.waiver, "where", None))
        if where[0]:
            suppression["location"] = _sarif_location(*where)
        result["suppressions"] = [suppression]
    return result


def _sarif_notification(
    message: str, level: str, file: str | None, line: int | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"level": level, "message": {"text": message}}
    if file:
        out["locations"] = [_sarif_location(file, line)]
    return out


def _sarif_log(results: list[dict[str, Any]], invocation: dict[str, Any]) -> str:
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cdc-contracts",
                        "semanticVersion": _tool_version(),
                        "rules": _sarif_rules(),
                    }
                },
                "invocations": [invocation],
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0 (GitHub code scanning): one result per finding at its contract line, the
    registry's refusal as ``registry-verdict``, exceptions as accepted suppressions with their
    reason, configuration warnings as tool configuration notifications."""
    index = {r.id: i for i, r in enumerate(RULES)}
    results: list[dict[str, Any]] = []
    for entry in report.entries:
        for row in rows(entry):
            results.append(_sarif_result(report, entry, row, index[row.finding.rule]))
        refusal = _verdict_failure(entry)
        if refusal is not None:
            results.append(
                {
                    "ruleId": _VERDICT_RULE[0],
                    "ruleIndex": len(RULES),
                    "level": "error",
                    "message": {"text": f"{entry.label}: {refusal}"},
                    **({"locations": [_sarif_location(entry.file, None)]} if entry.file else {}),
                    "partialFingerprints": {
                        _FINGERPRINT: _fingerprint(entry.label, _VERDICT_RULE[0])
                    },
                }
            )
    invocation: dict[str, Any] = {
        "executionSuccessful": True,
        "exitCode": 1 if report.failed else 0,
    }
    notes = [_sarif_notification(n.message, "warning", n.file, n.line) for n in report.notices]
    notes += [_sarif_notification(note, "note", None, None) for note in report.skipped]
    if notes:
        invocation["toolConfigurationNotifications"] = notes
    return _sarif_log(results, invocation)


# --- gitlab code quality -----------------------------------------------------------------------


def _gitlab_issue(
    description: str, check: str, severity: str, path: str, line: int | None, *key: str
) -> dict[str, Any]:
    return {
        "description": description,
        "check_name": check,
        "fingerprint": _fingerprint("gitlab", check, *key),
        "severity": severity,
        "location": {"path": path, "lines": {"begin": line or 1}},
    }


def render_gitlab(report: Report) -> str:
    """GitLab Code Quality JSON: one issue per finding (``critical`` when it fails the gate,
    ``info`` when excepted, with the reason), fingerprints stable across runs."""
    issues: list[dict[str, Any]] = []
    for entry in report.entries:
        path = entry.file or entry.label
        for row in rows(entry):
            f = row.finding
            if row.excepted:
                severity = "info"
            elif report.failing(entry, f):
                severity = "critical" if f.severity is Severity.breaking else "major"
            else:
                severity = {"breaking": "critical", "warning": "minor", "info": "info"}[
                    f.severity.value
                ]
            text = f"{entry.label}: {f.message} ({f.path})"
            if row.waiver is not None:
                text += f" — {row.waiver_line()}"
            issues.append(
                _gitlab_issue(text, f.rule, severity, path, entry.line_of(f), entry.label, f.path)
            )
        refusal = _verdict_failure(entry)
        if refusal is not None:
            issues.append(
                _gitlab_issue(
                    f"{entry.label}: {refusal}",
                    "registry-verdict",
                    "critical",
                    path,
                    None,
                    entry.label,
                )
            )
    for notice in report.notices:
        issues.append(
            _gitlab_issue(
                notice.message,
                "configuration",
                "minor",
                notice.file or ".",
                notice.line,
                notice.message,
            )
        )
    return json.dumps(_unique(issues), indent=2, ensure_ascii=False) + "\n"


def _unique(issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GitLab needs distinct fingerprints: a repeated one gets a counter."""
    seen: dict[str, int] = {}
    for issue in issues:
        base = issue["fingerprint"]
        n = seen.get(base, 0)
        seen[base] = n + 1
        if n:
            issue["fingerprint"] = _fingerprint(base, str(n))
    return issues


# --- a run that could not judge ----------------------------------------------------------------

_LOCATED: Final = re.compile(r"^(?P<file>[^\s:][^\s]*?):(?P<line>\d+)(?:\s|$)")


def _split_where(where: str | None) -> tuple[str | None, int | None]:
    """``contracts/x.yaml:12 $.a`` → (``contracts/x.yaml``, 12); anything else → its text.
    A URL (a registry's, ``http://host:8081``) is no file: its port is no line."""
    if not where or "://" in where.split(" ", 1)[0]:
        return None, None
    found = _LOCATED.match(where)
    if found is None:
        return None, None
    return found.group("file"), int(found.group("line"))


def render_error(output_format: str, err: ContractsError, fallback_path: str = ".") -> str:
    """A run that could not judge, as one annotation, notification or issue in the format
    (text: empty; the error line goes to stderr in every format)."""
    message = f"cdc-contracts could not check the contracts: {err.one_line()}"
    file, line = _split_where(err.where)
    if output_format == "json":
        error = {"where": err.where, "what": err.what, "message": err.one_line()}
        return json.dumps({"error": error, "failed": True}, indent=2, ensure_ascii=False) + "\n"
    if output_format == "github":
        props = [*_gh_location(file, line), "title=cdc-contracts could not run"]
        return f"::error {','.join(props)}::{_gh_data(err.one_line())}\n"
    if output_format == "markdown":
        return f"## cdc-contracts: schema changes\n\n**❌ could not run**: {_md(err.one_line())}\n"
    if output_format == "junit":
        case = (
            f'    <testcase classname="cdc-contracts" name="run">\n'
            f'      <error message={quoteattr(err.one_line())} type="unusable-input"/>\n'
            "    </testcase>"
        )
        suite = (
            f'  <testsuite name="cdc-contracts" tests="1" failures="0" errors="1" skipped="0">\n'
            f"{case}\n  </testsuite>"
        )
        return _junit_document(1, 0, 1, [suite])
    if output_format == "sarif":
        invocation = {
            "executionSuccessful": False,
            "exitCode": err.exit_code,
            "toolExecutionNotifications": [_sarif_notification(message, "error", file, line)],
        }
        return _sarif_log([], invocation)
    if output_format == "gitlab":
        issue = _gitlab_issue(
            message, "unusable-input", "blocker", file or fallback_path, line, err.one_line()
        )
        return json.dumps([issue], indent=2, ensure_ascii=False) + "\n"
    return ""


#: Output name → renderer.
RENDERERS: Final[Mapping[str, Callable[[Report], str]]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "junit": render_junit,
    "markdown": render_markdown,
    "sarif": render_sarif,
    "gitlab": render_gitlab,
}


def step_summary(report: Report) -> str:
    """The Markdown appended to ``$GITHUB_STEP_SUMMARY``."""
    return render_markdown(report)
