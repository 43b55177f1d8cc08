"""The Connect schema model: every seed schema round-trips; malformed schemas name their path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contracts.errors import SchemaError
from contracts.schema import MISSING, ConnectSchema, parse_connect, primitive, struct

SEEDS = Path(__file__).parent / "fixtures" / "seed_schemas"
SEED_FILES = sorted(SEEDS.glob("*.connect.json"))


def test_every_seed_schema_is_present() -> None:
    assert len(SEED_FILES) == 7


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name.split(".")[0])
def test_seed_schema_round_trips_exactly(path: Path) -> None:
    raw = json.loads(path.read_text())
    parsed = parse_connect(raw)
    assert parsed.to_json() == raw
    assert parse_connect(parsed.to_json()) == parsed


def test_debezium_enum_default_and_parameters_are_kept() -> None:
    raw = json.loads((SEEDS / "flink-debezium-value.connect.json").read_text())
    snapshot = parse_connect(raw).require_field("source").require_field("snapshot")
    assert snapshot.name == "io.debezium.data.Enum"
    assert snapshot.version == 1
    assert snapshot.params == {"allowed": "true,last,false"}
    assert snapshot.default == "false"
    assert snapshot.optional


def test_wild_spellings_are_canonical() -> None:
    assert parse_connect({"type": "float32"}).type == "float"
    assert parse_connect({"type": "float64"}).type == "double"
    assert parse_connect("int64").type == "int64"


def test_null_default_is_a_real_default() -> None:
    with_null = parse_connect({"type": "string", "optional": True, "default": None})
    assert with_null.has_default and with_null.default is None
    assert parse_connect({"type": "string"}).default is MISSING
    assert with_null.to_json()["default"] is None


def test_walk_and_field_helpers() -> None:
    s = struct(
        [
            primitive("int32", field="id"),
            ConnectSchema(type="array", items=primitive("string"), field="tags"),
        ],
        name="t.Row",
    )
    assert s.field_names() == ["id", "tags"]
    assert [p for p, _ in s.walk()] == ["", "id", "tags", "tags[]"]
    assert s.get_field("missing") is None
    with pytest.raises(SchemaError, match="no field 'missing'"):
        s.require_field("missing")


MALFORMED: list[tuple[Any, str, str]] = [
    ({"type": "struct"}, "$", "needs 'fields'"),
    ({"type": "struct", "fields": {}}, "$.fields", "must be an array"),
    ({"type": "struct", "fields": [{"type": "int32"}]}, "$.fields[0]", "needs a non-empty 'field'"),
    (
        {"type": "struct", "fields": [{"type": "int99", "field": "a"}]},
        "$.fields[0].type",
        "unknown Connect type 'int99'",
    ),
    (
        {
            "type": "struct",
            "fields": [{"type": "int32", "field": "a"}, {"type": "int32", "field": "a"}],
        },
        "$.fields[1].field",
        "duplicate field name",
    ),
    ({"type": "array"}, "$", "needs 'items'"),
    ({"type": "map", "values": {"type": "string"}}, "$", "needs 'keys'"),
    ({"type": "string", "optional": "yes"}, "$.optional", "true or false"),
    ({"type": "string", "parameters": {"a": 1}}, "$.parameters.a", "must be strings"),
    ({"type": "string", "version": "1"}, "$.version", "must be an integer"),
    ({"type": "string", "colour": "red"}, "$", "unknown schema attribute"),
    ([1, 2], "$", "expected a schema object"),
    (
        {"type": "struct", "fields": [{"type": "array", "items": {"type": 5}, "field": "x"}]},
        "$.fields[0].items.type",
        "must be a string",
    ),
]


@pytest.mark.parametrize(("raw", "where", "what"), MALFORMED)
def test_malformed_schema_error_names_json_path(raw: Any, where: str, what: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_connect(raw)
    assert info.value.where == where
    assert what in info.value.what
    assert "\n" not in info.value.one_line()
