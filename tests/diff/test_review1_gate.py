"""The fail-open defects of REVIEW-1 (F1, F3, F4, F5, F8), reproduced as the reviewer did: the
docs/ci.md "A first run" repository (``init``, ``infer`` shop.orders, commit), one edit, then
``check`` (the real CLI, through tests/clirun.py)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from clirun import run

ROOT = Path(__file__).parent.parent.parent
ORDERS = ROOT / "examples" / "topics" / "debezium-json" / "dbserver1.shop.orders.jsonl"


def cli(_: object, *argv: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """The CLI's run (tests/clirun.py): (exit code, stdout, stderr)."""
    result = run(*argv, stdin=stdin)
    return result.code, result.text, result.err


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture()
def shop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    """docs/ci.md's first run: a repository with shop.orders inferred and committed (cwd)."""
    repo = tmp_path / "shop"
    repo.mkdir()
    monkeypatch.chdir(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "CI")
    git(repo, "config", "user.email", "ci@example.com")
    assert cli(capsys, "init")[0] == 0
    code, _, err = cli(
        capsys, "infer", str(ORDERS), "--name", "shop.orders", "-o", "contracts/shop.orders.yaml"
    )
    assert code == 0, err
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first contracts")
    assert cli(capsys, "check")[0] == 0
    return repo


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, text)
    path.write_text(text.replace(old, new, 1))


def findings(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[dict[str, str]]]:
    code, out, err = cli(capsys, "check", "--output-format", "json", *extra)
    assert code in (0, 1), err
    report = json.loads(out)
    return code, [f for c in report["contracts"] for f in c["findings"]]


def rules(found: list[dict[str, str]]) -> set[str]:
    return {f["rule"] for f in found}


# --- F1: lowering the level in the same change ---------------------------------------------------

TYPE_CHANGE = (
    "{field: customer_id, type: int32, optional: false}",
    "{field: customer_id, type: string, optional: false}",
)


def test_f1_lowering_the_level_with_a_type_change_is_judged_at_the_baseline_level(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    edit(orders, "compatibility: BACKWARD", "compatibility: NONE")
    edit(orders, *TYPE_CHANGE)
    code, found = findings(capsys)
    assert code == 1
    assert {"compatibility-level-lowered", "avro-type-mismatch"} <= rules(found)


def test_f1_a_lowering_alone_is_breaking_and_excepted_with_a_reason(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    edit(orders, "compatibility: BACKWARD", "compatibility: NONE")
    code, found = findings(capsys)
    assert code == 1 and rules(found) == {"compatibility-level-lowered"}
    with (shop / "cdc-contracts.yaml").open("a") as config:
        config.write(
            "exceptions:\n  - contract: shop.orders\n    rule: compatibility-level-lowered\n"
            "    reason: the topic is replayed from scratch on every release (PR 7)\n"
        )
    assert cli(capsys, "check")[0] == 0
    # excepting the lowering does not open the gate to an incompatible change in the same step
    edit(orders, *TYPE_CHANGE)
    code, found = findings(capsys)
    assert code == 1 and "avro-type-mismatch" in rules(found)


def test_f1_raising_the_level_is_info(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(shop / "contracts" / "shop.orders.yaml", "compatibility: BACKWARD", "compatibility: FULL")
    code, found = findings(capsys)
    assert code == 0
    assert [(f["rule"], f["severity"]) for f in found] == [("compatibility-level-raised", "info")]


def test_f1_lowering_the_configured_default_level_is_a_finding(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    edit(orders, "compatibility: BACKWARD\n", "")
    git(shop, "commit", "-qam", "the level comes from the configuration")
    assert cli(capsys, "check")[0] == 0
    edit(shop / "cdc-contracts.yaml", "\ncompatibility: BACKWARD\n", "\ncompatibility: NONE\n")
    code, found = findings(capsys)
    assert code == 1 and rules(found) == {"compatibility-level-lowered"}
    edit(orders, *TYPE_CHANGE)
    code, found = findings(capsys)
    assert code == 1 and {"compatibility-level-lowered", "avro-type-mismatch"} <= rules(found)


@pytest.mark.parametrize(
    ("old", "new", "lowered"),
    [
        ("BACKWARD", "NONE", True),
        ("BACKWARD_TRANSITIVE", "BACKWARD", True),
        ("FULL", "BACKWARD", True),
        ("FULL_TRANSITIVE", "FULL", True),
        ("BACKWARD", "FORWARD", True),
        ("BACKWARD", "BACKWARD_TRANSITIVE", False),
        ("NONE", "FORWARD", False),
        ("BACKWARD", "FULL_TRANSITIVE", False),
    ],
)
def test_f1_the_order_of_levels(old: str, new: str, lowered: bool) -> None:
    from contracts.contract import CompatibilityLevel as L
    from contracts.diff.levels import judging_level, raised
    from contracts.diff.levels import lowered as is_lowered

    assert is_lowered(L(old), L(new)) is lowered
    assert raised(L(old), L(new)) is (not lowered)
    judged = judging_level(L(old), L(new))
    want = {("BACKWARD", "FORWARD"): L.FULL}.get((old, new), L(old) if lowered else L(new))
    assert judged == want


# --- F3: contracts are paired by name, not by file ------------------------------------------------


def test_f3_a_moved_contract_file_is_diffed_with_its_baseline(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(shop, "mv", "contracts/shop.orders.yaml", "contracts/orders.yaml")
    code, out, err = cli(capsys, "check", "--output-format", "json")
    assert code == 0, err
    (entry,) = json.loads(out)["contracts"]
    assert entry["status"] == "unchanged" and entry["file"] == "contracts/orders.yaml"
    edit(shop / "contracts" / "orders.yaml", "scale: '2'", "scale: '3'")
    code, found = findings(capsys)
    assert code == 1 and rules(found) == {"decimal-scale-changed"}


def test_f3_two_files_naming_one_contract_are_an_error(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    (shop / "contracts" / "copy.yaml").write_text(orders.read_text())
    code, out, err = cli(capsys, "check")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "contract name 'shop.orders'" in err, err
    assert "contracts/shop.orders.yaml" in err and "contracts/copy.yaml" in err


# --- F8: a removed contract fails the gate unless excepted ----------------------------------------


def test_f8_a_removed_contract_is_breaking_and_excepted_with_a_reason(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shop / "contracts" / "shop.orders.yaml").unlink()
    (shop / "contracts" / "keep.yaml").write_text(
        (ROOT / "tests" / "fixtures" / "diff" / "topic-changed" / "before.yaml").read_text()
    )
    code, found = findings(capsys)
    assert code == 1
    removed = [f for f in found if f["rule"] == "contract-removed"]
    assert [f["severity"] for f in removed] == ["breaking"]
    with (shop / "cdc-contracts.yaml").open("a") as config:
        config.write(
            "exceptions:\n  - contract: shop.orders\n    rule: contract-removed\n"
            "    reason: orders moved to shop.orders_v2; consumers migrated (PR 77)\n"
        )
    code, out, err = cli(capsys, "check", "--output-format", "json")
    assert code == 0, out + err
    (gone,) = [c for c in json.loads(out)["contracts"] if c["status"] == "removed"]
    assert [w["rule"] for w in gone["waived"]] == ["contract-removed"]


# --- F4: the effective topic (``topic:``, else the name) ------------------------------------------


def test_f4_adding_a_topic_that_moves_the_messages_is_topic_changed(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    edit(orders, "compatibility: BACKWARD", "topic: shop.orders.v2\ncompatibility: BACKWARD")
    code, found = findings(capsys)
    assert code == 1 and rules(found) == {"topic-changed"}
    assert "from shop.orders to shop.orders.v2" in found[0]["message"]
    # naming the topic it is already on changes nothing
    edit(orders, "topic: shop.orders.v2", "topic: shop.orders")
    code, found = findings(capsys)
    assert code == 0 and found == []


def test_f4_renaming_a_contract_without_a_topic_is_reported(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(shop / "contracts" / "shop.orders.yaml", "name: shop.orders", "name: shop.orders2")
    code, found = findings(capsys)
    assert code == 1 and "contract-removed" in rules(found)


def test_f4_diff_compares_the_effective_topic(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    renamed = shop / "renamed.yaml"
    renamed.write_text(orders.read_text().replace("name: shop.orders", "name: shop.orders2"))
    code, out, err = cli(capsys, "diff", str(orders), str(renamed), "--output-format", "json")
    assert code == 1, err
    assert "topic-changed" in out


# --- F5: diff reads FIFOs, process substitution and ``-`` ----------------------------------------


def _feed_fifo(path: Path, data: bytes) -> threading.Thread:
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as fifo:
            fifo.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_f5_diff_reads_a_fifo_as_process_substitution_gives_it(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    committed = orders.read_bytes()
    edit(orders, "scale: '2'", "scale: '3'")
    fifo = shop / "fd63"  # what <(git show HEAD:contracts/shop.orders.yaml) hands the command
    writer = _feed_fifo(fifo, committed)
    code, out, err = cli(capsys, "diff", str(fifo), str(orders), "--output-format", "json")
    writer.join(5)
    assert code == 1, err
    assert "decimal-scale-changed" in out


def test_f5_diff_reads_standard_input_once(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    orders = shop / "contracts" / "shop.orders.yaml"
    edited = orders.read_text().replace("scale: '2'", "scale: '3'")
    code, out, err = cli(
        capsys, "diff", str(orders), "-", "--output-format", "json", stdin=edited.encode()
    )
    assert code == 1, err
    assert "decimal-scale-changed" in out
