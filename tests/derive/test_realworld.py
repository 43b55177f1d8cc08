"""Derived contracts against schemas real connectors wrote for the same tables.

For each table whose DDL and real messages are published, ``derive`` from the DDL must give
exactly the schema the messages embed (Debezium: the whole envelope, names included; Canal: the
``mysqlType`` of every column and the Connect type canal-json reads from it).

Committed fixtures run everywhere; the rest read the shared real-world corpus
(``../shared/realworld``, see its README for each file's repository, path and commit) and are
skipped, saying so, where it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contracts.derive import DeriveRequest, contracts_for, derive_from_ddl
from contracts.derive.debezium import debezium_settings
from contracts.derive.typemap import parse_version
from contracts.formats import get_format
from contracts.formats.base import InferOptions, Message
from contracts.schema import ConnectSchema, parse_connect

from .helpers import column, realworld, shape, tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: The Debezium tutorial's ``inventory.products`` table (debezium/container-images
#: ``examples/mysql/inventory.sql``); Flink's canal-json test data captures the same columns as
#: ``inventory.products2``.
TUTORIAL_PRODUCTS = """
CREATE DATABASE inventory;
USE inventory;
CREATE TABLE products (
  id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(255) NOT NULL,
  description VARCHAR(512),
  weight FLOAT
);
"""


def _json_docs(path: Path) -> list[Any]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("{"):
            out.append(json.loads(line))
    return out


def _embedded(path: Path) -> tuple[ConnectSchema, dict[str, Any]]:
    doc = next(d for d in _json_docs(path) if isinstance(d.get("schema"), dict))
    return parse_connect(doc["schema"]), doc["payload"]


def _derived_envelope(
    sql: str, dialect: str, table: str, server: str, version: str, **options: str
) -> ConnectSchema:
    found = [t for t in tables(sql, dialect, database=None) if t.name == table]
    request = DeriveRequest(
        format="debezium-json",
        dialect=dialect,  # type: ignore[arg-type]
        server_name=server,
        connector_options=options,
        debezium_version=parse_version(version),
    )
    contract = contracts_for(found, request).contracts[0]
    return get_format("debezium-json").derive(contract).value


def _assert_same(embedded: ConnectSchema, derived: ConnectSchema) -> None:
    """Column by column first (a readable failure), then the whole envelope."""
    after_e, after_d = embedded.require_field("after"), derived.require_field("after")
    assert after_d.field_names() == after_e.field_names()
    for want, got in zip(after_e.fields or (), after_d.fields or (), strict=True):
        assert got.to_json() == want.to_json(), want.field
    assert derived.field_names() == embedded.field_names()
    for want, got in zip(embedded.fields or (), derived.fields or (), strict=True):
        assert got.to_json() == want.to_json(), want.field
    assert derived == embedded


# --- committed fixtures -----------------------------------------------------------------------


def test_tutorial_products_equals_flinks_debezium_1_1_messages() -> None:
    """tests/fixtures/debezium-json/flink-debezium-data-schema-include.txt (apache/flink,
    real Debezium 1.1.1 MySQL output for inventory.products)."""
    embedded, payload = _embedded(
        FIXTURES / "debezium-json" / "flink-debezium-data-schema-include.txt"
    )
    assert payload["source"]["version"] == "1.1.1.Final"
    derived = _derived_envelope(TUTORIAL_PRODUCTS, "mysql", "products", "dbserver1", "1.1.1")
    _assert_same(embedded, derived)


def test_tutorial_products_equals_flinks_canal_messages() -> None:
    """tests/fixtures/canal-json/flink-products.jsonl (apache/flink canal-data.txt, real Canal
    output for inventory.products2, the tutorial's columns)."""
    sql = TUTORIAL_PRODUCTS.replace("TABLE products", "TABLE products2")
    request = DeriveRequest(format="canal-json", dialect="mysql")
    contract = contracts_for(tables(sql, "mysql", None), request).contracts[0]
    messages = [d for d in _json_docs(FIXTURES / "canal-json" / "flink-products.jsonl")]
    rows = [m for m in messages if not m["isDdl"] and m["table"] == "products2"]
    assert rows
    for message in rows:
        assert contract.options["mysql_types"] == message["mysqlType"]
    assert contract.key == tuple(rows[0]["pkNames"])
    _assert_canal_types_match_inference(contract, rows)


def _assert_canal_types_match_inference(contract: Any, messages: list[Any]) -> None:
    inferred = get_format("canal-json").infer(
        [Message(value=m, where=f"message {i}") for i, m in enumerate(messages)], InferOptions()
    )
    for got, want in zip(
        contract.row_schema.fields, inferred.contract.row_schema.fields, strict=True
    ):
        assert (got.field, shape(got)) == (want.field, shape(want))
    violations = [
        v
        for i, m in enumerate(messages)
        for v in get_format("canal-json").validate(Message(value=m, where=f"m{i}"), contract)
    ]
    assert violations == []


# --- the shared real-world corpus -------------------------------------------------------------


def test_paimon_all_types_equals_debezium_1_9_7_message() -> None:
    """Paimon's MySQL all-types table (78 columns) as Flink CDC's Debezium 1.9.7 wrote it
    (bigint.unsigned.handling.mode=precise, as Flink CDC configures it)."""
    ddl = realworld("ddl", "paimon-mysql-all-types", "schema.sql").read_text(encoding="utf-8")
    embedded, payload = _embedded(realworld("real_world", "paimon", "debezium-alltype-data-1.txt"))
    assert payload["source"]["version"] == "1.9.7.Final"
    derived = _derived_envelope(
        ddl, "mysql", "all_types_table", "mysql_binlog_source", "1.9.7",
        **{"bigint.unsigned.handling.mode": "precise"},
    )  # fmt: skip
    _assert_same(embedded, derived)


def test_tutorial_customers_equals_debezium_1_9_5_message() -> None:
    ddl = realworld("ddl", "debezium-tutorial-mysql-customers", "schema.sql").read_text()
    embedded, payload = _embedded(realworld("real_world", "risingwave", "debezium_log.1"))
    assert payload["source"]["version"] == "1.9.5.Final"
    _assert_same(embedded, _derived_envelope(ddl, "mysql", "customers", "dbserver1", "1.9.5"))


def test_tutorial_postgres_products_equals_debezium_1_2_1_message() -> None:
    ddl = realworld("ddl", "debezium-tutorial-postgres-products", "schema.sql").read_text()
    embedded, payload = _embedded(
        realworld("real_world", "flink", "debezium-postgres-data-schema-include.txt")
    )
    assert payload["source"]["version"] == "1.2.1.Final"
    derived = _derived_envelope(ddl, "postgres", "products", "fullfillment", "1.2.1")
    _assert_same(embedded, derived)


def test_paimon_all_types_equals_canal_message() -> None:
    """Every column's mysqlType, and the Connect type canal-json reads from it."""
    path = realworld("ddl", "paimon-mysql-all-types-canal", "schema.sql")
    contract = derive_from_ddl(path, DeriveRequest(format="canal-json", dialect="mysql")).contracts[
        0
    ]
    messages = _json_docs(realworld("real_world", "paimon", "canal-alltype-data.txt"))
    assert messages
    for message in messages:
        assert contract.options["mysql_types"] == message["mysqlType"]
    inferred = get_format("canal-json").infer(
        [Message(value=m, where=f"message {i}") for i, m in enumerate(messages)], InferOptions()
    )
    for got, want in zip(
        contract.row_schema.fields, inferred.contract.row_schema.fields, strict=True
    ):
        assert (got.field, shape(got)) == (want.field, shape(want))


# --- Debezium's own connector tests (expectations stated in their test sources) ---------------


def test_mysql_float_it_expectations() -> None:
    """debezium-connector-mysql MySqlFloatIT (DBZ-3865): f1 FLOAT and FLOAT(23/24) and FLOAT
    UNSIGNED are FLOAT32; FLOAT(10,2), FLOAT(35,5) and FLOAT(25) are FLOAT64."""
    ddl = realworld("ddl", "debezium-test-mysql-float", "schema.sql").read_text()
    table = tables(ddl, "mysql")[0]
    settings = debezium_settings("mysql", "srv", {}, (2, 0))
    types = {c.field: c.type for c in _columns(table, settings)}
    assert types == {
        "id": "int32", "f1": "float", "f2": "double", "f3": "double", "f4_23": "float",
        "f4_24": "float", "f4_25": "double", "weight": "float",
    }  # fmt: skip


def _columns(table: Any, settings: Any) -> list[ConnectSchema]:
    from contracts.derive.debezium import column_schema

    return [column_schema(table, c, settings) for c in table.columns]


POSTGRES_EXPECTATIONS: dict[str, dict[str, dict[str, Any]]] = {
    # debezium-connector-postgres AbstractRecordsProducerTest @a1ae7404
    "debezium-test-postgres-numeric-decimal": {
        "d": {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
              "parameters": {"scale": "2", "connect.decimal.precision": "3"}},
        "dzs": {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "0", "connect.decimal.precision": "4"}},
        "dvs": {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal"},
        "n": {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
              "parameters": {"scale": "4", "connect.decimal.precision": "6"}},
    },
    "debezium-test-postgres-string": {
        "vc": {"type": "string"}, "ch": {"type": "string"}, "t": {"type": "string"},
        "b": {"type": "bytes"}, "ct": {"type": "string"},
    },
    "debezium-test-postgres-time": {
        "ts": {"type": "int64", "name": "io.debezium.time.MicroTimestamp"},
        "ts_ms": {"type": "int64", "name": "io.debezium.time.Timestamp"},
        "tz": {"type": "string", "name": "io.debezium.time.ZonedTimestamp"},
        "date": {"type": "int32", "name": "io.debezium.time.Date"},
        "ti": {"type": "int64", "name": "io.debezium.time.MicroTime"},
        "tip": {"type": "int32", "name": "io.debezium.time.Time"},
        "ttz": {"type": "string", "name": "io.debezium.time.ZonedTime"},
        "it": {"type": "int64", "name": "io.debezium.time.MicroDuration"},
    },
    "debezium-test-postgres-bitbin": {
        "ba": {"type": "bytes"}, "bol": {"type": "boolean"}, "bol2": {"type": "boolean"},
        "bs": {"type": "bytes", "name": "io.debezium.data.Bits", "parameters": {"length": "2"}},
        "bv2": {"type": "bytes", "name": "io.debezium.data.Bits", "parameters": {"length": "24"}},
        "bvunlimited1": {"type": "bytes", "name": "io.debezium.data.Bits",
                         "parameters": {"length": "2147483647"}},
    },
    "debezium-test-postgres-cash": {
        "csh": {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "2"}},
    },
    "debezium-test-postgres-text": {
        "j": {"type": "string", "name": "io.debezium.data.Json"},
        "jb": {"type": "string", "name": "io.debezium.data.Json"},
        "x": {"type": "string", "name": "io.debezium.data.Xml"},
        "u": {"type": "string", "name": "io.debezium.data.Uuid"},
    },
    "debezium-test-postgres-array": {
        "int_array": {"type": "array", "items": {"type": "int32"}},
        "date_array": {"type": "array", "items": {"type": "int32", "name": "io.debezium.time.Date"}},
        "numeric_array": {"type": "array", "items": {
            "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": "2", "connect.decimal.precision": "10"}}},
        "varnumeric_array": {"type": "array", "items": {
            "type": "struct", "name": "io.debezium.data.VariableScaleDecimal"}},
        "uuid_array": {"type": "array", "items": {"type": "string", "name": "io.debezium.data.Uuid"}},
        "jsonb_array": {"type": "array", "items": {"type": "string", "name": "io.debezium.data.Json"}},
        "oid_array": {"type": "array", "items": {"type": "int64"}},
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(POSTGRES_EXPECTATIONS))
def test_postgres_connector_test_expectations(name: str) -> None:
    ddl = realworld("ddl", name, "schema.sql").read_text()
    table = tables(ddl, "postgres")[0]
    settings = debezium_settings("postgres", "srv", {}, (3, 0))
    got = {c.field: c for c in _columns(table, settings)}
    for col, expected in POSTGRES_EXPECTATIONS[name].items():
        assert shape(got[col]) == expected, col
        assert got[col].optional


def test_postgres_serial_columns_default_to_zero() -> None:
    """AbstractRecordsProducerTest: smallserial/bigserial are required with default 0."""
    ss = column("SMALLSERIAL", "postgres")
    assert (ss.type, ss.optional, ss.default) == ("int16", False, 0)
    assert column("BIGSERIAL", "postgres").default == 0
    assert not column("SERIAL", "postgres", version="1.2").has_default


@pytest.mark.parametrize(
    "name",
    ["flink-cdc-mysql-full-types", "flink-cdc-postgres-full-types", "paimon-mysql-all-types"],
)
def test_full_types_tables_derive_every_column(name: str) -> None:
    dialect = "postgres" if "postgres" in name else "mysql"
    path = realworld("ddl", name, "schema.sql")
    result = derive_from_ddl(
        path,
        DeriveRequest("debezium-json", dialect, "srv", database="db"),  # type: ignore[arg-type]
    )
    (contract,) = result.contracts
    assert len(contract.columns) == len(result.tables[0].columns) > 20


def test_envelope_from_a_message_copies_an_unbuilt_versions_envelope(tmp_path: Path) -> None:
    """A version without a built-in envelope (1.5 here) is refused; with --envelope-from a
    message of the connector, the envelope is copied exactly (the Flink 1.1.1 products
    message serves for the customers table of the same connector)."""
    from contracts.derive.envelopes import profile_from_message
    from contracts.errors import InputError

    sql = TUTORIAL_PRODUCTS + "CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(255));"
    found = tables(sql, "mysql", None)
    request = DeriveRequest("debezium-json", "mysql", "dbserver1", {}, parse_version("1.5"))
    with pytest.raises(InputError, match=r"no built-in envelope for Debezium 1\.5"):
        contracts_for(found, request)
    message = FIXTURES / "debezium-json" / "flink-debezium-data-schema-include.txt"
    copied = DeriveRequest(
        "debezium-json", "mysql", "dbserver1", {}, parse_version("1.5"), envelope_from=message
    )
    contracts = {c.name: c for c in contracts_for(found, copied).contracts}
    embedded, _ = _embedded(message)
    derived = get_format("debezium-json").derive(contracts["dbserver1.inventory.products"]).value
    assert derived == embedded
    customers = get_format("debezium-json").derive(contracts["dbserver1.inventory.customers"])
    assert customers.value.require_field("source") == embedded.require_field("source")
    assert profile_from_message(message).layout == tuple(embedded.field_names())


@pytest.mark.parametrize(
    ("sql", "options", "expected"),
    [
        # AbstractRecordsProducerTest.schemasAndValuesForStringTypesWithSourceColumnTypeInfo
        ("VARCHAR(2)", {"column.propagate.source.type": r"public\.t\.c"},
         {"__debezium.source.column.type": "VARCHAR", "__debezium.source.column.length": "2",
          "__debezium.source.column.scale": "0", "__debezium.source.column.name": "c"}),
        # ...NumericTypesWithSourceColumnTypeInfo (decimal.handling.mode=double)
        ("DECIMAL(3,2)", {"datatype.propagate.source.type": ".+\\.NUMERIC",
                          "decimal.handling.mode": "double"},
         {"__debezium.source.column.type": "NUMERIC", "__debezium.source.column.length": "3",
          "__debezium.source.column.scale": "2", "__debezium.source.column.name": "c"}),
        ("NUMERIC(4)", {"datatype.propagate.source.type": "NUMERIC", "decimal.handling.mode": "double"},
         {"__debezium.source.column.type": "NUMERIC", "__debezium.source.column.length": "4",
          "__debezium.source.column.scale": "0", "__debezium.source.column.name": "c"}),
        ("TEXT", {"datatype.propagate.source.type": "VARCHAR"}, None),
    ],
)  # fmt: skip
def test_source_type_parameters_only_when_propagated(
    sql: str, options: dict[str, str], expected: dict[str, str] | None
) -> None:
    got = column(sql, "postgres", options)
    assert (dict(got.parameters) if got.parameters else None) == expected
