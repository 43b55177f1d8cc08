"""Integers beyond int64 in plain-JSON formats: the Spark decode keeps every digit, as the core.

The contract is the one ``infer`` gives (a Decimal of scale 0, precision 20); Spark reads each
value's JSON text and must give the exact unsigned 64-bit value, row for row equal to the
Python ``normalize`` (see tests/formats/test_wide_integers.py for the Python side).
"""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import pytest
from wide_integers import MESSAGES, VALUES, write_messages

from contracts.formats import get_format
from contracts.formats.base import InferOptions
from contracts.io import read_messages
from contracts.logical import DECIMAL_NAME
from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_messages

from .parity import assert_same_feed, python_feed, spark_feed

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("fmt", list(MESSAGES))
def test_unsigned_64_decodes_exactly(spark: Any, tmp_path: Path, fmt: str) -> None:
    f = get_format(fmt)
    path = write_messages(tmp_path / "m.jsonl", fmt)
    msgs = list(f.assemble(read_messages([path], f.input_kind)))
    c = f.infer(msgs, InferOptions(name="t")).contract
    assert c.row_schema.get_field("big").name == DECIMAL_NAME  # type: ignore[union-attr]
    rows = decode_changes(frame_from_messages(spark, msgs), c).orderBy("offset").collect()
    got = spark_feed(rows, c)
    assert [event["after"]["big"] for _, event in got] == [decimal.Decimal(v) for v in VALUES]
    assert_same_feed(got, python_feed(fmt, msgs, c))
