"""Values that must never decode silently changed, and messages never silently half-read.

Each case here once gave a clean row in Spark (no ``_error``) where the Python decoder refuses
the message or the value: timestamps and dates outside the years 1-9999, a float that
overflows to infinity, JSON that is not JSON (single quotes, content after the document), a
Kafka key that is not JSON or has a wrongly typed field, a Canal UPDATE with fewer ``old``
images than rows, a Canal message without ``isDdl``. A Connect Time (int32 millis) failed the
whole job (int32 * 1000 overflows in ANSI mode).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from pyspark.sql import functions as F

from contracts.contract import load_contract
from contracts.errors import ContractsError
from contracts.events import ControlRecord
from contracts.formats import get_format
from contracts.formats.base import Message
from spark_bindings import decode_changes
from spark_bindings.inputs import KAFKA_SCHEMA, frame_from_values

from .parity import FIXTURES, orders_message

pytestmark = pytest.mark.spark

ORDERS = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"
CANAL = FIXTURES / "canal-json" / "flink-products.typed.expected.yaml"


def _debezium(**after: Any) -> str:
    value = orders_message()
    payload = dict(value["payload"])
    payload["after"] = {**payload["after"], **after}
    return json.dumps({**value, "payload": payload})


def _core(contract_path: Any, text: str | None, key: str | None = None) -> str:
    """The Python decoder's verdict on one raw Kafka value (and key)."""
    if text is None or text.strip() in ("", "null"):
        return "tombstone"
    contract = load_contract(contract_path)
    try:
        value = orjson.loads(text)
        parsed_key = orjson.loads(key) if key is not None else None
        out = get_format(contract.format).normalize(
            Message(value=value, key=parsed_key, has_key=key is not None), contract
        )
    except (orjson.JSONDecodeError, ContractsError):
        return "error"
    return "control" if all(isinstance(o, ControlRecord) for o in out) else "ok"


def _spark(
    spark: Any,
    contract_path: Any,
    rows: list[tuple[str | None, str | None]],
    columns: tuple[str, ...] = ("op", "key", "after", "_control", "_error"),
) -> list[Any]:
    data = [
        (
            None if k is None else k.encode(),
            None if v is None else v.encode(),
            "t",
            0,
            i,
            None,
        )
        for i, (k, v) in enumerate(rows)
    ]
    frame = spark.createDataFrame(data, KAFKA_SCHEMA)
    return decode_changes(frame, contract_path).orderBy("offset").select(*columns).collect()


def _verdict(row: Any) -> str:
    if row["_error"] is not None:
        return "error"
    if row["_control"] == "tombstone":
        return "tombstone"
    return "control" if row["_control"] is not None else "ok"


MAX_MICROS = 253_402_300_799_999_999
MIN_MICROS = -62_135_596_800_000_000
DEBEZIUM_CASES = {
    "last microsecond of 9999": (_debezium(created_at=MAX_MICROS), "ok"),
    "first of year 10000": (_debezium(created_at=MAX_MICROS + 1), "error"),
    "first microsecond of year 1": (_debezium(created_at=MIN_MICROS), "ok"),
    "before year 1": (_debezium(created_at=MIN_MICROS - 1), "error"),
    "int64 max": (_debezium(created_at=9_223_372_036_854_775_807), "error"),
    "date 9999-12-31": (_debezium(order_date=2_932_896), "ok"),
    "date in year 10000": (_debezium(order_date=2_932_897), "error"),
    "date before year 1": (_debezium(order_date=-719_163), "error"),
    "zoned in year 10000": (_debezium(updated_at="+10000-01-01T00:00:00Z"), "error"),
    "single-quoted string": (_debezium().replace('"customer": "', "'customer': '", 1), "error"),
    "content after the document": (_debezium() + " garbage", "error"),
    "JSON null": ("null", "tombstone"),
    "empty value": ("", "tombstone"),
    "JSON null and whitespace": (" null\n", "tombstone"),
    "whitespace": ("  ", "tombstone"),
}


@pytest.mark.parametrize("name", list(DEBEZIUM_CASES))
def test_debezium_edges_agree_with_the_core(spark: Any, name: str) -> None:
    text, expected = DEBEZIUM_CASES[name]
    if "single-quoted" in name:
        assert "'customer'" in text
    assert _core(ORDERS, text) == expected
    # (PySpark cannot collect the years-1 instants as Python datetimes: ids only)
    columns = ("op", "after.id", "_control", "_error")
    (row,) = _spark(spark, ORDERS, [(None, text)], columns)
    assert _verdict(row) == expected, row["_error"]
    if expected == "error":
        assert row["op"] is None and row["id"] is None


def test_out_of_range_values_are_named_by_path(spark: Any) -> None:
    rows = _spark(
        spark,
        ORDERS,
        [(None, DEBEZIUM_CASES[n][0]) for n in ("first of year 10000", "date in year 10000")],
        ("_error",),
    )
    assert [r["_error"] for r in rows] == [
        "$.payload.after.created_at: is not a timestamp in range",
        "$.payload.after.order_date: is not a date in range",
    ]
    (trailing,) = _spark(
        spark, ORDERS, [(None, DEBEZIUM_CASES["content after the document"][0])], ("_error",)
    )
    assert trailing["_error"] == "$: is not valid JSON (content after the document)"


KEY = {"schema": {"type": "struct", "fields": [{"type": "int32", "field": "id"}]}}


def test_a_kafka_key_that_is_not_json_or_mistyped_is_an_error(spark: Any) -> None:
    """The key was silently taken from the row instead (or read as {id: null}, and
    latest_state then merged distinct rows into one null key)."""
    value = _debezium()
    good = json.dumps({**KEY, "payload": {"id": 1}})
    mistyped = json.dumps({**KEY, "payload": {"id": "abc"}})
    rows = _spark(spark, ORDERS, [(good, value), ("{not json", value), (mistyped, value)])
    assert rows[0]["_error"] is None and rows[0]["key"]["id"] == 1
    assert rows[1]["_error"] == (
        "$key: is not valid JSON for the contract's key (malformed or a wrong type)"
    )
    assert rows[2]["_error"] is not None and rows[2]["_error"].startswith("$key")
    assert all(r["key"] is None and r["op"] is None for r in rows[1:])
    assert _core(ORDERS, value, mistyped) == "error"


def test_a_float_that_overflows_is_an_error_not_infinity(spark: Any) -> None:
    def canal(weight: str) -> str:
        row = {"id": "1", "name": "n", "description": "d", "weight": weight}
        return json.dumps(
            {
                "data": [row],
                "database": "inventory",
                "es": 1,
                "id": 1,
                "isDdl": False,
                "mysqlType": {"id": "INTEGER", "weight": "FLOAT"},
                "old": None,
                "pkNames": ["id"],
                "sql": "",
                "table": "products2",
                "ts": 2,
                "type": "INSERT",
            }
        )

    texts = [canal("3.4028235e38"), canal("3.4028236e38"), canal("1e39"), canal("1.5")]
    rows = _spark(spark, CANAL, [(None, t) for t in texts])
    assert [_verdict(r) for r in rows] == ["ok", "error", "error", "ok"]
    assert [_core(CANAL, t) for t in texts] == ["ok", "error", "error", "ok"]
    assert rows[1]["_error"] == "$.data[0].weight: is not a number in the float range"
    assert rows[0]["after"]["weight"] == pytest.approx(3.4028235e38)


def _canal_message(**overrides: Any) -> dict[str, Any]:
    line = (FIXTURES / "canal-json" / "flink-products.jsonl").read_text().splitlines()[0]
    return {**json.loads(line), **overrides}


def test_canal_messages_the_core_refuses_are_errors(spark: Any) -> None:
    first = _canal_message()["data"][0]
    base = _canal_message(data=[first])
    two = [dict(first, id="101"), dict(first, id="102")]
    uneven = _canal_message(type="UPDATE", data=two, old=[{"name": "before"}])
    no_ddl = {k: v for k, v in base.items() if k != "isDdl"}
    empty = _canal_message(data=[])
    texts = [json.dumps(m) for m in (uneven, no_ddl, empty)]
    assert [_core(CANAL, t) for t in texts] == ["error"] * 3
    rows = _spark(spark, CANAL, [(None, t) for t in texts])
    assert [r["_error"] for r in rows] == [
        "$.old: old has 1 rows but data has 2",
        "$.old: old has 1 rows but data has 2",
        "$.isDdl: is missing",
        "$.data: holds no rows",
    ]


def test_a_connect_time_decodes_without_failing_the_job(spark: Any, tmp_path: Any) -> None:
    """int32 millis * 1000 overflowed (ANSI mode): any time after 00:00:02.147 failed the job."""
    contract = tmp_path / "t.yaml"
    contract.write_text(
        "name: t\nformat: debezium-json\ntable: {name: t}\noptions: {schemas_enable: false}\n"
        "columns:\n  - {field: id, type: int32}\n"
        "  - {field: at, type: int32, optional: true, name: org.apache.kafka.connect.data.Time}\n"
    )
    texts = [
        json.dumps(
            {"before": None, "after": {"id": 1, "at": ms}, "source": {}, "op": "c", "ts_ms": 1}
        )
        for ms in (86_399_999, 2_148, 86_400_000)
    ]
    rows = _spark(spark, contract, [(None, t) for t in texts])
    assert [r["after"]["at"] if r["after"] else None for r in rows] == [
        "23:59:59.999000",
        "00:00:02.148000",
        None,
    ]
    # the core's path too, with or without the {schema, payload} wrapper
    assert rows[2]["_error"] == "$.payload.after.at: is not a time of day"


def test_an_input_column_named_like_a_feed_column_is_refused(spark: Any) -> None:
    frame = frame_from_values(spark, [_debezium()]).withColumn("op", F.lit("input"))
    with pytest.raises(ValueError, match="'op' have the name of a change-feed column"):
        decode_changes(frame, ORDERS)
