"""A message that does not parse says where and why, as the core does.

Spark's ``from_json`` leaves a field null when its JSON value has the wrong type and flags the
whole message; the decode then names each such field by its JSON path and value, tells a
malformed message from a mistyped one, and refuses bytes that are not UTF-8 (Spark would read
them with U+FFFD and decode a changed value).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from contracts.contract import load_contract
from contracts.errors import ContractsError, InputError
from contracts.formats import get_format
from contracts.io import read_messages
from contracts.jsondoc import parse_document
from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_values, read_input

from .parity import FIXTURES, orders_message

pytestmark = pytest.mark.spark

ORDERS = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"
CANAL = FIXTURES / "canal-json" / "flink-products.typed.expected.yaml"


def _message(after: Any = None, **source: Any) -> str:
    value = orders_message()
    payload = dict(value["payload"])
    if after is not None:
        payload["after"] = after if not isinstance(after, dict) else {**payload["after"], **after}
    payload["source"] = {**payload["source"], **source}
    return json.dumps({**value, "payload": payload}, ensure_ascii=False)


#: message → the error the Spark decode gives.
CASES = [
    (_message({"id": "abc"}), '$.payload.after.id: "abc" is not an integer'),
    (_message({"order_date": "x"}), '$.payload.after.order_date: "x" is not an integer'),
    (_message({"id": "1", "created_at": True}), None),  # two fields: checked below
    (_message("gone"), '$.payload.after: "gone" is not an object'),
    (_message(ts_ms="soon"), '$.payload.source.ts_ms: "soon" is not an integer'),
    (_message({"id": "x" * 100}), '$.payload.after.id: "' + "x" * 36 + "... is not an integer"),
    (_message()[:-30], "$: is not valid JSON (malformed)"),
]


def test_a_mistyped_field_is_named_by_its_path(spark: Any) -> None:
    rows = decode_changes(frame_from_values(spark, [m for m, _ in CASES]), ORDERS).collect()
    got = [r["_error"] for r in rows]
    assert [g for g, (_, want) in zip(got, CASES, strict=True) if want is not None] == [
        want for _, want in CASES if want is not None
    ]
    assert got[2] == (
        '$.payload.after.id: "1" is not an integer; '
        "$.payload.after.created_at: true is not an integer"
    )
    assert all(r["op"] is None and r["after"] is None for r in rows)


def test_the_core_refuses_the_same_messages_at_the_same_paths(spark: Any, tmp_path: Path) -> None:
    contract = load_contract(ORDERS)
    fmt = get_format(contract.format)
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(m for m, _ in CASES[:5]) + "\n")
    spark_rows = decode_changes(frame_from_values(spark, [m for m, _ in CASES[:5]]), ORDERS)
    for message, row in zip(
        fmt.assemble(read_messages([str(path)], fmt.input_kind)), spark_rows.collect(), strict=True
    ):
        with pytest.raises(ContractsError) as caught:
            fmt.normalize(message, contract)
        core_path = re.search(r"(\$\S*):", str(caught.value))
        assert core_path is not None, caught.value
        assert row["_error"].startswith(core_path.group(1) + ":"), (caught.value, row["_error"])


def test_a_canal_message_of_the_wrong_shape_is_named(spark: Any) -> None:
    first = json.loads(
        (FIXTURES / "canal-json" / "flink-products.jsonl").read_text().split("\n")[0]
    )
    messages = [json.dumps({**first, "data": {"id": "1"}}), json.dumps({**first, "es": "late"})]
    rows = decode_changes(frame_from_values(spark, messages), CANAL).collect()
    # the second message's rows (one per element of data) all carry its error
    assert list(dict.fromkeys(r["_error"] for r in rows)) == [
        '$.data: {"id":"1"} is not an array',
        '$.es: "late" is not an integer',
    ]


def test_bytes_that_are_not_utf8_are_refused_not_replaced(spark: Any, tmp_path: Path) -> None:
    good = _message().encode()
    bad = _message({"customer": "caf\udce9"}).encode("utf-8", "surrogateescape")
    assert b"caf\xe9" in bad
    # bytes in the embedded schema too: the parser never reads the schema, but the core
    # refuses the whole message (its JSON syntax there is still not checked)
    in_schema = good.replace(b'"name": "', b'"name": "\xe9', 1)
    assert in_schema != good
    with pytest.raises(InputError, match="not UTF-8"):
        parse_document(in_schema, "m")
    rows = decode_changes(frame_from_values(spark, [good, bad, in_schema]), ORDERS).collect()
    assert [r["_error"] for r in rows] == [
        None,
        "$: is not UTF-8 text (an invalid byte sequence)",
        "$: is not UTF-8 text (an invalid byte sequence)",
    ]
    # from a file: line 2 is refused, lines 1 and 3 decode (Spark's text reader keeps the bytes)
    path = tmp_path / "values.jsonl"
    path.write_bytes(b"\n".join([good, bad, good]) + b"\n")
    feed = decode_changes(read_input(spark, [str(path)], "values", "debezium-json"), ORDERS)
    assert [r["_error"] is None for r in feed.orderBy("offset").collect()] == [True, False, True]
    with pytest.raises(InputError, match=r"values.jsonl:2: input is not UTF-8 text"):
        list(read_messages([str(path)], "json"))  # the core refuses the file at that line


def test_canal_error_paths_name_the_row_of_data_and_old(spark: Any, tmp_path: Path) -> None:
    """``$.data[1].weight``, as the core says it, not ``$.data.weight``."""
    lines = (FIXTURES / "canal-json" / "flink-products.jsonl").read_text().splitlines()
    insert = json.loads(lines[0])
    insert["data"][1]["weight"] = "heavy"
    update = json.loads(lines[1])
    update["old"] = [{"weight": "light"}]
    messages = [json.dumps(insert), json.dumps(update)]
    rows = decode_changes(frame_from_values(spark, messages), CANAL).collect()
    errors = [r["_error"] for r in rows if r["_error"] is not None]
    assert [e.split(":")[0] for e in errors] == ["$.data[1].weight", "$.old[0].weight"]
    contract = load_contract(CANAL)
    fmt = get_format(contract.format)
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(messages) + "\n")
    for message, error in zip(
        fmt.assemble(read_messages([str(path)], fmt.input_kind)), errors, strict=True
    ):
        with pytest.raises(ContractsError, match=re.escape(error.split(":")[0] + ":")):
            fmt.normalize(message, contract)


def test_a_key_that_is_not_utf8_is_refused(spark: Any) -> None:
    from spark_bindings.inputs import KAFKA_SCHEMA

    line = json.loads(
        (FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl").read_text().splitlines()[0]
    )
    key = line["key"].encode()
    bad_key = key.replace(b'"id": 1', b'"id": 1, "x": "\xe9"')
    assert bad_key != key
    rows = [(k, line["payload"].encode(), "t", 0, i, None) for i, k in enumerate([key, bad_key])]
    feed = decode_changes(spark.createDataFrame(rows, KAFKA_SCHEMA), ORDERS).collect()
    assert [(r["_error"], r["key"] is None) for r in feed] == [
        (None, False),
        ("$key: is not UTF-8 text (an invalid byte sequence)", True),
    ]
