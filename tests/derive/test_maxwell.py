"""``derive --format maxwell-json``: the contract ``infer`` gives on Maxwell's messages.

Maxwell writes plain JSON values, so a column's type is what inference reads from them; the
derived contract must equal (column by column: type, logical name) the one inferred from real
Maxwell messages of the same table, with the DDL's key, and validate those messages.
"""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import pytest
from clirun import run

from contracts.contract import Contract, load_contract
from contracts.derive import DeriveRequest, contracts_for
from contracts.errors import InputError
from contracts.events import ChangeEvent
from contracts.formats import get_format
from contracts.formats.base import InferOptions, Message
from contracts.jsondoc import parse_document
from contracts.logical import DECIMAL_NAME, PRECISION_PARAM

from .helpers import shape, tables

MAXWELL = Path(__file__).resolve().parents[1] / "fixtures" / "maxwell-json"
REQUEST = DeriveRequest(format="maxwell-json", dialect="mysql")

#: The Debezium tutorial's products table (debezium/container-images
#: ``examples/mysql/inventory.sql``): the columns of Flink's Maxwell test data, ``test.product``.
TUTORIAL_PRODUCT = """
CREATE DATABASE test;
USE test;
CREATE TABLE product (
  id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(255) NOT NULL,
  description VARCHAR(512),
  weight FLOAT
);
"""


def _docs(path: Path) -> list[Any]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip().startswith("{")]


def _derive(sql: str, database: str | None = None) -> Contract:
    return contracts_for(tables(sql, "mysql", database), REQUEST).contracts[0]


def _assert_infer_agrees(contract: Contract, messages: list[Any]) -> None:
    fmt = get_format("maxwell-json")
    wrapped = [Message(value=m, where=f"message {i}") for i, m in enumerate(messages)]
    inferred = fmt.infer(wrapped, InferOptions()).contract
    assert inferred.table_id == contract.table_id
    assert [(f.field, shape(f)) for f in contract.row_schema.fields or ()] == [
        (f.field, shape(f)) for f in inferred.row_schema.fields or ()
    ]
    assert [v for m in wrapped for v in fmt.validate(m, contract)] == []


def test_docs_create_table_equals_its_insert() -> None:
    """Maxwell's own data-format docs: the CREATE TABLE it reports (``sql``) and an INSERT
    into that table; the key is the ``primary-key`` of the DDL message's ``def``."""
    docs = _docs(MAXWELL / "maxwell-docs-insert-ddl.jsonl")
    ddl = next(d for d in docs if d["type"] == "table-create")
    contract = _derive(ddl["sql"])
    assert contract.name == "test.e"
    assert list(contract.key) == ddl["def"]["primary-key"] == ["id"]
    rows = [d for d in docs if d["type"] == "insert"]
    assert rows
    _assert_infer_agrees(contract, rows)
    assert [c["name"] for c in ddl["def"]["columns"]] == contract.row_schema.field_names()


def test_tutorial_product_equals_flinks_maxwell_messages() -> None:
    """apache/flink maxwell-data.txt: inserts, updates with partial ``old``, deletes."""
    messages = _docs(MAXWELL / "flink-maxwell-data.txt")
    contract = _derive(TUTORIAL_PRODUCT)
    assert list(contract.key) == messages[0]["primary_key_columns"] == ["id"]
    assert {m["type"] for m in messages} == {"insert", "update", "delete"}
    _assert_infer_agrees(contract, messages)
    expected = load_contract(MAXWELL / "flink-maxwell-data.expected.yaml")
    assert [shape(f) for f in contract.row_schema.fields or ()] == [
        shape(f) for f in expected.row_schema.fields or ()
    ]


#: One column per MySQL type family, and a value Maxwell writes for it (the JSON kind its
#: column definition's ``asJSON`` returns, zendesk/maxwell src/main/java/com/zendesk/maxwell/
#: schema/columndef/), at the type's extreme where the range decides the inferred type.
TYPES = """
CREATE TABLE db.all_types (
  id SERIAL PRIMARY KEY,
  i8 TINYINT, u8 TINYINT UNSIGNED, flag BOOLEAN, i16 SMALLINT, i24 MEDIUMINT, i32 INT,
  u32 INT UNSIGNED, i64 BIGINT, yr YEAR, b1 BIT(1), b64 BIT(64),
  f FLOAT, d DOUBLE PRECISION, r REAL, amount DECIMAL(12,2), whole DECIMAL(30),
  c CHAR(3), v VARCHAR(20), t LONGTEXT, bin VARBINARY(8), bl BLOB,
  e ENUM('a','b'), s SET('x','y','z'), doc JSON,
  dt DATE, ts TIMESTAMP(3), dtm DATETIME(6), tm TIME, geo POINT
);
"""
VALUES: dict[str, Any] = {
    "id": 18446744073709551615,
    "i8": -128,
    "u8": 255,
    "flag": 1,
    "i16": -32768,
    "i24": 8388607,
    "i32": -2147483648,
    "u32": 4294967295,
    "i64": -9223372036854775808,
    "yr": 2155,
    "b1": 1,
    "b64": 18446744073709551615,
    "f": 1.5,
    "d": 2.25,
    "r": 0.125,
    "amount": 1234.56,
    "whole": 123456789012345678901234567890,
    "c": "abc",
    "v": "hello",
    "t": "long text",
    "bin": "AAEC",
    "bl": "3q2+7w==",
    "e": "b",
    "s": ["x", "z"],
    "doc": {"a": [1, 2]},
    "dt": "2026-11-27",
    "ts": "2026-11-27 03:10:00.123",
    "dtm": "2026-11-27 03:10:00.123456",
    "tm": "03:10:00",
    "geo": "POINT(1 2)",
}


def test_every_type_family_equals_inference_on_the_values_maxwell_writes() -> None:
    contract = _derive(TYPES)
    assert contract.row_schema.field_names() == list(VALUES)
    message = {
        "database": "db",
        "table": "all_types",
        "type": "insert",
        "ts": 1796000000,
        "data": VALUES,
        "primary_key_columns": ["id"],
    }
    _assert_infer_agrees(contract, [message])
    kinds = {f.field: shape(f)["type"] for f in contract.row_schema.fields or ()}
    assert {k for k, v in kinds.items() if v == "double"} == {"f", "d", "r", "amount"}
    # a value beyond int64 (BIGINT UNSIGNED, BIT(64), DECIMAL(30)) is an exact Decimal
    exact = {
        f.field: dict(f.parameters or {})
        for f in contract.row_schema.fields or ()
        if f.name == DECIMAL_NAME
    }
    assert exact == {
        "id": {"scale": "0", PRECISION_PARAM: "20"},
        "b64": {"scale": "0", PRECISION_PARAM: "20"},
        "whole": {"scale": "0", PRECISION_PARAM: "30"},
    }


UNSIGNED = """
CREATE TABLE db.counters (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY, hits BIGINT UNSIGNED, signed_hits BIGINT,
  wide DECIMAL(19,0) UNSIGNED
);
"""


def test_bigint_unsigned_max_is_kept_exactly() -> None:
    """18446744073709551615 as Maxwell writes it (a BigInteger, a JSON integer): the derived
    contract types it as infer does, a Decimal(20,0) that holds it, and normalize keeps every
    digit (a double would make it 18446744073709551616)."""
    contract = _derive(UNSIGNED)
    top = 2**64 - 1
    text = json.dumps(
        {
            "database": "db",
            "table": "counters",
            "type": "insert",
            "ts": 1796000000,
            "data": {"id": top, "hits": top, "signed_hits": -(2**63), "wide": 10**19 - 1},
            "primary_key_columns": ["id"],
        }
    )
    fmt = get_format("maxwell-json")
    message = Message(value=parse_document(text, "message 0"), where="message 0")
    _assert_infer_agrees(contract, [message.value])
    types = {f.field: shape(f) for f in contract.row_schema.fields or ()}
    assert types["signed_hits"] == {"type": "int64"}
    for name in ("id", "hits", "wide"):
        assert types[name]["name"] == DECIMAL_NAME
        assert types[name]["parameters"] == {"scale": "0", PRECISION_PARAM: "20"}
    (event,) = fmt.normalize(message, contract)
    assert isinstance(event, ChangeEvent) and event.after is not None
    assert event.after["id"] == event.after["hits"] == decimal.Decimal(top)
    assert str(event.after["hits"]) == "18446744073709551615"
    assert event.after["wide"] == decimal.Decimal("9999999999999999999")


def test_postgres_tables_are_refused() -> None:
    found = tables("CREATE TABLE t (id int PRIMARY KEY);", "postgres", None)
    with pytest.raises(InputError, match="Maxwell reads MySQL binlogs"):
        contracts_for(found, DeriveRequest(format="maxwell-json", dialect="postgres"))


def test_cli_writes_the_maxwell_contract(tmp_path: Path) -> None:
    ddl = tmp_path / "schema.sql"
    ddl.write_text(TUTORIAL_PRODUCT, encoding="utf-8")
    out = tmp_path / "contracts"
    done = run("derive", "--from-ddl", ddl, "--dialect", "mysql", "-f", "maxwell-json", "-o", out)
    assert done.code == 0, done.err
    written = load_contract(out / "test.product.yaml")
    assert written.format == "maxwell-json"
    assert written == _derive(TUTORIAL_PRODUCT)


def test_cli_refuses_debezium_settings(tmp_path: Path) -> None:
    ddl = tmp_path / "schema.sql"
    ddl.write_text(TUTORIAL_PRODUCT, encoding="utf-8")
    done = run("derive", "--from-ddl", ddl, "--dialect", "mysql", "-f", "maxwell-json",
               "--server-name", "srv")  # fmt: skip
    assert done.code == 2
    assert "maxwell-json takes none of them" in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err
