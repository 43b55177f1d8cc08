"""``cdc-contracts demo`` off a terminal (as ``make demo > demo.log`` runs it) and
``--keep-running``, through the installed entry point in a subprocess. The Spark step is left
out here (``--skip-spark``): the Spark tests cover it, and benchmarks/RESULTS.md times the whole
demo."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from clirun import command

URL = re.compile(r"http://127\.0\.0\.1:\d+")


def _ctrl_c_as_on_a_terminal() -> None:
    """In the child before it runs the demo: Ctrl-C (SIGINT) back to its default. A run started
    in the background by a non-interactive shell (``make test &``) inherits SIGINT ignored,
    and Python then leaves it ignored, so the demo would never see the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _demo(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    """The demo in its own session (its process group holds the server it starts)."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONWARNINGS": "ignore"}
    return subprocess.Popen(
        command("demo", "--skip-spark", *extra),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_ctrl_c_as_on_a_terminal,
    )


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Starts the demo; afterwards kills whatever of its process group is still up, so a
    failed test leaves no demo or server behind."""
    started: list[subprocess.Popen[str]] = []

    def start(*extra: str) -> subprocess.Popen[str]:
        started.append(_demo(tmp_path, *extra))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_demo_log_is_clean_off_a_terminal(demo: Callable[..., subprocess.Popen[str]]) -> None:
    process = demo()
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0, out
    lines = out.splitlines()
    assert "== 1. Infer a contract from every sample topic ==" in lines
    assert "…" not in out  # no name cut to fit 80 columns
    # a URL is never split across lines: each line that has one has all of it
    for line in lines:
        if "http://127.0.0.1" in line or line.startswith("$ curl"):
            assert URL.search(line), line
    # the API's answer is shown as JSON
    start = lines.index(next(line for line in lines if line.startswith("$ curl")))
    block = []
    for line in lines[start + 1 :]:
        block.append(line)
        if line == "}":
            break
    assert json.loads("\n".join(block))["render"] == "spark-ddl"
    # plan rows read as words: one row per subject, the action and the level
    assert any(line.split()[2:] == ["create", "new", "→", "1", "BACKWARD"] for line in lines)
    assert any(" incompatible " in line for line in lines)  # the decimal scale change
    assert "- ->" not in out
    assert "Traceback" not in out


def test_keep_running_leaves_everything_up_until_ctrl_c(
    demo: Callable[..., subprocess.Popen[str]],
) -> None:
    process = demo("--keep-running")
    seen: list[str] = []
    assert process.stdout is not None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip("\n"))
        if line.startswith("running until Ctrl-C"):
            break
    assert seen and seen[-1].startswith("running until Ctrl-C"), "\n".join(seen)
    urls = {
        label: URL.search(line).group(0)  # type: ignore[union-attr]
        for line in seen
        for label in ("catalog:", "Schema Registry:", "contract API:", "API docs:")
        if line.startswith(label)
    }
    assert set(urls) == {"catalog:", "Schema Registry:", "contract API:", "API docs:"}
    base = urls["catalog:"]
    assert "dbserver1.shop.orders" in httpx.get(base + "/", timeout=10).text
    assert "dbserver1.shop.orders-value" in httpx.get(base + "/subjects", timeout=10).json()
    assert httpx.get(base + "/contracts/dbserver1.shop.orders", timeout=10).status_code == 200
    assert httpx.get(base + "/docs", timeout=10).status_code == 200
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=30)
    assert process.returncode == 0, rest
    assert "stopping" in rest
    try:
        httpx.get(base + "/health", timeout=2)
        raise AssertionError("the server is still up after Ctrl-C")
    except httpx.HTTPError:
        pass
