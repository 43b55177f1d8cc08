"""``contracts.render`` and the ``cdc-contracts render`` command through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from contracts.contract import Contract
from contracts.errors import ContractsError
from contracts.render import contract_part, load_schema_input, render_contract, render_schema
from contracts.schema import ConnectSchema

SEEDS = Path(__file__).parent.parent / "fixtures" / "seed_schemas"
FLINK = SEEDS / "flink-debezium-value.connect.json"
ROOT = Path(__file__).parent.parent.parent

CONTRACT_YAML = """\
name: shop.orders
format: no-such-format
table: {database: shop, name: orders}
key: [id]
columns:
  - {field: id, type: int64, optional: false}
  - {field: note, type: string, optional: true}
"""


@pytest.fixture()
def message_file(tmp_path: Path) -> Path:
    schema = json.loads(FLINK.read_text())
    path = tmp_path / "events.jsonl"
    lines = [json.dumps({"schema": schema, "payload": {"op": "c"}}) for _ in range(2)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_detects_embedded_schema_connect_json_and_avsc(tmp_path: Path, message_file: Path) -> None:
    from_message = load_schema_input(message_file)
    assert isinstance(from_message, ConnectSchema)
    assert from_message.name == "dbserver1.inventory.products.Envelope"
    assert load_schema_input(FLINK) == from_message
    avsc = tmp_path / "v.avsc"
    avsc.write_text(render_schema(from_message, "avro"))
    assert load_schema_input(avsc).to_json() == from_message.to_json()  # type: ignore[union-attr]
    bare_avro = tmp_path / "bare.json"
    bare_avro.write_text(avsc.read_text())
    assert load_schema_input(bare_avro).to_json() == from_message.to_json()  # type: ignore[union-attr]


def test_detects_contract_yaml(tmp_path: Path) -> None:
    path = tmp_path / "orders.yaml"
    path.write_text(CONTRACT_YAML.replace("no-such-format", "debezium-json"))
    contract = load_schema_input(path)
    assert isinstance(contract, Contract)
    row = json.loads(render_contract(contract, "connect", "row"))
    assert [f["field"] for f in row["fields"]] == ["id", "note"]
    assert contract_part(contract, "key").field_names() == ["id"]
    # a hand-written envelope contract without its source block: the value cannot be
    # derived, and the error names the file
    with pytest.raises(ContractsError, match=r"needs options\.source") as info:
        render_contract(contract, "avro", "value")
    assert info.value.one_line().startswith(f"{path}: options.source: ")


def test_a_contract_with_an_unknown_format_is_refused_on_load(tmp_path: Path) -> None:
    path = tmp_path / "orders.yaml"
    path.write_text(CONTRACT_YAML)
    with pytest.raises(ContractsError, match="unknown format 'no-such-format'") as info:
        load_schema_input(path)
    assert info.value.one_line().startswith(f"{path}:2: format: ")


@pytest.mark.parametrize(
    ("content", "what"),
    [
        ("just words", "neither JSON nor a contract YAML"),
        ('{"hello": "world"}', "not a Connect schema"),
        ('{"schema": null, "payload": {}}', "schemas.enable=false"),
        ('{"schema": {"type": "struct"}, "payload": {}}', "needs 'fields'"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path: Path, content: str, what: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(content)
    with pytest.raises(ContractsError) as info:
        load_schema_input(path)
    assert what in info.value.one_line()
    assert str(path) in info.value.one_line()


# --- the real command ------------------------------------------------------------------------------


def test_cli_renders_every_target(message_file: Path, tmp_path: Path) -> None:
    avro = run("render", str(message_file), "--to", "avro")
    assert avro.code == 0, avro.err
    assert json.loads(avro.text) == json.loads((SEEDS / "flink-debezium-value.avsc").read_text())
    spark = run("render", str(message_file), "--to", "spark-json")
    assert json.loads(spark.text) == json.loads(
        (SEEDS / "flink-debezium-value.spark.json").read_text()
    )
    ddl = run("render", str(FLINK), "-t", "spark-ddl")
    assert ddl.text == (SEEDS / "flink-debezium-value.ddl").read_text()
    out = tmp_path / "out" / "connect.json"
    written = run("render", str(message_file), "--to", "connect", "-o", str(out))
    assert written.code == 0 and written.text == ""
    assert json.loads(out.read_text()) == json.loads(FLINK.read_text())


def test_cli_contract_parts(tmp_path: Path) -> None:
    path = tmp_path / "orders.yaml"
    path.write_text(CONTRACT_YAML.replace("no-such-format", "debezium-json"))
    row = run("render", str(path), "--to", "spark-ddl", "--part", "row")
    assert row.code == 0, row.err
    assert row.text == "`id` BIGINT NOT NULL, `note` STRING\n"
    value = run("render", str(path), "--to", "avro")
    assert value.code == 2
    assert value.err.startswith("error: ") and len(value.err.strip().splitlines()) == 1


def test_cli_warns_on_stderr_for_capped_decimal(tmp_path: Path) -> None:
    schema = {
        "type": "struct",
        "fields": [
            {
                "type": "bytes",
                "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "2"},
                "field": "amount",
            }
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(schema))
    done = run("render", str(path), "--to", "spark-ddl")
    assert done.code == 0
    assert done.text == "`amount` DECIMAL(38,2) NOT NULL\n"
    assert "warning: decimal amount: precision unknown capped at 38" in done.err


@pytest.mark.parametrize(
    "content", ["not json at all", '{"schema": {"type": "struct", "fields": 3}, "payload": 1}']
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    done = run("render", str(path), "--to", "avro")
    assert done.code == 2
    assert done.text == ""
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}")
    assert "Traceback" not in done.err


def test_cli_part_on_a_schema_file_is_refused() -> None:
    done = run("render", str(FLINK), "--to", "avro", "--part", "key")
    assert done.code == 2
    assert "--part applies to contract files only" in done.err


def test_cli_missing_file_exits_2() -> None:
    done = run("render", "/nonexistent/schema.json", "--to", "avro")
    assert done.code == 2
    assert "no such file" in done.err
