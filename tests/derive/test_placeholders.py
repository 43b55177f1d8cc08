"""Flyway placeholders ``${key}``: replaced by the values given, quoted as written when not (REVIEW-1 F9)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from clirun import run


def _migrations(root: Path) -> Path:
    sql = root / "sql"
    sql.mkdir(parents=True)
    (sql / "V1__init.sql").write_text(
        "CREATE TABLE ${schema}.orders (id bigserial PRIMARY KEY);\n", encoding="utf-8"
    )
    (sql / "V3__placeholder.sql").write_text(
        "-- a note on orders\nALTER TABLE ${schema}.orders ADD note ${text_type};\n",
        encoding="utf-8",
    )
    return sql


def test_an_unexpanded_placeholder_is_quoted_as_written_with_a_hint(tmp_path: Path) -> None:
    sql = _migrations(tmp_path)
    done = run("derive", "--from-ddl", sql, "--dialect", "postgres", "--server-name", "pg")
    assert done.code == 2
    assert done.err.startswith(
        f"error: {sql / 'V1__init.sql'}:1: ${{schema}} in "
        "'CREATE TABLE ${schema}.orders (id bigserial PRIMARY KEY);' is a placeholder"
    ), done.err
    assert "--placeholder schema=VALUE" in done.err and "placeholders:" in done.err
    # the reviewer's message named `ALTER TABLE $` and an unknown table
    done = run(
        "derive", "--from-ddl", sql, "--dialect", "postgres", "--server-name", "pg",
        "--placeholder", "schema=shop",
    )  # fmt: skip
    assert done.code == 2
    assert f"{sql / 'V3__placeholder.sql'}:2: ${{text_type}} in " in done.err
    assert "'ALTER TABLE ${schema}.orders ADD note ${text_type};'" in done.err


def test_placeholders_are_replaced_before_the_sql_is_read(tmp_path: Path) -> None:
    sql = _migrations(tmp_path)
    done = run(
        "derive", "--from-ddl", sql, "--dialect", "postgres", "--server-name", "pg",
        "--placeholder", "schema=shop", "--placeholder", "text_type=varchar(20)",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert "name: pg.shop.orders\n" in done.text
    assert "field: note" in done.text
    bad = run("derive", "--from-ddl", sql, "--dialect", "postgres", "--placeholder", "schema")
    assert bad.code == 2 and "error: --placeholder: 'schema' is not KEY=VALUE" in bad.err


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=a", "-c", "user.email=a@b", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={"GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"},
    )


def test_check_takes_the_placeholders_from_the_derive_section(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    sql = _migrations(repo)
    (sql / "V3__placeholder.sql").unlink()
    (repo / "cdc-contracts.yaml").write_text(
        "version: 1\nderive:\n  from_ddl: sql\n  dialect: postgres\n  server_name: pg\n"
        "  placeholders: {schema: shop}\n",
        encoding="utf-8",
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    (sql / "V2__narrow.sql").write_text(
        "ALTER TABLE ${schema}.orders ALTER COLUMN id TYPE int;\n", encoding="utf-8"
    )
    done = run("check", "--against", "git:main", cwd=repo)
    assert done.code == 1, done.err
    assert done.text.startswith("pg.shop.orders: BACKWARD NOT compatible; breaking")
