"""The base install (``pip install cdc-contracts``, no extras) in a fresh virtualenv: it is light,
runs the gate's commands, and a command that needs an extra names it in one line.

Slow (it builds a wheel and installs the base dependencies from the package index), so it is
marked ``slow``; it still runs in ``make test``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import Run, run_process

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

pytestmark = pytest.mark.slow

#: The most the base install may weigh, in MiB (the whole virtualenv, pip included).
MAX_MIB = 150


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, check=False)


def _mib(folder: Path) -> float:
    return (
        sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
        / 2**20
    )


@pytest.fixture(scope="module")
def base_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding ``pip install <this repository>`` and nothing else."""
    where = tmp_path_factory.mktemp("light")
    venv = where / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], where)
    assert made.returncode == 0, made.stderr
    source = where / "src"  # a copy without the developer's .venv and caches
    shutil.copytree(
        ROOT,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "*.egg-info", "build", "__pycache__", ".*cache"
        ),
    )
    installed = _run([str(venv / "bin" / "pip"), "install", "--quiet", str(source)], where)
    if installed.returncode != 0 and "No matching distribution" in installed.stderr:
        pytest.skip(f"the package index is not reachable: {installed.stderr.splitlines()[-1]}")
    assert installed.returncode == 0, installed.stderr
    return venv


#: The fresh install's own environment: nothing of this checkout's.
BARE = {"PYTHONPATH": None, "VIRTUAL_ENV": None, "COLUMNS": "80"}


def _cli(venv: Path, *args: str, cwd: Path) -> Run:
    return run_process(*args, venv=venv, cwd=cwd, env=BARE)


def test_base_install_is_light_and_has_no_heavy_parts(base_venv: Path) -> None:
    weight = _mib(base_venv)
    print(f"base install: {weight:.1f} MiB")
    assert weight < MAX_MIB, f"the base install weighs {weight:.1f} MiB (limit {MAX_MIB})"
    listed = _run([str(base_venv / "bin" / "pip"), "list", "--format=freeze"], base_venv)
    names = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert not names & {"pyspark", "pyarrow", "pandas", "fastapi", "uvicorn", "jinja2"}


def test_base_install_runs_infer_diff_and_check(base_venv: Path, tmp_path: Path) -> None:
    fixture = FIXTURES / "debezium-json" / "flink-debezium-data-schema-include.txt"
    contract = tmp_path / "orders.yaml"
    inferred = _cli(base_venv, "infer", str(fixture), "-o", str(contract), cwd=tmp_path)
    assert inferred.code == 0, inferred.err
    assert "columns:" in contract.read_text()

    case = FIXTURES / "diff" / "decimal-scale-changed"
    diffed = _cli(
        base_venv, "diff", str(case / "before.yaml"), str(case / "after.yaml"), cwd=tmp_path
    )
    assert diffed.code == 1, diffed.err
    assert "scale" in diffed.text

    repo = tmp_path / "gate"
    repo.mkdir()
    shutil.copyfile(case / "before.yaml", repo / "orders.yaml")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for step in (["init", "-q"], ["add", "."], ["commit", "-qm", "orders v1"]):
        assert _run([*git, *step], repo).returncode == 0
    shutil.copyfile(case / "after.yaml", repo / "orders.yaml")
    checked = _cli(base_venv, "check", str(repo), cwd=repo)
    assert checked.code == 1, checked.text + checked.err
    assert "decimal-scale-changed" in checked.text


def test_a_command_that_needs_an_extra_names_it(base_venv: Path, tmp_path: Path) -> None:
    contract = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"
    for args, extra in (
        (["serve", "--port", "0"], "api"),
        (["spark-schema", str(contract)], "spark"),
    ):
        done = _cli(base_venv, *args, cwd=tmp_path)
        assert done.code == 2, (args, done.text, done.err)
        lines = done.err.strip().splitlines()
        assert len(lines) == 1, done.err
        assert f"[{extra}] extra" in lines[0] and f"cdc-contracts[{extra}]" in lines[0]


def test_the_demo_topics_ship_in_the_wheel(base_venv: Path) -> None:
    found = _run(
        [
            str(base_venv / "bin" / "python"),
            "-c",
            "import cli.demo_cmd as d; print(d.DEFAULT_TOPICS)",
        ],
        base_venv,
    )
    assert found.returncode == 0, found.stderr
    topics = Path(found.stdout.strip())
    assert base_venv in topics.parents
    assert sorted(p.name for p in topics.iterdir()) == sorted(
        p.name for p in (ROOT / "examples" / "topics").iterdir()
    )
