"""For every format, the Spark change feed equals the Python ``normalize`` events, row for row."""

from __future__ import annotations

from typing import Any

import pytest

from .parity import assert_spark_equals_python

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
    assert_spark_equals_python(spark, fmt, sample, contract_file)
