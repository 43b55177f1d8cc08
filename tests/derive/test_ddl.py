"""DDL applied as the database applies it: types normalized, ALTERs, keys, and errors with lines."""

from __future__ import annotations

import pytest

from contracts.derive.ddl import DdlError
from contracts.derive.model import Default, Key
from contracts.errors import InputError
from contracts.sqltypes import normalize, parse_type_text

from .helpers import tables


@pytest.mark.parametrize(
    ("dialect", "written", "stored"),
    [
        # MySQL 8.0 manual, "Using Data Types from Other Database Engines" and the type pages
        ("mysql", "BOOL", "tinyint(1)"),
        ("mysql", "BOOLEAN", "tinyint(1)"),
        ("mysql", "SERIAL", "bigint unsigned"),
        ("mysql", "INT1", "tinyint"),
        ("mysql", "INT2", "smallint"),
        ("mysql", "INT3", "mediumint"),
        ("mysql", "MIDDLEINT", "mediumint"),
        ("mysql", "INT4", "int"),
        ("mysql", "INTEGER(11) UNSIGNED", "int(11) unsigned"),
        ("mysql", "INT8", "bigint"),
        ("mysql", "DOUBLE PRECISION", "double"),
        ("mysql", "REAL(10, 7) UNSIGNED ZEROFILL", "double(10,7) unsigned zerofill"),
        ("mysql", "FLOAT(24)", "float"),
        ("mysql", "FLOAT(25)", "double"),
        ("mysql", "FLOAT8", "double"),
        ("mysql", "DEC", "decimal(10,0)"),
        ("mysql", "NUMERIC(8)", "decimal(8,0)"),
        ("mysql", "FIXED(40,3)", "decimal(40,3)"),
        ("mysql", "CHARACTER VARYING(10)", "varchar(10)"),
        ("mysql", "NATIONAL CHAR(3)", "char(3)"),
        ("mysql", "LONG VARCHAR", "mediumtext"),
        ("mysql", "LONG VARBINARY", "mediumblob"),
        ("mysql", "BIT", "bit(1)"),
        ("mysql", "varchar(20) CHARACTER SET utf8mb4", "varchar(20)"),
        ("mysql", "ENUM ('a', 'it''s')", "enum('a','it''s')"),
        ("mariadb", "JSON", "longtext"),
        ("postgres", "INT", "integer"),
        ("postgres", "SERIAL8", "bigint"),
        ("postgres", "FLOAT4", "real"),
        ("postgres", "FLOAT(25)", "double precision"),
        ("postgres", "DECIMAL(10,2)", "numeric(10,2)"),
        ("postgres", "NUMERIC(4)", "numeric(4,0)"),
        ("postgres", "VARCHAR(20)", "character varying(20)"),
        ("postgres", "CHAR", "character(1)"),
        ("postgres", "TIMESTAMP(3) WITH TIME ZONE", "timestamptz(3)"),
        ("postgres", "TIME WITHOUT TIME ZONE", "time"),
        ("postgres", "INTEGER ARRAY", "integer[]"),
        ("postgres", "TEXT[][]", "text[][]"),
    ],
)
def test_types_are_stored_as_the_database_reports_them(
    dialect: str, written: str, stored: str
) -> None:
    assert normalize(parse_type_text(written, dialect), dialect).spelled() == stored  # type: ignore[arg-type]


def test_create_table_columns_keys_and_defaults() -> None:
    (t,) = tables(
        """
        CREATE TABLE `shop`.`orders` (
          id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          sku VARCHAR(20) NOT NULL COMMENT 'stock keeping unit',
          qty INT DEFAULT '1',
          price DECIMAL(10,2) DEFAULT -1.5,
          status ENUM('new','paid') NOT NULL DEFAULT 'new',
          created TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
          note TEXT,
          PRIMARY KEY (`ID`),
          UNIQUE KEY uk_sku (sku),
          KEY idx_status (status),
          CONSTRAINT fk FOREIGN KEY (sku) REFERENCES items (sku) ON DELETE SET NULL
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
        """
    )
    assert (t.database, t.name) == ("shop", "orders")
    assert [c.name for c in t.columns] == ["id", "sku", "qty", "price", "status", "created", "note"]
    assert t.keys == (Key("primary", ("id",)), Key("unique", ("sku",), "uk_sku"))
    by = {c.name: c for c in t.columns}
    assert by["qty"].default == Default("string", "1")
    assert by["price"].default == Default("number", "-1.5")
    assert by["created"].default == Default("expression", "CURRENT_TIMESTAMP")
    assert by["created"].nullable and not by["sku"].nullable
    assert by["sku"].comment == "stock keeping unit"


def test_alter_table_as_mysql_applies_it() -> None:
    (t,) = tables(
        """
        CREATE TABLE t (a INT, b INT, c INT);
        ALTER TABLE t ADD COLUMN d VARCHAR(5) NOT NULL AFTER a, DROP COLUMN c;
        ALTER TABLE t MODIFY b BIGINT NOT NULL FIRST;
        ALTER TABLE t CHANGE COLUMN a a2 SMALLINT, ADD PRIMARY KEY (b);
        ALTER TABLE t RENAME COLUMN d TO d2, ENGINE=InnoDB;
        ALTER TABLE t ADD (e INT, f INT), ALTER COLUMN e SET DEFAULT 5;
        """
    )
    assert [(c.name, c.type.spelled(), c.nullable) for c in t.columns] == [
        ("b", "bigint", False),
        ("a2", "smallint", True),
        ("d2", "varchar(5)", False),
        ("e", "int", True),
        ("f", "int", True),
    ]
    assert t.primary_key == ("b",)
    assert t.columns[3].default == Default("number", "5")


def test_postgres_alters_enums_domains_and_renames() -> None:
    (t,) = tables(
        """
        CREATE TYPE mood AS ENUM ('sad', 'ok');
        CREATE DOMAIN money2 AS numeric(12,2) NOT NULL;
        CREATE TABLE "Accounts" (id serial PRIMARY KEY, m mood, bal money2, n text);
        ALTER TYPE mood ADD VALUE 'happy' AFTER 'ok';
        ALTER TABLE "Accounts" ALTER COLUMN n TYPE varchar(10), ALTER COLUMN n SET NOT NULL;
        ALTER TABLE "Accounts" RENAME TO accounts;
        ALTER TABLE accounts SET SCHEMA billing;
        """,
        "postgres",
        None,
    )
    assert (t.schema, t.name) == ("billing", "accounts")
    by = {c.name: c for c in t.columns}
    assert by["id"].default == Default("expression", "nextval") and not by["id"].nullable
    assert by["m"].type.name == "enum" and by["m"].type.args == ("sad", "ok", "happy")
    assert by["bal"].type.spelled() == "numeric(12,2)" and not by["bal"].nullable
    assert by["n"].type.spelled() == "character varying(10)" and not by["n"].nullable


def test_drop_and_rename_tables() -> None:
    found = tables(
        """
        CREATE TABLE a (x INT); CREATE TABLE b (y INT);
        RENAME TABLE a TO c; DROP TABLE IF EXISTS b, missing;
        CREATE TABLE d LIKE c;
        """
    )
    assert [t.name for t in found] == ["c", "d"]
    assert [c.name for c in found[1].columns] == ["x"]


def test_unique_key_without_name_and_create_unique_index() -> None:
    (t,) = tables(
        "CREATE TABLE t (a INT NOT NULL, b INT, UNIQUE (a)); CREATE UNIQUE INDEX ub ON t (b);"
    )
    assert t.unique_keys == (("a",), ("b",))


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "CREATE TABLE t (a INT);\nALTER TABLE u ADD b INT;",
            "test.sql:2: ALTER TABLE u: no earlier",
        ),
        (
            "CREATE TABLE t (a INT);\n\nALTER TABLE t DROP COLUMN z;",
            "test.sql:3: DROP COLUMN z: no such",
        ),
        ("CREATE TABLE t (a INT FROBNICATE);", "test.sql:1: column a: unexpected FROBNICATE"),
        ("CREATE TABLE t AS SELECT 1;", "AS SELECT: the columns come from a query"),
        ("CREATE TABLE t (a INT, a INT);", "duplicate column a"),
        ("CREATE TABLE t (a INT, PRIMARY KEY (b));", "key column b is not a column of t"),
        (
            "CREATE TABLE t (a INT);\nALTER TABLE t EXPLODE;",
            "test.sql:2: ALTER TABLE t: unsupported action",
        ),
        ("CREATE TABLE t (a INT, b 'x');", "column b: expected a column type"),
    ],
)
def test_statements_that_cannot_be_applied_are_errors_with_a_line(sql: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        tables(sql)
    assert message in err.value.one_line()
    assert isinstance(err.value, DdlError) or "expected a column type" in message


def test_other_statements_are_counted_not_applied() -> None:
    from contracts.derive.ddl import Catalog, apply_sql

    catalog = Catalog("mysql", database="db")
    apply_sql(catalog, "INSERT INTO t VALUES (1); GRANT ALL ON *.* TO x; CREATE INDEX i ON t (a);")
    assert catalog.tables == {}
    assert sum(catalog.skipped.values()) == 3


def test_create_table_of_an_existing_table() -> None:
    (t,) = tables("CREATE TABLE t (a INT); CREATE TABLE IF NOT EXISTS t (b INT);")
    assert [c.name for c in t.columns] == ["a"]  # IF NOT EXISTS leaves it as it is
    with pytest.raises(InputError, match=r"test\.sql:2: CREATE TABLE t: the table already exists"):
        tables("CREATE TABLE t (a INT);\nCREATE TABLE t (b INT);")
