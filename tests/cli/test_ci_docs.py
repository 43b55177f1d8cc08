"""docs/ci.md's walkthrough runs as written, with the real ``cdc-contracts`` script, in a copy
of examples/, and prints the output the page shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"
MARK = "<!-- runs: bash, from a copy of examples/ -->"


def walkthrough() -> tuple[str, list[str]]:
    """The runnable block, and the output samples (plain fences) the page shows after it."""
    text = DOC.read_text(encoding="utf-8")
    after = text.split(MARK, 1)[1]
    script = re.search(r"```sh\n(.*?)```", after, re.S)
    assert script is not None
    rest = after[script.end() :].split("\n## ", 1)[0]
    samples = re.findall(r"```\n(.*?)```", rest, re.S)
    return script.group(1), samples


def test_the_walkthrough_runs_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    script, samples = walkthrough()
    assert len(samples) == 2
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    env.pop("CDC_CONTRACTS_CONFIG", None)
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=tmp_path / "examples",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert "exit code 1" in out  # the breaking change, before the exception
    for sample in samples:
        for line in sample.splitlines():
            assert line in out, (line, out)
    shop = tmp_path / "examples" / "shop"
    assert (shop / "contracts.sarif").is_file() and (shop / "gl-code-quality-report.json").is_file()
