"""A decode is built once per contract and input columns, then replayed on new DataFrames."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import functions as F

from spark_bindings import decode
from spark_bindings.decode import decode_changes
from spark_bindings.frame import Step, StepCache
from spark_bindings.inputs import frame_from_values

from .parity import FIXTURES, contract

pytestmark = pytest.mark.spark

CANAL = "flink-products.typed.expected.yaml"


def _lines(fmt: str, sample: str) -> list[str]:
    text = (FIXTURES / fmt / sample).read_text()
    return [line for line in text.splitlines() if line.strip()]


def _rows(df: Any) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.orderBy("offset").collect()]


@pytest.mark.parametrize(
    ("fmt", "sample", "name"),
    [
        ("canal-json", "flink-products.jsonl", CANAL),
        ("debezium-json", "flink-schemas-disabled.jsonl", "flink-schemas-disabled.expected.yaml"),
    ],
)
def test_a_replayed_decode_equals_a_fresh_one(spark: Any, fmt: str, sample: str, name: str) -> None:
    c = contract(fmt, name)
    lines = _lines(fmt, sample)
    first, second = lines[: len(lines) // 2], [*lines[len(lines) // 2 :], "not json"]
    decode._STEPS.clear()
    decode_changes(frame_from_values(spark, first), c).collect()
    assert len(decode._STEPS._entries) == 1  # recorded
    replayed = _rows(decode_changes(frame_from_values(spark, second), c))
    assert len(decode._STEPS._entries) == 1  # the same key: replayed, not recorded again
    decode._STEPS.clear()
    fresh = _rows(decode_changes(frame_from_values(spark, second), c))
    assert replayed == fresh
    assert replayed[-1]["_error"] is not None and replayed[0]["_error"] is None


def test_other_columns_or_options_record_their_own_decode(spark: Any) -> None:
    c = contract("canal-json", CANAL)
    lines = _lines("canal-json", "flink-products.jsonl")
    plain = frame_from_values(spark, lines)
    tagged = plain.withColumn("tag", F.lit("x"))
    decode._STEPS.clear()
    assert "tag" not in decode_changes(plain, c).columns
    assert decode_changes(tagged, c).select("tag").distinct().collect()[0]["tag"] == "x"
    kept = decode_changes(plain, c).count()
    dropped = decode_changes(plain, c, drop_control_records=True).count()
    assert len(decode._STEPS._entries) == 3
    assert dropped <= kept


def test_step_cache_forgets_the_least_recently_used() -> None:
    cache = StepCache(size=2)
    a, b, c = ((Step("where", (n,)),) for n in "abc")
    cache.put("a", a)
    cache.put("b", b)
    assert cache.get("a") == a  # a is now the most recently used
    cache.put("c", c)
    assert cache.get("b") is None
    assert cache.get("a") == a and cache.get("c") == c
