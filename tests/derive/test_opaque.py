"""Statements derive cannot read but which may change a table: an error, never a skip (REVIEW-1 F6)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from clirun import run

from contracts.derive.ddl import Catalog, DdlError, apply_sql

PG_BASE = "CREATE TABLE public.orders (id bigserial PRIMARY KEY, amount numeric(12,2) NOT NULL);\n"
MY_BASE = "CREATE TABLE orders (id int PRIMARY KEY, x int, amount decimal(12,2));\n"


def _apply(sql: str, dialect: str) -> Catalog:
    catalog = Catalog(dialect, database="db")  # type: ignore[arg-type]
    apply_sql(catalog, sql, "m.sql")
    return catalog


def _refused(sql: str, dialect: str = "postgres") -> DdlError:
    with pytest.raises(DdlError) as caught:
        _apply(sql, dialect)
    return caught.value


@pytest.mark.parametrize(
    ("sql", "line", "quoted"),
    [
        (  # the reviewer's narrowing migration
            "DO $$ BEGIN\n  ALTER TABLE orders ALTER COLUMN amount TYPE numeric(10,2);\nEND $$;\n",
            3,
            "(ALTER TABLE orders ALTER COLUMN amount TYPE numeric(10,2))",
        ),
        (
            "CREATE PROCEDURE narrow() LANGUAGE plpgsql AS $body$\nBEGIN\n"
            "  alter table Orders drop column amount;\nEND $body$;\nCALL narrow();\n",
            4,
            "(alter table Orders drop column amount)",
        ),
        (
            "CREATE FUNCTION f() RETURNS void AS 'ALTER TABLE orders ADD y int' LANGUAGE sql;\n",
            2,
            "(ALTER TABLE orders ADD y int)",
        ),
        (
            "DO $$ BEGIN EXECUTE 'ALTER TABLE orders ADD z int'; END $$;\n",
            2,
            "(ALTER TABLE orders ADD z int)",
        ),
        (
            "DO $$ DECLARE t text := 'orders';\nBEGIN EXECUTE format('alter table %I add z int', t); END $$;\n",
            3,
            "(alter table %I add z int)",
        ),
        (
            "DO $$ DECLARE q text; BEGIN EXECUTE q; END $$;\n",
            2,
            "runs SQL built at run time (EXECUTE q)",
        ),
        ("ALTER DOMAIN d SET NOT NULL;\n", 2, "ALTER DOMAIN d SET NOT NULL: ALTER DOMAIN"),
    ],
)
def test_postgres_blocks_bodies_and_dynamic_sql_that_change_a_table_are_errors(
    sql: str, line: int, quoted: str
) -> None:
    err = _refused(PG_BASE + sql)
    assert err.where == f"m.sql:{line}"
    assert quoted in err.what  # the user's text as written, not upper-cased
    assert "derive-skip" in err.what


@pytest.mark.parametrize(
    ("sql", "line", "quoted"),
    [
        (
            "PREPARE s FROM 'ALTER TABLE orders ADD z int';\nEXECUTE s;\n",
            2,
            "(ALTER TABLE orders ADD z int)",
        ),
        (
            "SET @q = CONCAT('ALTER TABLE ', 'orders ADD z int');\nPREPARE s FROM @q;\nEXECUTE s;\n",
            3,
            "(PREPARE s FROM @q)",
        ),
        (  # a procedure between DELIMITER lines, its ALTER inside an IF
            "DELIMITER //\nCREATE PROCEDURE p()\nBEGIN\n  IF 1 THEN\n    ALTER TABLE orders DROP COLUMN x;\n"
            "  END IF;\nEND //\nDELIMITER ;\nCALL p();\n",
            6,
            "(ALTER TABLE orders DROP COLUMN x)",
        ),
        (  # no DELIMITER: the body's semicolons do not end the CREATE PROCEDURE
            "CREATE PROCEDURE p() BEGIN UPDATE orders SET x = 1; ALTER TABLE orders DROP x; END;\n",
            2,
            "(ALTER TABLE orders DROP x)",
        ),
        (
            "EXECUTE IMMEDIATE CONCAT('ALTER TABLE orders', ' ADD w int');\n",
            2,
            "(ALTER TABLE orders)",
        ),
    ],
)
def test_mysql_prepared_statements_and_procedures_that_change_a_table_are_errors(
    sql: str, line: int, quoted: str
) -> None:
    err = _refused(MY_BASE + sql, "mysql")
    assert err.where == f"m.sql:{line}"
    assert quoted in err.what


def test_statements_that_cannot_change_a_table_are_counted_not_refused() -> None:
    catalog = _apply(
        PG_BASE + "DO $$ BEGIN RAISE NOTICE 'hi'; END $$;\nGRANT SELECT ON orders TO bob;\n"
        "COMMENT ON TABLE orders IS 'x';\nCREATE INDEX i ON orders (amount);\n"
        "CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        "BEGIN NEW.amount := 1; RETURN NEW; END $$;\n"
        "CREATE TRIGGER tr BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION f();\n"
        "PREPARE q (int) AS SELECT * FROM orders WHERE id = $1;\nEXECUTE q(1);\n",
        "postgres",
    )
    assert dict(catalog.skipped) == {
        "DO": 1,
        "GRANT SELECT": 1,
        "COMMENT ON": 1,
        "CREATE INDEX": 1,
        "CREATE FUNCTION": 1,
        "CREATE TRIGGER": 1,
        "PREPARE": 1,
        "EXECUTE": 1,
    }
    mysql = _apply(
        MY_BASE + "CREATE DEFINER='root'@'%' PROCEDURE p() BEGIN UPDATE orders SET x = 1; "
        "UPDATE orders SET x = 2; END;\nALTER TABLE orders ADD y int;\n",
        "mysql",
    )
    assert dict(mysql.skipped) == {"CREATE PROCEDURE": 1}
    assert [c.name for c in mysql.table_list()[0].columns] == ["id", "x", "amount", "y"]


def test_a_marked_block_is_skipped_and_counted() -> None:
    catalog = _apply(
        PG_BASE + "-- cdc-contracts: derive-skip (only runs on the reporting replica)\n"
        "DO $$ BEGIN ALTER TABLE orders ADD z int; END $$;\n"
        "ALTER TABLE orders ADD w int;\n",
        "postgres",
    )
    assert dict(catalog.skipped) == {"DO (marked derive-skip)": 1}
    assert [c.name for c in catalog.table_list()[0].columns] == ["id", "amount", "w"]
    # the mark covers the statement after it only
    err = _refused(
        PG_BASE + "-- cdc-contracts: derive-skip\nDO $$ BEGIN NULL; END $$;\n"
        "DO $$ BEGIN ALTER TABLE orders ADD z int; END $$;\n"
    )
    assert err.where == "m.sql:4"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=a", "-c", "user.email=a@b", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={"GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"},
    )


def test_check_fails_closed_on_a_do_block_migration(tmp_path: Path) -> None:
    """The reviewer's steps: a DO block narrowing a column must not pass the migration gate."""
    repo = tmp_path / "r"
    (repo / "sql").mkdir(parents=True)
    (repo / "sql" / "V1__init.sql").write_text(PG_BASE, encoding="utf-8")
    (repo / "cdc-contracts.yaml").write_text(
        "version: 1\nderive: {from_ddl: sql, dialect: postgres, server_name: pg}\n",
        encoding="utf-8",
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    (repo / "sql" / "V2__grant.sql").write_text(
        "GRANT SELECT ON orders TO reporting;\nCOMMENT ON TABLE orders IS 'Orders';\n",
        encoding="utf-8",
    )
    done = run("check", "--against", "git:main", cwd=repo)
    assert done.code == 0, done.err
    assert (
        "note: derive.from_ddl sql: 2 statements that cannot change a table's columns or keys "
        "skipped (COMMENT ON 1, GRANT SELECT 1)"
    ) in done.text
    (repo / "sql" / "V3__narrow.sql").write_text(
        "DO $$ BEGIN\n  ALTER TABLE orders ALTER COLUMN amount TYPE numeric(10,2);\nEND $$;\n",
        encoding="utf-8",
    )
    done = run("check", "--against", "git:main", cwd=repo)
    assert done.code == 2, done.text
    assert "sql/V3__narrow.sql:2: a DO block changes a table (ALTER TABLE orders ALTER COLUMN " in (
        done.err
    )
    assert "Traceback" not in done.err
