"""PostgreSQL function defaults (``now()``, ``CURRENT_TIMESTAMP`` ...) as Debezium writes them (REVIEW-1 F7).

Debezium's PostgreSQL connector never evaluates such a default: from 2.0 on it writes a
placeholder of the column's type. The expected values are those of Debezium's own
``PostgresSchemaIT.shouldProperlyGetDefaultColumnValues`` (debezium/debezium
``debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/PostgresSchemaIT.java``
at f8df77a38a0af3843100fb8927ab9804d42e58f7): ``date_func DATE default NOW()::date`` → 0,
``integer_func1 INT default ABS(-1)`` → 0, ``interval_func1 INTERVAL default
make_interval(hours := 1)`` → 0, ``text_func3 TEXT default concat('foo', 'bar', 'baz')`` → "",
``time_func TIME default NOW()::time`` → 0, ``timestamp_func TIMESTAMP default
NOW()::timestamp`` → 0, ``uuid_func UUID default uuid_generate_v4()`` → the zero UUID. The live
test (test_live.py) runs the same DDL on a real PostgreSQL: the catalog's spelling of each
default (``now()``, ``CURRENT_TIMESTAMP``, ``(now())::date``) must give the same contract.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clirun import run

from contracts.derive import DeriveRequest, derive_from_ddl
from contracts.derive.defaults import DefaultError
from contracts.derive.typemap import parse_version

#: Function defaults Debezium's test names, and those the reviewer met (F7).
FUNCTION_DEFAULTS_DDL = """
CREATE SCHEMA fdefaults;
CREATE TABLE fdefaults.orders (
  id bigserial PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  date_func date DEFAULT NOW()::date,
  integer_func1 int DEFAULT ABS(-1),
  integer_func2 int DEFAULT DIV(2, 1),
  interval_func1 interval DEFAULT make_interval(hours := 1),
  text_func3 text DEFAULT concat('foo', 'bar', 'baz'),
  time_func time DEFAULT NOW()::time,
  timestamp_func timestamp DEFAULT NOW()::timestamp,
  uuid_func uuid NOT NULL DEFAULT gen_random_uuid(),
  c_current_ts timestamp DEFAULT CURRENT_TIMESTAMP,
  c_current_date date DEFAULT CURRENT_DATE,
  c_localtimestamp timestamp DEFAULT LOCALTIMESTAMP,
  c_clock timestamptz DEFAULT clock_timestamp(),
  c_amount numeric(12,2) DEFAULT round(1.5),
  c_flag boolean DEFAULT (random() > 0.5),
  c_doc jsonb DEFAULT jsonb_build_object(),
  c_numeric_var numeric DEFAULT round(1.5),
  c_bytes bytea DEFAULT decode('00', 'hex')
);
"""

#: column → the schema default Debezium writes (absent: no default).
EXPECTED: dict[str, Any] = {
    "id": 0,
    "created_at": "1970-01-01T00:00:00Z",
    "date_func": 0,
    "integer_func1": 0,
    "integer_func2": 0,
    "interval_func1": 0,
    "text_func3": "",
    "time_func": 0,
    "timestamp_func": 0,
    "uuid_func": "00000000-0000-0000-0000-000000000000",
    "c_current_ts": 0,
    "c_current_date": 0,
    "c_localtimestamp": 0,
    "c_clock": "1970-01-01T00:00:00Z",
    "c_amount": "AA==",  # Decimal 0.00: unscaled 0
    "c_flag": False,
    "c_doc": "{}",
}
#: A variable-scale numeric is a Struct (no default, KAFKA-12694); bytea has no default mapper.
NO_DEFAULT = ("c_numeric_var", "c_bytes")


def _request(version: str = "3.0") -> DeriveRequest:
    return DeriveRequest("debezium-json", "postgres", "pg", {}, parse_version(version))


def function_default_columns(found: Any) -> dict[str, dict[str, Any]]:
    (contract,) = [c for c in found.contracts if c.name == "pg.fdefaults.orders"]
    return {c["field"]: c for c in contract.columns}


def test_function_defaults_get_debeziums_placeholders(tmp_path: Path) -> None:
    ddl = tmp_path / "f.sql"
    ddl.write_text(FUNCTION_DEFAULTS_DDL, encoding="utf-8")
    by = function_default_columns(derive_from_ddl(ddl, _request()))
    assert {name: col["default"] for name, col in by.items() if "default" in col} == EXPECTED
    for name in NO_DEFAULT:
        assert "default" not in by[name]


def test_the_reviewers_table_derives(tmp_path: Path) -> None:
    ddl = tmp_path / "t.sql"
    ddl.write_text(
        "CREATE TABLE public.orders (id bigserial PRIMARY KEY, "
        "created_at timestamptz NOT NULL DEFAULT now());\n",
        encoding="utf-8",
    )
    done = run(
        "derive", "--from-ddl", ddl, "--dialect", "postgres", "--server-name", "pg",
        "--output-format", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    (contract,) = json.loads(done.text)["contracts"]
    created = next(c for c in contract["columns"] if c["field"] == "created_at")
    assert created["default"] == "1970-01-01T00:00:00Z" and created["optional"] is False


def test_before_2_0_a_function_default_is_refused_quoting_it_as_written(tmp_path: Path) -> None:
    ddl = tmp_path / "t.sql"
    ddl.write_text(
        "CREATE TABLE orders (id int PRIMARY KEY,\n  created_at timestamptz DEFAULT Now() );\n",
        encoding="utf-8",
    )
    with pytest.raises(DefaultError) as caught:
        derive_from_ddl(ddl, _request("1.9"))
    assert caught.value.where == f"{ddl}:2"
    assert "DEFAULT Now() for Debezium 1.9" in caught.value.what
    assert "--debezium-version 2.0 or later" in caught.value.what


def test_an_expression_derive_cannot_evaluate_is_quoted_as_written(tmp_path: Path) -> None:
    ddl = tmp_path / "t.sql"
    ddl.write_text("CREATE TABLE t (id int PRIMARY KEY, n int DEFAULT 1 +  2);\n", encoding="utf-8")
    done = run("derive", "--from-ddl", ddl, "--dialect", "postgres", "--server-name", "pg")
    assert done.code == 2
    assert "column n: cannot derive the Connect default of DEFAULT 1 + 2 for an expression" in (
        done.err
    )
    assert "'" not in done.err.split("DEFAULT", 1)[1].split(" for ")[0]  # not sqlglot's quoting
