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

from contracts.contract import Contract, dump_contract
from contracts.errors import ConflictError, ContractsError, InputError
from registry_sync.client import Registered, RegistryClient
from registry_sync.desired import PROP_NAME, PROP_PART, DesiredSubject, contract_from_properties

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
        if self.level_change:
            out["compatibility"] = {"from": self.level_from, "to": self.level_to}
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


def plan_subject(client: RegistryClient, desired: DesiredSubject) -> SubjectPlan:
    """Plan one subject. Never raises for registry trouble: that becomes an ``error`` entry."""
    base = SubjectPlan(desired.subject, desired.contract.name, desired.part, Action.ERROR)
    base.desired = desired
    try:
        return _plan(client, desired, base)
    except ContractsError as err:
        base.action = Action.ERROR
        base.messages = [err.one_line()]
        base.error_exit = err.exit_code
        return base


def _plan(client: RegistryClient, desired: DesiredSubject, out: SubjectPlan) -> SubjectPlan:
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
    if out.level_change:
        ok, messages = _local_verdict(client, desired, latest)
    else:
        ok, messages = client.test_compatibility(
            desired.subject, desired.schema, desired.properties
        )
    out.action = Action.NEW_VERSION if ok else Action.INCOMPATIBLE
    if not ok:
        out.messages = messages
        out.findings = _findings(previous, desired, latest)
    return out


def _local_verdict(
    client: RegistryClient, desired: DesiredSubject, latest: Registered
) -> tuple[bool, list[str]]:
    """The verdict at the *new* level (the registry would check at its current one)."""
    from contracts.diff.compat import registry_verdict

    if desired.contract.compatibility.transitive:
        schemas = []
        for number in client.versions(desired.subject):
            got = client.version(desired.subject, number)
            if got is not None and got.schema is not None:
                schemas.append(got.schema)
    else:
        schemas = [latest.schema] if latest.schema else []
    verdict = registry_verdict(desired.schema, schemas, desired.level)
    return verdict.compatible, list(verdict.messages)


def _findings(
    previous: Contract | None, desired: DesiredSubject, latest: Registered
) -> list[dict[str, str]]:
    """The diff engine's findings between what is registered and what the contract wants."""
    try:
        from contracts.diff.engine import diff_avro, diff_contracts
    except ImportError:
        return []
    try:
        if previous is not None:
            result = diff_contracts(previous, desired.contract, desired.contract.compatibility)
        else:
            result = diff_avro(
                json.loads(latest.schema or "null"),
                json.loads(desired.schema),
                desired.contract.compatibility,
            )
    except (ContractsError, ValueError):
        return []
    return [f.to_json() for f in result.findings]


def plan(
    client: RegistryClient,
    desired: Sequence[DesiredSubject],
    concurrency: int = DEFAULT_CONCURRENCY,
) -> list[SubjectPlan]:
    """Plan every subject (bounded concurrency); the order follows ``desired``."""
    planned = _bounded(lambda d: plan_subject(client, d), list(desired), concurrency)
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
    except ConflictError as err:
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
) -> list[SubjectResult]:
    """Plan every subject, then (unless ``dry_run``) apply what the plan accepts."""
    planned = plan(client, desired, concurrency)
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
