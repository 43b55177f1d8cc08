"""The format-facing commands through the real entry point (``cli.main.main``).

Most tests run the entry point in-process (``clirun.run``); a few run the installed script as
a process (``clirun.run_process``) to check exit codes and that no traceback ever reaches the
user.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from clirun import run, run_process

from contracts.contract import dump_contract, load_contract
from contracts.events import ChangeEvent
from contracts.formats import FORMATS, get_format
from contracts.pipeline import event_line, open_stream

ROOT = Path(__file__).parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DTS = FIXTURES / "dts-avro"
QUIET = {"PYTHONWARNINGS": "ignore"}


# --- formats -----------------------------------------------------------------------------------


def test_formats_json_lists_every_format() -> None:
    result = run("formats", "--output-format", "json")
    assert result.code == 0
    rows = json.loads(result.text)
    assert [r["name"] for r in rows] == list(FORMATS)
    dts = next(r for r in rows if r["name"] == "dts-avro")
    assert dts == {
        "name": "dts-avro",
        "description": get_format("dts-avro").description,
        "embedded_schema": "no",
        "input_kind": "avro",
    }


def test_formats_table() -> None:
    result = run("formats")
    assert result.code == 0
    assert "dts-avro" in result.text and "embedded schema" in result.text


# --- dts-avro end to end -----------------------------------------------------------------------


def test_infer_detects_dts_and_reports_history(tmp_path: Path) -> None:
    target = tmp_path / "orders.yaml"
    result = run("infer", DTS / "orders.confluent.bin", "-o", target)
    assert result.code == 0, result.err
    assert target.read_text() == (DTS / "orders.expected.yaml").read_text()
    assert "(dts-avro) from 10 messages" in result.err
    assert "schema history: 2 versions" in result.err
    assert "ddl 2, heartbeat 1, transaction 2" in result.err


def test_infer_json_output() -> None:
    result = run("infer", DTS / "orders.avro", "--name", "orders", "--output-format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.text)
    assert report["format"] == "dts-avro" and report["contract"]["name"] == "orders"
    assert [len(v["columns"]) for v in report["history"]] == [22, 23]


def test_validate_conforming_inputs() -> None:
    result = run("validate", DTS / "orders.expected.yaml", DTS / "orders.bin", DTS / "orders.avro")
    assert result.code == 0, result.err
    assert result.out == b""
    assert "20 messages checked" in result.err


def test_validate_reports_every_violation_and_keeps_going() -> None:
    result = run("validate", DTS / "orders.expected.yaml", DTS / "bad" / "bad-values.bin")
    assert result.code == 1
    lines = result.lines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{DTS / 'bad' / 'bad-values.bin'}@0: $.afterImages[1]: ")
    assert "$.afterImages[6]" in lines[1]
    assert "3 messages checked" in result.err


def test_validate_max_errors_stops_early() -> None:
    args = ("validate", DTS / "orders.expected.yaml", DTS / "bad" / "bad-values.bin")
    result = run(*args, "--max-errors", "1", "--output-format", "json")
    assert result.code == 1
    report = json.loads(result.text)
    assert report["stopped_early"] and len(report["problems"]) == 1


def test_normalize_with_contract_writes_canonical_events(tmp_path: Path) -> None:
    target = tmp_path / "events.jsonl"
    contract = DTS / "orders.expected.yaml"
    result = run("normalize", DTS / "orders.bin", "--contract", contract, "-o", target)
    assert result.code == 0, result.err
    got = [json.loads(line) for line in target.read_text().splitlines()]
    want = [json.loads(line) for line in (DTS / "orders.events.jsonl").read_text().splitlines()]
    assert got == want
    assert "ddl 2, heartbeat 1, transaction 2" in result.err


def test_normalize_skips_bad_messages_and_exits_1() -> None:
    result = run("normalize", DTS / "bad" / "bad-values.bin", "--format", "dts-avro")
    assert result.code == 1
    assert len(result.lines()) == 1  # the one good insert
    errors = [e for e in result.err.splitlines() if e.startswith("error: ")]
    assert len(errors) == 2
    assert "@0: $.afterImages[1]: customer_id:" in errors[0]


def test_normalize_unusable_input_exits_2_after_good_records() -> None:
    result = run("normalize", DTS / "bad" / "truncated.bin", DTS / "orders.bin")
    assert result.code == 2
    # truncated.bin yields its 2 complete inserts before the cut, then orders.bin is read
    assert len(result.lines()) == 2 + 5
    assert "truncated.bin@1656: not a DTS Avro record" in result.err


def test_normalize_contract_and_format_must_agree() -> None:
    result = run(
        "normalize", DTS / "orders.bin", "-c", DTS / "orders.expected.yaml", "-f", "canal-json"
    )
    assert result.code == 2 and "contradicts" in result.err


# --- errors: one line, exit 2, never a traceback -----------------------------------------------


def test_unknown_format_is_one_line(tmp_path: Path) -> None:
    result = run_process("normalize", DTS / "orders.bin", "--format", "dts-avr", env=QUIET)
    assert result.code == 2
    assert (
        result.err.strip().splitlines()
        == [
            result.err.strip(),
        ]
        and "did you mean 'dts-avro'" in result.err
    )
    assert "Traceback" not in result.err


def test_undetectable_and_malformed_json(tmp_path: Path) -> None:
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"hello": 1}\n{"hello": 2}\n')
    result = run("infer", unknown)
    assert result.code == 2 and "matches none of the known json formats" in result.err
    broken = tmp_path / "broken.json"
    broken.write_text('{"payload": {"op": "c",\n')
    result = run_process("infer", broken, env=QUIET)
    assert result.code == 2
    assert result.err.startswith(f"error: {broken}:1: truncated JSON")
    assert "Traceback" not in result.err


def test_missing_file_and_bad_contract(tmp_path: Path) -> None:
    assert run("infer", tmp_path / "nope.json").code == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nformat: dts-avro\ncolumns: []\ntable: {name: t}\nbogus: 1\n")
    result = run("validate", bad, DTS / "orders.bin")
    assert result.code == 2 and result.err.startswith(f"error: {bad}:")


# --- every format's fixtures through the CLI ---------------------------------------------------


#: Samples nothing can detect: snapshot CSV rows are bare cells (the format must be named).
NOT_DETECTABLE = {"snapshot-region.csv", "snapshot-region-header.csv"}


@dataclass(frozen=True)
class Case:
    fmt: str
    sample: Path
    expected: Path
    typed: bool

    @property
    def id(self) -> str:
        return f"{self.fmt}/{self.sample.name}{' --infer-types' if self.typed else ''}"


def _cases() -> list[Case]:
    """One case per expected contract and sample beside it (``*.typed.*``: --infer-types)."""
    cases = []
    for expected in sorted(FIXTURES.glob("*/*.expected.yaml")):
        stem = expected.name.removesuffix(".expected.yaml")
        typed = stem.endswith(".typed")
        base = stem.removesuffix(".typed")
        for sample in sorted(expected.parent.glob(f"{base}.*")):
            name = sample.name
            if name.endswith((".expected.yaml", ".events.jsonl")) or ".typed." in name:
                continue
            cases.append(Case(expected.parent.name, sample, expected, typed))
    return cases


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fixture_infer_validate_normalize(case: Case, tmp_path: Path) -> None:
    """Auto-detection finds the format; infer gives the expected contract; the sample conforms
    to it (older schema versions aside, when the sample holds several); normalize gives the
    expected events."""
    want_contract = load_contract(case.expected)
    target = tmp_path / "contract.yaml"
    args: list[str | Path] = ["infer", case.sample, "-o", target, "--output-format", "json"]
    args += ["--name", want_contract.name]
    args += ["--infer-types"] if case.typed else []
    if case.sample.name in NOT_DETECTABLE:
        args += ["--format", case.fmt]
    inferred = run(*args)
    assert inferred.code == 0, inferred.err
    report = json.loads(inferred.text)
    assert report["format"] == case.fmt
    assert dump_contract(load_contract(target)) == dump_contract(want_contract)
    checked = run("validate", case.expected, case.sample)
    if len(report["history"]) <= 1:
        assert checked.code == 0, checked.text
    assert checked.code in (0, 1) and "Traceback" not in checked.err
    result = run("normalize", case.sample, "--contract", case.expected)
    assert result.code == 0, result.err
    events = case.expected.with_name(case.expected.name.replace(".expected.yaml", ".events.jsonl"))
    want = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    assert [json.loads(line) for line in result.lines()] == want


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_event_lines_equal_to_json(case: Case) -> None:
    stream = open_stream([case.sample], case.fmt)
    contract = load_contract(case.expected)
    for message in stream.messages():
        for item in stream.format.normalize(message, contract):
            if isinstance(item, ChangeEvent):
                assert event_line(item) == orjson.dumps(item.to_json()) + b"\n"
