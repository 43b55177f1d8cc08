"""plan / push / pull: keep a Schema Registry in step with contract files.

- :func:`plan` decides, per subject, what a push would do, without writing: ``create``,
  ``new-version`` (the schema changed and the registry accepts it), ``metadata`` (same schema,
  the contract's identity or compatibility level changed), ``unchanged``, ``incompatible``
  (with the registry's reasons and the diff engine's findings) or ``error`` (the registry could
  not answer). An unchanged subject costs exactly one lookup request.
- :func:`push` plans everything first, then applies the accepted changes with bounded
  concurrency (compatibility level first, then the schema); a refused or failed subject does
  not stop the others, and a re-run after success changes nothing.
- :func:`pull` rebuilds contract files from the contract carried in the schemas' metadata.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from contracts.contract import Contract, check_format, dump_contract
from contracts.diff.side import Side
from contracts.diff.verdict import (
    ContractVerdict,
    ExceptionPolicy,
    FailOn,
    contract_verdict,
    schema_verdict,
)
from contracts.errors import ContractsError, InputError
from registry_sync.client import RegistryClient
from registry_sync.desired import PROP_NAME, PROP_PART, DesiredSubject, contract_from_properties
from registry_sync.protocol import Registered, RegistryRefusedError

T = TypeVar("T")
R = TypeVar("R")
DEFAULT_CONCURRENCY = 8


class Action(enum.StrEnum):
    CREATE = "create"
    NEW_VERSION = "new-version"
    METADATA = "metadata"
    LEVEL = "level"
    UNCHANGED = "unchanged"
    INCOMPATIBLE = "incompatible"
    ERROR = "error"

    @property
    def writes(self) -> bool:
        return self in (Action.CREATE, Action.NEW_VERSION, Action.METADATA, Action.LEVEL)


@dataclass
class SubjectPlan:
    """What a push would do for one subject, and why."""

    subject: str
    contract: str
    part: str
    action: Action
    level_from: str | None = None
    level_to: str | None = None
    version: int | None = None  # the registered version matching (unchanged) or latest
    schema_id: int | None = None
    messages: list[str] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)
    desired: DesiredSubject | None = None
    #: the contract's verdict (value subjects judged against registered versions)
    verdict: ContractVerdict | None = None
    #: The exit code of the error behind an ``error`` action (2: the registry could not be
    #: reached or used; 1: it refused).
    error_exit: int = 0

    @property
    def level_change(self) -> bool:
        return self.level_to is not None and self.level_to != self.level_from

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject": self.subject,
            "contract": self.contract,
            "part": self.part,
            "action": self.action.value,
            "version": self.version,
            "id": self.schema_id,
        }
        level = self.level_to or self.level_from or (self.desired.level if self.desired else None)
        if level is not None:
            out["level"] = level
        if self.level_change:
            out["compatibility"] = {"from": self.level_from, "to": self.level_to}
        if self.verdict is not None and self.verdict.failed:
            out["refusal"] = self.verdict.refusal()
        if self.messages:
            out["messages"] = self.messages
        if self.findings:
            out["findings"] = self.findings
        return out


class Outcome(enum.StrEnum):
    CREATED = "created"
    REGISTERED = "registered"
    LEVEL_SET = "level-set"
    UNCHANGED = "unchanged"
    REFUSED = "refused"
    FAILED = "failed"
    WOULD_APPLY = "would-apply"


@dataclass
class SubjectResult:
    """What a push did for one subject."""

    plan: SubjectPlan
    outcome: Outcome
    version: int | None = None
    schema_id: int | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome not in (Outcome.REFUSED, Outcome.FAILED)

    def to_json(self) -> dict[str, Any]:
        out = self.plan.to_json()
        out["outcome"] = self.outcome.value
        if self.outcome in (Outcome.CREATED, Outcome.REGISTERED):
            out["version"], out["id"] = self.version, self.schema_id
        if self.error:
            out["error"] = self.error
        return out


def _bounded(fn: Callable[[T], R], items: Sequence[T], concurrency: int) -> list[R]:
    if concurrency <= 1 or len(items) <= 1:
        return [fn(i) for i in items]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        return list(pool.map(fn, items))


# --- plan -------------------------------------------------------------------------------------


def same_avro(a: str | None, b: str | None) -> bool:
    """Whether two Avro schema texts parse to the same schema (whitespace, key order aside)."""
    if a is None or b is None:
        return False
    import avro.schema

    try:
        left = avro.schema.parse(a).to_json()
        right = avro.schema.parse(b).to_json()
    except Exception:
        return a == b
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


def plan_subject(
    client: RegistryClient,
    desired: DesiredSubject,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
) -> SubjectPlan:
    """Plan one subject. Trouble with this subject (the registry failing on one of its
    requests, a registered version that does not load) becomes an ``error`` entry; a registry
    that cannot be used at all is found by the probe :func:`plan` makes first."""
    base = SubjectPlan(desired.subject, desired.contract.name, desired.part, Action.ERROR)
    base.desired = desired
    try:
        return _plan(client, desired, base, fail_on, exceptions)
    except ContractsError as err:
        return _failed(base, err)


def _failed(out: SubjectPlan, err: ContractsError) -> SubjectPlan:
    out.action = Action.ERROR
    out.messages = [err.one_line()]
    out.error_exit = err.exit_code
    return out


def _plan(
    client: RegistryClient,
    desired: DesiredSubject,
    out: SubjectPlan,
    fail_on: FailOn,
    exceptions: ExceptionPolicy | None,
) -> SubjectPlan:
    found = client.lookup(desired.subject, desired.schema, desired.properties)
    if found is not None:
        out.action, out.version, out.schema_id = Action.UNCHANGED, found.version, found.schema_id
        return out
    latest = client.version(desired.subject)
    if latest is None:
        out.action, out.level_to = Action.CREATE, desired.level
        return out
    out.version, out.schema_id = latest.version, latest.schema_id
    previous = contract_from_properties(latest.metadata_properties, desired.subject)
    out.level_from = (
        previous.compatibility.value if previous else client.compatibility(desired.subject)
    )
    out.level_to = desired.level
    if same_avro(latest.schema, desired.schema):
        out.action = Action.METADATA
        return out
    if previous is not None and previous.to_dict() == desired.contract.to_dict():
        out.action = Action.UNCHANGED  # e.g. registered again by a rollback (more metadata)
        return out
    history = _history(client, desired, latest, out.level_from)
    judged = judge_subject(desired, history, fail_on, exceptions, out.level_from)
    out.verdict = judged.verdict
    out.messages, out.findings = list(judged.messages), list(judged.findings)
    out.action = Action.NEW_VERSION if judged.ok else Action.INCOMPATIBLE
    return out


def _history(
    client: RegistryClient, desired: DesiredSubject, latest: Registered, held: str | None
) -> list[tuple[int, Registered]]:
    """The versions the verdict is taken against: every live one for transitive levels (the
    level the subject is ``held`` at joined with the contract's), else the latest."""
    if not desired.judging_level(held).transitive:
        return [(latest.version or 0, latest)]
    found: list[tuple[int, Registered]] = []
    for number in client.versions(desired.subject):
        got = latest if number == latest.version else client.version(desired.subject, number)
        if got is not None and got.schema is not None:
            found.append((number, got))
    return found


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict on one subject: ``ok``, the registry verdict's reasons and the findings
    that fail the gate when refused; ``verdict`` is the contract's (value subjects)."""

    ok: bool
    messages: tuple[str, ...] = ()
    findings: tuple[dict[str, str], ...] = ()
    verdict: ContractVerdict | None = None


def judge_subject(
    desired: DesiredSubject,
    history: Sequence[tuple[int, Registered]],
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
    held: str | None = None,
) -> Judgement:
    """Judge one subject against its registered versions (``history``: number and version,
    oldest first) — what ``registry plan``, ``registry push`` and the API's ``PUT`` ask.

    A value subject carries the contract: its verdict (:func:`subject_verdict`) is the CDC
    rules and the registry verdict at the level the subject is ``held`` at joined with the
    contract's (a lowered level is a finding, and judged at the held level). A key subject gets
    the registry verdict of its schema (the key's CDC rules are the value subject's contract
    verdict).
    """
    if desired.part == "value":
        judged = subject_verdict(desired, history, fail_on, exceptions, held)
        if not judged.failed:
            return Judgement(True, verdict=judged)
        findings = tuple(f.to_json() for f in judged.failing())
        return Judgement(False, judged.result.verdict_messages, findings, judged)
    previous = [(n, _avro_of(r, desired.subject, n)) for n, r in history]
    answer = schema_verdict(desired.schema, previous, desired.judging_level(held))
    return Judgement(answer.compatible, answer.messages)


def subject_verdict(
    desired: DesiredSubject,
    history: Sequence[tuple[int, Registered]],
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
    held: str | None = None,
) -> ContractVerdict:
    """The contract's verdict against the registered versions of its value subject (``held``:
    the subject's level in the registry): a version carrying a contract (``registry push``) is
    that contract, one registered by another tool its Avro schema."""
    sides = [registered_side(r, desired.subject, n) for n, r in history]
    return contract_verdict(
        desired.contract,
        sides,
        fail_on=fail_on,
        exceptions=exceptions,
        versions=[n for n, _ in history],
        baseline_level=held if history else None,
    )


def registered_side(registered: Registered, subject: str, number: int) -> Side:
    """A registered version as a diff side: its contract, else its Avro schema."""
    where = f"subject {subject} version {number}"
    found = contract_from_properties(registered.metadata_properties, where)
    if found is not None:
        check_format(found, where)
        return Side.of_contract(found, f"{subject} v{number}")
    return Side.of_avro(_avro_of(registered, subject, number), f"{subject} v{number}")


def _avro_of(registered: Registered, subject: str, number: int) -> Any:
    try:
        return json.loads(registered.schema or "")
    except ValueError:
        where = f"subject {subject} version {number}"
        raise InputError("the registered schema is not an Avro schema", where) from None


def plan(
    client: RegistryClient,
    desired: Sequence[DesiredSubject],
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
) -> list[SubjectPlan]:
    """Plan every subject (bounded concurrency); the order follows ``desired``. The registry
    is probed once first: one that cannot be used ends the run with one error."""
    client.ensure_registry()
    planned = _bounded(
        lambda d: plan_subject(client, d, fail_on, exceptions), list(desired), concurrency
    )
    return _carry_levels(planned)


def _carry_levels(planned: list[SubjectPlan]) -> list[SubjectPlan]:
    """A level change seen on a value subject also applies to its contract's key subject.

    The key subject does not carry the contract (so it is not re-registered for every contract
    edit); an unchanged key subject whose contract changes level becomes a ``level`` action.
    """
    changes = {
        p.contract: (p.level_from, p.level_to)
        for p in planned
        if p.part == "value" and p.level_change and p.level_from is not None and p.action.writes
    }
    for p in planned:
        if p.part == "key" and p.action is Action.UNCHANGED and p.contract in changes:
            p.action = Action.LEVEL
            p.level_from, p.level_to = changes[p.contract]
    return planned


# --- push -------------------------------------------------------------------------------------


def apply_subject(client: RegistryClient, item: SubjectPlan) -> SubjectResult:
    """Apply one planned subject: level first (when it changes), then the schema."""
    if item.action is Action.UNCHANGED:
        return SubjectResult(item, Outcome.UNCHANGED, item.version, item.schema_id)
    if item.action is Action.INCOMPATIBLE:
        reason = "; ".join(item.messages) or "incompatible with the registered versions"
        return SubjectResult(item, Outcome.REFUSED, error=reason)
    if item.action is Action.ERROR or item.desired is None:
        return SubjectResult(item, Outcome.FAILED, error="; ".join(item.messages))
    desired = item.desired
    try:
        if item.action is Action.CREATE or item.level_change:
            client.set_compatibility(desired.subject, desired.level)
        if item.action is Action.LEVEL:
            return SubjectResult(item, Outcome.LEVEL_SET, item.version, item.schema_id)
        done = client.register(desired.subject, desired.schema, desired.properties)
    except RegistryRefusedError as err:
        return SubjectResult(item, Outcome.REFUSED, error=err.one_line())
    except ContractsError as err:
        return SubjectResult(item, Outcome.FAILED, error=err.one_line())
    outcome = Outcome.CREATED if item.action is Action.CREATE else Outcome.REGISTERED
    return SubjectResult(item, outcome, done.version, done.schema_id)


def push(
    client: RegistryClient,
    desired: Sequence[DesiredSubject],
    concurrency: int = DEFAULT_CONCURRENCY,
    dry_run: bool = False,
    *,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
) -> list[SubjectResult]:
    """Plan every subject, then (unless ``dry_run``) apply what the plan accepts."""
    planned = plan(client, desired, concurrency, fail_on=fail_on, exceptions=exceptions)
    if dry_run:
        return [_dry(p) for p in planned]
    return _bounded(lambda p: apply_subject(client, p), planned, concurrency)


def _dry(item: SubjectPlan) -> SubjectResult:
    table = {
        Action.UNCHANGED: Outcome.UNCHANGED,
        Action.INCOMPATIBLE: Outcome.REFUSED,
        Action.ERROR: Outcome.FAILED,
    }
    outcome = table.get(item.action, Outcome.WOULD_APPLY)
    error = "; ".join(item.messages) or None if not item.action.writes else None
    return SubjectResult(item, outcome, item.version, item.schema_id, error)


# --- pull -------------------------------------------------------------------------------------


@dataclass
class PullReport:
    written: list[Path] = field(default_factory=list)
    contracts: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (subject, reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "written": [str(p) for p in self.written],
            "contracts": self.contracts,
            "skipped": [{"subject": s, "reason": r} for s, r in self.skipped],
        }


def matching_subjects(subjects: Iterable[str], pattern: str | None) -> list[str]:
    """Subjects whose name matches ``pattern`` (a regular expression, searched), sorted."""
    if not pattern:
        return sorted(subjects)
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise InputError(f"invalid --subject-pattern {pattern!r}: {err}") from None
    return sorted(s for s in subjects if regex.search(s))


def pull(
    client: RegistryClient,
    out_dir: Path,
    pattern: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> PullReport:
    """Write one contract file per contract found in the subjects' latest versions."""
    subjects = matching_subjects(client.subjects(), pattern)
    latest = _bounded(lambda s: (s, client.version(s)), subjects, concurrency)
    report = PullReport()
    chosen: dict[str, tuple[str, Contract]] = {}
    for subject, registered in latest:
        if registered is None:
            report.skipped.append((subject, "no live version"))
            continue
        contract = contract_from_properties(registered.metadata_properties, subject)
        if contract is None:
            props = registered.metadata_properties or {}
            if props.get(PROP_PART) != "key" or PROP_NAME not in props:
                report.skipped.append((subject, "no contract in the schema metadata"))
            continue  # a key subject: its contract comes with the value subject
        chosen[contract.name] = ("value", contract)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in sorted(chosen):
        path = out_dir / f"{name}.yaml"
        path.write_text(dump_contract(chosen[name][1]), encoding="utf-8")
        report.written.append(path)
        report.contracts.append(name)
    return report
