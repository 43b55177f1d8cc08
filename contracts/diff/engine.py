"""The diff engine: registry verdict + the rules of :mod:`contracts.diff.rules`, as findings.

:func:`diff_sides` is the one algorithm; :func:`diff_contracts`, :func:`diff_schemas` and
:func:`diff_avro` build the sides for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from contracts.contract import CompatibilityLevel, Contract
from contracts.diff.compat import Verdict, registry_verdict
from contracts.diff.levels import judging_level
from contracts.diff.model import DiffResult, Finding
from contracts.diff.rules import (
    AVRO_KIND_RULES,
    RULES_BY_ID,
    ColumnPair,
    RegistryProblem,
    SidePair,
    StructPair,
    rules_in,
)
from contracts.diff.side import Side
from contracts.logical import lookup
from contracts.schema import ConnectSchema

_COLUMN_RULES = rules_in("column")
_STRUCT_RULES = rules_in("struct")
_SIDE_RULES = rules_in("side")


def diff_contracts(
    old: Contract, new: Contract, level: CompatibilityLevel | None = None
) -> DiffResult:
    """Compare two contracts (key and value); ``level`` defaults to the new contract's."""
    return diff_sides(Side.of_contract(old), Side.of_contract(new), level)


def diff_schemas(
    old: ConnectSchema, new: ConnectSchema, level: CompatibilityLevel | None = None
) -> DiffResult:
    """Compare two Connect value schemas (the verdict uses their Avro translations)."""
    return diff_sides(Side.of_connect(old, "old"), Side.of_connect(new, "new"), level)


def diff_avro(old: Any, new: Any, level: CompatibilityLevel | None = None) -> DiffResult:
    """Compare two Avro value schemas (the CDC rules use their Connect translations)."""
    return diff_sides(Side.of_avro(old, "old"), Side.of_avro(new, "new"), level)


def diff_sides(
    old: Side,
    new: Side,
    level: CompatibilityLevel | str | None = None,
    history: Sequence[Side] | None = None,
    default_level: CompatibilityLevel | None = None,
    baseline_level: CompatibilityLevel | None = None,
) -> DiffResult:
    """Compare ``new`` with ``old``.

    ``history`` lists every earlier version oldest first (its last is normally ``old``); the
    registry verdict is taken against it (transitive levels use all of it), the CDC rules
    against ``old``. Without it, the verdict is against ``old`` alone.

    The level is ``level`` (``--level``), else the baseline's and the new side's joined
    (:func:`~contracts.diff.levels.judging_level`: a lowered level is judged at the baseline's,
    which the registry applies until the level is changed). The baseline's level is
    ``baseline_level`` (the registered one), else the old contract's; the new side's is its
    contract's (:func:`effective_level`, with ``default_level`` for a contract that sets
    none), else BACKWARD. A change of level is a finding of its own.
    """
    old_level = baseline_level or _own_level(old, default_level)
    new_level = _own_level(new, default_level)
    if level is not None:
        lvl = CompatibilityLevel(level)
    else:
        lvl = judging_level(old_level, new_level or default_level or CompatibilityLevel.BACKWARD)
    earlier = list(history) if history else [old]
    value_verdict = registry_verdict(new.value_avro, [s.value_avro for s in earlier], lvl)
    key_verdict = _key_verdict(new, earlier, lvl)
    _, prefix = new.row
    registry = [
        *_registry_findings("value", value_verdict, len(earlier)),
        *_registry_findings("key", key_verdict, len(earlier)),
    ]
    findings = [
        *_side_findings(old, new, old_level, new_level),
        *(_with_column(f, prefix) for f in registry),
        *_row_findings(old, new),
    ]
    findings.sort(key=lambda f: f.severity.rank)
    return DiffResult(
        level=lvl,
        compatible=value_verdict.compatible and key_verdict.compatible,
        findings=findings,
        verdict_messages=tuple(f"value: {m}" for m in value_verdict.messages)
        + tuple(f"key: {m}" for m in key_verdict.messages),
    )


def effective_level(
    contract: Contract,
    level: CompatibilityLevel | str | None = None,
    default: CompatibilityLevel | None = None,
) -> CompatibilityLevel:
    """The level a contract is judged at: ``level`` (``--level``), else the contract's own
    ``compatibility:``, else ``default`` (the project configuration's), else the contract's
    default (BACKWARD)."""
    if level is not None:
        return CompatibilityLevel(level)
    if default is not None and "compatibility" not in contract.model_fields_set:
        return default
    return contract.compatibility


def _own_level(side: Side, default: CompatibilityLevel | None) -> CompatibilityLevel | None:
    """A contract side's level (its own, else ``default``); None for a bare schema."""
    return effective_level(side.contract, None, default) if side.contract is not None else None


def _key_verdict(new: Side, earlier: list[Side], level: CompatibilityLevel) -> Verdict:
    """The verdict on the key schema, when the new side and some earlier side have one."""
    new_key = new.key_avro
    olds = [s.key_avro for s in earlier]
    if new_key is None or not any(k is not None for k in olds):
        return Verdict(True)
    return registry_verdict(new_key, [k for k in olds if k is not None], level)


# --- findings ---------------------------------------------------------------------------------


def _side_findings(
    old: Side,
    new: Side,
    old_level: CompatibilityLevel | None,
    new_level: CompatibilityLevel | None,
) -> Iterator[Finding]:
    facts = SidePair(
        old_format=old.format,
        new_format=new.format,
        old_topic=old.topic,
        new_topic=new.topic,
        old_key=old.key_connect,
        new_key=new.key_connect,
        keys_known=old.keys_known and new.keys_known,
        old_level=old_level,
        new_level=new_level,
    )
    for rule in _SIDE_RULES:
        yield from rule.check(facts)


def _registry_findings(part: str, verdict: Verdict, total: int) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for check in verdict.problems:
        rule = RULES_BY_ID[AVRO_KIND_RULES.get(check.problem.kind, "avro-type-mismatch")]
        for f in rule.check(RegistryProblem(part, check, total)):
            key = (f.rule, f.path, f.message)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return _drop_before_twins(out)


def _with_column(finding: Finding, row_prefix: str) -> Finding:
    """A registry finding tagged with its top-level column (for annotations)."""
    for prefix in (f"{row_prefix}.", "key."):
        if finding.path.startswith(prefix):
            column = finding.path[len(prefix) :].split(".", 1)[0].split("[", 1)[0]
            return dataclasses.replace(finding, column=column.split("{", 1)[0])
    return finding


def _drop_before_twins(findings: list[Finding]) -> list[Finding]:
    """An envelope's ``before`` repeats ``after``: keep one finding per column and rule."""
    after = {(f.rule, f.path) for f in findings if ".after" in f.path}
    return [
        f
        for f in findings
        if not (".before" in f.path and (f.rule, f.path.replace(".before", ".after", 1)) in after)
    ]


def _row_findings(old: Side, new: Side) -> Iterator[Finding]:
    old_row, _ = old.row
    new_row, prefix = new.row
    if old_row.is_struct and new_row.is_struct:
        yield from _walk_struct(old_row, new_row, prefix, "", None)
    else:
        yield from _compare(old_row, new_row, prefix, "value", None)


def _walk_struct(
    old: ConnectSchema, new: ConnectSchema, prefix: str, label: str, column: str | None
) -> Iterator[Finding]:
    if old.field_names() != new.field_names():
        pair = StructPair(prefix, label, column, old, new)
        for rule in _STRUCT_RULES:
            yield from rule.check(pair)
    old_fields = {f.field: f for f in old.fields or ()}
    for nf in new.fields or ():
        of = old_fields.get(nf.field)
        if of is None or of == nf:
            continue
        name = nf.field or ""
        yield from _compare(
            of,
            nf,
            f"{prefix}.{name}" if prefix else name,
            f"{label}.{name}" if label else name,
            column or name,
        )


def _compare(
    old: ConnectSchema, new: ConnectSchema, path: str, label: str, column: str | None
) -> Iterator[Finding]:
    pair = ColumnPair(path, label, column or label, old, new)
    for rule in _COLUMN_RULES:
        yield from rule.check(pair)
    if lookup(old) is not None or lookup(new) is not None:
        return  # a logical struct (VariableScaleDecimal, Geometry) is one value, not columns
    if old.is_struct and new.is_struct:
        yield from _walk_struct(old, new, path, label, column or label)
    elif old.items is not None and new.items is not None:
        yield from _compare(old.items, new.items, f"{path}[]", f"{label}[]", column)
    elif old.values is not None and new.values is not None:
        yield from _compare(old.values, new.values, f"{path}{{value}}", f"{label}{{value}}", column)
