"""An integer beyond the 64-bit range in a JSON message is read exactly (as a JsonNumber that
keeps its digits, see contracts/jsondoc.py) and judged by the column that reads it, as Spark's
decode judges it: out of range for an integer column, exact for a wide decimal, not a string
for a string column. Nothing rounds it to a double on the way."""

from __future__ import annotations

import json
from pathlib import Path

from clirun import run

from contracts.jsondoc import parse_document
from contracts.jsonnumbers import JsonNumber

FUZZ = Path(__file__).resolve().parent.parent / "fixtures" / "fuzz"
HUGE = FUZZ / "hugeint-array.json"  # three Debezium payloads; the second's after.id is 2**64
WIDE = "18446744073709551616"


def test_a_wide_integer_keeps_its_digits_through_normalize() -> None:
    done = run("normalize", HUGE, "--format", "debezium-json")
    assert done.code == 0, done.err
    second = json.loads(done.out.splitlines()[1])
    assert second["after"]["id"] == 2**64  # written as its digits, not 1.8446744073709552e+19
    assert f'"id":{WIDE},'.encode() in done.out


def test_infer_types_a_wide_integer_as_an_exact_decimal(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    done = run("infer", HUGE, "--format", "debezium-json", "--name", "t", "-o", contract)
    assert done.code == 0, done.err
    text = contract.read_text()
    assert "field: id" in text and "org.apache.kafka.connect.data.Decimal" in text
    events = run("normalize", HUGE, "--contract", contract)
    assert events.code == 0, events.err
    assert json.loads(events.out.splitlines()[1])["after"]["id"] == WIDE


def test_an_integer_column_refuses_a_wide_integer(tmp_path: Path) -> None:
    first = tmp_path / "first.json"
    first.write_text(json.dumps(json.loads(HUGE.read_text())[:1]))
    contract = tmp_path / "c.yaml"
    assert run("infer", first, "--format", "debezium-json", "--name", "t", "-o", contract).code == 0
    done = run("normalize", HUGE, "--contract", contract)
    assert done.code == 1
    errors = [ln for ln in done.err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "after.id: " in errors[0] and WIDE in errors[0], errors
    assert done.out.count(b"\n") == 2  # the other two messages are written


def test_the_judge_reads_wide_integers_exactly_on_both_sides_of_the_range() -> None:
    doc = parse_document(b'{"a":18446744073709551615,"b":18446744073709551616,"c":-1e3}', "m")
    assert doc["a"] == 2**64 - 1 and type(doc["a"]) is int  # uint64: orjson's own int
    assert isinstance(doc["b"], JsonNumber) and doc["b"].wide_integer == 2**64
    assert str(doc["b"]) == WIDE
    low = parse_document(b"[-9223372036854775808, -9223372036854775809]", "m")
    assert type(low[0]) is int and isinstance(low[1], JsonNumber)
    assert low[1].wide_integer == -(2**63) - 1
