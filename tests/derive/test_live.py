"""Live databases: derive from a real PostgreSQL and a real MariaDB equals derive from the DDL.

Each server is started for the session (``servers.py``), the DDL below is run on it, and the
contracts derived from the live catalog must equal those derived from the same DDL text, for
every type in the connector mapping tables and under several connector settings and versions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contracts.derive import DeriveRequest, derive_from_db, derive_from_ddl
from contracts.derive.typemap import parse_version

#: Every MySQL mapping row's types (and the aliases MySQL normalizes), with defaults and keys.
MYSQL_DDL = """
CREATE DATABASE derive_test;
USE derive_test;
CREATE TABLE all_types (
  id INT NOT NULL,
  c_bit1 BIT, c_bit64 BIT(64), c_bool BOOLEAN, c_tinyint TINYINT DEFAULT '7',
  c_tinyint_u TINYINT(3) UNSIGNED ZEROFILL, c_smallint SMALLINT NOT NULL DEFAULT -5,
  c_smallint_u SMALLINT UNSIGNED, c_mediumint MEDIUMINT, c_mediumint_u MEDIUMINT UNSIGNED,
  c_integer INTEGER, c_int_u INT UNSIGNED, c_bigint BIGINT DEFAULT 42,
  c_bigint_u BIGINT UNSIGNED, c_serial SERIAL,
  c_float FLOAT DEFAULT 1.5, c_float_md FLOAT(10,2), c_float25 FLOAT(25), c_real REAL,
  c_double DOUBLE PRECISION, c_decimal DECIMAL(12,4) DEFAULT 3.25, c_dec DEC, c_numeric NUMERIC(7),
  c_fixed FIXED(40,3),
  c_char CHAR(10) DEFAULT 'x', c_varchar VARCHAR(200) NOT NULL, c_tinytext TINYTEXT,
  c_text TEXT, c_mediumtext MEDIUMTEXT, c_longtext LONGTEXT,
  c_binary BINARY(16), c_varbinary VARBINARY(20), c_tinyblob TINYBLOB, c_blob BLOB,
  c_mediumblob MEDIUMBLOB, c_longblob LONGBLOB,
  c_json JSON, c_enum ENUM('red', 'white', 'it''s') NOT NULL DEFAULT 'white', c_set SET('a','b','c'),
  c_year YEAR, c_date DATE DEFAULT '2020-02-29', c_time TIME, c_time3 TIME(3), c_time6 TIME(6),
  c_datetime DATETIME DEFAULT '2021-01-02 03:04:05', c_datetime3 DATETIME(3),
  c_datetime6 DATETIME(6), c_timestamp TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP,
  c_timestamp6 TIMESTAMP(6) NULL,
  c_point POINT, c_geometry GEOMETRY, c_linestring LINESTRING, c_polygon POLYGON,
  c_multipoint MULTIPOINT, c_multilinestring MULTILINESTRING, c_multipolygon MULTIPOLYGON,
  c_collection GEOMETRYCOLLECTION,
  PRIMARY KEY (id),
  UNIQUE KEY uk_varchar (c_varchar)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE migrated (a INT NOT NULL, b VARCHAR(10));
ALTER TABLE migrated ADD COLUMN c DECIMAL(5,2) NOT NULL DEFAULT 0 AFTER a, MODIFY b VARCHAR(20) NOT NULL;
ALTER TABLE migrated ADD UNIQUE KEY uk_b (b), CHANGE COLUMN a a_id BIGINT NOT NULL;
CREATE TABLE no_key (x INT, y INT);
"""

#: Every PostgreSQL mapping row's types (PostGIS aside: not packaged for CI here).
POSTGRES_DDL = """
CREATE EXTENSION IF NOT EXISTS citext;
CREATE EXTENSION IF NOT EXISTS hstore;
CREATE EXTENSION IF NOT EXISTS ltree;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN positive_amount AS numeric(10,2) NOT NULL;
CREATE SCHEMA inventory;
CREATE TABLE inventory.all_types (
  id serial PRIMARY KEY, c_smallserial smallserial, c_bigserial bigserial,
  c_bool boolean DEFAULT true, c_bit1 bit, c_bit7 bit(7), c_varbit24 bit varying(24), c_varbit varbit,
  c_int2 int2 DEFAULT 3, c_int4 integer NOT NULL DEFAULT -1, c_int8 bigint, c_oid oid,
  c_real real DEFAULT 1.5, c_float8 double precision, c_float float,
  c_numeric numeric(10,2) DEFAULT 2.5, c_numeric4 numeric(4), c_numeric_var numeric, c_decimal decimal(3,2),
  c_money money,
  c_char char(4), c_varchar varchar(20) DEFAULT 'abc', c_text text NOT NULL, c_citext citext,
  c_bytea bytea, c_json json, c_jsonb jsonb, c_xml xml, c_uuid uuid, c_ltree ltree, c_mood mood,
  c_inet inet, c_cidr cidr, c_macaddr macaddr, c_macaddr8 macaddr8,
  c_int4range int4range, c_int8range int8range, c_numrange numrange, c_tsrange tsrange,
  c_tstzrange tstzrange, c_daterange daterange, c_hstore hstore,
  c_timestamptz timestamptz, c_timetz time(3) with time zone, c_interval interval,
  c_date date DEFAULT '2020-02-29', c_time3 time(3), c_time time, c_timestamp3 timestamp(3),
  c_timestamp timestamp without time zone, c_point point,
  c_int_array int[], c_numeric_array numeric(10,2)[], c_text_array text[] NOT NULL,
  c_mood_array mood[], c_domain positive_amount
);
CREATE TABLE inventory.migrated (a int NOT NULL, b text);
ALTER TABLE inventory.migrated ADD COLUMN c numeric(5,2), ALTER COLUMN b TYPE varchar(30);
ALTER TABLE inventory.migrated ADD CONSTRAINT migrated_pk PRIMARY KEY (a);
CREATE UNIQUE INDEX migrated_b ON inventory.migrated (b);
"""

MYSQL_SETTINGS: list[tuple[str, dict[str, str]]] = [
    ("3.0", {}),
    ("3.0", {"decimal.handling.mode": "string", "binary.handling.mode": "base64",
             "time.precision.mode": "connect", "bigint.unsigned.handling.mode": "precise"}),
    ("1.9", {"decimal.handling.mode": "double", "time.precision.mode": "adaptive",
             "bigint.unsigned.handling.mode": "precise"}),
    ("main", {"binary.handling.mode": "hex",
              "column.propagate.source.type": r"derive_test\.all_types\.c_(varchar|decimal)"}),
]  # fmt: skip
POSTGRES_SETTINGS: list[tuple[str, dict[str, str]]] = [
    ("3.0", {}),
    ("3.0", {"decimal.handling.mode": "double", "interval.handling.mode": "string",
             "hstore.handling.mode": "map", "time.precision.mode": "connect",
             "binary.handling.mode": "hex"}),
    ("1.9", {"time.precision.mode": "adaptive_time_microseconds", "money.fraction.digits": "4",
             "datatype.propagate.source.type": ".+\\.(VARCHAR|NUMERIC)"}),
    ("1.2", {"decimal.handling.mode": "string"}),
]  # fmt: skip


def _execute_mysql(url: str, sql: str) -> None:
    import pymysql

    from contracts.derive.live import _mysql_args

    conn = pymysql.connect(**_mysql_args(url))
    try:
        with conn.cursor() as cur:
            for statement in (s for s in sql.split(";") if s.strip()):
                cur.execute(statement)
        conn.commit()
    finally:
        conn.close()


def _execute_postgres(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(scope="module")
def mariadb(mariadb_url: str) -> str:
    _execute_mysql(mariadb_url, MYSQL_DDL)
    return mariadb_url + "derive_test"


@pytest.fixture(scope="module")
def postgres(postgres_url: str) -> str:
    _execute_postgres(postgres_url, POSTGRES_DDL)
    return postgres_url


def _by_name(contracts: Any) -> dict[str, Any]:
    return {c.name: c for c in contracts}


def _compare(live: Any, ddl: Any) -> None:
    live_by, ddl_by = _by_name(live.contracts), _by_name(ddl.contracts)
    assert sorted(live_by) == sorted(ddl_by)
    for name, want in ddl_by.items():
        got = live_by[name]
        for a, b in zip(got.columns, want.columns, strict=True):
            assert a == b, f"{name}.{b['field']}"
        assert got.key == want.key, name
        assert got == want, name


@pytest.mark.parametrize(("version", "options"), MYSQL_SETTINGS)
def test_mariadb_live_equals_ddl(
    mariadb: str, tmp_path: Path, version: str, options: dict[str, str]
) -> None:
    ddl = tmp_path / "schema.sql"
    ddl.write_text(MYSQL_DDL, encoding="utf-8")
    base = DeriveRequest(
        "debezium-json", "mariadb", "srv", options, parse_version(version)
    )  # MariaDB stores JSON as LONGTEXT: its DDL is read as MariaDB's
    _compare(derive_from_db(mariadb, base), derive_from_ddl(ddl, base))


def test_mariadb_live_contracts_cover_every_column(mariadb: str) -> None:
    found = _by_name(
        derive_from_db(mariadb, DeriveRequest("debezium-json", "mysql", "srv")).contracts
    )
    all_types = found["srv.derive_test.all_types"]
    assert len(all_types.columns) == 57
    assert all_types.key == ("id",)
    assert found["srv.derive_test.migrated"].key == ("b",)  # the NOT NULL unique key
    assert found["srv.derive_test.no_key"].key == ()
    by = {c["field"]: c for c in all_types.columns}
    assert (
        by["c_enum"]["default"] == "white"
        and by["c_enum"]["parameters"]["allowed"] == "red,white,it's"
    )
    assert by["c_timestamp"]["default"] == "1970-01-01T00:00:00Z"
    assert by["c_json"]["type"] == "string" and "name" not in by["c_json"]  # LONGTEXT on MariaDB


def test_mariadb_canal_types_live_equal_ddl(mariadb: str, tmp_path: Path) -> None:
    """Canal spells mysqlType from whichever table meta it reads (DDL or the server), so the
    texts may differ (INT vs int(11)); the Connect types may not."""
    ddl = tmp_path / "schema.sql"
    ddl.write_text(MYSQL_DDL, encoding="utf-8")
    request = DeriveRequest("canal-json", "mariadb")
    live = _by_name(derive_from_db(mariadb, request).contracts)
    declared = _by_name(derive_from_ddl(ddl, request).contracts)
    assert sorted(live) == sorted(declared)
    for name, contract in declared.items():
        for got, want in zip(live[name].columns, contract.columns, strict=True):
            if want["field"] == "c_json":  # declared JSON; MariaDB's catalog says longtext
                assert (got["type"], want["name"]) == ("string", "io.debezium.data.Json")
                continue
            assert got == want, f"{name}.{want['field']}"


@pytest.mark.parametrize(("version", "options"), POSTGRES_SETTINGS)
def test_postgres_live_equals_ddl(
    postgres: str, tmp_path: Path, version: str, options: dict[str, str]
) -> None:
    ddl = tmp_path / "schema.sql"
    ddl.write_text(POSTGRES_DDL, encoding="utf-8")
    request = DeriveRequest(
        "debezium-json", "postgres", "srv", options, parse_version(version), database="postgres"
    )
    _compare(derive_from_db(postgres, request), derive_from_ddl(ddl, request))


def test_postgres_live_contracts_cover_every_column(postgres: str) -> None:
    found = _by_name(
        derive_from_db(postgres, DeriveRequest("debezium-json", "postgres", "srv")).contracts
    )
    all_types = found["srv.inventory.all_types"]
    assert len(all_types.columns) == 56
    by = {c["field"]: c for c in all_types.columns}
    assert by["c_mood_array"]["items"]["parameters"] == {"allowed": "sad,ok,happy"}
    assert by["c_domain"]["optional"] is False
    assert by["id"]["default"] == 0 and by["c_varchar"]["default"] == "abc"
    assert found["srv.inventory.migrated"].key == ("a",)


def test_tables_regex_and_unreachable_server(postgres: str) -> None:
    from contracts.errors import InputError

    found = derive_from_db(
        postgres, DeriveRequest("debezium-json", "postgres", "srv", tables=r"inventory\.migrated")
    )
    assert [c.name for c in found.contracts] == ["srv.inventory.migrated"]
    with pytest.raises(InputError, match="cannot connect"):
        derive_from_db(
            "postgresql://u:secret@127.0.0.1:1/x", DeriveRequest("debezium-json", "postgres", "s")
        )


def test_postgres_function_defaults_live_equal_ddl(postgres_url: str, tmp_path: Path) -> None:
    """The catalog spells the defaults its own way (``now()``, ``CURRENT_TIMESTAMP``,
    ``(now())::date``, ``gen_random_uuid()``): the contract must not change (REVIEW-1 F7)."""
    from .test_function_defaults import (
        EXPECTED,
        FUNCTION_DEFAULTS_DDL,
        NO_DEFAULT,
        function_default_columns,
    )

    _execute_postgres(postgres_url, FUNCTION_DEFAULTS_DDL)
    try:
        ddl = tmp_path / "f.sql"
        ddl.write_text(FUNCTION_DEFAULTS_DDL, encoding="utf-8")
        request = DeriveRequest(
            "debezium-json", "postgres", "pg", tables=r"fdefaults\..*", database="postgres"
        )
        live, declared = derive_from_db(postgres_url, request), derive_from_ddl(ddl, request)
    finally:
        _execute_postgres(postgres_url, "DROP SCHEMA fdefaults CASCADE")
    written = {c.name: c.default.written for c in live.tables[0].columns if c.default}
    assert written["created_at"] == "now()"  # as the catalog spells them
    assert written["c_current_ts"] == "CURRENT_TIMESTAMP"
    assert written["date_func"] == "(now())::date"
    _compare(live, declared)
    by = function_default_columns(live)
    assert {name: col["default"] for name, col in by.items() if "default" in col} == EXPECTED
    assert all("default" not in by[name] for name in NO_DEFAULT)
