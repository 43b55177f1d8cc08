"""Connect ⇄ Avro, each test naming the Confluent AvroData convention it checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from clirun import run
from hypothesis import HealthCheck, assume, given, settings

from contracts.errors import SchemaError
from contracts.schema import parse_connect
from contracts.translate.avro import avro_to_connect, connect_to_avro

from .strategies import top_struct

SEEDS = Path(__file__).parent.parent / "fixtures" / "seed_schemas"
SEED_FILES = sorted(SEEDS.glob("*.connect.json"))


def avro(raw: dict[str, Any]) -> Any:
    out = connect_to_avro(parse_connect(raw))
    fastavro.parse_schema(out)  # every output must parse
    return out


def row(*fields: dict[str, Any], name: str | None = "db.t.Value") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "struct", "fields": list(fields), "optional": False}
    if name:
        out["name"] = name
    return out


def only_field(out: dict[str, Any]) -> dict[str, Any]:
    field: dict[str, Any] = out["fields"][0]
    return field


# --- goldens ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name.split(".")[0])
def test_seed_schema_avro_golden(path: Path) -> None:
    schema = parse_connect(json.loads(path.read_text()))
    got = connect_to_avro(schema)
    golden = json.loads(path.with_name(path.name.replace(".connect.json", ".avsc")).read_text())
    assert got == golden
    fastavro.parse_schema(got)


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name.split(".")[0])
def test_seed_schema_round_trips_through_avro(path: Path) -> None:
    raw = json.loads(path.read_text())
    assert avro_to_connect(connect_to_avro(parse_connect(raw))).to_json() == raw


# --- Connect → Avro conventions ------------------------------------------------------------------


def test_avrodata_optional_field_is_null_first_union_with_null_default() -> None:
    f = only_field(avro(row({"type": "string", "optional": True, "field": "c"})))
    assert f == {"name": "c", "type": ["null", "string"], "default": None}


def test_avrodata_optional_field_with_default_puts_type_first() -> None:
    f = only_field(avro(row({"type": "int32", "optional": True, "default": 7, "field": "n"})))
    assert f == {
        "name": "n",
        "type": [{"type": "int", "connect.default": 7}, "null"],
        "default": 7,
    }


def test_avrodata_required_field_with_default_keeps_field_and_connect_default() -> None:
    f = only_field(avro(row({"type": "string", "default": "x", "field": "s"})))
    assert f == {"name": "s", "type": {"type": "string", "connect.default": "x"}, "default": "x"}


def test_avrodata_int8_int16_are_int_with_connect_type() -> None:
    out = avro(row({"type": "int8", "field": "a"}, {"type": "int16", "field": "b"}))
    assert [f["type"] for f in out["fields"]] == [
        {"type": "int", "connect.type": "int8"},
        {"type": "int", "connect.type": "int16"},
    ]


def test_avrodata_decimal_is_bytes_with_scale_precision_and_property_order() -> None:
    dec = {
        "type": "bytes",
        "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1,
        "parameters": {"scale": "2", "connect.decimal.precision": "10"},
        "field": "amount",
    }
    got = only_field(avro(row(dec)))["type"]
    assert got == {
        "type": "bytes",
        "scale": 2,
        "precision": 10,
        "connect.version": 1,
        "connect.parameters": {"scale": "2", "connect.decimal.precision": "10"},
        "connect.name": "org.apache.kafka.connect.data.Decimal",
        "logicalType": "decimal",
    }
    assert list(got) == list(got.keys())  # dict order is AvroData's property order
    assert list(got)[:3] == ["type", "scale", "precision"]


def test_avrodata_decimal_precision_defaults_to_64() -> None:
    dec = {
        "type": "bytes",
        "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": "3"},
        "field": "d",
    }
    got = only_field(avro(row(dec)))["type"]
    assert got["precision"] == 64 and got["scale"] == 3 and got["logicalType"] == "decimal"


@pytest.mark.parametrize(
    ("name", "type_", "avro_type", "logical"),
    [
        ("org.apache.kafka.connect.data.Date", "int32", "int", "date"),
        ("org.apache.kafka.connect.data.Time", "int32", "int", "time-millis"),
        ("org.apache.kafka.connect.data.Timestamp", "int64", "long", "timestamp-millis"),
    ],
)
def test_avrodata_connect_temporal_types_get_avro_logical_types(
    name: str, type_: str, avro_type: str, logical: str
) -> None:
    got = only_field(avro(row({"type": type_, "name": name, "version": 1, "field": "t"})))["type"]
    assert got == {
        "type": avro_type,
        "connect.version": 1,
        "connect.name": name,
        "logicalType": logical,
    }


@pytest.mark.parametrize(
    ("name", "type_", "avro_type"),
    [
        ("io.debezium.time.MicroTimestamp", "int64", "long"),
        ("io.debezium.time.Date", "int32", "int"),
        ("io.debezium.time.ZonedTimestamp", "string", "string"),
        ("io.debezium.data.Json", "string", "string"),
        ("com.xxx.cdc.data.Decimal", "string", "string"),
    ],
)
def test_avrodata_semantic_types_keep_base_type_and_connect_name(
    name: str, type_: str, avro_type: str
) -> None:
    got = only_field(avro(row({"type": type_, "name": name, "version": 1, "field": "t"})))["type"]
    assert got == {"type": avro_type, "connect.version": 1, "connect.name": name}
    assert "logicalType" not in got


def test_avrodata_connect_doc_version_parameters_default_name_order() -> None:
    raw = {
        "type": "string",
        "doc": "d",
        "version": 3,
        "parameters": {"k": "v"},
        "default": "z",
        "name": "x.Y",
        "field": "f",
    }
    got = only_field(avro(row(raw)))["type"]
    assert list(got) == [
        "type",
        "connect.doc",
        "connect.version",
        "connect.parameters",
        "connect.default",
        "connect.name",
    ]


def test_avrodata_string_keyed_map_is_avro_map() -> None:
    m = {
        "type": "map",
        "keys": {"type": "string", "optional": False},
        "values": {"type": "int64", "optional": True},
        "field": "m",
    }
    got = only_field(avro(row(m)))["type"]
    assert got == {"type": "map", "values": ["null", "long"]}


def test_avrodata_non_string_map_is_array_of_mapentry_records() -> None:
    m = {
        "type": "map",
        "keys": {"type": "int32", "optional": False},
        "values": {"type": "string", "optional": False},
        "field": "m",
    }
    got = only_field(avro(row(m)))["type"]
    assert got == {
        "type": "array",
        "items": {
            "type": "record",
            "name": "MapEntry",
            "namespace": "io.confluent.connect.avro",
            "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "string"}],
        },
    }


def test_avrodata_unnamed_structs_are_numbered_connectdefault() -> None:
    inner_a = {"type": "struct", "fields": [{"type": "int32", "field": "a"}], "field": "x"}
    inner_b = {"type": "struct", "fields": [{"type": "int64", "field": "b"}], "field": "y"}
    out = avro(row(inner_a, inner_b, name=None))
    assert (out["name"], out["namespace"]) == ("ConnectDefault", "io.confluent.connect.avro")
    # nested ones share the enclosing namespace, so AvroData's writer omits it
    assert [f["type"]["name"] for f in out["fields"]] == ["ConnectDefault2", "ConnectDefault3"]
    assert all("namespace" not in f["type"] for f in out["fields"])


def test_avrodata_equal_unnamed_structs_share_one_connectdefault() -> None:
    inner = {"type": "struct", "fields": [{"type": "int32", "field": "a"}]}
    out = avro(row({**inner, "field": "x"}, {**inner, "field": "y"}))
    assert out["fields"][0]["type"]["name"] == "ConnectDefault"
    assert out["fields"][1]["type"] == "io.confluent.connect.avro.ConnectDefault"


def test_avrodata_dotted_struct_name_splits_into_namespace_and_name() -> None:
    out = avro(row({"type": "int32", "field": "id"}, name="server1.inventory.products.Value"))
    assert out["name"] == "Value"
    assert out["namespace"] == "server1.inventory.products"
    assert out["connect.name"] == "server1.inventory.products.Value"


def test_avrodata_repeated_record_name_is_defined_once_then_referenced() -> None:
    raw = json.loads((SEEDS / "flink-debezium-value.connect.json").read_text())
    out = avro(raw)
    before, after = out["fields"][0], out["fields"][1]
    assert before["type"][1]["type"] == "record" and before["type"][1]["name"] == "Value"
    assert after == {
        "name": "after",
        "type": ["null", "dbserver1.inventory.products.Value"],
        "default": None,
    }


def test_avrodata_nested_name_without_namespace_writes_empty_namespace() -> None:
    inner = {"type": "struct", "name": "source", "fields": [{"type": "int32", "field": "a"}]}
    out = avro(row({**inner, "field": "s"}, name="a.b.Envelope"))
    assert out["fields"][0]["type"]["namespace"] == ""
    assert fastavro.parse_schema(out)["fields"][0]["type"]["name"] == "source"


def test_avrodata_optional_struct_with_default_drops_the_field_default() -> None:
    inner = {
        "type": "struct",
        "optional": True,
        "default": {"a": 1},
        "fields": [{"type": "int32", "field": "a"}],
        "field": "s",
    }
    f = only_field(avro(row(inner)))
    assert f["type"][0] == "null" and "default" not in f
    assert f["type"][1]["connect.default"] == {"a": 1}


def test_avrodata_bytes_default_is_latin1_text() -> None:
    f = only_field(avro(row({"type": "bytes", "default": "AP8=", "field": "b"})))
    assert f["default"] == "\x00\xff"


def test_same_name_different_fields_is_an_error_naming_both_places() -> None:
    a = {"type": "struct", "name": "x.S", "fields": [{"type": "int32", "field": "a"}]}
    b = {"type": "struct", "name": "x.S", "fields": [{"type": "string", "field": "a"}]}
    with pytest.raises(SchemaError, match="used by two different Connect schemas") as info:
        connect_to_avro(parse_connect(row({**a, "field": "p"}, {**b, "field": "q"})))
    assert info.value.where == "$.fields[1]"


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (row({"type": "int32", "field": "bad-name"}), "$.fields[0].field"),
        (row({"type": "int32", "field": "a"}, name="my-topic.Value"), "$.name"),
        (
            row({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "field": "d"}),
            "$.fields[0].parameters",
        ),
        (
            row({"type": "int64", "name": "org.apache.kafka.connect.data.Date", "field": "d"}),
            "$.fields[0].type",
        ),
    ],
)
def test_untranslatable_connect_schema_errors_name_the_path(raw: Any, where: str) -> None:
    with pytest.raises(SchemaError) as info:
        connect_to_avro(parse_connect(raw))
    assert info.value.where == where


# --- Avro → Connect ------------------------------------------------------------------------------


def test_avrodata_reverse_null_union_is_optional() -> None:
    got = avro_to_connect(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": ["null", "long"]}]}
    )
    assert got.to_json() == {
        "type": "struct",
        "fields": [{"type": "int64", "optional": True, "field": "a"}],
        "optional": False,
        "name": "R",
    }


def test_avrodata_reverse_enum_is_string_with_symbol_parameters() -> None:
    got = avro_to_connect(
        {"type": "enum", "name": "Colour", "namespace": "x", "symbols": ["R", "G"]}
    )
    assert got.to_json() == {
        "type": "string",
        "optional": False,
        "name": "x.Colour",
        "parameters": {
            "io.confluent.connect.avro.Enum": "x.Colour",
            "io.confluent.connect.avro.Enum.R": "R",
            "io.confluent.connect.avro.Enum.G": "G",
        },
    }


def test_avrodata_reverse_fixed_is_bytes_with_fixed_size() -> None:
    got = avro_to_connect({"type": "fixed", "name": "Md5", "size": 16})
    assert got.type == "bytes" and got.name == "Md5"
    assert got.params == {"connect.fixed.size": "16"}
    assert connect_to_avro(got) == {
        "type": "fixed",
        "name": "Md5",
        "size": 16,
        "connect.parameters": {"connect.fixed.size": "16"},
        "connect.name": "Md5",
    }


def test_avrodata_reverse_logical_types() -> None:
    rec = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "d", "type": {"type": "int", "logicalType": "date"}},
            {"name": "t", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "m", "type": {"type": "int", "logicalType": "time-millis"}},
            {"name": "u", "type": {"type": "long", "logicalType": "timestamp-micros"}},
            {
                "name": "n",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            },
        ],
    }
    fields = {f.field: f for f in avro_to_connect(rec).fields or ()}
    assert fields["d"].name == "org.apache.kafka.connect.data.Date"
    assert fields["t"].name == "org.apache.kafka.connect.data.Timestamp"
    assert fields["m"].name == "org.apache.kafka.connect.data.Time"
    assert fields["u"].name is None and fields["u"].type == "int64"
    assert fields["n"].params == {"scale": "2", "connect.decimal.precision": "9"}


def test_avrodata_reverse_mapentry_array_is_a_map() -> None:
    m = {
        "type": "map",
        "keys": {"type": "int64", "optional": False},
        "values": {"type": "string", "optional": True},
        "optional": False,
    }
    schema = parse_connect(m)
    assert avro_to_connect(connect_to_avro(schema)) == schema


def test_avrodata_reverse_connectdefault_names_are_dropped() -> None:
    out = avro_to_connect(
        {
            "type": "record",
            "name": "ConnectDefault",
            "namespace": "io.confluent.connect.avro",
            "fields": [{"name": "a", "type": "int"}],
        }
    )
    assert out.name is None


def test_avrodata_reverse_other_unions_are_union_structs() -> None:
    got = avro_to_connect(["null", "int", "string"])
    assert got.name == "io.confluent.connect.avro.Union" and got.optional
    assert [(f.field, f.type, f.optional) for f in got.fields or ()] == [
        ("int", "int32", True),
        ("string", "string", True),
    ]


def test_avrodata_reverse_plain_field_default_is_flagged() -> None:
    got = avro_to_connect(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": 3}]}
    )
    a = got.require_field("a")
    assert a.default == 3
    assert a.params == {"io.confluent.connect.avro.field.default": "true"}


@pytest.mark.parametrize(
    ("raw", "where", "what"),
    [
        (
            {"type": "record", "name": "R", "fields": [{"name": "a"}]},
            "$.fields[0]",
            "needs a 'type'",
        ),
        (
            {"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]},
            "$.fields[0].type",
            "unknown Avro type",
        ),
        (
            {"type": "record", "name": "R", "fields": [{"name": "a", "type": ["null", "R"]}]},
            "$.fields[0].type[1]",
            "recursive",
        ),
        ("null", "$", "standalone null"),
        ({"type": "enum", "name": "E"}, "$", "symbols"),
        ({"type": "record", "name": "9x", "fields": []}, "$.name", "not a valid Avro name"),
    ],
)
def test_malformed_avro_errors_name_the_path(raw: Any, where: str, what: str) -> None:
    with pytest.raises(SchemaError) as info:
        avro_to_connect(raw)
    assert info.value.where == where
    assert what in info.value.what


# --- properties ------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(top_struct())
def test_connect_to_avro_to_connect_round_trips(raw: dict[str, Any]) -> None:
    schema = parse_connect(raw)
    try:
        out = connect_to_avro(schema)
    except SchemaError as err:
        # two different unnamed non-string-key maps both become io.confluent.connect.avro.MapEntry
        assume("MapEntry" not in err.what)
        raise
    fastavro.parse_schema(out)
    assert avro_to_connect(out).to_json() == schema.to_json()
    assert avro_to_connect(json.dumps(out)).to_json() == schema.to_json()


# --- #26 defects and #23.4 (nothing non-JSON) ------------------------------------------------


def test_avrodata_fixed_decimal_keeps_scale_and_precision() -> None:
    got = avro(
        {
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "version": 1,
            "parameters": {
                "scale": "2",
                "connect.decimal.precision": "10",
                "connect.fixed.size": "5",
            },
        }
    )
    assert (got["type"], got["size"], got["scale"], got["precision"]) == ("fixed", 5, 2, 10)
    assert got["logicalType"] == "decimal"


def test_spark_written_fixed_decimal_reads_as_a_connect_decimal() -> None:
    """Spark's toAvroType names a decimal's fixed ``<record>.<field>.fixed``: AvroData ignores it."""
    spark_row = {
        "type": "record",
        "name": "topLevelRecord",
        "fields": [
            {
                "name": "amount",
                "type": [
                    {
                        "type": "fixed",
                        "name": "fixed",
                        "namespace": "topLevelRecord.amount",
                        "size": 5,
                        "logicalType": "decimal",
                        "precision": 10,
                        "scale": 2,
                    },
                    "null",
                ],
            }
        ],
    }
    amount = avro_to_connect(spark_row).require_field("amount")
    assert amount.name == "org.apache.kafka.connect.data.Decimal" and amount.optional
    assert amount.params == {
        "scale": "2",
        "connect.decimal.precision": "10",
        "connect.fixed.size": "5",
    }


def test_avrodata_one_branch_union_is_its_branch() -> None:
    got = avro_to_connect(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": ["long"]}]}
    )
    assert got.require_field("a").to_json() == {"type": "int64", "optional": False, "field": "a"}


def test_struct_default_members_take_their_own_defaults_both_ways() -> None:
    inner = {
        "type": "struct",
        "name": "db.Inner",
        "optional": False,
        "fields": [
            {"type": "string", "optional": False, "default": "", "field": "time"},
            {"type": "int32", "optional": False, "default": 0, "field": "cycle"},
        ],
        "default": {},
        "field": "settlement",
    }
    f = only_field(avro(row(inner)))
    assert f["default"] == {"time": "", "cycle": 0}


def test_a_default_avro_cannot_hold_is_left_out_with_a_warning() -> None:
    items = {"type": "string", "optional": True}
    field = {"type": "array", "items": items, "optional": False, "default": ["a"], "field": "xs"}
    with pytest.warns(UserWarning, match="written without it, as AvroData does"):
        f = only_field(avro(row(field)))
    assert "default" not in f and f["type"]["connect.default"] == ["a"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_defaults_are_refused_with_their_path(value: float) -> None:
    field = {"type": "double", "optional": False, "default": value, "field": "x"}
    with pytest.raises(SchemaError, match="not a JSON number") as info:
        connect_to_avro(parse_connect(row(field)))
    assert info.value.where == "$.fields[0].default"


@pytest.mark.parametrize("text", ['{"type": "double", "default": NaN}', "[1e400]"])
def test_avro_text_with_nan_or_overflow_is_refused(text: str) -> None:
    with pytest.raises(SchemaError, match=r"NaN|beyond the range of a double"):
        avro_to_connect(text)


def test_contract_with_a_nan_default_is_refused_at_its_line() -> None:
    from contracts.contract import parse_contract
    from contracts.errors import ContractFileError

    text = FIXTURE_CONTRACT.read_text()
    line = text.count("\n") + 1
    text += "  - {type: double, optional: false, default: .nan, field: ratio}\n"
    with pytest.raises(ContractFileError, match="default nan is not a JSON number") as info:
        parse_contract(text, "orders.yaml")
    assert info.value.where == f"orders.yaml:{line}"


def test_cli_refuses_a_nan_default_with_its_location(tmp_path: Path) -> None:
    """`render --to avro` of such a contract: exit 2, the file and line on stderr, nothing on stdout."""
    text = FIXTURE_CONTRACT.read_text()
    line = text.count("\n") + 1
    contract = tmp_path / "orders.yaml"
    contract.write_text(text + "  - {type: double, optional: false, default: .nan, field: ratio}\n")
    result = run("render", str(contract), "--to", "avro")
    assert result.code == 2 and result.text == ""
    assert f"orders.yaml:{line}" in result.err
    assert "default nan is not a JSON number" in result.err


FIXTURE_CONTRACT = Path(__file__).parent.parent / "fixtures" / "registry" / "orders.yaml"
