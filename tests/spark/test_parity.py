"""For every format, the Spark change feed equals the Python ``normalize`` events, row for row."""

from __future__ import annotations

from typing import Any

import pytest

from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_messages

from .parity import contract, messages, python_feed, spark_feed

pytestmark = pytest.mark.spark

#: (format, sample, contract) — the fixtures the format modules are tested with.
CASES = [
    ("debezium-json", "postgres-orders.kcat.jsonl", "postgres-orders.expected.yaml"),
    ("debezium-json", "flink-debezium-data-schema-include.txt", "flink.expected.yaml"),
    ("debezium-json", "flink-schemas-disabled.jsonl", "flink-schemas-disabled.expected.yaml"),
    ("arcion-s3-json", "realtime-region.json", "realtime-region.expected.yaml"),
    ("arcion-s3-json", "realtime-region.json", "realtime-region.typed.expected.yaml"),
    ("arcion-s3-json", "snapshot-nation.json", "snapshot-nation.typed.expected.yaml"),
    ("canal-json", "flink-products.jsonl", "flink-products.typed.expected.yaml"),
    ("canal-json", "flink-products.jsonl", "flink-products.expected.yaml"),
    ("canal-json", "dts-delete-before-2022.json", "dts-delete-before-2022.typed.expected.yaml"),
    ("canal-json", "dts-delete-current.json", "dts-delete-current.typed.expected.yaml"),
]


@pytest.mark.parametrize(("fmt", "sample", "contract_file"), CASES)
def test_spark_equals_python_normalize(
    spark: Any, fmt: str, sample: str, contract_file: str
) -> None:
    c = contract(fmt, contract_file)
    msgs = messages(fmt, sample)
    want = python_feed(fmt, msgs, c)
    rows = decode_changes(frame_from_messages(spark, msgs), c).orderBy("offset").collect()
    got = spark_feed(rows, c)
    assert len(got) == len(want)
    for (gi, g), (wi, w) in zip(got, want, strict=True):
        assert gi == wi
        assert g == w, f"message {gi}"
