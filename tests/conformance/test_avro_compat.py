"""The compatibility engine agrees with Apache Avro's and Confluent Schema Registry's test suites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contracts.contract import CompatibilityLevel
from contracts.diff.compat import parse_avro, reader_writer_problems, registry_verdict

HERE = Path(__file__).parent
PAIRS: list[dict[str, Any]] = json.loads((HERE / "avro_pairs.json").read_text())
LEVELS: list[dict[str, Any]] = json.loads((HERE / "confluent_levels.json").read_text())


def test_corpus_is_complete() -> None:
    assert len(PAIRS) == 152
    assert len(LEVELS) == 49
    assert {c["level"] for c in LEVELS} <= {lv.value for lv in CompatibilityLevel}


@pytest.mark.parametrize("case", PAIRS, ids=[f"{i}-{c['name']}" for i, c in enumerate(PAIRS)])
def test_reader_writer_pair(case: dict[str, Any]) -> None:
    problems = reader_writer_problems(parse_avro(case["reader"]), parse_avro(case["writer"]))
    assert (not problems) is case["compatible"], [p.describe() for p in problems]
    # BACKWARD with one previous version asks exactly this reader/writer question
    verdict = registry_verdict(case["reader"], [case["writer"]], CompatibilityLevel.BACKWARD)
    assert verdict.compatible is case["compatible"]
    assert len(verdict.messages) == len(problems)
    if not case["compatible"]:
        assert all(m.startswith("the new schema cannot read") for m in verdict.messages)


@pytest.mark.parametrize("case", LEVELS, ids=[f"{i}-{c['name']}" for i, c in enumerate(LEVELS)])
def test_level_case(case: dict[str, Any]) -> None:
    verdict = registry_verdict(case["new"], case["previous"], CompatibilityLevel(case["level"]))
    assert verdict.compatible is case["compatible"], verdict.messages
    assert bool(verdict.messages) is not case["compatible"]
