"""The Python ``normalize`` and Spark's ``decode_changes`` give equal events, row for row, for
generated contracts and messages of every registered format (and an ``_error`` in Spark exactly
where Python refuses a message).

``make test`` runs a fixed-seed sample (``PARITY_EXAMPLES`` contracts per format, each with
``PARITY_MESSAGES`` messages decoded in one Spark job); ``make fuzz-parity`` runs thousands.
A failure is shrunk by hypothesis to a small contract and message list: save it with
``tests/parity/fixtures/<name>.json`` (see :func:`save_fixture`) so it is replayed by
``test_saved_cases`` for ever.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from contracts.contract import dump_contract, parse_contract

from .differential import differences, python_outcomes, spark_outcomes
from .messages import Case, Message, cases, messages, registered_text_formats

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("PARITY_EXAMPLES", "2"))
MESSAGES = int(os.environ.get("PARITY_MESSAGES", "24"))
FIXTURES = Path(__file__).parent / "fixtures"


def check(spark: Any, case: Case, msgs: list[Message]) -> None:
    python = python_outcomes(case.contract, msgs)
    found = spark_outcomes(spark, case.contract, msgs)
    diff = differences(case.contract, msgs, python, found)
    assert not diff, (
        f"{case.contract.format}: Python and Spark differ on {len(diff)} of {len(msgs)} "
        f"messages\ncontract:\n{dump_contract(case.contract)}\n" + "\n".join(diff)
    )


@pytest.mark.parametrize("fmt", registered_text_formats())
def test_python_and_spark_agree_on_generated_messages(spark: Any, fmt: str) -> None:
    @seed(20261127)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=os.environ.get("PARITY_RANDOM") is None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(st.data())
    def run(data: st.DataObject) -> None:
        case = data.draw(cases(fmt), label="contract")
        msgs = data.draw(messages(case, MESSAGES), label="messages")
        check(spark, case, msgs)

    run()


def save_fixture(name: str, case: Case, msgs: list[Message]) -> Path:
    """Keep a (shrunk) failing case as ``tests/parity/fixtures/<name>.json``."""
    FIXTURES.mkdir(exist_ok=True)
    path = FIXTURES / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "contract": dump_contract(case.contract),
                "messages": [
                    {
                        "value": None if m.value is None else m.value.decode("latin-1"),
                        "key": None if m.key is None else m.key.decode("latin-1"),
                        "note": m.note,
                    }
                    for m in msgs
                ],
            },
            indent=1,
        )
    )
    return path


def _saved() -> list[Path]:
    return sorted(FIXTURES.glob("*.json")) if FIXTURES.is_dir() else []


@pytest.mark.parametrize("path", _saved(), ids=lambda p: p.stem)
def test_saved_cases(spark: Any, path: Path) -> None:
    """Cases the generated runs once found the two paths disagreeing on."""
    saved = json.loads(path.read_text())
    contract = parse_contract(saved["contract"], str(path))
    msgs = [
        Message(
            value=None if m["value"] is None else m["value"].encode("latin-1"),
            key=None if m["key"] is None else m["key"].encode("latin-1"),
            note=m.get("note", ""),
        )
        for m in saved["messages"]
    ]
    check(spark, Case(contract, ()), msgs)
