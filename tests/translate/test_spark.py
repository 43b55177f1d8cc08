"""Connect → Spark (decoded / wire), Avro → Spark (spark-avro SchemaConverters), Spark → Connect, DDL."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.errors import SchemaError
from contracts.logical import LogicalTypeWarning
from contracts.schema import parse_connect
from contracts.translate.ddl import spark_ddl
from contracts.translate.spark import avro_to_spark, connect_to_spark, spark_to_connect

from .strategies import FIELD_NAMES, decimals

SEEDS = Path(__file__).parent.parent / "fixtures" / "seed_schemas"
SEED_FILES = sorted(SEEDS.glob("*.connect.json"))


def field_type(spark: dict[str, Any], name: str) -> Any:
    for f in spark["fields"]:
        if f["name"] == name:
            return f["type"]
    raise AssertionError(name)


def sfield(name: str, type_: Any, nullable: bool) -> dict[str, Any]:
    return {"name": name, "type": type_, "nullable": nullable, "metadata": {}}


def one(type_: dict[str, Any], view: str = "decoded") -> Any:
    raw = {"type": "struct", "fields": [{**type_, "field": "c"}], "optional": False}
    return connect_to_spark(parse_connect(raw), view)["fields"][0]  # type: ignore[arg-type]


# --- goldens ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name.split(".")[0])
def test_seed_schema_spark_goldens(path: Path) -> None:
    schema = parse_connect(json.loads(path.read_text()))
    stem = path.name.replace(".connect.json", "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LogicalTypeWarning)
        decoded = connect_to_spark(schema)
        wire = connect_to_spark(schema, "wire")
    assert decoded == json.loads((SEEDS / f"{stem}.spark.json").read_text())
    assert wire == json.loads((SEEDS / f"{stem}.spark-wire.json").read_text())
    assert spark_ddl(decoded) + "\n" == (SEEDS / f"{stem}.ddl").read_text()


# --- Connect → Spark --------------------------------------------------------------------------------

DECODED_VS_WIRE = [
    ({"type": "int8"}, "byte", "byte"),
    ({"type": "int16"}, "short", "short"),
    ({"type": "bytes"}, "binary", "string"),
    ({"type": "int32", "name": "org.apache.kafka.connect.data.Date"}, "date", "integer"),
    ({"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"}, "timestamp", "long"),
    ({"type": "int64", "name": "io.debezium.time.MicroTimestamp"}, "timestamp", "long"),
    ({"type": "int64", "name": "io.debezium.time.NanoTimestamp"}, "timestamp", "long"),
    ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "timestamp", "string"),
    ({"type": "int32", "name": "io.debezium.time.Date"}, "date", "integer"),
    ({"type": "string", "name": "io.debezium.data.Json"}, "string", "string"),
    (
        {
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": "2", "connect.decimal.precision": "12"},
        },
        "decimal(12,2)",
        "string",
    ),
]


@pytest.mark.parametrize(("connect", "decoded", "wire"), DECODED_VS_WIRE)
def test_connect_to_spark_decoded_and_wire_views(
    connect: dict[str, Any], decoded: str, wire: str
) -> None:
    assert one(connect)["type"] == decoded
    assert one(connect, "wire")["type"] == wire


def test_decimal_without_precision_is_capped_with_a_warning() -> None:
    dec = {
        "type": "bytes",
        "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": "4"},
    }
    with pytest.warns(LogicalTypeWarning, match="precision unknown capped at 38"):
        assert one(dec)["type"] == "decimal(38,4)"
    wide = {**dec, "parameters": {"scale": "4", "connect.decimal.precision": "50"}}
    with pytest.warns(LogicalTypeWarning, match="precision 50 capped"):
        assert one(wide)["type"] == "decimal(38,4)"


def test_nullability_follows_optional_for_fields_elements_and_values() -> None:
    arr = {"type": "array", "items": {"type": "string", "optional": True}, "optional": False}
    assert one(arr) == sfield(
        "c", {"type": "array", "elementType": "string", "containsNull": True}, False
    )
    m = {
        "type": "map",
        "keys": {"type": "int32"},
        "values": {"type": "string", "optional": False},
        "optional": True,
    }
    assert one(m) == sfield(
        "c",
        {"type": "map", "keyType": "integer", "valueType": "string", "valueContainsNull": False},
        True,
    )


def test_wire_map_with_non_string_keys_is_array_of_pairs() -> None:
    m = {"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}
    elem = {"type": "array", "elementType": "string", "containsNull": True}
    assert one(m, "wire")["type"] == {"type": "array", "elementType": elem, "containsNull": False}


def test_variable_scale_decimal_decoded_is_string_wire_is_struct() -> None:
    vsd = {
        "type": "struct",
        "name": "io.debezium.data.VariableScaleDecimal",
        "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}],
    }
    assert one(vsd)["type"] == "string"
    assert one(vsd, "wire")["type"]["fields"][1]["type"] == "string"


def test_unknown_logical_name_falls_back_to_base_type_with_warning() -> None:
    with pytest.warns(LogicalTypeWarning, match="unknown logical type"):
        assert one({"type": "int64", "name": "com.acme.Ticks"})["type"] == "long"


# --- Avro → Spark (SchemaConverters) -------------------------------------------------------------------


def rec(*fields: tuple[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": "R", "fields": [{"name": n, "type": t} for n, t in fields]}


def sql(avro_type: Any) -> Any:
    return avro_to_spark(rec(("c", avro_type)))["fields"][0]


def test_schemaconverters_union_with_null_is_nullable() -> None:
    assert sql(["null", "string"]) == sfield("c", "string", True)
    assert sql(["string", "null"]) == sfield("c", "string", True)
    assert sql("string") == sfield("c", "string", False)


def test_schemaconverters_int_long_union_is_long_and_float_double_is_double() -> None:
    assert sql(["int", "long"]) == sfield("c", "long", False)
    assert sql(["double", "float"]) == sfield("c", "double", False)
    assert sql(["null", "int", "long"]) == sfield("c", "long", True)


def test_schemaconverters_other_unions_are_member_structs() -> None:
    got = sql(["null", "int", "string", {"type": "array", "items": "long"}])
    assert got["nullable"] is True
    assert got["type"] == {
        "type": "struct",
        "fields": [
            sfield("member0", "integer", True),
            sfield("member1", "string", True),
            sfield(
                "member2", {"type": "array", "elementType": "long", "containsNull": False}, True
            ),
        ],
    }


def test_schemaconverters_enum_is_string_fixed_and_bytes_are_binary() -> None:
    assert sql({"type": "enum", "name": "E", "symbols": ["A"]})["type"] == "string"
    assert sql({"type": "fixed", "name": "F", "size": 4})["type"] == "binary"
    assert sql("bytes")["type"] == "binary"


def test_schemaconverters_decimal_on_bytes_and_fixed() -> None:
    assert (
        sql({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2})["type"]
        == "decimal(10,2)"
    )
    fixed = {
        "type": "fixed",
        "name": "D",
        "size": 8,
        "logicalType": "decimal",
        "precision": 18,
        "scale": 0,
    }
    assert sql(fixed)["type"] == "decimal(18,0)"
    # 4 bytes hold at most 9 digits: Avro Java drops the logical type, Spark sees binary
    too_small = {"type": "fixed", "name": "S", "size": 4, "logicalType": "decimal", "precision": 12}
    assert sql(too_small)["type"] == "binary"


def test_schemaconverters_decimal_wider_than_38_is_an_error() -> None:
    with pytest.raises(SchemaError, match="exceeds Spark's maximum of 38") as info:
        sql({"type": "bytes", "logicalType": "decimal", "precision": 64, "scale": 2})
    assert info.value.where == "$.fields[0].type"


@pytest.mark.parametrize(
    ("avro_type", "spark"),
    [
        ({"type": "int", "logicalType": "date"}, "date"),
        ({"type": "long", "logicalType": "timestamp-millis"}, "timestamp"),
        ({"type": "long", "logicalType": "timestamp-micros"}, "timestamp"),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, "timestamp_ntz"),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, "timestamp_ntz"),
        ({"type": "int", "logicalType": "time-millis"}, "integer"),
        ({"type": "long", "logicalType": "date"}, "long"),  # invalid on long: ignored
        ({"type": "string", "logicalType": "uuid"}, "string"),
    ],
)
def test_schemaconverters_logical_types(avro_type: Any, spark: str) -> None:
    assert sql(avro_type)["type"] == spark


def test_schemaconverters_map_has_string_keys_and_value_nullability() -> None:
    assert sql({"type": "map", "values": ["null", "long"]})["type"] == {
        "type": "map",
        "keyType": "string",
        "valueType": "long",
        "valueContainsNull": True,
    }


def test_schemaconverters_on_avrodata_output_of_a_seed() -> None:
    from contracts.translate.avro import connect_to_avro

    raw = json.loads((SEEDS / "flink-debezium-value.connect.json").read_text())
    got = avro_to_spark(connect_to_avro(parse_connect(raw)))
    assert got == connect_to_spark(parse_connect(raw), "wire")


# --- Spark → Connect --------------------------------------------------------------------------------


def test_spark_to_connect_logical_types() -> None:
    spark = {
        "type": "struct",
        "fields": [
            sfield("ts", "timestamp", True),
            sfield("d", "date", False),
            sfield("amount", "decimal(10,2)", True),
            sfield("tiny", "byte", False),
        ],
    }
    assert spark_to_connect(spark).to_json()["fields"] == [
        {
            "type": "int64",
            "optional": True,
            "name": "io.debezium.time.MicroTimestamp",
            "version": 1,
            "field": "ts",
        },
        {
            "type": "int32",
            "optional": False,
            "name": "org.apache.kafka.connect.data.Date",
            "version": 1,
            "field": "d",
        },
        {
            "type": "bytes",
            "optional": True,
            "name": "org.apache.kafka.connect.data.Decimal",
            "version": 1,
            "parameters": {"scale": "2", "connect.decimal.precision": "10"},
            "field": "amount",
        },
        {"type": "int8", "optional": False, "field": "tiny"},
    ]


@pytest.mark.parametrize(
    ("spark", "where"),
    [
        (
            {"type": "struct", "fields": [sfield("i", "interval day to second", True)]},
            "$.fields[0].type",
        ),
        ({"type": "struct", "fields": [{"name": "x"}]}, "$.fields[0]"),
        ({"type": "array"}, "$"),
        ({"type": "struct", "fields": [sfield("v", "variant", True)]}, "$.fields[0].type"),
    ],
)
def test_spark_to_connect_errors_name_the_path(spark: Any, where: str) -> None:
    with pytest.raises(SchemaError) as info:
        spark_to_connect(spark)
    assert info.value.where == where


def lossless_connect() -> st.SearchStrategy[dict[str, Any]]:
    plain = st.sampled_from(
        ["boolean", "int8", "int16", "int32", "int64", "float", "double", "bytes", "string"]
    ).map(lambda t: {"type": t})
    logical = st.sampled_from(
        [
            {"type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1},
            {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "version": 1},
        ]
    )
    leaf = st.one_of(plain, logical, decimals(max_precision=38)).flatmap(
        lambda t: st.booleans().map(lambda o: {**t, "optional": o})
    )

    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.one_of(
            st.builds(
                lambda i, o: {"type": "array", "items": i, "optional": o}, children, st.booleans()
            ),
            st.builds(
                lambda k, v, o: {
                    "type": "map",
                    "keys": {"type": k, "optional": False},
                    "values": v,
                    "optional": o,
                },
                st.sampled_from(["string", "int32", "int64"]),
                children,
                st.booleans(),
            ),
            st.builds(
                lambda fs, o: {
                    "type": "struct",
                    "fields": [{**f, "field": n} for n, f in fs.items()],
                    "optional": o,
                },
                st.dictionaries(FIELD_NAMES, children, min_size=1, max_size=4),
                st.booleans(),
            ),
        )

    tree = st.recursive(leaf, extend, max_leaves=8)
    return st.dictionaries(FIELD_NAMES, tree, min_size=1, max_size=5).map(
        lambda fs: {
            "type": "struct",
            "fields": [{**f, "field": n} for n, f in fs.items()],
            "optional": False,
        }
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lossless_connect())
def test_connect_to_spark_to_connect_round_trips_where_lossless(raw: dict[str, Any]) -> None:
    schema = parse_connect(raw)
    spark = connect_to_spark(schema)
    assert spark_to_connect(spark).to_json() == schema.to_json()
    assert spark_to_connect(json.dumps(spark)).to_json() == schema.to_json()


# --- DDL -------------------------------------------------------------------------------------------------


def test_ddl_quotes_names_and_marks_not_null() -> None:
    spark = {
        "type": "struct",
        "fields": [
            sfield("id", "long", False),
            sfield("we`ird name", "string", True),
            sfield(
                "tags",
                {
                    "type": "map",
                    "keyType": "string",
                    "valueType": "decimal(5,1)",
                    "valueContainsNull": True,
                },
                True,
            ),
            sfield("s", {"type": "struct", "fields": [sfield("x", "date", False)]}, False),
        ],
    }
    assert spark_ddl(spark) == (
        "`id` BIGINT NOT NULL, `we``ird name` STRING, `tags` MAP<STRING, DECIMAL(5,1)>, "
        "`s` STRUCT<`x`: DATE NOT NULL> NOT NULL"
    )
    assert spark_ddl("timestamp_ntz") == "TIMESTAMP_NTZ"


def test_ddl_rejects_unknown_types_with_path() -> None:
    with pytest.raises(SchemaError) as info:
        spark_ddl({"type": "struct", "fields": [sfield("a", "hyperlong", True)]})
    assert info.value.where == "$.fields[0].type"
