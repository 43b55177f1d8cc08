"""``check`` with a ``derive:`` section: contracts derived from the repository's DDL at both sides."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"
MARK = "<!-- runs: bash, in a copy of examples/migrations/ -->"


def _env() -> dict[str, str]:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    env.pop("CDC_CONTRACTS_CONFIG", None)
    return env


def _sh(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_docs_walkthrough_runs_and_fails_on_the_narrowing(tmp_path: Path) -> None:
    after = DOC.read_text(encoding="utf-8").split(MARK, 1)[1]
    script = re.search(r"```sh\n(.*?)```", after, re.S)
    assert script is not None
    samples = re.findall(r"```\n(.*?)```", after[script.end() :].split("\n## ", 1)[0], re.S)
    work = tmp_path / "migrations"
    shutil.copytree(ROOT / "examples" / "migrations", work)
    done = _sh(script.group(1), work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "result: ok (--fail-on breaking)" in done.stdout  # the compatible pull request
    for line in samples[0].splitlines():
        assert line in done.stdout, (line, done.stdout)


GIT = "git init -q -b main && git config user.name CI && git config user.email ci@example.com"


def _repo(tmp_path: Path, config: str, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "cdc-contracts.yaml").write_text(config, encoding="utf-8")
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return repo


CONFIG = "version: 1\nderive: {from_ddl: db/schema.sql, dialect: postgres, server_name: pg}\n"


def test_a_table_added_by_the_change_is_reported_added(tmp_path: Path) -> None:
    repo = _repo(tmp_path, CONFIG, {"db/schema.sql": "CREATE TABLE a (id int PRIMARY KEY);\n"})
    assert _sh(f"{GIT} && git add . && git commit -qm one", repo).returncode == 0
    (repo / "db" / "schema.sql").write_text(
        "CREATE TABLE a (id int PRIMARY KEY);\nCREATE TABLE b (id bigint PRIMARY KEY);\n"
    )
    done = _sh("cdc-contracts check --against git:main --output-format json", repo)
    assert done.returncode == 0, done.stderr
    assert '"db/schema.sql:pg.public.b"' in done.stdout and '"added"' in done.stdout


def test_staged_checks_the_ddl_in_the_index(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path, CONFIG, {"db/schema.sql": "CREATE TABLE a (id int PRIMARY KEY, n numeric(9,2));"}
    )
    assert _sh(f"{GIT} && git add . && git commit -qm one", repo).returncode == 0
    (repo / "db" / "schema.sql").write_text("CREATE TABLE a (id int PRIMARY KEY, n numeric(9,3));")
    unstaged = _sh("cdc-contracts check --staged", repo)
    assert unstaged.returncode == 0, unstaged.stdout + unstaged.stderr  # the index is unchanged
    staged = _sh("git add db && cdc-contracts check --staged", repo)
    assert staged.returncode == 1 and "decimal-scale-changed" in staged.stdout


def test_ddl_the_reader_cannot_apply_at_the_baseline_is_exit_2_with_its_place(
    tmp_path: Path,
) -> None:
    repo = _repo(
        tmp_path, CONFIG, {"db/schema.sql": "CREATE TABLE a (id int);\nALTER TABLE zz ADD b int;"}
    )
    assert _sh(f"{GIT} && git add . && git commit -qm one", repo).returncode == 0
    (repo / "db" / "schema.sql").write_text("CREATE TABLE a (id int);\n")
    done = _sh("cdc-contracts check --against git:main", repo)
    assert done.returncode == 2
    assert (
        "main:db/schema.sql:2: ALTER TABLE zz: no earlier statement creates that table"
        in done.stderr
    )


@pytest.mark.parametrize("bad", ["dialect: oracle", "from_ddl: ''", "frobnicate: 1"])
def test_a_bad_derive_section_is_a_config_error(tmp_path: Path, bad: str) -> None:
    base = {"from_ddl": "db", "dialect": "mysql", "server_name": "s"}
    key = bad.split(":")[0]
    fields = {k: v for k, v in base.items() if k != key}
    lines = "".join(f"  {k}: {v}\n" for k, v in fields.items()) + f"  {bad}\n"
    repo = _repo(
        tmp_path, f"version: 1\nderive:\n{lines}", {"db/V1__a.sql": "CREATE TABLE a (x INT);"}
    )
    done = _sh(f"{GIT} && git add . && git commit -qm one && cdc-contracts check", repo)
    assert done.returncode == 2
    assert "cdc-contracts.yaml:" in done.stderr and "derive" in done.stderr
