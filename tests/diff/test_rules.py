"""Every rule fires on its before/after fixture pair, and only where it should."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contracts.contract import CompatibilityLevel
from contracts.diff import RULES, RULES_BY_ID, diff_sides
from contracts.diff.catalog import compare_catalog
from contracts.diff.inputs import load_side
from contracts.diff.model import DiffResult

FIXTURES = Path(__file__).parent.parent / "fixtures" / "diff"
RULE_IDS = [r.id for r in RULES]


def _side_file(rule: str, which: str) -> Path | None:
    found = sorted((FIXTURES / rule).glob(f"{which}.*"))
    return found[0] if found else None


def _expected(rule: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / rule / "expected.json").read_text())
    return data


def _run(rule: str) -> DiffResult:
    exp = _expected(rule)
    before, after = _side_file(rule, "before"), _side_file(rule, "after")
    level = CompatibilityLevel(exp["level"])
    if RULES_BY_ID[rule].scope == "catalog":
        files = {"orders.yaml": after} if after else {}
        baseline = {"orders.yaml": before.read_text()} if before else {}
        entries = compare_catalog(files, baseline, level).entries
        assert len(entries) == 1
        return entries[0].result
    assert before is not None and after is not None
    return diff_sides(load_side(before), load_side(after), level)


def test_every_rule_has_a_fixture_pair() -> None:
    dirs = {p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert dirs == set(RULE_IDS)


def test_rule_table_is_well_formed() -> None:
    assert len(RULE_IDS) == len(set(RULE_IDS))
    for rule in RULES:
        assert rule.purpose.endswith(".") and len(rule.purpose.split(".")) == 2, rule.id
        assert rule.breaks, rule.id


@pytest.mark.parametrize("rule", RULE_IDS)
def test_rule_fires_on_its_fixture(rule: str) -> None:
    result = _run(rule)
    got = [(f.rule, f.path, f.severity.value) for f in result.findings if f.rule == rule]
    want = [(f["rule"], f["path"], f["severity"]) for f in _expected(rule)["findings"]]
    assert sorted(got) == sorted(want), [f.message for f in result.findings]
    for f in result.findings:
        assert f.message.endswith(".") and f.message[0].isupper(), f.message
    if RULES_BY_ID[rule].severity.value == "breaking":
        assert result.breaking


@pytest.mark.parametrize("rule", RULE_IDS)
def test_rule_is_silent_without_a_change(rule: str) -> None:
    before = _side_file(rule, "before") or _side_file(rule, "after")
    assert before is not None
    side = load_side(before)
    result = diff_sides(side, load_side(before), CompatibilityLevel.FULL_TRANSITIVE)
    assert result.findings == []
    assert result.compatible and not result.breaking


@pytest.mark.parametrize(
    "rule",
    [
        "decimal-scale-changed",
        "decimal-precision-changed",
        "temporal-unit-changed",
        "logical-type-removed",
        "logical-type-changed",
        "key-schema-changed",
        "enum-values-removed",
    ],
)
def test_cdc_rules_break_where_the_registry_says_compatible(rule: str) -> None:
    result = _run(rule)
    assert result.compatible, result.verdict_messages
    assert result.breaking


def test_registry_findings_explain_an_incompatible_verdict() -> None:
    result = _run("avro-field-no-default")
    assert not result.compatible
    (finding,) = [f for f in result.findings if f.rule == "avro-field-no-default"]
    assert finding.message == (
        "Field after.extra was added without a default; the new schema cannot read data "
        "written with the latest version."
    )
    assert finding.column == "extra"


def test_decimal_message_states_the_fact() -> None:
    (finding,) = [f for f in _run("decimal-scale-changed").findings]
    assert finding.message == "Column amount changed decimal scale from 2 to 3."
    assert (finding.old, finding.new) == (2, 3)
