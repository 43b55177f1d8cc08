"""Every shell example in README.md and docs/*.md runs as written and prints what the page shows.

How pages are read and run, and how a block is marked as not run (with its reason), is in
tests/docs/harness.py. A page added later is covered without touching this file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import (
    PAGES,
    ROOT,
    Block,
    DocError,
    Session,
    blocks,
    failures,
    is_runnable,
    shown_lines_missing,
)

RUNNABLE = [page for page in PAGES if is_runnable(page)]
WITH_SPARK = [
    page for page in RUNNABLE if any(b.needs_spark and b.skip is None for b in blocks(page))
]


def _run_page(page: Path, tmp_path: Path, spark: bool) -> list[str]:
    session = Session.create(tmp_path, spark)
    problems: list[str] = []
    try:
        for block in blocks(page):
            if block.skip is not None:
                print(f"{block.where}: not run: {block.skip}")
                continue
            if "spark" in block.needs and not spark:
                print(f"{block.where}: left out of the quick run: it reads a Spark job's output")
                continue
            found = list(failures(session.run(block)))
            if found:
                problems.append(f"{block.where}:\n" + "\n".join(found))
                break  # later blocks build on this one
    finally:
        session.close()
    for line in session.left_out:
        print(f"{page.name}: left out of the quick run (Spark): {line}")
    return problems


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    problems = _run_page(page, tmp_path, spark=False)
    assert not problems, "\n\n".join(problems)


@pytest.mark.spark
@pytest.mark.parametrize("page", WITH_SPARK, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run_with_spark(page: Path, tmp_path: Path) -> None:
    problems = _run_page(page, tmp_path, spark=True)
    assert not problems, "\n\n".join(problems)


def test_every_page_with_commands_is_collected() -> None:
    names = {p.name for p in RUNNABLE}
    assert {"README.md", "cli.md", "contracts.md"} <= names


def test_a_skip_needs_its_reason(tmp_path: Path) -> None:
    page = ROOT / "docs" / "__doc_test_probe__.md"
    text = "<!-- doc-test: skip -->\n```bash\ncdc-contracts formats\n```\n"
    try:
        page.write_text(text)
        with pytest.raises(DocError, match="needs a value"):
            blocks(page)
        page.write_text(text.replace("skip", "skip: needs a Kafka broker"))
        assert [b.skip for b in blocks(page)] == ["needs a Kafka broker"]
        page.write_text(text.replace("skip", "skipp: typo"))
        with pytest.raises(DocError, match="unknown doc-test key"):
            blocks(page)
    finally:
        page.unlink(missing_ok=True)


def test_commands_outputs_and_exit_comments_are_read() -> None:
    page = ROOT / "docs" / "__doc_test_probe2__.md"
    page.write_text(
        "```console\n$ cdc-contracts diff a.yaml \\\n    b.yaml   # exit 1: breaking\nline one\n"
        "…\n$ cat > x <<'EOF'\n$ not a command\nEOF\n$ cdc-contracts formats\n```\n"
    )
    try:
        (block,) = blocks(page)
    finally:
        page.unlink()
    assert isinstance(block, Block)
    first, heredoc, last = block.commands
    assert first.text.endswith("b.yaml   # exit 1: breaking") and first.exit == 1
    assert first.shown == ("line one", "…")
    assert heredoc.text.splitlines()[-1] == "EOF" and heredoc.shown == ()
    assert last.exit == 0


def test_shown_output_matches_in_order_with_ellipses() -> None:
    output = "a\nerror: x.yaml:3: topix: unknown key 'topix'\nb\n"
    assert shown_lines_missing(("error: x.yaml:3: …",), output) == []
    assert shown_lines_missing(("b", "a"), output) == ["a"]
    assert shown_lines_missing(("error: y.yaml…",), output) == ["error: y.yaml…"]
