"""``cdc-contracts derive`` end to end: files written, JSON for machines, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from contracts.contract import load_contract

DDL = """
CREATE TABLE shop.orders (
  id BIGINT NOT NULL PRIMARY KEY,
  amount DECIMAL(12, 2) NOT NULL DEFAULT 0.00,
  note VARCHAR(200)
);
CREATE TABLE shop.events (seq INT NOT NULL, payload JSON, UNIQUE KEY (seq));
"""


@pytest.fixture
def ddl(tmp_path: Path) -> Path:
    path = tmp_path / "schema.sql"
    path.write_text(DDL, encoding="utf-8")
    return path


def test_writes_one_contract_per_table(ddl: Path, tmp_path: Path) -> None:
    out = tmp_path / "contracts"
    done = run("derive", "--from-ddl", ddl, "--dialect", "mysql", "--server-name", "srv",
               "--connector-option", "decimal.handling.mode=string", "-o", out)  # fmt: skip
    assert done.code == 0, done.err
    assert "derived 2 contracts (debezium-json, Debezium 3.0) from 1 source" in done.err
    orders = load_contract(out / "srv.shop.orders.yaml")
    assert orders.key == ("id",)
    amount = orders.row_schema.require_field("amount")
    assert (amount.type, amount.optional, amount.default) == ("string", False, "0.00")
    events = load_contract(out / "srv.shop.events.yaml")
    assert events.key == ("seq",)  # MySQL promotes the NOT NULL unique key


def test_json_output_for_machines(ddl: Path) -> None:
    done = run("derive", "--from-ddl", ddl, "--dialect", "mysql", "--server-name", "srv",
               "--tables", "shop\\.orders", "--output-format", "json")  # fmt: skip
    assert done.code == 0, done.err
    doc = json.loads(done.out)
    assert [c["name"] for c in doc["contracts"]] == ["srv.shop.orders"]
    assert doc["sources"] == [str(Path(doc["sources"][0]))]


def test_canal_json_contract(ddl: Path) -> None:
    done = run("derive", "--from-ddl", ddl, "--dialect", "mysql", "-f", "canal-json")
    assert done.code == 0, done.err
    assert "mysql_types:" in done.out.decode() and "amount: 'DECIMAL(12,2)'" in done.out.decode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give exactly one of --from-ddl PATH and --from-db URL"),
        (["--server-name", "s"], "--from-ddl needs --dialect"),
        (["--dialect", "mysql"], "debezium-json needs the connector's topic prefix"),
        (["--dialect", "mysql", "--server-name", "s", "--connector-option", "decimal.handling.mode=exact"],
         "'exact' is not a value of decimal.handling.mode"),
        (["--dialect", "mysql", "--server-name", "s", "--connector-option", "database.hostname=x"],
         "'database.hostname' is not an option that changes"),
        (["--dialect", "mysql", "--server-name", "s", "--debezium-version", "2.3"],
         "no built-in envelope for Debezium 2.3"),
        (["--dialect", "mysql", "--server-name", "s", "--tables", "nope"], "no table matches 'nope'"),
        (["--dialect", "mysql", "-f", "avro"], "derive writes debezium-json, canal-json or maxwell-json"),
    ],
)  # fmt: skip
def test_unusable_settings_exit_2_with_one_line(ddl: Path, args: list[str], message: str) -> None:
    done = run("derive", *(["--from-ddl", str(ddl)] if args else []), *args)
    assert done.code == 2
    assert message in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err


def test_bad_ddl_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.sql"
    path.write_text("CREATE TABLE t (a INT);\nALTER TABLE t MODIFY b INT;\n", encoding="utf-8")
    done = run("derive", "--from-ddl", path, "--dialect", "mysql", "--database", "d",
               "--server-name", "s")  # fmt: skip
    assert done.code == 2
    assert f"{path}:2: column b: no such column in t" in done.err


def test_from_db_without_driver_or_server_is_a_clear_error() -> None:
    done = run("derive", "--from-db", "mysql://root@127.0.0.1:1/db", "--server-name", "s")
    assert done.code == 2
    assert "cannot connect" in done.err and "Traceback" not in done.err


def test_from_db_without_the_drivers_says_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the [db] extra were not installed
    done = run("derive", "--from-db", "postgresql://u@127.0.0.1:1/x", "--server-name", "s")
    assert done.code == 2
    assert "install cdc-contracts[db]" in done.err and done.err.count("\n") == 1
