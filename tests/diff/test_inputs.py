"""Side detection: contracts, Avro, Connect schemas and messages, from files and objects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contracts.contract import CompatibilityLevel, load_contract
from contracts.diff import diff_avro, diff_contracts, diff_schemas, diff_sides
from contracts.diff.inputs import load_side, load_side_obj
from contracts.errors import InputError, SchemaError
from contracts.render import contract_avro
from contracts.schema import parse_connect

FIX = Path(__file__).parent.parent / "fixtures" / "diff"
CONTRACT = FIX / "column-added" / "before.yaml"
KCAT = FIX / "_inputs" / "orders.kcat.jsonl"


def test_kinds_are_detected_from_files(tmp_path: Path) -> None:
    contract = load_contract(CONTRACT)
    assert load_side(CONTRACT).kind == "contract"
    assert load_side(FIX / "avro-type-mismatch" / "before.avsc").kind == "avro"
    avro_json = tmp_path / "value.json"
    avro_json.write_text(json.dumps(contract_avro(contract, "value")))
    assert load_side(avro_json).kind == "avro"
    connect_json = tmp_path / "connect.json"
    connect_json.write_text(json.dumps(contract.row_schema.to_json()))
    assert load_side(connect_json).kind == "connect"
    contract_json = tmp_path / "contract.json"
    contract_json.write_text(json.dumps(contract.to_dict()))
    assert load_side(contract_json).kind == "contract"
    message = load_side(KCAT)
    assert message.kind == "message" and message.key_connect is not None


def test_sides_of_different_kinds_compare(tmp_path: Path) -> None:
    contract = load_contract(CONTRACT)
    avsc = tmp_path / "value.avsc"
    avsc.write_text(json.dumps(contract_avro(contract, "value")))
    result = diff_sides(load_side(avsc), load_side(CONTRACT))
    assert result.compatible and result.findings == []
    # the embedded schema of a real message lacks the contract's `note` column
    result = diff_sides(load_side(KCAT), load_side(CONTRACT))
    assert [(f.rule, f.path) for f in result.findings] == [("column-added", "value.after.note")]


def test_load_side_obj_accepts_parsed_json() -> None:
    contract = load_contract(CONTRACT)
    loaded = load_side_obj(contract.to_dict()).contract
    assert loaded is not None and loaded.to_dict() == contract.to_dict()
    assert load_side_obj({"type": "record", "name": "R", "fields": []}).kind == "avro"
    assert load_side_obj(["null", "string"]).kind == "avro"
    assert load_side_obj({"type": "struct", "fields": [], "optional": False}).kind == "connect"
    first = json.loads(KCAT.read_text().splitlines()[0])
    assert load_side_obj(json.loads(first["payload"])).kind == "message"


def test_unusable_inputs_raise_located_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot tell"):
        load_side_obj({"hello": "world"}, "body.old")
    with pytest.raises(InputError, match="no embedded schema"):
        load_side_obj({"schema": None, "payload": {}}, "body.old")
    with pytest.raises(SchemaError) as err:
        load_side_obj({"type": "record", "name": "R", "fields": [{"name": "a"}]}, "body.new")
    assert err.value.where == "body.new"
    empty = tmp_path / "empty.json"
    empty.write_text("\n")
    with pytest.raises(InputError, match="no JSON document"):
        load_side(empty)


def test_diff_functions_for_each_kind() -> None:
    contract = load_contract(CONTRACT)
    newer = load_contract(FIX / "decimal-scale-changed" / "after.yaml")
    assert [f.rule for f in diff_contracts(contract, newer).findings] == ["decimal-scale-changed"]
    old_row = contract.row_schema
    new_row = newer.row_schema
    result = diff_schemas(old_row, new_row, CompatibilityLevel.FULL)
    assert [(f.rule, f.path) for f in result.findings] == [
        ("decimal-scale-changed", "value.amount")
    ]
    result = diff_avro(contract_avro(contract, "value"), contract_avro(newer, "value"))
    assert [(f.rule, f.path) for f in result.findings] == [
        ("decimal-scale-changed", "value.after.amount")
    ]
    nested_old = parse_connect(
        {
            "type": "struct",
            "fields": [
                {
                    "field": "a",
                    "type": "struct",
                    "optional": True,
                    "fields": [{"field": "b", "type": "int32", "optional": True}],
                }
            ],
        }
    )
    nested_new = parse_connect(
        {
            "type": "struct",
            "fields": [
                {
                    "field": "a",
                    "type": "struct",
                    "optional": True,
                    "fields": [{"field": "b", "type": "int32", "optional": False}],
                }
            ],
        }
    )
    found = diff_schemas(nested_old, nested_new).findings
    assert [(f.rule, f.path, f.column) for f in found if f.rule.startswith("column")] == [
        ("column-became-required", "value.a.b", "a")
    ]


def test_transitive_levels_use_every_earlier_version() -> None:
    v1 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    v2 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]}
    v3 = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string", "default": ""}],
    }
    sides = [load_side_obj(v, f"v{i}") for i, v in enumerate((v1, v2), 1)]
    new = load_side_obj(v3, "v3")
    assert diff_sides(sides[-1], new, "FORWARD", history=sides).compatible
    result = diff_sides(sides[-1], new, "FORWARD_TRANSITIVE", history=sides)
    assert not result.compatible  # v1 (int) cannot read v3's long
    assert any("version 1 cannot read" in f.message for f in result.findings)
