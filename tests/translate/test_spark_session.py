"""Spark itself accepts every Spark JSON and DDL we write (one shared local session)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from contracts.logical import LogicalTypeWarning
from contracts.schema import parse_connect
from contracts.translate.avro import connect_to_avro
from contracts.translate.ddl import spark_ddl
from contracts.translate.spark import avro_to_spark, connect_to_spark

pytestmark = pytest.mark.spark

SEEDS = Path(__file__).parent.parent / "fixtures" / "seed_schemas"

KITCHEN_SINK: dict[str, Any] = {
    "type": "struct",
    "optional": False,
    "name": "db.t.Value",
    "fields": [
        {"type": "int8", "field": "i8"},
        {"type": "int16", "optional": True, "field": "i16"},
        {"type": "float", "field": "f"},
        {"type": "bytes", "optional": True, "field": "raw"},
        {"type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1, "field": "d"},
        {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "version": 1, "field": "ts"},
        {
            "type": "string",
            "name": "io.debezium.time.ZonedTimestamp",
            "optional": True,
            "field": "z",
        },
        {
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": "2", "connect.decimal.precision": "20"},
            "field": "amount",
        },
        {
            "type": "map",
            "keys": {"type": "int32"},
            "values": {"type": "string", "optional": True},
            "optional": True,
            "field": "by_id",
        },
        {"type": "array", "items": {"type": "double", "optional": False}, "field": "weights"},
        {
            "type": "struct",
            "optional": True,
            "field": "we`ird col",
            "fields": [{"type": "boolean", "field": "ok"}],
        },
    ],
}


AVRO_KITCHEN_SINK: dict[str, Any] = {
    "type": "record",
    "name": "Everything",
    "namespace": "x",
    "fields": [
        {"name": "u", "type": ["null", "int", "string"]},
        {"name": "il", "type": ["int", "long"]},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 8}},
        {
            "name": "dec",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 10},
        },
        {"name": "lt", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "m", "type": {"type": "map", "values": ["null", "double"]}},
    ],
}


def outputs() -> list[tuple[str, Any]]:
    """Every Spark JSON our translations produce for the seeds and the kitchen sinks."""
    out: list[tuple[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LogicalTypeWarning)
        for path in sorted(SEEDS.glob("*.connect.json")):
            name = path.name.split(".")[0]
            schema = parse_connect(json.loads(path.read_text()))
            out.append((f"{name}-decoded", connect_to_spark(schema)))
            out.append((f"{name}-wire", connect_to_spark(schema, "wire")))
            out.append((f"{name}-avro", avro_to_spark(connect_to_avro(schema))))
        sink = parse_connect(KITCHEN_SINK)
        out.append(("kitchen-sink-decoded", connect_to_spark(sink)))
        out.append(("kitchen-sink-wire", connect_to_spark(sink, "wire")))
    out.append(("avro-kitchen-sink", avro_to_spark(AVRO_KITCHEN_SINK)))
    return out


OUTPUTS = outputs()


@pytest.mark.parametrize(("name", "spark_json"), OUTPUTS, ids=[n for n, _ in OUTPUTS])
def test_spark_accepts_our_json_exactly(spark: Any, name: str, spark_json: Any) -> None:
    from pyspark.sql.types import StructType

    parsed = StructType.fromJson(spark_json)
    assert parsed.jsonValue() == spark_json


def _nested_nullable(value: Any) -> Any:
    """What DDL can say: array elements and map values are always nullable."""
    if isinstance(value, dict):
        out = {k: _nested_nullable(v) for k, v in value.items()}
        if out.get("type") == "array":
            out["containsNull"] = True
        if out.get("type") == "map":
            out["valueContainsNull"] = True
        return out
    if isinstance(value, list):
        return [_nested_nullable(v) for v in value]
    return value


@pytest.mark.parametrize(("name", "spark_json"), OUTPUTS, ids=[n for n, _ in OUTPUTS])
def test_spark_parses_our_ddl_to_the_same_schema(spark: Any, name: str, spark_json: Any) -> None:
    from pyspark.sql.types import StructType

    ddl = spark_ddl(spark_json)
    parsed = StructType.fromDDL(ddl)
    assert parsed.jsonValue() == _nested_nullable(spark_json)
