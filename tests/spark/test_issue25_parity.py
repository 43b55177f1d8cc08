"""Issue #25 on the Spark path: the decoder built from canal-json's spec gives the feed the
core's ``normalize`` gives for Canal's ENUM indexes / SET bitmasks (Paimon's all-types data),
TiCDC's commitTs positions and watermark, and a MINIMAL row-image delete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from formats.test_issue25_values import ENUM_TYPES, WATERMARK, _canal, _json_lines, _real

from contracts.formats import get_format
from contracts.formats.base import InferOptions, Message
from contracts.jsondoc import parse_document
from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_messages

from .parity import assert_same_feed, python_feed, spark_feed

pytestmark = pytest.mark.spark


def _same(spark: Any, msgs: list[Message]) -> list[Any]:
    fmt = get_format("canal-json")
    contract = fmt.infer(msgs, InferOptions()).contract
    want = python_feed("canal-json", msgs, contract)
    rows = decode_changes(frame_from_messages(spark, msgs), contract).orderBy("offset").collect()
    assert_same_feed(spark_feed(rows, contract), want)
    return rows


def test_enum_set_ticdc_and_minimal_images_agree(spark: Any, tmp_path: Path) -> None:
    msgs = [
        _canal({"id": "1", "e": "1", "s": "3"}, ENUM_TYPES),
        _canal({"id": "2", "e": "value2", "s": "a,c"}, ENUM_TYPES),
        _canal({"id": "3", "e": "3", "s": "0"}, ENUM_TYPES),
        _canal({"id": "4", "e": "value3", "s": "15"}, ENUM_TYPES),
        _canal({"id": "4"}, ENUM_TYPES, "DELETE"),
        Message(value=parse_document(WATERMARK, "m:6"), where="m:6"),
    ]
    rows = _same(spark, msgs)
    assert [r["after"]["e"] for r in rows[:4]] == ["value1", "value2", "value3", "value3"]
    assert [r["after"]["s"] for r in rows[:4]] == ["a,b", "a,c", "", "a,b,c,d"]
    assert sorted(rows[4]["_absent"] or []) == ["before.e", "before.s"]
    assert rows[5]["_control"] == "heartbeat"


def test_enum_out_of_range_is_an_error_in_spark(spark: Any) -> None:
    fmt = get_format("canal-json")
    good = _canal({"id": "1", "e": "1", "s": "3"}, ENUM_TYPES)
    contract = fmt.infer([good], InferOptions()).contract
    bad = [_canal({"id": "2", "e": e, "s": s}, ENUM_TYPES) for e, s in [("4", "1"), ("1", "16")]]
    rows = decode_changes(frame_from_messages(spark, bad), contract).collect()
    assert all(r["_error"] for r in rows)


def test_paimon_all_types_and_ticdc_agree(spark: Any, tmp_path: Path) -> None:
    fmt = get_format("canal-json")
    paimon = _json_lines(_real("paimon/canal-alltype-data.txt"), tmp_path)
    msgs = [
        Message(value=parse_document(line.encode(), f"p:{i}"), where=f"p:{i}")
        for i, line in enumerate(paimon.read_text().splitlines())
    ]
    rows = _same(spark, msgs)
    assert rows[0]["after"]["_enum"] == "value1"
    assert rows[0]["after"]["_set"] == "a,b"
    ticdc = _real("ticdc/data-content-2.canal.jsonl").read_bytes().splitlines()
    msgs = [
        Message(value=parse_document(line, f"t:{i}"), where=f"t:{i}")
        for i, line in enumerate(ticdc)
    ]
    rows = _same(spark, msgs)
    assert [r["position"]["commitTs"] for r in rows] == ["464085165736198159", "464085169694572575"]
    assert fmt is not None and orjson is not None
