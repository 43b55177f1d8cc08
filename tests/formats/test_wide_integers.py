"""Integers beyond int64 in plain-JSON formats: inferred as an exact Decimal, kept digit for digit.

MySQL ``BIGINT UNSIGNED`` (and ``SERIAL``, ``BIT(64)``) reaches 18446744073709551615, which a
JSON reader holds exactly as an integer but a double does not (2^53 + 1 rounds too). Formats
whose messages carry plain JSON values (maxwell-json, ogg-json, opencdc-json, canal-json without
``mysqlType``) must infer such a column as a Connect Decimal of scale 0, and normalize and
validate must keep every digit. The messages go through the CLI as bytes, so the JSON reader
(contracts/jsondoc.py) is part of what is tested.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clirun import run
from wide_integers import MESSAGES, UINT64_MAX, VALUES, write_messages

from contracts.contract import load_contract
from contracts.formats._typing import ColumnSummary
from contracts.logical import DECIMAL_NAME, PRECISION_PARAM


def _big_column(contract: Path) -> dict[str, Any]:
    (column,) = [c for c in load_contract(contract).columns if c["field"] == "big"]
    return column


@pytest.mark.parametrize("fmt", list(MESSAGES))
def test_unsigned_64_round_trips_exactly(tmp_path: Path, fmt: str) -> None:
    messages = write_messages(tmp_path / "m.jsonl", fmt)
    assert f": {UINT64_MAX}}}" in messages.read_text(encoding="utf-8")
    contract = tmp_path / "c.yaml"
    inferred = run("infer", str(messages), "--name", "t", "-o", str(contract))
    assert inferred.code == 0, inferred.err
    column = _big_column(contract)
    assert column["type"] == "bytes" and column["name"] == DECIMAL_NAME
    assert column["parameters"] == {"scale": "0", PRECISION_PARAM: "20"}

    normalized = run("normalize", str(messages), "--contract", str(contract))
    assert normalized.code == 0, normalized.err
    got = [json.loads(line)["after"]["big"] for line in normalized.lines()]
    assert got == [str(v) for v in VALUES]

    validated = run("validate", str(contract), str(messages))
    assert validated.code == 0, validated.err
    assert "all conform" in validated.err


def test_a_declared_precision_holds_json_integers(tmp_path: Path) -> None:
    """A JSON integer in a Decimal column is held to the column's precision, as a text is."""
    messages = write_messages(tmp_path / "m.jsonl", "maxwell-json", [7, 123456])
    contract = tmp_path / "c.yaml"
    assert run("infer", str(messages), "--name", "t", "-o", str(contract)).code == 0
    text = contract.read_text(encoding="utf-8")
    narrow = text.replace("type: int64, optional: true", "type: bytes, optional: true, name: "
                          f"{DECIMAL_NAME}, version: 1, parameters: {{scale: '0', "
                          f"{PRECISION_PARAM}: '5'}}")  # fmt: skip
    assert narrow != text
    contract.write_text(narrow, encoding="utf-8")
    validated = run("validate", str(contract), str(messages))
    assert validated.code == 1
    assert "123456" in validated.text and "decimal(5,0)" in validated.text


@pytest.mark.parametrize(
    ("values", "precision"),
    [
        ([2**63], 20),  # 19 digits: still every unsigned 64-bit value fits
        ([-(2**63) - 1, 0], 20),
        ([1, 10**29], 30),  # wider than 64 bits (derive: DECIMAL(30)): its own digits
        ([UINT64_MAX, -(10**37)], 38),
    ],
)
def test_precision_holds_every_unsigned_64_bit_value(values: list[int], precision: int) -> None:
    summary = ColumnSummary()
    for value in values:
        summary.observe(value)
    schema = summary.schema(infer_types=False)
    assert schema.name == DECIMAL_NAME
    assert dict(schema.parameters or {}) == {"scale": "0", PRECISION_PARAM: str(precision)}


def test_ints_within_int64_stay_int64() -> None:
    summary = ColumnSummary()
    for value in (-(2**63), 2**63 - 1, None):
        summary.observe(value)
    assert summary.schema(infer_types=False).type == "int64"
