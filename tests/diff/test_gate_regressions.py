"""`check` and `diff` as a CI gate: nothing that fails to load passes, nothing is dropped unprinted.

Real git repositories in temporary directories, the real CLI (regressions from the CLI review).
"""

from __future__ import annotations

import copy
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import Run, run

from .test_cli import contracts_repo, git

FIX = Path(__file__).parent.parent / "fixtures" / "diff"
ROOT = Path(__file__).parent.parent.parent
PRODUCTS = ROOT / "examples" / "topics" / "debezium-json" / "dbserver1.inventory.products.jsonl"


def line_of(path: Path, needle: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if needle in text)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A repository whose contracts/ holds two committed contracts."""
    contracts_repo(
        tmp_path, {"orders.yaml": "decimal-scale-changed", "shop.yaml": "format-changed"}
    )
    git(tmp_path, "add", "contracts")
    git(tmp_path, "commit", "-q", "-m", "contracts")
    return tmp_path


def breaking_change(repo: Path) -> Path:
    orders = repo / "contracts" / "orders.yaml"
    shutil.copy(FIX / "decimal-scale-changed" / "after.yaml", orders)
    return orders


def check(repo: Path, *extra: str) -> Run:
    return run("check", str(repo / "contracts"), "--against", "git:HEAD", *extra)


# --- bug 1: a file that does not load is an error, not "removed" ------------------------------


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("columns:", "colums:", "colums:"),
        ("format:", "fromat:", "fromat:"),
        ("key: [id]", "key: id", "key:"),
        ("compatibility: BACKWARD", "compatibility: BACKWARDS", "compatibility:"),
    ],
)
def test_a_typo_in_a_breaking_contract_is_an_error_not_a_removal(
    repo: Path, old: str, new: str, needle: str
) -> None:
    orders = breaking_change(repo)
    assert check(repo).code == 1  # the change itself breaks
    text = orders.read_text()
    assert old in text
    orders.write_text(text.replace(old, new, 1))
    for output in ("text", "json", "github", "junit"):
        result = check(repo, "--output-format", output)
        code, out = result.code, result.output
        assert code == 2, (output, out)
        # the error line (stderr) in every format; a machine format also says it in its own terms
        assert "error: contracts/orders.yaml:" in out, out
        assert out.startswith("error: contracts/orders.yaml:") == (output == "text"), out
        assert "removed" not in out and "result: ok" not in out
    line = int(check(repo).output.split(":")[2])
    assert line in (1, line_of(orders, needle))


def test_yaml_that_is_not_a_contract_is_an_error(repo: Path) -> None:
    notes = repo / "contracts" / "notes.yaml"
    notes.write_text("foo: bar\n")
    result = check(repo)
    code, out = result.code, result.output
    assert code == 2
    assert out.startswith("error: contracts/notes.yaml:1: ")
    notes.write_text("- just\n- a list\n")
    result = check(repo)
    code, out = result.code, result.output
    assert code == 2 and out.startswith("error: contracts/notes.yaml:1: ")
    notes.unlink()
    (repo / "contracts" / "bad.yml").write_bytes(b"name: x\ncolumns: \xff\n")
    result = check(repo)
    code, out = result.code, result.output
    assert code == 2 and "contracts/bad.yml:2: contract file is not UTF-8 text" in out


def test_a_committed_file_that_does_not_load_is_an_error_even_unchanged(repo: Path) -> None:
    (repo / "contracts" / "settings.yml").write_text("retention: 7d\n")
    git(repo, "add", "contracts")
    git(repo, "commit", "-q", "-m", "settings")
    result = check(repo)
    code, out = result.code, result.output
    assert code == 2 and out.startswith("error: contracts/settings.yml:1: ")


def test_hidden_directories_are_not_read(repo: Path) -> None:
    hidden = repo / "contracts" / ".config"
    hidden.mkdir()
    (hidden / "settings.yml").write_text("retention: 7d\n")
    result = check(repo)
    code, out = result.code, result.output
    assert code == 0, out


def test_a_baseline_that_does_not_load_is_an_error_naming_the_ref(repo: Path) -> None:
    orders = repo / "contracts" / "orders.yaml"
    good = orders.read_text()
    orders.write_text(good.replace("columns:", "colums:", 1))
    git(repo, "commit", "-q", "-am", "broken")
    breaking_change(repo)  # fixed, and breaking: it cannot be compared, so it cannot pass
    result = check(repo)
    code, out = result.code, result.output
    assert code == 2
    assert out.startswith("error: HEAD:contracts/orders.yaml:"), out
    assert "cannot be compared with git:HEAD" in out and "added" not in out
    result = run(
        "check", str(repo / "contracts"), "--against", "git:HEAD~1", "--output-format", "json"
    )
    code, out = result.code, result.output  # against a ref where it loads, the change is judged
    assert code == 1 and json.loads(out)["breaking"] is True


def test_a_removed_file_that_was_not_a_contract_is_printed_in_every_output(repo: Path) -> None:
    notes = repo / "contracts" / "notes.yaml"
    notes.write_text("foo: bar\n")
    git(repo, "add", "contracts")
    git(repo, "commit", "-q", "-m", "notes", "--no-verify")
    notes.unlink()
    result = check(repo)
    code, out = result.code, result.output
    assert code == 0
    assert "note: contracts/notes.yaml: removed; it was not a contract at git:HEAD" in out
    result = check(repo, "--output-format", "json")
    code, out = result.code, result.output
    (note,) = json.loads(out)["skipped"]
    assert (
        note.startswith("contracts/notes.yaml: removed") and "HEAD:contracts/notes.yaml:1" in note
    )
    assert (
        "::notice title=not compared::contracts/notes.yaml"
        in check(repo, "--output-format", "github").output
    )
    assert "contracts/notes.yaml: removed" in check(repo, "--output-format", "markdown").output
    root = ET.fromstring(check(repo, "--output-format", "junit").output)
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["contracts/notes.yaml"]


def test_a_comment_only_edit_is_unchanged(repo: Path) -> None:
    orders = repo / "contracts" / "orders.yaml"
    orders.write_text("# owned by the orders team\n" + orders.read_text())
    result = check(repo, "--output-format", "json")
    code, out = result.code, result.output
    assert code == 0
    status = {c["file"]: c["status"] for c in json.loads(out)["contracts"]}
    assert status["contracts/orders.yaml"] == "unchanged"


# --- nit 7: refs and empty directories ---------------------------------------------------------


def test_an_unknown_ref_is_named(repo: Path) -> None:
    result = run("check", str(repo / "contracts"), "--against", "git:nonexistent")
    code, out = result.code, result.output
    assert code == 2
    assert out.startswith("error: --against git:nonexistent: git ref 'nonexistent' is not a commit")


def test_a_directory_without_contracts_fails(repo: Path) -> None:
    empty = repo / "empty"
    empty.mkdir()
    result = run("check", str(empty), "--against", "git:HEAD")
    code, out = result.code, result.output
    assert code == 2 and "no contracts found under" in out
    result = run("check", str(repo / "missing"), "--against", "git:HEAD")
    code, out = result.code, result.output
    assert code == 2 and "no such directory" in out


def test_every_contract_removed_is_reported_not_an_empty_directory(repo: Path) -> None:
    for p in (repo / "contracts").iterdir():
        p.unlink()
    result = check(repo, "--output-format", "json")
    code, out = result.code, result.text
    assert code == 1  # a removed contract is breaking (REVIEW-1 F8)
    assert {c["status"] for c in json.loads(out)["contracts"]} == {"removed"}


# --- bug 10: JUnit records breaking findings whatever --fail-on says ---------------------------


@pytest.mark.parametrize("fail_on", ["breaking", "warning", "never"])
def test_junit_records_breaking_findings_as_failures(repo: Path, fail_on: str) -> None:
    breaking_change(repo)
    result = check(repo, "--output-format", "junit", "--fail-on", fail_on)
    code, out = result.code, result.output
    assert code == (0 if fail_on == "never" else 1)
    root = ET.fromstring(out)
    assert root.get("failures") == "1"
    failed = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed == ["decimal-scale-changed"]


def test_junit_registry_verdict_fails_with_fail_on_never() -> None:
    old, new = (next((FIX / "avro-type-mismatch").glob(f"{w}.*")) for w in ("before", "after"))
    result = run("diff", str(old), str(new), "--output-format", "junit", "--fail-on", "never")
    code, out = result.code, result.output
    assert code == 0
    root = ET.fromstring(out)
    failed = {c.get("name") for c in root.iter("testcase") if c.find("failure") is not None}
    assert "registry-compatibility (BACKWARD)" in failed


# --- bug 11: --staged reads the git index ------------------------------------------------------


def test_staged_checks_what_a_commit_would_record(repo: Path) -> None:
    orders = breaking_change(repo)
    git(repo, "add", "contracts/orders.yaml")
    git(repo, "show", "HEAD:contracts/orders.yaml")
    orders.write_text(git(repo, "show", "HEAD:contracts/orders.yaml"))  # work tree: as HEAD
    assert check(repo).code == 0  # the working tree is unchanged ...
    result = check(repo, "--staged", "--output-format", "json")
    code, out = result.code, result.output
    assert code == 1, out  # ... but the commit would break
    data = json.loads(out)
    status = {c["file"]: c["status"] for c in data["contracts"]}
    assert status == {"contracts/orders.yaml": "changed", "contracts/shop.yaml": "unchanged"}


def test_staged_ignores_untracked_and_unstaged_files_and_sees_staged_removals(repo: Path) -> None:
    (repo / "contracts" / "draft.yaml").write_text("not: a contract\n")  # untracked
    breaking_change(repo)  # not staged
    result = check(repo, "--staged")
    code, out = result.code, result.output
    assert code == 0, out
    git(repo, "rm", "-q", "--cached", "contracts/shop.yaml")  # staged removal, file kept
    result = check(repo, "--staged", "--output-format", "json")
    code, out = result.code, result.output
    status = {c["file"]: c["status"] for c in json.loads(out)["contracts"]}
    assert status == {"contracts/orders.yaml": "unchanged", "contracts/shop.yaml": "removed"}
    git(repo, "add", "contracts/draft.yaml")
    result = check(repo, "--staged")
    code, out = result.code, result.output
    assert code == 2 and out.startswith("error: contracts/draft.yaml:1: ")


def test_staged_from_inside_the_directory(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    breaking_change(repo)
    git(repo, "add", "contracts")
    monkeypatch.chdir(repo / "contracts")
    result = run("check", "--staged")
    code, out = result.code, result.output
    assert code == 1 and "decimal-scale-changed" in out


# --- bug 6 (diff/check part): an unwritable step summary --------------------------------------


def test_an_unwritable_step_summary_keeps_the_verdict(repo: Path, tmp_path: Path) -> None:
    breaking_change(repo)
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "such" / "dir" / "s.md")}
    result = run(
        "check",
        str(repo / "contracts"),
        "--against",
        "git:HEAD",
        "--output-format",
        "github",
        env=env,
    )
    code, out = result.code, result.output
    assert code == 1
    assert "warning: GITHUB_STEP_SUMMARY" in out and "internal error" not in out


# --- bug 7: diff refuses contracts of an unknown format ----------------------------------------


def test_diff_refuses_an_unknown_format(tmp_path: Path) -> None:
    before = FIX / "column-added" / "before.yaml"
    typo = tmp_path / "typo.yaml"
    typo.write_text(before.read_text().replace("format: debezium-json", "format: debezium-jsn"))
    line = line_of(typo, "format:")
    for old, new in ((before, typo), (typo, typo)):
        result = run("diff", str(old), str(new))
        code, out = result.code, result.output
        assert code == 2, out
        assert out.startswith(f"error: {typo}:{line}: format: unknown format 'debezium-jsn'")


# --- bug 12: diff reads every message of a messages file ---------------------------------------


def messages(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_diff_reports_a_malformed_line_after_the_first(tmp_path: Path) -> None:
    good = PRODUCTS.read_text().splitlines()[:5]
    garbled = messages(tmp_path, "garbled.jsonl", [*good[:2], "garbage here", *good[3:]])
    result = run("diff", str(PRODUCTS), str(garbled))
    code, out = result.code, result.output
    assert code == 2
    assert out.startswith(f"error: {garbled}:3: ")
    truncated = messages(tmp_path, "trunc.jsonl", [*good[:2], good[2][:100], *good[3:]])
    result = run("diff", str(truncated), str(PRODUCTS))
    code, out = result.code, result.output
    assert code == 2 and out.startswith(f"error: {truncated}:3: ")


def test_diff_refuses_messages_with_several_schemas(tmp_path: Path) -> None:
    lines = PRODUCTS.read_text().splitlines()[:4]
    doc = json.loads(lines[3])
    v2 = copy.deepcopy(doc)
    for row in v2["schema"]["fields"][:2]:  # before and after: one Avro record
        row["fields"].append({"type": "string", "optional": True, "field": "colour"})
    v2["payload"]["after"]["colour"] = "red"
    mixed = messages(tmp_path, "mixed.jsonl", [*lines[:3], json.dumps(v2), lines[3]])
    result = run("diff", str(PRODUCTS), str(mixed))
    code, out = result.code, result.output
    assert code == 2
    assert out.startswith(f"error: {mixed}:4: the value schema differs from the one at {mixed}:1")
    newer = messages(tmp_path, "v2.jsonl", [json.dumps(v2)] * 3)
    result = run("diff", str(PRODUCTS), str(newer), "--output-format", "json")
    code, out = result.code, result.output
    assert code == 0, out
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["column-added"]


def test_diff_of_kcat_records_skips_tombstones_and_reads_every_record(tmp_path: Path) -> None:
    record = json.loads((FIX / "_inputs" / "orders.kcat.jsonl").read_text().splitlines()[0])
    tombstone = {**record, "offset": 1, "payload": None}
    broken = {**record, "offset": 2, "payload": '{"schema": {'}
    ok = messages(
        tmp_path, "ok.jsonl", [json.dumps(tombstone), json.dumps(record), json.dumps(tombstone)]
    )
    contract = FIX / "column-added" / "before.yaml"
    result = run("diff", str(ok), str(contract), "--output-format", "json")
    code, out = result.code, result.output
    assert code == 0, out
    bad = messages(tmp_path, "bad.jsonl", [json.dumps(record), json.dumps(broken)])
    result = run("diff", str(bad), str(contract))
    code, out = result.code, result.output
    assert code == 2 and out.startswith(f"error: {bad}:2")


def test_a_schema_file_holds_one_document(tmp_path: Path) -> None:
    avsc = next((FIX / "avro-type-mismatch").glob("before.*"))
    two = tmp_path / "two.json"
    two.write_text(avsc.read_text() + "\n" + avsc.read_text())
    result = run("diff", str(two), str(avsc))
    code, out = result.code, result.output
    assert code == 2 and "a second JSON document" in out


def test_a_symlinked_contract_is_compared_with_the_file_it_points_to(repo: Path) -> None:
    """git stores a symbolic link as a blob holding the target's path: the baseline read that
    path as the contract (it "did not load") while the worktree and index sides read the file."""
    shared = repo / "shared"
    shared.mkdir()
    (repo / "contracts" / "orders.yaml").rename(shared / "orders.yaml")
    (repo / "contracts" / "orders.yaml").symlink_to("../shared/orders.yaml")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "orders through a link")
    result = run("check", str(repo / "contracts"), "--against", "git:HEAD")
    code, out = result.code, result.output
    assert code == 0, out
    assert "2 unchanged" in out
    shutil.copy(FIX / "decimal-scale-changed" / "after.yaml", shared / "orders.yaml")
    result = run("check", str(repo / "contracts"), "--against", "git:HEAD")
    code, out = result.code, result.output
    assert code == 1, out
