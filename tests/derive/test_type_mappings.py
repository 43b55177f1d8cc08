"""Each row of the Debezium mapping tables, stated here from its source and checked.

A case names the Debezium documentation section (or test) its expectation comes from — the
same ``doc`` the row carries — and states the Connect type, semantic name and parameters the
connector writes. ``test_every_row_is_exercised`` fails when a table row has no case, so a row
cannot be added (or changed) without a stated expectation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from contracts.derive.debezium import _MAPPINGS, debezium_settings
from contracts.derive.debezium_mysql import MYSQL_ROWS
from contracts.derive.debezium_postgres import POSTGRES_ROWS
from contracts.derive.typemap import lookup, parse_version

from .helpers import column, shape, tables

DEC = "org.apache.kafka.connect.data.Decimal"
BITS = "io.debezium.data.Bits"


@dataclass(frozen=True)
class Case:
    doc: str
    dialect: str
    sql: str
    expected: dict[str, Any]
    options: dict[str, str] = field(default_factory=dict)
    version: str = "3.0"
    prelude: str = ""


def _s(type_: str, name: str | None = None, **params: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_}
    if name:
        out["name"] = name
    if params:
        out["parameters"] = {k.replace("__", "."): v for k, v in params.items()}
    return out


def _dec(scale: str, precision: str | None = None) -> dict[str, Any]:
    params = {"scale": scale}
    if precision is not None:
        params["connect.decimal.precision"] = precision
    return {"type": "bytes", "name": DEC, "parameters": params}


M = "mysql"
P = "postgres"
MB = "mysql-basic-types"
MT = "mysql-temporal-types"
MD = "mysql-decimal-types"
UNS = "MySqlUnsignedIntegerIT / BinlogValueConverters (unsigned widening)"
BIGU = "mysql-property-bigint-unsigned-handling-mode"
PB = "postgresql-basic-types"
PT = "postgresql-temporal-types"
PD = "postgresql-decimal-types"

CASES: tuple[Case, ...] = (
    # --- MySQL: basic types -------------------------------------------------------------------
    Case(MB, M, "BIT", _s("boolean")),
    Case(MB, M, "BIT(1)", _s("boolean")),
    Case(MB, M, "BIT(64)", _s("bytes", BITS, length="64")),
    Case(MB, M, "TINYINT", _s("int16")),
    Case(MB, M, "TINYINT(1)", _s("int16")),
    Case(MB, M, "BOOLEAN", _s("int16")),  # stored as tinyint(1): mysql-boolean-values
    Case(UNS, M, "TINYINT UNSIGNED", _s("int16")),
    Case(UNS, M, "TINYINT UNSIGNED", _s("int16"), version="main"),
    Case("debezium/debezium#7669 (dbz#2235, 2026-07-16, unreleased)", M, "TINYINT",
         _s("int8"), version="main"),
    Case(MB, M, "SMALLINT", _s("int16")),
    Case(UNS, M, "SMALLINT UNSIGNED", _s("int32")),
    Case(MB, M, "MEDIUMINT UNSIGNED", _s("int32")),
    Case(MB, M, "MEDIUMINT", _s("int32")),
    Case(MB, M, "INTEGER", _s("int32")),
    Case(UNS, M, "INT(11) UNSIGNED ZEROFILL", _s("int64")),
    Case(MB, M, "BIGINT", _s("int64")),
    Case(BIGU, M, "BIGINT UNSIGNED", _s("int64")),
    Case(BIGU, M, "BIGINT UNSIGNED", _dec("0"), {"bigint.unsigned.handling.mode": "precise"},
         version="1.9"),
    Case("BinlogValueConverters (precision 20 since 2.4)", M, "SERIAL", _dec("0", "20"),
         {"bigint.unsigned.handling.mode": "precise"}),
    Case("MySqlFloatIT (DBZ-3865): FLOAT64 before 2.0", M, "FLOAT", _s("double"), version="1.9"),
    Case(MB, M, "FLOAT", _s("float")),
    Case(MB, M, "FLOAT(24)", _s("float")),
    Case(MB, M, "FLOAT UNSIGNED", _s("float")),
    Case(MB, M, "FLOAT(10, 2)", _s("double")),
    Case(MB, M, "FLOAT(25)", _s("double")),  # MySQL stores FLOAT(25) as DOUBLE
    Case(MB, M, "DOUBLE", _s("double")),
    Case(MB, M, "REAL", _s("double")),
    Case(MB, M, "DOUBLE PRECISION(10,7) UNSIGNED ZEROFILL", _s("double")),
    Case(MB, M, "VARCHAR(255)", _s("string")),
    Case(MB, M, "LONGTEXT", _s("string")),
    Case(MB, M, "BLOB", _s("bytes")),
    Case(MB, M, "VARBINARY(20)", _s("string"), {"binary.handling.mode": "base64"}),
    Case(MB, M, "BINARY(16)", _s("string"), {"binary.handling.mode": "base64-url-safe"}),
    Case(MB, M, "LONGBLOB", _s("string"), {"binary.handling.mode": "hex"}),
    Case(MB, M, "JSON", _s("string", "io.debezium.data.Json")),
    Case(MB, M, "ENUM('red', 'white')", _s("string", "io.debezium.data.Enum", allowed="red,white")),
    Case(MB, M, "SET('a','b')", _s("string", "io.debezium.data.EnumSet", allowed="a,b")),
    Case(MB, M, "YEAR", _s("int32", "io.debezium.time.Year")),
    Case(MB, M, "TIMESTAMP(3)", _s("string", "io.debezium.time.ZonedTimestamp")),
    # --- MySQL: decimals ----------------------------------------------------------------------
    Case(MD, M, "DECIMAL(8, 4)", _dec("4", "8")),
    Case(MD, M, "DECIMAL", _dec("0", "10")),
    Case(MD, M, "NUMERIC(7)", _dec("0", "7")),
    Case(MD, M, "DECIMAL(8,4)", _s("double"), {"decimal.handling.mode": "double"}),
    Case(MD, M, "FIXED(40,3)", _s("string"), {"decimal.handling.mode": "string"}),
    # --- MySQL: temporal ----------------------------------------------------------------------
    Case(MT, M, "DATE", _s("int32", "io.debezium.time.Date")),
    Case(MT, M, "DATE", _s("int32", "org.apache.kafka.connect.data.Date"),
         {"time.precision.mode": "connect"}),
    Case(MT, M, "TIME", _s("int64", "io.debezium.time.MicroTime")),
    Case(MT, M, "TIME(6)", _s("int64", "io.debezium.time.MicroTime"),
         {"time.precision.mode": "adaptive"}),
    Case("JdbcValueConverters (adaptive)", M, "TIME(3)", _s("int32", "io.debezium.time.Time"),
         {"time.precision.mode": "adaptive"}),
    Case(MT, M, "TIME(3)", _s("int32", "org.apache.kafka.connect.data.Time"),
         {"time.precision.mode": "connect"}),
    Case(MT, M, "DATETIME", _s("int64", "io.debezium.time.Timestamp")),
    Case(MT, M, "DATETIME(3)", _s("int64", "io.debezium.time.Timestamp")),
    Case(MT, M, "DATETIME(4)", _s("int64", "io.debezium.time.MicroTimestamp")),
    Case(MT, M, "DATETIME(6)", _s("int64", "org.apache.kafka.connect.data.Timestamp"),
         {"time.precision.mode": "connect"}),
    # --- MySQL: spatial -----------------------------------------------------------------------
    Case("mysql-spatial-types (MySqlValueConverters: Point)", M, "POINT",
         _s("struct", "io.debezium.data.geometry.Point")),
    Case("mysql-spatial-types", M, "MULTIPOLYGON", _s("struct", "io.debezium.data.geometry.Geometry")),
    Case("mysql-spatial-types", M, "GEOMCOLLECTION",
         _s("struct", "io.debezium.data.geometry.Geometry")),
    # --- PostgreSQL: basic types --------------------------------------------------------------
    Case(PB, P, "BOOLEAN", _s("boolean")),
    Case(PB, P, "BIT", _s("boolean")),
    Case(PB, P, "BIT(7)", _s("bytes", BITS, length="7")),
    Case(PB, P, "BIT VARYING(24)", _s("bytes", BITS, length="24")),
    Case(PB, P, "VARBIT", _s("bytes", BITS, length="2147483647")),
    Case(PB, P, "SMALLSERIAL", _s("int16")),
    Case(PB, P, "INT4", _s("int32")),
    Case(PB, P, "BIGSERIAL", _s("int64")),
    Case(PB, P, "OID", _s("int64")),
    Case(PB, P, "REAL", _s("float")),
    Case(PB, P, "FLOAT(10)", _s("float")),
    Case(PB, P, "DOUBLE PRECISION", _s("double")),
    Case(PB, P, "FLOAT", _s("double")),
    Case(PB, P, "CHARACTER VARYING(20)", _s("string")),
    Case(PB, P, "CITEXT", _s("string")),
    Case(PB, P, "BYTEA", _s("bytes")),
    Case(PB, P, "BYTEA", _s("string"), {"binary.handling.mode": "hex"}),
    Case(PB, P, "BYTEA", _s("string"), {"binary.handling.mode": "base64"}),
    Case(PB, P, "BYTEA", _s("string"), {"binary.handling.mode": "base64-url-safe"}),
    Case(PB, P, "JSONB", _s("string", "io.debezium.data.Json")),
    Case(PB, P, "XML", _s("string", "io.debezium.data.Xml")),
    Case(PB, P, "UUID", _s("string", "io.debezium.data.Uuid")),
    Case(PB, P, "LTREE", _s("string", "io.debezium.data.Ltree")),
    Case(PB, P, "TSTZRANGE", _s("string")),
    Case(PB, P, "mood", _s("string", "io.debezium.data.Enum", allowed="sad,ok,happy"),
         prelude="CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');"),
    Case(PB, P, "POINT", _s("struct", "io.debezium.data.geometry.Point")),
    Case(PB, P, "TIMESTAMPTZ", _s("string", "io.debezium.time.ZonedTimestamp")),
    Case(PB, P, "TIME(3) WITH TIME ZONE", _s("string", "io.debezium.time.ZonedTime")),
    Case(PB, P, "INTERVAL", _s("int64", "io.debezium.time.MicroDuration")),
    Case(PB, P, "INTERVAL YEAR TO MONTH", _s("string", "io.debezium.time.Interval"),
         {"interval.handling.mode": "string"}),
    Case("postgresql-network-address-types", P, "MACADDR8", _s("string")),
    Case("postgresql-hstore-type", P, "HSTORE", _s("string", "io.debezium.data.Json")),
    Case("postgresql-hstore-type", P, "HSTORE", {"type": "map"}, {"hstore.handling.mode": "map"}),
    Case("postgresql-postgis-types", P, "GEOMETRY(POINT, 3187)",
         _s("struct", "io.debezium.data.geometry.Geometry")),
    Case("postgresql-postgis-types", P, "GEOGRAPHY(MULTILINESTRING)",
         _s("struct", "io.debezium.data.geometry.Geography")),
    # --- PostgreSQL: decimals -----------------------------------------------------------------
    Case(PD, P, "DECIMAL(3,2)", _dec("2", "3")),
    Case(PD, P, "NUMERIC(4)", _dec("0", "4")),
    Case(PD, P, "NUMERIC", _s("struct", "io.debezium.data.VariableScaleDecimal")),
    Case(PD, P, "NUMERIC", _s("double"), {"decimal.handling.mode": "double"}),
    Case(PD, P, "NUMERIC(6,4)", _s("string"), {"decimal.handling.mode": "string"}),
    Case(PD, P, "MONEY", _dec("2")),
    Case(PD, P, "MONEY", _dec("4"), {"money.fraction.digits": "4"}),
    Case(PD, P, "MONEY", _s("double"), {"decimal.handling.mode": "double"}),
    Case(PD, P, "MONEY", _s("string"), {"decimal.handling.mode": "string"}),
    # --- PostgreSQL: temporal -----------------------------------------------------------------
    Case(PT, P, "DATE", _s("int32", "io.debezium.time.Date")),
    Case(PT, P, "DATE", _s("int32", "org.apache.kafka.connect.data.Date"),
         {"time.precision.mode": "connect"}),
    Case(PT, P, "TIME(3)", _s("int32", "io.debezium.time.Time")),
    Case(PT, P, "TIME", _s("int64", "io.debezium.time.MicroTime")),
    Case(PT, P, "TIME(3)", _s("int64", "io.debezium.time.MicroTime"),
         {"time.precision.mode": "adaptive_time_microseconds"}),
    Case(PT, P, "TIME(6)", _s("int32", "org.apache.kafka.connect.data.Time"),
         {"time.precision.mode": "connect"}),
    Case(PT, P, "TIMESTAMP(3)", _s("int64", "io.debezium.time.Timestamp")),
    Case(PT, P, "TIMESTAMP", _s("int64", "io.debezium.time.MicroTimestamp")),
    Case(PT, P, "TIMESTAMP(6) WITHOUT TIME ZONE", _s("int64", "org.apache.kafka.connect.data.Timestamp"),
         {"time.precision.mode": "connect"}),
    # --- PostgreSQL: arrays (AbstractRecordsProducerTest.schemasAndValuesForArrayTypes) -------
    Case(PB, P, "INT[]", {"type": "array", "items": _s("int32")}),
    Case(PD, P, "NUMERIC(10, 2)[]", {"type": "array", "items": _dec("2", "10")}),
    Case(PB, P, "UUID[]", {"type": "array", "items": _s("string", "io.debezium.data.Uuid")}),
)  # fmt: skip


def _id(case: Case) -> str:
    settings = ",".join(f"{k}={v}" for k, v in case.options.items())
    return f"{case.doc} | {case.dialect} {case.sql} {settings} @{case.version}".strip()


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_mapping(case: Case) -> None:
    got = column(case.sql, case.dialect, case.options, case.version, prelude=case.prelude)
    assert shape(got) == {k: v for k, v in case.expected.items()}
    assert got.optional == ("SERIAL" not in case.sql.upper())  # SERIAL implies NOT NULL


def _chosen_row(case: Case) -> Any:
    table = tables(f"{case.prelude} CREATE TABLE t (c {case.sql})", case.dialect)[0]
    settings = debezium_settings(table.dialect, "srv", case.options, parse_version(case.version))
    sql_type = table.columns[0].type
    element = sql_type.element() if sql_type.array else sql_type
    return lookup(_MAPPINGS[settings.connector], element, settings.options, settings.version)


def test_every_row_is_exercised_and_names_its_source() -> None:
    chosen = {}
    for case in CASES:
        row = _chosen_row(case)
        assert row is not None, _id(case)
        assert row.doc == case.doc, f"{_id(case)} is decided by a row sourced {row.doc!r}"
        chosen[id(row)] = row
    unused = [r for r in (*MYSQL_ROWS, *POSTGRES_ROWS) if id(r) not in chosen]
    assert not unused, f"rows without a stated expectation: {unused}"


def test_struct_shapes_are_debeziums() -> None:
    """The composite shapes, as Paimon's Debezium 1.9.7 message writes Point and Geometry, and
    as Debezium's SchemaFactory builds VariableScaleDecimal."""
    point = column("POINT").to_json()
    assert point == {
        "type": "struct",
        "fields": [
            {"type": "double", "optional": False, "field": "x"},
            {"type": "double", "optional": False, "field": "y"},
            {"type": "bytes", "optional": True, "field": "wkb"},
            {"type": "int32", "optional": True, "field": "srid"},
        ],
        "optional": True,
        "name": "io.debezium.data.geometry.Point",
        "version": 1,
        "doc": "Geometry (POINT)",
        "field": "c",
    }
    decimal = column("NUMERIC", "postgres").to_json()
    assert [f["field"] for f in decimal["fields"]] == ["scale", "value"]
    assert decimal["doc"] == "Variable scaled decimal"


def test_nullability_follows_not_null() -> None:
    assert not column("INT", constraints="NOT NULL").optional
    assert not column("INT[]", "postgres", constraints="NOT NULL").optional
    assert column("INT[]", "postgres", constraints="NOT NULL").items.optional  # type: ignore[union-attr]


def test_a_type_without_mapping_is_an_error_naming_the_column() -> None:
    from contracts.errors import InputError

    with pytest.raises(
        InputError, match=r"column c: the postgresql connector .* no mapping for type tsvector"
    ):
        column("TSVECTOR", "postgres")
