"""`cdc-contracts diff` and `check` through the real CLI: every output form and exit code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import run, run_process

FIX = Path(__file__).parent.parent / "fixtures" / "diff"
ROOT = Path(__file__).parent.parent.parent


def pair(rule: str) -> list[str]:
    before = next((FIX / rule).glob("before.*"))
    after = next((FIX / rule).glob("after.*"))
    return [str(before), str(after)]


# --- diff: outputs ----------------------------------------------------------------------------


def test_json_output_is_the_diff_result_object() -> None:
    result = run("diff", *pair("decimal-scale-changed"), "--output-format", "json")
    code, out = result.code, result.output
    assert code == 1
    data = json.loads(out)
    assert list(data) == ["level", "compatible", "breaking", "findings"]
    assert data["level"] == "BACKWARD" and data["compatible"] is True and data["breaking"] is True
    assert data["findings"] == [
        {
            "rule": "decimal-scale-changed",
            "path": "value.after.amount",
            "severity": "breaking",
            "message": "Column amount changed decimal scale from 2 to 3.",
        }
    ]


def test_text_output_names_rule_path_and_message() -> None:
    result = run("diff", *pair("temporal-unit-changed"))
    code, out = result.code, result.output
    assert code == 1
    assert "temporal-unit-changed" in out and "value.after.created_at" in out
    assert "changed timestamp unit from micros to millis" in out
    assert "result: FAIL" in out


def test_github_output_annotates_the_contract_line(tmp_path: Path) -> None:
    old, new = pair("decimal-scale-changed")
    line = next(
        i for i, text in enumerate(Path(new).read_text().splitlines(), 1) if "field: amount" in text
    )
    summary = tmp_path / "summary.md"
    result = run(
        "diff", old, new, "--output-format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    code, out = result.code, result.output
    assert code == 1
    assert (
        f"::error file={new},line={line},title=decimal-scale-changed (value.after.amount)::"
        "Column amount changed decimal scale from 2 to 3."
    ) in out.splitlines()
    table = summary.read_text()
    assert "| Contract | Severity | Rule | Path | Message |" in table
    assert "`decimal-scale-changed`" in table


def test_github_output_levels_follow_severity() -> None:
    result = run("diff", *pair("column-removed"), "--output-format", "github")
    code, out = result.code, result.output
    assert code == 0
    assert any(line.startswith("::warning file=") for line in out.splitlines())
    result = run(
        "diff", *pair("column-removed"), "--output-format", "github", "--fail-on", "warning"
    )
    code, out = result.code, result.output
    assert code == 1
    assert any(line.startswith("::error file=") for line in out.splitlines())


def test_junit_output_has_one_case_per_rule() -> None:
    result = run("diff", *pair("key-columns-changed"), "--output-format", "junit")
    code, out = result.code, result.output
    assert code == 1
    root = ET.fromstring(out)
    cases = root.findall(".//testcase")
    names = [c.get("name") for c in cases]
    assert "key-columns-changed" in names and "registry-compatibility (BACKWARD)" in names
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert "key-columns-changed" in failed
    assert root.get("failures") == str(len(failed))


def test_markdown_output_is_a_table() -> None:
    result = run("diff", *pair("enum-values-added"), "--output-format", "markdown")
    code, out = result.code, result.output
    assert code == 0
    assert "| Contract | Level | Compatible | Breaking | Findings |" in out
    assert "`enum-values-added`" in out and "✅ passed" in out


# --- diff: exit codes -------------------------------------------------------------------------


def test_exit_0_when_nothing_breaks() -> None:
    result = run("diff", *pair("column-added"))
    code, out = result.code, result.output
    assert code == 0, out
    assert "result: ok" in out


def test_fail_on_warning_and_never() -> None:
    assert run("diff", *pair("column-removed")).code == 0
    assert run("diff", *pair("column-removed"), "--fail-on", "warning").code == 1
    assert run("diff", *pair("decimal-scale-changed"), "--fail-on", "never").code == 0


def test_level_option_changes_the_verdict() -> None:
    old, new = pair("avro-type-mismatch")
    backward = json.loads(run("diff", old, new, "--output-format", "json").output)
    forward = json.loads(
        run("diff", old, new, "--output-format", "json", "--level", "FORWARD").output
    )
    assert backward["compatible"] is False  # int cannot read long
    assert forward["compatible"] is True  # long reads int
    assert forward["level"] == "FORWARD"
    assert run("diff", old, new, "--level", "NONE").code == 0


def test_exit_2_on_unusable_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "struct", "fields": [')
    result = run("diff", str(bad), pair("column-added")[1])
    code, out = result.code, result.output
    assert code == 2
    assert "error:" in out and "bad.json" in out
    result = run("diff", str(tmp_path / "missing.yaml"), pair("column-added")[1])
    code, out = result.code, result.output
    assert code == 2 and "no such file" in out


def test_exit_2_on_usage_error() -> None:
    assert run("diff", *pair("column-added"), "--output-format", "xml").code == 2
    assert run("diff", pair("column-added")[0]).code == 2


def test_real_entry_point_exit_codes(tmp_path: Path) -> None:
    done = run_process("diff", *pair("decimal-scale-changed"), "--output-format", "json")
    assert done.code == 1 and json.loads(done.text)["breaking"] is True
    done = run_process("diff", str(tmp_path / "nope.avsc"), pair("column-added")[1])
    assert done.code == 2
    assert done.err.startswith("error: ") and "Traceback" not in done.err


# --- check against git ------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in ``repo``; its standard output."""
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout


def contracts_repo(root: Path, fixtures: dict[str, str]) -> Path:
    """A new repository at ``root`` whose ``contracts/`` holds ``fixtures`` (file name →
    tests/fixtures/diff case, its ``before.yaml``); the directory, not yet committed."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "ci@example.com")
    git(root, "config", "user.name", "CI")
    contracts = root / "contracts"
    contracts.mkdir()
    for name, case in fixtures.items():
        shutil.copy(FIX / case / "before.yaml", contracts / name)
    return contracts


def rename(path: Path, name: str) -> None:
    """Give the contract in ``path`` another name (contracts are paired by name)."""
    text = path.read_text()
    old = next(line for line in text.splitlines() if line.startswith("name: "))
    path.write_text(text.replace(old, f"name: {name}", 1))


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    cases = {
        "orders.yaml": "decimal-scale-changed",
        "orders_copy.yaml": "column-added",
        "shop.yaml": "format-changed",
    }
    contracts = contracts_repo(tmp_path, cases)
    rename(contracts / "orders_copy.yaml", "pgserver1.public.orders_copy")
    hidden = contracts / ".config"  # hidden directories are not read
    hidden.mkdir()
    (hidden / "settings.yml").write_text("retention: 7d\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "contracts")
    return tmp_path


def test_check_unchanged_passes(repo: Path) -> None:
    result = run("check", str(repo / "contracts"), "--against", "git:HEAD")
    code, out = result.code, result.output
    assert code == 0, out
    assert "3 contract(s): 0 changed" in out


def test_check_reports_changed_added_and_removed(repo: Path, tmp_path: Path) -> None:
    contracts = repo / "contracts"
    shutil.copy(FIX / "decimal-scale-changed" / "after.yaml", contracts / "orders.yaml")
    (contracts / "shop.yaml").unlink()
    shutil.copy(FIX / "column-added" / "after.yaml", contracts / "new_table.yaml")
    rename(contracts / "new_table.yaml", "pgserver1.public.new_table")
    result = run("check", str(contracts), "--against", "git:HEAD", "--output-format", "json")
    code, out = result.code, result.output
    assert code == 1, out
    data = json.loads(out)
    status = {c["file"]: c["status"] for c in data["contracts"]}
    assert status == {
        "contracts/new_table.yaml": "added",
        "contracts/orders.yaml": "changed",
        "contracts/orders_copy.yaml": "unchanged",
        "contracts/shop.yaml": "removed",
    }
    rules = {c["file"]: [f["rule"] for f in c["findings"]] for c in data["contracts"]}
    assert rules["contracts/orders.yaml"] == ["decimal-scale-changed"]
    assert rules["contracts/shop.yaml"] == ["contract-removed"]
    assert rules["contracts/new_table.yaml"] == ["contract-added"]
    assert data["breaking"] is True

    summary = tmp_path / "summary.md"
    result = run(
        "check",
        str(contracts),
        "--against",
        "git:HEAD",
        "--output-format",
        "github",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    code, out = result.code, result.output
    assert code == 1
    assert any(
        line.startswith("::error file=contracts/orders.yaml,line=") for line in out.splitlines()
    )
    assert "contracts/shop.yaml" in summary.read_text() or "shop.orders" in summary.read_text()

    result = run("check", str(contracts), "--against", "git:HEAD", "--output-format", "junit")
    code, out = result.code, result.output
    assert code == 1
    assert ET.fromstring(out).get("failures") == "2"  # the scale change and the removal


def test_check_usage_and_input_errors(repo: Path) -> None:
    result = run("check", str(repo / "contracts"), "--against", "git:no-such-ref")
    code, out = result.code, result.output
    assert code == 2 and "error:" in out
    result = run("check", str(repo / "contracts"), "--against", "svn:1")
    code, out = result.code, result.output
    assert code == 2 and "unknown baseline" in out
    result = run("check", str(repo / "contracts"), "--against", "registry")
    code, out = result.code, result.output
    assert code == 2 and "--url" in out
    broken = repo / "contracts" / "broken.yaml"
    broken.write_text("name: x\nformat: debezium-json\ncolumns: [\n")
    result = run("check", str(repo / "contracts"), "--against", "git:HEAD")
    code, out = result.code, result.output
    assert code == 2 and "broken.yaml" in out


def test_check_runs_from_inside_a_subdirectory(repo: Path) -> None:
    cwd = os.getcwd()
    os.chdir(repo / "contracts")
    try:
        result = run("check", "--against", "git:HEAD")
        code, out = result.code, result.output
    finally:
        os.chdir(cwd)
    assert code == 0, out
