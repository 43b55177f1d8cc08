"""debezium-mongodb-json in Spark: the extended-JSON documents decode to the same events as the
Python ``normalize``, and a value the core refuses is an ``_error`` there too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contracts.errors import DecodeError
from contracts.formats import get_format
from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_messages

from .parity import assert_spark_equals_python, contract, messages

pytestmark = pytest.mark.spark
FMT = "debezium-mongodb-json"


@pytest.mark.parametrize(
    ("sample", "contract_file"),
    [
        ("risingwave_customers.jsonl", "risingwave_customers.expected.yaml"),
        ("paimon_bson_events.kcat.jsonl", "paimon_bson_events.expected.yaml"),
        ("grammar_cases.kcat.jsonl", "grammar_cases.expected.yaml"),
    ],
)
def test_spark_equals_python_on_every_mongo_fixture(
    spark: Any, sample: str, contract_file: str
) -> None:
    assert_spark_equals_python(spark, FMT, sample, contract_file)


def _after(change: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    return {**change, "after": json.dumps(doc)}


#: (field, bad value, what the error says): each case replaces one field of the first grammar
#: case; all cases are decoded in one frame (one plan compilation: the mongo plan is large)
REFUSED: list[tuple[str, Any, str]] = [
    ("qty", {"$numberLong": "4"}, "$.payload.after.qty: is not an int32"),
    ("qty", 2**31, "$.payload.after.qty: is not an int32"),
    ("big", "5", "$.payload.after.big: is not an int64"),
    ("price", {"$numberDecimal": "1.234"}, "$.payload.after.price: is not a $numberDecimal"),
    ("ratio", 3, "$.payload.after.ratio: is not a double"),
    ("at", {"$date": "yesterday"}, "$.payload.after.at: is not a $date"),
    (
        "raw",
        {"$binary": {"base64": "not base64!", "subType": "00"}},
        "$.payload.after.raw: is not a $binary",
    ),
    (
        "meta",
        {"city": "x", "lat": 1.5, "zip": 1},
        "$.payload.after.meta: holds a field that is not",
    ),
    ("meta", {"lat": 1.5}, "$.payload.after.meta.city: is a required field"),
    ("extra", 1, "$.payload.after: holds a field that is not in the contract"),
]


def test_a_value_the_core_refuses_is_an_error(spark: Any) -> None:
    sample = messages(FMT, "grammar_cases.kcat.jsonl")
    c = contract(FMT, "grammar_cases.expected.yaml")
    payload = sample[0].value
    bad = []
    for i, (field, value, _) in enumerate(REFUSED):
        doc = {**json.loads(payload["after"]), field: value}
        bad.append(type(sample[0])(_after(payload, doc), key=sample[0].key, where=f"m:{i}"))
        with pytest.raises(DecodeError):  # the core refuses it too
            get_format(FMT).normalize(bad[-1], c)
    rows = decode_changes(frame_from_messages(spark, bad), c).orderBy("offset").collect()
    assert len(rows) == len(REFUSED)
    for row, (field, value, said) in zip(rows, REFUSED, strict=True):
        assert row["_error"] is not None and said in row["_error"], (field, value, row["_error"])


def test_absent_columns_are_listed_and_a_partial_update_keeps_only_its_fields(spark: Any) -> None:
    c = contract(FMT, "grammar_cases.expected.yaml")
    rows = (
        decode_changes(frame_from_messages(spark, messages(FMT, "grammar_cases.kcat.jsonl")), c)
        .orderBy("offset")
        .collect()
    )
    assert rows[1]["_absent"] == ["after.note"]
    update = rows[2]
    assert update["after"]["qty"] == 4 and update["after"]["note"] is None
    assert "after.big" in update["_absent"] and "after.note" not in update["_absent"]


def test_a_dotted_update_is_refused_in_spark(spark: Any) -> None:
    sample = messages(FMT, "grammar_cases.kcat.jsonl")
    c = contract(FMT, "grammar_cases.expected.yaml")
    payload = dict(sample[2].value)
    payload["updateDescription"] = {"updatedFields": '{"meta.city": "Lyon"}', "removedFields": []}
    msg = type(sample[2])(payload, key=sample[2].key, where="m:1")
    rows = decode_changes(frame_from_messages(spark, [msg]), c).collect()
    assert "a dotted name" in rows[0]["_error"]
