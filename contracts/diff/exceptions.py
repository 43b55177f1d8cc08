"""Exceptions: a deliberate breaking change, allowed for one contract, rule and column path.

An exception is written in the project configuration (``cdc-contracts.yaml``) with a required
``reason`` and an optional ``until`` date::

    exceptions:
      - contract: shop.orders
        rule: decimal-scale-changed
        path: amount
        reason: amounts carry tenths of a cent from release 42 on; consumers updated (PR 1234)
        until: 2026-12-31

:class:`ExceptionSet` is the policy :func:`contracts.diff.verdict.contract_verdict` asks
(``waiver(contract, finding)``): a finding an exception covers is set aside as waived (still
reported, with its reason) and no longer fails the gate; once ``until`` has passed, the
:class:`Waiver` is expired and the finding stands again, the report saying when it expired.
:func:`unmatched` lists the exceptions that covered nothing, which the reports show as warnings
(a typo'd contract, rule or column, or a change since merged).

The registry's own reasons (the ``avro-*`` rules) cannot be excepted: Schema Registry refuses
such a schema at the subject's level whatever the gate says, so an exception would only move the
failure from CI to the deployment.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from contracts.contract import NAME_PATTERN
from contracts.diff.model import Finding
from contracts.diff.report import Entry, Notice, rows
from contracts.diff.rules import RULES_BY_ID

__all__ = [
    "ChangeException",
    "ExceptionSet",
    "Waiver",
    "today",
    "unmatched",
    "unmatched_notices",
]

_BOUNDARIES = (".", "[", "{")


def today() -> date:
    """The date exceptions are judged on: today in UTC (the same on every CI runner)."""
    return datetime.now(UTC).date()


class ChangeException(BaseModel):
    """One allowed change: a contract, a rule id, optionally a column path, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contract: str = Field(pattern=NAME_PATTERN, description="the contract's name")
    rule: str = Field(description="the rule id, e.g. decimal-scale-changed")
    path: str | None = Field(
        default=None,
        min_length=1,
        description="the column path (amount, address.city) or finding path "
        "(value.after.amount); absent: every finding of the rule in the contract",
    )
    reason: str = Field(description="why the change is deliberate (shown in every report)")
    until: date | None = Field(default=None, description="the last day the exception applies")

    _file: str | None = PrivateAttr(default=None)
    _line: int | None = PrivateAttr(default=None)

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, rule: str) -> str:
        found = RULES_BY_ID.get(rule)
        if found is None:
            close = difflib.get_close_matches(rule, list(RULES_BY_ID), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown rule {rule!r}{hint}")
        if found.scope == "registry":
            raise ValueError(
                f"{rule} is a reason the Schema Registry itself refuses the change at the "
                "subject's level; an exception cannot make the registry accept it (change the "
                "contract's compatibility level instead)"
            )
        return rule

    @field_validator("reason")
    @classmethod
    def _stated(cls, reason: str) -> str:
        text = " ".join(reason.split())
        if not text:
            raise ValueError("an exception needs a reason (say why the change is deliberate)")
        return text

    @property
    def where(self) -> str | None:
        """Where the exception is written (``cdc-contracts.yaml:14``), when read from a file."""
        if self._file is None:
            return None
        return f"{self._file}:{self._line}" if self._line else self._file

    def located(self, file: str, line: int | None) -> ChangeException:
        """This exception, remembering where it is written."""
        self._file, self._line = file, line
        return self

    def expired(self, on: date) -> bool:
        """Whether ``until`` has passed on the date ``on``."""
        return self.until is not None and on > self.until

    def describe(self) -> str:
        """``shop.orders decimal-scale-changed amount`` (for messages)."""
        return " ".join(p for p in (self.contract, self.rule, self.path) if p)

    def covers(self, contract: str, finding: Finding) -> bool:
        """Whether this exception is about ``finding`` of contract ``contract``."""
        if contract != self.contract or finding.rule != self.rule:
            return False
        if self.path is None:
            return True
        return any(_within(candidate, self.path) for candidate in _paths_of(finding))

    def waiver(self, on: date) -> Waiver:
        """This exception as it applies to a finding on the date ``on``."""
        return Waiver(self.reason, self.until, self.expired(on), self.where)


@dataclass(frozen=True, slots=True)
class Waiver:
    """A configured exception as it applies to a finding: why the change is deliberate.

    ``where`` locates the exception (``cdc-contracts.yaml:14``). An ``expired`` waiver no
    longer excuses the finding; it is kept so that reports can say when it expired.
    """

    reason: str
    until: date | None = None
    expired: bool = False
    where: str | None = None

    def describe(self) -> str:
        """One line for reports: ``excepted until 2026-12-31: REASON (cdc-contracts.yaml:14)``."""
        where = f" ({self.where})" if self.where else ""
        if self.expired:
            return f"exception expired on {self.until}: {self.reason}{where}"
        until = f" until {self.until}" if self.until else ""
        return f"excepted{until}: {self.reason}{where}"

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "until": self.until.isoformat() if self.until else None,
            "expired": self.expired,
            "where": self.where,
        }


@dataclass(frozen=True, slots=True)
class ExceptionSet:
    """The configured exceptions, judged on one day: the policy the verdict asks.

    The first exception that covers a finding applies, a current one before an expired one (so
    an exception renewed below the old one counts).
    """

    exceptions: tuple[ChangeException, ...] = ()
    on: date | None = None
    _by_rule: dict[tuple[str, str], list[ChangeException]] = field(
        init=False, repr=False, compare=False
    )
    _day: date = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # a check of 500 contracts asks once per finding: look up by contract and rule
        object.__setattr__(self, "_by_rule", _by_rule(self.exceptions))
        object.__setattr__(self, "_day", self.on or today())

    def waiver(self, contract: str, finding: Finding) -> Waiver | None:
        """The exception covering ``finding`` of ``contract``, as a :class:`Waiver`, or None."""
        candidates = self._by_rule.get((contract, finding.rule), ())
        found = [e for e in candidates if e.covers(contract, finding)]
        if not found:
            return None
        return min(found, key=lambda e: e.expired(self._day)).waiver(self._day)

    def __bool__(self) -> bool:
        return bool(self.exceptions)


def _paths_of(finding: Finding) -> list[str]:
    """The finding path and its column path (``value.after.address.city`` → ``address.city``)."""
    paths = [finding.path]
    column = finding.column
    if column:
        for start in range(len(finding.path)):
            if finding.path.startswith(column, start) and (
                start == 0 or finding.path[start - 1] == "."
            ):
                rest = finding.path[start:]
                if rest == column or rest[len(column)] in _BOUNDARIES:
                    paths.append(rest)
                    break
    return paths


def _within(path: str, prefix: str) -> bool:
    """``path`` is ``prefix`` or lies under it (``address.city`` under ``address``)."""
    return path == prefix or (path.startswith(prefix) and path[len(prefix)] in _BOUNDARIES)


def unmatched(
    exceptions: Sequence[ChangeException],
    findings: Iterable[tuple[str, Finding]],
    contracts: Iterable[str] | None = None,
) -> list[ChangeException]:
    """The exceptions that cover none of ``findings`` (``(contract, finding)`` pairs, waived
    ones included). ``contracts`` limits the question to exceptions about those contracts
    (``diff`` compares one contract; the others' exceptions are not its business)."""
    by_rule: dict[tuple[str, str], list[Finding]] = {}
    for name, f in findings:
        by_rule.setdefault((name, f.rule), []).append(f)
    wanted = set(contracts) if contracts is not None else None
    return [
        e
        for e in exceptions
        if (wanted is None or e.contract in wanted)
        and not any(e.covers(e.contract, f) for f in by_rule.get((e.contract, e.rule), ()))
    ]


def _by_rule(
    exceptions: Iterable[ChangeException],
) -> dict[tuple[str, str], list[ChangeException]]:
    out: dict[tuple[str, str], list[ChangeException]] = {}
    for e in exceptions:
        out.setdefault((e.contract, e.rule), []).append(e)
    return out


def unmatched_text(exception: ChangeException, on: date | None = None) -> str:
    """The warning for an exception that matches nothing."""
    expired = f"; it expired on {exception.until}" if exception.expired(on or today()) else ""
    return (
        f"exception {exception.describe()} matches no finding: remove it, or correct its "
        f"contract, rule or path{expired}"
    )


def unmatched_notices(
    entries: Sequence[Entry],
    exceptions: Sequence[ChangeException],
    contracts: Iterable[str] | None = None,
) -> list[Notice]:
    """A warning for each exception that covers no finding of ``entries`` (waived included)."""
    findings = [(e.label, row.finding) for e in entries for row in rows(e)]
    return [
        Notice(unmatched_text(x), x._file, x._line)
        for x in unmatched(exceptions, findings, contracts)
    ]
