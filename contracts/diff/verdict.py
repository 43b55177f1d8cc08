"""The verdict of a contract at its level: the one gate ``check``, ``registry plan/push``, the
API's ``PUT /contracts/{name}`` and the embedded registry share.

- :func:`schema_verdict` is what a Schema Registry answers for an Avro schema offered after
  its registered versions at a compatibility level, with messages naming the real version
  numbers (the embedded registry's answer, and the Avro half of every contract verdict);
- :func:`contract_verdict` judges a contract against its previous versions (oldest first):
  the registry verdict at the contract's level plus the CDC rules of
  :mod:`contracts.diff.rules`, then the configured exceptions, then ``fail_on``;
- :meth:`ContractVerdict.refusal` words a refusal once, for the CLI and the API alike.

Exceptions are optional: anything with a ``waiver(contract, finding)`` method
(:class:`ExceptionPolicy`) can waive findings; a waiver that has expired waives nothing and
is reported as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from contracts.contract import CompatibilityLevel, Contract
from contracts.diff.compat import registry_verdict
from contracts.diff.engine import diff_sides, effective_level
from contracts.diff.levels import judging_level
from contracts.diff.model import DiffResult, Finding
from contracts.diff.rules import RULES_BY_ID
from contracts.diff.side import Side

__all__ = [
    "ContractVerdict",
    "ExceptionPolicy",
    "FailOn",
    "SchemaVerdict",
    "Waived",
    "Waiver",
    "catalog_result",
    "compatibility_message",
    "contract_verdict",
    "removed_verdict",
    "schema_verdict",
]

FailOn = Literal["breaking", "warning", "never"]
VerdictStatus = Literal["added", "changed", "unchanged", "removed"]


# --- the registry's answer for one Avro schema -------------------------------------------------


def compatibility_message(direction: str, version: int, reason: str) -> str:
    """One reason of a compatibility verdict, naming the version (its real number)."""
    if direction == "backward":
        return f"the new schema cannot read data written with version {version}: {reason}"
    return f"version {version} cannot read data written with the new schema: {reason}"


@dataclass(frozen=True, slots=True)
class SchemaVerdict:
    """A registry's answer for one schema: compatible or not, and why (one line each)."""

    compatible: bool
    messages: tuple[str, ...] = ()


def schema_verdict(
    schema: Any, previous: Sequence[tuple[int, Any]], level: CompatibilityLevel | str
) -> SchemaVerdict:
    """Whether ``schema`` (Avro, JSON text or value) may follow ``previous`` — the live
    registered versions as ``(version number, schema)``, oldest first — at ``level``, as
    Confluent's registry decides it: against all of them for transitive levels, else the
    latest. A refusal ends with the level, as Confluent words it (``{compatibility: 'FULL'}``).
    """
    level = CompatibilityLevel(level)
    if not previous:
        return SchemaVerdict(True)
    found = registry_verdict(schema, [s for _, s in previous], level)
    messages = [
        compatibility_message(c.direction, previous[c.version - 1][0], c.problem.describe())
        for c in found.problems
    ]
    if not found.compatible:
        messages.append(f"{{compatibility: '{level.value}'}}")
    return SchemaVerdict(found.compatible, tuple(messages))


# --- exceptions --------------------------------------------------------------------------------


class Waiver(Protocol):
    """One configured exception, as the verdict sees it."""

    @property
    def reason(self) -> str: ...

    @property
    def expired(self) -> bool: ...


class ExceptionPolicy(Protocol):
    """Where the verdict asks whether a finding is excepted (``contracts.config`` provides it)."""

    def waiver(self, contract: str, finding: Finding) -> Waiver | None:
        """The exception covering ``finding`` of ``contract``, or None."""
        ...


@dataclass(frozen=True, slots=True)
class Waived:
    """A finding and the exception that covers it (``expired``: it no longer waives it)."""

    finding: Finding
    waiver: Waiver

    def to_json(self) -> dict[str, Any]:
        out = {
            **self.finding.to_json(),
            "reason": self.waiver.reason,
            "expired": self.waiver.expired,
        }
        for key in ("until", "where"):  # a configured exception's (contracts.config)
            value = getattr(self.waiver, key, None)
            if value is not None:
                out[key] = str(value)
        return out


# --- the contract's verdict --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContractVerdict:
    """A contract judged against its previous versions.

    ``result`` holds the findings that stand (waived ones are in ``waived``; a finding whose
    exception expired stands and is listed in ``expired`` too). ``against`` are the version
    numbers the registry verdict was taken against; ``same_as`` the newest previous version
    equal to the candidate (the latest: ``unchanged``; an older one: a rollback).
    """

    name: str
    status: VerdictStatus
    result: DiffResult
    fail_on: FailOn = "breaking"
    against: tuple[int, ...] = ()
    same_as: int | None = None
    waived: tuple[Waived, ...] = ()
    expired: tuple[Waived, ...] = ()

    @property
    def level(self) -> CompatibilityLevel:
        return self.result.level

    @property
    def standing_compatible(self) -> bool:
        """The registry verdict once waived registry findings are set aside: a refusal stands
        while one of its registry findings does."""
        if self.result.compatible:
            return True
        return not any(RULES_BY_ID[f.rule].scope == "registry" for f in self.result.findings)

    @property
    def failed(self) -> bool:
        """Whether the gate refuses the contract (per its ``fail_on``)."""
        return self.fails(self.fail_on)

    def fails(self, fail_on: str) -> bool:
        """Whether a gate set to ``fail_on`` refuses the contract."""
        standing = DiffResult(self.level, self.standing_compatible, self.result.findings)
        return standing.fails(fail_on)

    @property
    def rollback(self) -> bool:
        """The candidate equals a previous version other than the latest."""
        return self.same_as is not None and self.status == "changed"

    def failing(self) -> list[Finding]:
        """The findings that make the gate refuse (breaking ones; warnings too with
        ``fail_on`` warning)."""
        if self.fail_on == "never":
            return []
        kinds = {"breaking", "warning"} if self.fail_on == "warning" else {"breaking"}
        return [f for f in self.result.findings if f.severity.value in kinds]

    @property
    def headline(self) -> str:
        """``contract 'orders' is not BACKWARD compatible with version 3``."""
        versions = ", ".join(map(str, self.against)) or "the previous version"
        plural = "s" if len(self.against) > 1 else ""
        return (
            f"contract {self.name!r} is not {self.level.value} compatible with "
            f"version{plural} {versions}"
        )

    def refusal(self) -> str:
        """The refusal in one line, worded the same by the CLI and the API: the headline,
        then the findings that fail the gate (or the registry verdict's reasons)."""
        failing = self.failing()
        if failing:
            rules = ", ".join(dict.fromkeys(f"{f.rule} at {f.path}" for f in failing))
            return f"{self.headline}: {len(failing)} finding(s) fail the gate: {rules}"
        reasons = "; ".join(self.result.verdict_messages) or "the registry refuses it"
        return f"{self.headline}: {reasons}"

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON for one contract (``check --output-format json``), the API's too."""
        out: dict[str, Any] = {
            "name": self.name,
            "status": self.status,
            "against_versions": list(self.against),
            **self.result.to_json(),
            "failed": self.failed,
        }
        if self.waived or self.expired:
            out["waived"] = [w.to_json() for w in self.waived]
            out["expired"] = [w.to_json() for w in self.expired]
        return out


def contract_verdict(
    contract: Contract,
    history: Sequence[Side],
    *,
    level: CompatibilityLevel | str | None = None,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
    versions: Sequence[int] | None = None,
    source: str | None = None,
    default_level: CompatibilityLevel | None = None,
    baseline_level: CompatibilityLevel | str | None = None,
) -> ContractVerdict:
    """Judge ``contract`` against ``history`` (its previous versions, oldest first).

    The contract's level is its own, else ``default_level`` (the project configuration's, for
    a contract that sets none). The baseline's is ``baseline_level`` (the registered level),
    else the latest previous contract's. The change is judged at ``level`` when given, else at
    both (:func:`~contracts.diff.levels.judging_level`): a lowered level is judged at the
    baseline's and reported as ``compatibility-level-lowered``. Transitive levels take the
    registry verdict against every previous version, others against the latest; the CDC rules
    compare with the latest. ``versions`` numbers the history (default 1..n); ``source``
    labels the candidate (its file). No history: the contract is ``added`` (a
    ``contract-added`` finding).
    """
    own = effective_level(contract, None, default_level)
    numbers = tuple(versions) if versions is not None else tuple(range(1, len(history) + 1))
    if len(numbers) != len(history):
        raise ValueError("versions must number every entry of history")
    if not history:
        lvl = effective_level(contract, level, default_level)
        result = catalog_result("contract-added", contract, lvl)
        return _judged(contract.name, "added", result, fail_on, exceptions)
    before = _baseline_level(history[-1], baseline_level, default_level)
    lvl = CompatibilityLevel(level) if level is not None else judging_level(before, own)
    same_as = _same_as(contract, history, numbers)
    against = numbers if lvl.transitive else numbers[-1:]
    if same_as == numbers[-1] and before in (None, own):
        return ContractVerdict(
            contract.name, "unchanged", DiffResult(lvl, True), fail_on, against, same_as
        )
    candidate = Side.of_contract(contract, source)
    result = diff_sides(
        history[-1],
        candidate,
        lvl,
        history=history,
        default_level=default_level,
        baseline_level=before,
    )
    return _judged(contract.name, "changed", result, fail_on, exceptions, against, same_as)


def _baseline_level(
    latest: Side,
    registered: CompatibilityLevel | str | None,
    default: CompatibilityLevel | None,
) -> CompatibilityLevel | None:
    """The level the latest previous version is held at (None: unknown, a bare schema)."""
    if registered is not None:
        return CompatibilityLevel(registered)
    if latest.contract is not None:
        return effective_level(latest.contract, None, default)
    return None


def removed_verdict(
    contract: Contract,
    level: CompatibilityLevel,
    *,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
) -> ContractVerdict:
    """A contract the current side no longer has: ``contract-removed`` (breaking, as buf's
    FILE_NO_DELETE; a configured exception with a reason allows it)."""
    result = catalog_result("contract-removed", contract, level)
    return _judged(contract.name, "removed", result, fail_on, exceptions)


def catalog_result(
    rule_id: str, contract: Contract, level: CompatibilityLevel | None
) -> DiffResult:
    """A result holding one catalog finding (``contract-added``, ``contract-removed``)."""
    findings = list(RULES_BY_ID[rule_id].check(contract.name))
    return DiffResult(level or contract.compatibility, True, findings)


def _judged(
    name: str,
    status: VerdictStatus,
    result: DiffResult,
    fail_on: FailOn,
    exceptions: ExceptionPolicy | None,
    against: tuple[int, ...] = (),
    same_as: int | None = None,
) -> ContractVerdict:
    standing, waived, expired = _apply(name, result.findings, exceptions)
    result = DiffResult(result.level, result.compatible, standing, result.verdict_messages)
    return ContractVerdict(name, status, result, fail_on, against, same_as, waived, expired)


def _same_as(contract: Contract, history: Sequence[Side], numbers: Sequence[int]) -> int | None:
    wanted = contract.to_dict()
    for number, side in zip(reversed(numbers), reversed(history), strict=True):
        if side.contract is not None and side.contract.to_dict() == wanted:
            return number
    return None


def _apply(
    name: str, findings: Sequence[Finding], exceptions: ExceptionPolicy | None
) -> tuple[list[Finding], tuple[Waived, ...], tuple[Waived, ...]]:
    if exceptions is None:
        return list(findings), (), ()
    standing: list[Finding] = []
    waived: list[Waived] = []
    expired: list[Waived] = []
    for finding in findings:
        waiver = exceptions.waiver(name, finding)
        if waiver is None:
            standing.append(finding)
        elif waiver.expired:
            standing.append(finding)
            expired.append(Waived(finding, waiver))
        else:
            waived.append(Waived(finding, waiver))
    return standing, tuple(waived), tuple(expired)
