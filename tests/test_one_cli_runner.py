"""Tests run ``cdc-contracts`` one way: through ``tests/clirun.py``.

``typer.testing.CliRunner().invoke(app)`` skips ``cli.main.main`` (its exit codes and the
conventions layer), and a hand-made runner drifts from the others; this scan fails when a
test file imports CliRunner, calls the entry point itself or starts ``cli.main`` as a process.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: What only ``tests/clirun.py`` may do.
FORBIDDEN = {
    "imports typer's CliRunner": re.compile(r"\bCliRunner\b|typer\.testing|click\.testing"),
    "imports the entry point (main or app) from cli.main": re.compile(
        r"from\s+cli\.main\s+import\s+[^\n]*\b(main|app)\b|import\s+cli\.main\b"
    ),
    "starts cli.main as a process": re.compile(r"""["'](-m\s+)?cli\.main["']"""),
    "runs a cdc-contracts script path of its own": re.compile(r"""/\s*["']cdc-contracts["']"""),
}

#: The fuzz harness is also a standalone script (``python tests/fuzz/fuzzing.py``): it runs
#: thousands of mutants with an alarm per run and in forks, a runner of its own by design.
EXEMPT = {TESTS / "clirun.py", TESTS / "fuzz" / "fuzzing.py", Path(__file__).resolve()}


def _offences(path: Path) -> list[str]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if "``" in line:  # prose naming ``cli.main.main`` in a docstring
            continue
        found += [
            f"{path.relative_to(TESTS)}:{number}: {what}: {line.strip()}"
            for what, pattern in FORBIDDEN.items()
            if pattern.search(line)
        ]
    return found


def test_no_test_runs_the_cli_but_through_clirun() -> None:
    offences = [
        offence
        for path in sorted(TESTS.rglob("*.py"))
        if path.resolve() not in EXEMPT
        for offence in _offences(path)
    ]
    assert offences == [], "run the CLI with tests/clirun.py (run, run_process, command):\n" + (
        "\n".join(offences)
    )


def test_the_scan_catches_each_way() -> None:
    samples = {
        "imports typer's CliRunner": "from typer.testing import CliRunner",
        "imports the entry point (main or app) from cli.main": "from cli.main import app",
        "starts cli.main as a process": 'cmd = [sys.executable, "-m", "cli.main"]',
        "runs a cdc-contracts script path of its own": 'ROOT / ".venv" / "bin" / "cdc-contracts"',
    }
    for what, sample in samples.items():
        assert FORBIDDEN[what].search(sample), what
    assert not any(p.search("from cli.main import command") for p in FORBIDDEN.values())
