"""Generated methods and HotSpot's JIT limit: the session setting, the warning, the same rows.

A method of more than 8,000 bytes is left interpreted by HotSpot. The decode's generator keeps
each fused stage under that size (a Canal contract of 15 columns with several timestamps and
decimals, which used to outgrow it, is checked here); sessions built by ``local_session`` still
cap fused methods at that size (Spark then compiles a larger stage operator by operator), and
``decode_changes`` warns once per application when the session does not.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from contracts.formats import get_format
from contracts.formats.base import InferOptions, Message
from spark_bindings import decode
from spark_bindings.decode import decode_changes
from spark_bindings.inputs import frame_from_messages, frame_from_values
from spark_bindings.session import HOTSPOT_HUGE_METHOD, HUGE_METHOD_CONF

from .parity import assert_same_feed, contract, messages, python_feed, spark_feed

pytestmark = pytest.mark.spark

#: 15 columns, most of them the rules with the largest generated code.
MYSQL_TYPES = {
    "id": "bigint(20)",
    **{f"at{i}": "datetime(6)" for i in range(5)},
    **{f"amount{i}": "decimal(12,2)" for i in range(4)},
    **{f"day{i}": "date" for i in range(2)},
    **{f"name{i}": "varchar(32)" for i in range(3)},
}


def _row(i: int) -> dict[str, str | None]:
    row: dict[str, str | None] = {"id": str(1000 + i)}
    for k in range(5):
        row[f"at{k}"] = f"2026-0{1 + k}-1{i % 10} 0{k}:15:3{i % 10}.{123456 + i}"
    for k in range(4):
        row[f"amount{k}"] = f"{(i + 1) * (k + 3)}.{k}5" if (i + k) % 4 else None
    for k in range(2):
        row[f"day{k}"] = f"202{k}-1{k}-0{1 + i % 9}"
    for k in range(3):
        row[f"name{k}"] = f"n{i}-{k}"
    return row


def _messages(n: int) -> list[bytes]:
    kinds = ("INSERT", "UPDATE", "DELETE")
    out = []
    for i in range(n):
        kind = kinds[i % 3]
        out.append(
            json.dumps(
                {
                    "data": [_row(i)],
                    "old": [{"at0": "2025-12-31 23:59:59", "amount1": "1.25"}]
                    if kind == "UPDATE"
                    else None,
                    "database": "shop",
                    "table": "wide",
                    "type": kind,
                    "isDdl": False,
                    "es": 1_780_000_000_000 + i,
                    "ts": 1_780_000_000_500 + i,
                    "id": i + 1,
                    "pkNames": ["id"],
                    "mysqlType": MYSQL_TYPES,
                }
            ).encode()
        )
    return out


def _wide_topic(n: int) -> tuple[list[bytes], list[Message], Any]:
    """``n`` wide Canal messages, as raw values and as core messages, and the contract inferred
    from them."""
    values = _messages(n)
    msgs = [Message(value=json.loads(v), where=f"message {i}") for i, v in enumerate(values)]
    contract = get_format("canal-json").infer(msgs, InferOptions(infer_types=True)).contract
    return values, msgs, contract


def _fused_method_sizes(df: Any) -> list[int]:
    """The largest generated method of each of ``df``'s whole-stage-codegen stages, in bytes
    of bytecode (what ``df.explain("codegen")`` prints as ``maxMethodCodeSize``; -1 for a
    stage Janino failed to compile, e.g. "Code grows beyond 64 KB")."""
    debug = df.sparkSession._jvm.org.apache.spark.sql.execution.debug.package
    stages = debug.codegenStringSeq(df._jdf.queryExecution().executedPlan())
    return [stages.apply(i)._3().maxMethodCodeSize() for i in range(stages.size())]


def _largest_fused_method(df: Any) -> int:
    """The largest generated method of ``df``'s whole-stage-codegen stages."""
    return max(_fused_method_sizes(df))


@pytest.fixture
def method_limit(spark: Any) -> Iterator[Any]:
    """Sets the session's limit for one test, then puts the original back."""
    original = spark.conf.get(HUGE_METHOD_CONF)

    def set_limit(value: int) -> None:
        spark.conf.set(HUGE_METHOD_CONF, str(value))
        decode._STEPS.clear()

    yield set_limit
    spark.conf.set(HUGE_METHOD_CONF, original)
    decode._STEPS.clear()


def test_the_session_caps_fused_methods_at_hotspots_limit(spark: Any) -> None:
    assert int(spark.conf.get(HUGE_METHOD_CONF)) == HOTSPOT_HUGE_METHOD == 8000


@pytest.mark.parametrize("limit", [HOTSPOT_HUGE_METHOD, 65535], ids=["capped", "spark-default"])
def test_a_wide_canal_decode_equals_normalize_fused_or_not(
    spark: Any, method_limit: Any, limit: int
) -> None:
    values, msgs, c = _wide_topic(12)
    assert len(c.row_schema.fields or ()) == 15
    method_limit(limit)
    # value and offset only: with Kafka's other columns the stage holds over
    # spark.sql.codegen.maxFields fields and Spark would not fuse it at all
    decoded = decode_changes(frame_from_values(spark, values).select("value", "offset"), c)
    # the generator keeps each fused stage's method under HotSpot's limit (the row texts are
    # looked up and the row changes built in the parse's projections), so Spark fuses it
    # whatever the cap; before, this contract's stage grew past it and ran unfused
    assert _largest_fused_method(decoded) <= HOTSPOT_HUGE_METHOD
    rows = decoded.orderBy("offset").collect()
    assert_same_feed(spark_feed(rows, c), python_feed("canal-json", msgs, c))


def test_the_mongodb_grammar_cases_compile_under_hotspots_limit(spark: Any) -> None:
    # 12 columns of every extended-JSON kind, a nested document and an array: each value's
    # grammar read its variant's JSON text a dozen times, inlined, and the decode stage grew
    # past Janino's 64 KB (Spark logged the failure and fell back to interpreted code)
    fmt = "debezium-mongodb-json"
    c = contract(fmt, "grammar_cases.expected.yaml")
    decoded = decode_changes(
        frame_from_messages(spark, messages(fmt, "grammar_cases.kcat.jsonl")), c
    )
    sizes = _fused_method_sizes(decoded)
    assert sizes and all(0 < size <= HOTSPOT_HUGE_METHOD for size in sizes), sizes


def test_decode_warns_once_when_fused_methods_may_outgrow_the_jit(
    spark: Any, method_limit: Any, caplog: pytest.LogCaptureFixture
) -> None:
    values, _, c = _wide_topic(3)
    df = frame_from_values(spark, values)
    decode._WARNED.clear()
    with caplog.at_level(logging.WARNING, logger="spark_bindings.decode"):
        method_limit(HOTSPOT_HUGE_METHOD)
        decode_changes(df, c)
        assert not caplog.records  # capped: nothing to say
        decode._WARNED.clear()
        method_limit(65535)
        decode_changes(df, c)
        decode._STEPS.clear()
        decode_changes(df, c)  # built again in the same application: not said again
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1, warnings
    assert HUGE_METHOD_CONF in warnings[0] and "8000" in warnings[0]
