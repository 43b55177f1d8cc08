"""How Debezium's MySQL connector types a column: the mapping table.

Read it as a table: SQL type(s) | column condition | connector setting = value | versions |
Connect type, semantic name, parameters | source. The first row that holds wins, so narrower
rows come first. Sources are the sections of Debezium's MySQL connector documentation
(``mysql-basic-types``, ``mysql-temporal-types``, ``mysql-decimal-types``,
``mysql-boolean-values``, ``mysql-spatial-types``; debezium/debezium
``documentation/modules/ROOT/partials/modules/all-connectors/shared-mariadb-mysql.adoc``) or, where
the documentation is silent, the Debezium code or test that states the fact.

Types are as MySQL reports them (:mod:`contracts.sqltypes`): ``BOOLEAN`` is ``tinyint(1)``
(what a snapshot's ``SHOW CREATE TABLE`` returns, see ``mysql-boolean-values``), ``REAL`` is
``double``, ``FLOAT(25)`` is ``double``.
"""

from __future__ import annotations

from typing import Final

from contracts.derive.typemap import MAIN, TypeMapping, TypeRow
from contracts.logical import (
    BITS_NAME,
    CONNECT_DATE_NAME,
    CONNECT_TIME_NAME,
    CONNECT_TIMESTAMP_NAME,
    DEBEZIUM_DATE_NAME,
    DEBEZIUM_TIME_NAME,
    DEBEZIUM_TIMESTAMP_NAME,
    DECIMAL_NAME,
    ENUM_NAME,
    ENUM_SET_NAME,
    JSON_NAME,
    MICRO_TIME_NAME,
    MICRO_TIMESTAMP_NAME,
    YEAR_NAME,
    ZONED_TIMESTAMP_NAME,
)

DECIMAL: Final = DECIMAL_NAME
DECIMAL_MODE: Final = "decimal.handling.mode"
TIME_MODE: Final = "time.precision.mode"
BINARY_MODE: Final = "binary.handling.mode"
BIGINT_MODE: Final = "bigint.unsigned.handling.mode"

#: The settings a MySQL mapping depends on, with Debezium's defaults and allowed values.
MYSQL_SETTINGS: Final = {
    DECIMAL_MODE: ("precise", ("precise", "double", "string")),
    TIME_MODE: (
        "adaptive_time_microseconds",
        ("adaptive_time_microseconds", "adaptive", "connect"),
    ),
    BIGINT_MODE: ("long", ("long", "precise")),
    BINARY_MODE: ("bytes", ("bytes", "base64", "base64-url-safe", "hex")),
}

_TEXT: Final = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext")
_BINARY: Final = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")
_GEOMETRY: Final = (
    "geometry",
    "linestring",
    "polygon",
    "multipoint",
    "multilinestring",
    "multipolygon",
    "geometrycollection",
)
_BASIC: Final = "mysql-basic-types"
_TEMPORAL: Final = "mysql-temporal-types"
_DECIMALS: Final = "mysql-decimal-types"
_UNSIGNED: Final = "MySqlUnsignedIntegerIT / BinlogValueConverters (unsigned widening)"

# fmt: off
MYSQL_ROWS: Final[tuple[TypeRow, ...]] = (
    # --- bits and integers ------------------------------------------------------------------
    TypeRow(("bit",), "boolean", _BASIC, where="length=1"),
    TypeRow(("bit",), "bytes", _BASIC, name=BITS_NAME, params=(("length", "{length}"),), where="length>1"),
    TypeRow(("tinyint",), "int16", _UNSIGNED, where="unsigned"),
    TypeRow(("tinyint",), "int16", _BASIC, where="signed", until=MAIN),
    TypeRow(("tinyint",), "int8", "debezium/debezium#7669 (dbz#2235, 2026-07-16, unreleased)", where="signed", since=MAIN),
    TypeRow(("smallint",), "int32", _UNSIGNED, where="unsigned"),
    TypeRow(("smallint",), "int16", _BASIC),
    TypeRow(("mediumint",), "int32", _BASIC),
    TypeRow(("int",), "int64", _UNSIGNED, where="unsigned"),
    TypeRow(("int",), "int32", _BASIC),
    TypeRow(("bigint",), "int64", "mysql-property-bigint-unsigned-handling-mode", where="unsigned", setting=BIGINT_MODE, value="long"),
    TypeRow(("bigint",), "bytes", "mysql-property-bigint-unsigned-handling-mode", name=DECIMAL, params=(("scale", "0"),), where="unsigned", setting=BIGINT_MODE, value="precise", until=(2, 4)),
    TypeRow(("bigint",), "bytes", "BinlogValueConverters (precision 20 since 2.4)", name=DECIMAL, params=(("scale", "0"), ("connect.decimal.precision", "20")), where="unsigned", setting=BIGINT_MODE, value="precise", since=(2, 4)),
    TypeRow(("bigint",), "int64", _BASIC),
    # --- floating point ---------------------------------------------------------------------
    TypeRow(("float",), "double", "MySqlFloatIT (DBZ-3865): FLOAT64 before 2.0", where="no-scale", until=(2, 0)),
    TypeRow(("float",), "float", _BASIC, where="no-scale", since=(2, 0)),
    TypeRow(("float",), "double", _BASIC, where="scale"),
    TypeRow(("double",), "double", _BASIC),
    # --- decimals ---------------------------------------------------------------------------
    TypeRow(("decimal",), "bytes", _DECIMALS, name=DECIMAL, params=(("scale", "{scale}"), ("connect.decimal.precision", "{length}")), setting=DECIMAL_MODE, value="precise"),
    TypeRow(("decimal",), "double", _DECIMALS, setting=DECIMAL_MODE, value="double"),
    TypeRow(("decimal",), "string", _DECIMALS, setting=DECIMAL_MODE, value="string"),
    # --- strings, binaries, documents -------------------------------------------------------
    TypeRow(_TEXT, "string", _BASIC),
    TypeRow(_BINARY, "bytes", _BASIC, setting=BINARY_MODE, value="bytes"),
    TypeRow(_BINARY, "string", _BASIC, setting=BINARY_MODE, value="base64"),
    TypeRow(_BINARY, "string", _BASIC, setting=BINARY_MODE, value="base64-url-safe"),
    TypeRow(_BINARY, "string", _BASIC, setting=BINARY_MODE, value="hex"),
    TypeRow(("json",), "string", _BASIC, name=JSON_NAME),
    TypeRow(("enum",), "string", _BASIC, name=ENUM_NAME, params=(("allowed", "{values}"),)),
    TypeRow(("set",), "string", _BASIC, name=ENUM_SET_NAME, params=(("allowed", "{values}"),)),
    # --- temporal ---------------------------------------------------------------------------
    TypeRow(("year",), "int32", _BASIC, name=YEAR_NAME),
    TypeRow(("timestamp",), "string", _BASIC, name=ZONED_TIMESTAMP_NAME),
    TypeRow(("date",), "int32", _TEMPORAL, name=CONNECT_DATE_NAME, setting=TIME_MODE, value="connect"),
    TypeRow(("date",), "int32", _TEMPORAL, name=DEBEZIUM_DATE_NAME),
    # Kafka's Time logical type is INT32 (the documentation's table says INT64; the connector
    # uses org.apache.kafka.connect.data.Time.builder(), which is int32 milliseconds)
    TypeRow(("time",), "int32", _TEMPORAL, name=CONNECT_TIME_NAME, setting=TIME_MODE, value="connect"),
    TypeRow(("time",), "int32", "JdbcValueConverters (adaptive)", name=DEBEZIUM_TIME_NAME, where="length<=3", setting=TIME_MODE, value="adaptive"),
    TypeRow(("time",), "int64", _TEMPORAL, name=MICRO_TIME_NAME),
    TypeRow(("datetime",), "int64", _TEMPORAL, name=CONNECT_TIMESTAMP_NAME, setting=TIME_MODE, value="connect"),
    TypeRow(("datetime",), "int64", _TEMPORAL, name=DEBEZIUM_TIMESTAMP_NAME, where="length<=3"),
    TypeRow(("datetime",), "int64", _TEMPORAL, name=MICRO_TIMESTAMP_NAME),
    # --- spatial ----------------------------------------------------------------------------
    TypeRow(("point",), "struct:point", "mysql-spatial-types (MySqlValueConverters: Point)"),
    TypeRow(_GEOMETRY, "struct:geometry", "mysql-spatial-types"),
)
# fmt: on

#: The fractional-seconds precision of a temporal type declared without one.
MYSQL_DEFAULT_LENGTHS: Final = {"time": 0, "datetime": 0, "timestamp": 0}

MYSQL_MAPPING: Final = TypeMapping("mysql", MYSQL_ROWS, MYSQL_DEFAULT_LENGTHS)
