"""Schema diff: exact Schema Registry compatibility verdicts plus CDC-specific breaking rules.

- :func:`registry_verdict` — what Confluent Schema Registry decides for Avro, with reasons;
- :func:`diff_contracts`, :func:`diff_schemas`, :func:`diff_avro`, :func:`diff_sides` —
  findings from the named rules in :mod:`contracts.diff.rules`;
- :mod:`contracts.diff.inputs` — sides loaded from files or parsed JSON, auto-detected.
"""

from __future__ import annotations

from contracts.diff.compat import Incompatibility, Verdict, registry_verdict
from contracts.diff.engine import diff_avro, diff_contracts, diff_schemas, diff_sides
from contracts.diff.model import DiffResult, Finding, Severity
from contracts.diff.rules import RULES, RULES_BY_ID, Rule
from contracts.diff.side import Side

__all__ = [
    "RULES",
    "RULES_BY_ID",
    "DiffResult",
    "Finding",
    "Incompatibility",
    "Rule",
    "Severity",
    "Side",
    "Verdict",
    "diff_avro",
    "diff_contracts",
    "diff_schemas",
    "diff_sides",
    "registry_verdict",
]
