"""How Debezium's PostgreSQL connector types a column: the mapping table.

Read it as a table: SQL type(s) | column condition | connector setting = value | versions |
Connect type, semantic name, parameters | source. The first row that holds wins. Sources are
the sections of Debezium's PostgreSQL connector documentation (``postgresql-basic-types``,
``postgresql-temporal-types``, ``postgresql-decimal-types``, ``postgresql-hstore-type``,
``postgresql-network-address-types``, ``postgresql-postgis-types``; debezium/debezium
``documentation/modules/ROOT/pages/connectors/postgresql.adoc``), and the expectations of
Debezium's ``AbstractRecordsProducerTest`` where the documentation leaves a detail out.

Array columns take the mapping of their element type, made optional, inside an optional
(or, for ``NOT NULL`` columns, required) Connect array (``schemasAndValuesForArrayTypes``).
"""

from __future__ import annotations

from typing import Final

from contracts.derive.typemap import TypeMapping, TypeRow
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
    INTERVAL_NAME,
    JSON_NAME,
    MICRO_DURATION_NAME,
    MICRO_TIME_NAME,
    MICRO_TIMESTAMP_NAME,
    UUID_NAME,
    XML_NAME,
    ZONED_TIME_NAME,
    ZONED_TIMESTAMP_NAME,
)

DECIMAL: Final = DECIMAL_NAME
DECIMAL_MODE: Final = "decimal.handling.mode"
TIME_MODE: Final = "time.precision.mode"
BINARY_MODE: Final = "binary.handling.mode"
INTERVAL_MODE: Final = "interval.handling.mode"
HSTORE_MODE: Final = "hstore.handling.mode"
MONEY_DIGITS: Final = "money.fraction.digits"

#: The settings a PostgreSQL mapping depends on, with Debezium's defaults and allowed values
#: (an empty tuple: any value of the right kind).
POSTGRES_SETTINGS: Final = {
    DECIMAL_MODE: ("precise", ("precise", "double", "string")),
    TIME_MODE: ("adaptive", ("adaptive", "adaptive_time_microseconds", "connect")),
    BINARY_MODE: ("bytes", ("bytes", "base64", "base64-url-safe", "hex")),
    INTERVAL_MODE: ("numeric", ("numeric", "string")),
    HSTORE_MODE: ("json", ("json", "map")),
    MONEY_DIGITS: ("2", ()),
}

_BASIC: Final = "postgresql-basic-types"
_TEMPORAL: Final = "postgresql-temporal-types"
_DECIMALS: Final = "postgresql-decimal-types"
_NETWORK: Final = "postgresql-network-address-types"
_TEXT: Final = ("character", "character varying", "text", "citext", "name")
_RANGES: Final = ("int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange")

# fmt: off
POSTGRES_ROWS: Final[tuple[TypeRow, ...]] = (
    TypeRow(("boolean",), "boolean", _BASIC),
    TypeRow(("bit",), "boolean", _BASIC, where="length=1"),
    TypeRow(("bit",), "bytes", _BASIC, name=BITS_NAME, params=(("length", "{length}"),), where="length>1"),
    TypeRow(("bit varying",), "bytes", _BASIC, name=BITS_NAME, params=(("length", "{length}"),), where="length"),
    TypeRow(("bit varying",), "bytes", _BASIC, name=BITS_NAME, params=(("length", "2147483647"),), where="no-length"),
    TypeRow(("smallint",), "int16", _BASIC),
    TypeRow(("integer",), "int32", _BASIC),
    TypeRow(("bigint", "oid"), "int64", _BASIC),
    TypeRow(("real",), "float", _BASIC),
    TypeRow(("double precision",), "double", _BASIC),
    # --- decimals and money -----------------------------------------------------------------
    TypeRow(("numeric",), "bytes", _DECIMALS, name=DECIMAL, params=(("scale", "{scale}"), ("connect.decimal.precision", "{length}")), where="length", setting=DECIMAL_MODE, value="precise"),
    TypeRow(("numeric",), "struct:variable_scale_decimal", _DECIMALS, where="no-length", setting=DECIMAL_MODE, value="precise"),
    TypeRow(("numeric",), "double", _DECIMALS, setting=DECIMAL_MODE, value="double"),
    TypeRow(("numeric",), "string", _DECIMALS, setting=DECIMAL_MODE, value="string"),
    TypeRow(("money",), "bytes", _DECIMALS, name=DECIMAL, params=(("scale", "{money.fraction.digits}"),), setting=DECIMAL_MODE, value="precise"),
    TypeRow(("money",), "double", _DECIMALS, setting=DECIMAL_MODE, value="double"),
    TypeRow(("money",), "string", _DECIMALS, setting=DECIMAL_MODE, value="string"),
    # --- strings, binaries, documents -------------------------------------------------------
    TypeRow(_TEXT, "string", _BASIC),
    TypeRow(("bytea",), "bytes", _BASIC, setting=BINARY_MODE, value="bytes"),
    TypeRow(("bytea",), "string", _BASIC, setting=BINARY_MODE, value="base64"),
    TypeRow(("bytea",), "string", _BASIC, setting=BINARY_MODE, value="base64-url-safe"),
    TypeRow(("bytea",), "string", _BASIC, setting=BINARY_MODE, value="hex"),
    TypeRow(("json", "jsonb"), "string", _BASIC, name=JSON_NAME),
    TypeRow(("xml",), "string", _BASIC, name=XML_NAME),
    TypeRow(("uuid",), "string", _BASIC, name=UUID_NAME),
    TypeRow(("ltree",), "string", _BASIC, name="io.debezium.data.Ltree"),
    TypeRow(("enum",), "string", _BASIC, name=ENUM_NAME, params=(("allowed", "{values}"),)),
    TypeRow(("inet", "cidr", "macaddr", "macaddr8"), "string", _NETWORK),
    TypeRow(_RANGES, "string", _BASIC),
    TypeRow(("hstore",), "string", "postgresql-hstore-type", name=JSON_NAME, setting=HSTORE_MODE, value="json"),
    TypeRow(("hstore",), "map:string_to_optional_string", "postgresql-hstore-type", setting=HSTORE_MODE, value="map"),
    # --- temporal ---------------------------------------------------------------------------
    TypeRow(("timestamptz",), "string", _BASIC, name=ZONED_TIMESTAMP_NAME),
    TypeRow(("timetz",), "string", _BASIC, name=ZONED_TIME_NAME),
    TypeRow(("interval",), "int64", _BASIC, name=MICRO_DURATION_NAME, setting=INTERVAL_MODE, value="numeric"),
    TypeRow(("interval",), "string", _BASIC, name=INTERVAL_NAME, setting=INTERVAL_MODE, value="string"),
    TypeRow(("date",), "int32", _TEMPORAL, name=CONNECT_DATE_NAME, setting=TIME_MODE, value="connect"),
    TypeRow(("date",), "int32", _TEMPORAL, name=DEBEZIUM_DATE_NAME),
    # Kafka's Time logical type is INT32 milliseconds (the documentation's table says INT64)
    TypeRow(("time",), "int32", _TEMPORAL, name=CONNECT_TIME_NAME, setting=TIME_MODE, value="connect"),
    TypeRow(("time",), "int32", _TEMPORAL, name=DEBEZIUM_TIME_NAME, where="length<=3", setting=TIME_MODE, value="adaptive"),
    TypeRow(("time",), "int64", _TEMPORAL, name=MICRO_TIME_NAME),
    TypeRow(("timestamp",), "int64", _TEMPORAL, name=CONNECT_TIMESTAMP_NAME, setting=TIME_MODE, value="connect"),
    TypeRow(("timestamp",), "int64", _TEMPORAL, name=DEBEZIUM_TIMESTAMP_NAME, where="length<=3"),
    TypeRow(("timestamp",), "int64", _TEMPORAL, name=MICRO_TIMESTAMP_NAME),
    # --- geometric --------------------------------------------------------------------------
    TypeRow(("point",), "struct:point", _BASIC),
    TypeRow(("geometry",), "struct:geometry", "postgresql-postgis-types"),
    TypeRow(("geography",), "struct:geography", "postgresql-postgis-types"),
)
# fmt: on

#: A temporal type declared without precision has microsecond precision (6).
POSTGRES_DEFAULT_LENGTHS: Final = {"time": 6, "timestamp": 6}

POSTGRES_MAPPING: Final = TypeMapping("postgresql", POSTGRES_ROWS, POSTGRES_DEFAULT_LENGTHS)
