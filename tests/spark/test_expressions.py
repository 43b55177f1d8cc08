"""The native decimal decoder at its size boundaries (8-byte and 16-byte unscaled values)."""

from __future__ import annotations

import base64
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType

from spark_bindings.expressions import base64_decimal

pytestmark = pytest.mark.spark


def _b64(value: int, size: int | None = None) -> str:
    width = size or max(1, (value.bit_length() + 8) // 8)
    return base64.b64encode(value.to_bytes(width, "big", signed=True)).decode()


def _decode(spark: Any, wires: list[str | None], precision: int, scale: int) -> list[Any]:
    df = spark.createDataFrame([(i, w) for i, w in enumerate(wires)], "i int, w string")
    target = DecimalType(precision, scale)
    out = df.select("i", base64_decimal(F.col("w"), scale, target).alias("d"))
    return [r["d"] for r in out.orderBy("i").collect()]


def test_precision_up_to_18_reads_8_bytes_and_rejects_longer(spark: Any) -> None:
    top = 10**18 - 1
    wires = [
        _b64(top),
        _b64(-top),
        _b64(-1),
        _b64(5, size=8),  # non-minimal but within 8 bytes: still read
        _b64(-5, size=8),
        _b64(5, size=9),  # 9 bytes cannot hold a precision-18 value as Connect writes it
        "",
        None,
    ]
    got = _decode(spark, wires, 18, 4)
    assert got[:5] == [
        Decimal(top).scaleb(-4),
        Decimal(-top).scaleb(-4),
        Decimal("-0.0001"),
        Decimal("0.0005"),
        Decimal("-0.0005"),
    ]
    assert got[5:] == [None, None, None]


def test_precision_above_18_reads_up_to_16_bytes(spark: Any) -> None:
    big = 10**38 - 1
    wires = [_b64(big), _b64(-big), _b64(2**64), _b64(-(2**64)), _b64(7), _b64(1, size=17)]
    got = _decode(spark, wires, 38, 0)
    assert got == [Decimal(big), Decimal(-big), Decimal(2**64), Decimal(-(2**64)), Decimal(7), None]
