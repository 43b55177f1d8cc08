"""No bad input crashes a run or hides what follows it (issue #23 items 5 and 6), through the
real CLI: the crash sites the issue lists, kept as fixtures; a small fixed-seed fuzz campaign
(``make fuzz`` runs the long one); empty inputs and closed pipes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import fuzzing  # tests/fuzz/fuzzing.py
import pytest
from fuzzing import REGRESSIONS, ROOT, run_cli

CDC = Path(sys.executable).with_name("cdc-contracts")
MANIFEST: list[dict[str, Any]] = json.loads((REGRESSIONS / "manifest.json").read_text())
FORBIDDEN = ("Traceback", "internal error", "bug in cdc-contracts")


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    fuzzing.warm_up()


def summary(err: str) -> tuple[int, int, int]:
    found = fuzzing._summary(err)
    assert found is not None, err
    return found


@pytest.mark.parametrize("case", MANIFEST, ids=[c["file"] for c in MANIFEST])
def test_a_crash_site_is_one_located_error_and_the_run_goes_on(case: dict[str, Any]) -> None:
    path = REGRESSIONS / case["file"]
    normalize = run_cli(["normalize", str(path), "--format", case["format"]])
    infer = run_cli(["infer", str(path), "--format", case["format"], "--name", "t", "-o", "-"])
    for run in (normalize, infer):
        assert run.code in (0, 1, 2), run.err
        assert not any(word in run.err for word in FORBIDDEN), run.err
    if "normalize_exit" not in case:  # recorded by `make fuzz --record`: no crash is enough
        return
    assert normalize.code == case["normalize_exit"], normalize.err
    errors = [ln for ln in normalize.err.splitlines() if ln.startswith("error:")]
    assert errors == [case["error"].replace("FILE", str(path))]
    _, error_count, events = summary(normalize.err)
    assert (events, error_count) == (case["events"], case["errors"])
    assert normalize.out.count(b"\n") == events  # the messages after the bad one are written
    assert case["error"].replace("FILE", str(path)) in infer.err
    if "contract" in case:  # validate judges the same bytes alike: same status, same place
        validate = run_cli(["validate", str(ROOT / case["contract"]), str(path)])
        assert validate.code == normalize.code, validate.err
        located = case["error"].removeprefix("error: ").replace("FILE", str(path))
        assert located in validate.out.decode() + validate.err


def test_validate_and_normalize_judge_the_same_bytes_alike(tmp_path: Path) -> None:
    """The surrogate file: validate said "all conform" where normalize crashed."""
    contract = tmp_path / "c.yaml"
    path = REGRESSIONS / "surrogate-pretty.json"
    inferred = run_cli(["infer", str(path), "--name", "products", "-o", str(contract)])
    assert inferred.code == 2 and contract.exists()
    validate = run_cli(["validate", str(contract), str(path)])
    normalize = run_cli(["normalize", str(path), "--contract", str(contract)])
    assert validate.code == normalize.code == 2
    same = f"error: {path}:29: malformed JSON: a string holds a lone UTF-16 surrogate escape"
    assert validate.err.startswith(same) and normalize.err.startswith(same)


def test_a_contract_nested_too_deeply_is_one_line_exit_2(tmp_path: Path) -> None:
    """An option nested 470 levels deep crashed render, diff and check (exit 3)."""
    good = (ROOT / "tests/fixtures/debezium-json/flink.expected.yaml").read_text()
    path = tmp_path / "deep.yaml"
    path.write_text(
        good.replace("options:\n", "options:\n  deep: " + "[" * 470 + "]" * 470 + "\n", 1)
    )
    line = f"error: {path}:8: invalid YAML: nested deeper than 200 levels\n"
    for args in (["render", "-t", "avro", str(path)], ["diff", str(path), str(path)]):
        run = run_cli(args)
        assert (run.code, run.err) == (2, line), args


def test_no_messages_is_unusable_input_unless_allowed(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n\n")
    contract = ROOT / "tests/fixtures/debezium-json/flink-schemas-disabled.expected.yaml"
    said = f"error: no messages in {empty} (pass --allow-empty to accept an empty input)"
    for args in (["validate", str(contract), str(empty)], ["normalize", str(empty)]):
        run = run_cli(args)
        assert run.code == 2 and run.err.splitlines()[0] == said, run.err
        allowed = run_cli([*args, "--allow-empty"])
        assert allowed.code == 0, allowed.err


def test_a_closed_pipe_downstream_exits_quietly_with_141(tmp_path: Path) -> None:
    """``normalize big.jsonl | head -1``: the reader goes away; exit 128 + SIGPIPE, no words."""
    source = (ROOT / "tests/fixtures/debezium-json/flink-schemas-disabled.jsonl").read_bytes()
    big = tmp_path / "big.jsonl"
    big.write_bytes(source * 4000)  # 64,000 messages: far more than a pipe buffer holds
    proc = subprocess.Popen(
        [str(CDC), "normalize", str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert first.startswith(b'{"op":"c"') and err == b""


def test_a_fixed_seed_campaign_finds_nothing() -> None:
    """A small run of the campaign ``make fuzz`` runs long (same operators, seed 7; runs in
    this process, one mutant in ten also in forks that must agree): a fixed number of
    mutants, so a slow machine takes longer rather than testing less (~10 s quiet, ~25 s
    under load 15)."""
    outcome = fuzzing.campaign(mutants=120, seconds=600, seed=7, jobs=1)
    assert outcome.mutants == 120
    assert [(f.seed, f.op, f.problems) for f in outcome.failures] == []
