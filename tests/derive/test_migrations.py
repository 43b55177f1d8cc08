"""Migration directories applied in their tool's order, or refused when the order is unclear."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.derive import read_ddl
from contracts.derive.migrations import order
from contracts.errors import InputError


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_flyway_versions_compare_as_numbers(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "V1__init.sql": "CREATE TABLE t (a INT);",
            "V1_1__b.sql": "ALTER TABLE t ADD b INT;",
            "V1.2__c.sql": "ALTER TABLE t ADD c INT;",
            "V10__d.sql": "ALTER TABLE t ADD d INT;",
            "V2__e.sql": "ALTER TABLE t ADD e INT;",
            "sub/V3__f.sql": "ALTER TABLE t ADD f INT;",
            "R__view.sql": "CREATE VIEW v AS SELECT 1;",
            "U2__undo.sql": "ALTER TABLE t DROP e;",
        },
    )
    texts = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.sql")}
    names = [rel.rsplit("/", 1)[-1] for rel in order(texts)]
    assert names == [
        "V1__init.sql", "V1_1__b.sql", "V1.2__c.sql", "V2__e.sql", "V3__f.sql", "V10__d.sql",
        "R__view.sql",
    ]  # fmt: skip
    (table,), _, read = read_ddl(root, "mysql", "db")
    assert [c.name for c in table.columns] == ["a", "b", "c", "e", "f", "d"]
    assert len(read) == 7


def test_plain_numbered_files(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "001_init.sql": "CREATE TABLE t (a INT);",
            "2-add.sql": "ALTER TABLE t ADD b INT;",
            "0010.sql": "ALTER TABLE t ADD c INT;",
        },
    )
    (table,), _, _ = read_ddl(root, "postgres")
    assert [c.name for c in table.columns] == ["a", "b", "c"]


def test_liquibase_formatted_sql_skips_other_databases_changesets(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "a-init.sql": "--liquibase formatted sql\n--changeset me:1\nCREATE TABLE t (a INT);\n"
            "--rollback DROP TABLE t;\n--changeset me:2 dbms:oracle\nALTER TABLE t ADD x INT;\n"
            "--changeset me:3 dbms:postgresql,h2\nALTER TABLE t ADD b INT;\n",
            "b-more.sql": "--liquibase formatted sql\n--changeset me:4\nALTER TABLE t ADD c INT;\n",
        },
    )
    (table,), _, _ = read_ddl(root, "postgres")
    assert [c.name for c in table.columns] == ["a", "b", "c"]


def test_errors_keep_the_migrations_file_and_line(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {"V1__init.sql": "CREATE TABLE t (a INT);", "V2__bad.sql": "\n\nALTER TABLE t DROP z;"},
    )
    with pytest.raises(InputError, match=r"V2__bad\.sql:3: DROP COLUMN z"):
        read_ddl(root, "mysql", "db")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"V1__a.sql": "", "V1.0__b.sql": ""}, "has the same version as V1"),
        ({"V1__a.sql": "", "2_b.sql": ""}, "mixes Flyway names"),
        ({"init.sql": "CREATE TABLE t (a INT);"}, "cannot tell where this migration goes"),
    ],
)
def test_unclear_orders_are_refused(tmp_path: Path, files: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_ddl(_write(tmp_path, files), "mysql", "db")


def test_an_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"holds no \*\.sql file"):
        read_ddl(tmp_path, "mysql")
