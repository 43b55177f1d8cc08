"""The diff engine's result types: :class:`Finding` and :class:`DiffResult`."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Final

from contracts.contract import CompatibilityLevel


class Severity(enum.StrEnum):
    """How much a finding matters to consumers."""

    breaking = "breaking"
    warning = "warning"
    info = "info"

    @property
    def rank(self) -> int:
        return _RANK[self.value]


_RANK: Final = {"breaking": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Finding:
    """One difference a rule found.

    ``path`` reads like ``value.after.amount`` or ``key.id``; ``message`` states a past-tense
    fact. ``old``/``new`` are short JSON-able descriptions of the two sides (None: absent).
    ``column`` is the top-level column the finding concerns, when there is one (used to point
    annotations at the contract file line).
    """

    rule: str
    path: str
    severity: Severity
    message: str
    old: Any = None
    new: Any = None
    column: str | None = None

    def to_json(self) -> dict[str, str]:
        return {
            "rule": self.rule,
            "path": self.path,
            "severity": self.severity.value,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class DiffResult:
    """The outcome of comparing two schemas or contracts.

    ``compatible`` is Schema Registry's verdict at ``level``; ``breaking`` is true when the
    change is not compatible or any finding is breaking. ``verdict_messages`` are the registry
    verdict's reasons, one per incompatibility.
    """

    level: CompatibilityLevel
    compatible: bool
    findings: list[Finding] = field(default_factory=list)
    verdict_messages: tuple[str, ...] = ()

    @property
    def breaking(self) -> bool:
        return not self.compatible or any(f.severity is Severity.breaking for f in self.findings)

    @property
    def has_warnings(self) -> bool:
        return any(f.severity is Severity.warning for f in self.findings)

    def fails(self, fail_on: str) -> bool:
        """Whether this result fails a gate set to ``breaking``, ``warning`` or ``never``."""
        if fail_on == "never":
            return False
        if fail_on == "warning":
            return self.breaking or self.has_warnings
        return self.breaking

    def counts(self) -> dict[str, int]:
        """How many findings of each severity."""
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"level", "compatible", "breaking", "findings": [{rule, path, severity, message}]}``."""
        return {
            "level": self.level.value,
            "compatible": self.compatible,
            "breaking": self.breaking,
            "findings": [f.to_json() for f in self.findings],
        }
