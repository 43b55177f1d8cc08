"""The remaining text formats: the Spark change feed equals the Python ``normalize``."""

from __future__ import annotations

import copy
import csv
import json
from typing import Any

import pytest

from contracts.contract import parse_contract
from contracts.errors import ContractsError
from contracts.events import ChangeEvent
from contracts.formats import get_format
from contracts.formats.base import Message
from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_values

from .parity import (
    FIXTURES,
    assert_same_feed,
    assert_spark_equals_python,
    contract,
    from_python,
    messages,
    python_feed,
    spark_feed,
)

pytestmark = pytest.mark.spark

#: (format, sample, contract) — the fixtures the format modules are tested with.
CASES = [
    ("arcion-json", "realtime.json", "realtime.expected.yaml"),
    ("arcion-json", "snapshot.json", "snapshot.expected.yaml"),
    ("cdl-json", "seed-v1.jsonl", "seed-v1.expected.yaml"),
    ("cdl-debezium-json", "seed-v2.jsonl", "seed-v2.expected.yaml"),
    ("shareplex-json", "dts-examples.json", "dts-examples.typed.expected.yaml"),
    ("shareplex-json", "dts-examples.json", "dts-examples.expected.yaml"),
    ("opencdc-json", "conduit-structured.jsonl", "conduit-structured.typed.expected.yaml"),
    ("opencdc-json", "conduit-structured.jsonl", "conduit-structured.expected.yaml"),
    ("maxwell-json", "flink-maxwell-data.txt", "flink-maxwell-data.expected.yaml"),
    ("maxwell-json", "maxwell-docs-bootstrap.jsonl", "maxwell-docs-bootstrap.expected.yaml"),
    ("maxwell-json", "maxwell-docs-insert-ddl.jsonl", "maxwell-docs-insert-ddl.expected.yaml"),
    ("maxwell-json", "maxwell-bootstrap-insert.jsonl", "maxwell-bootstrap-insert.expected.yaml"),
    ("maxwell-json", "paimon-schemaevolution-2.jsonl", "paimon-schemaevolution-2.expected.yaml"),
    ("ogg-json", "flink-ogg-data.txt", "flink-ogg-data.expected.yaml"),
    ("ogg-json", "paimon-event-update.jsonl", "paimon-event-update.expected.yaml"),
    ("ogg-json", "ogg-truncate.jsonl", "paimon-event-update.expected.yaml"),
]

CSV_CASES = [
    ("realtime-region.csv", "realtime-region.typed.expected.yaml"),
    ("realtime-region-header.csv", "realtime-region-header.typed.expected.yaml"),
    ("realtime-region-header.csv", "realtime-region-header.expected.yaml"),
    ("snapshot-region.csv", "snapshot-region.typed.expected.yaml"),
    ("snapshot-region-header.csv", "snapshot-region-header.typed.expected.yaml"),
]


@pytest.mark.parametrize(("fmt", "sample", "contract_file"), CASES)
def test_spark_equals_python_normalize(
    spark: Any, fmt: str, sample: str, contract_file: str
) -> None:
    assert_spark_equals_python(spark, fmt, sample, contract_file)


@pytest.mark.parametrize(("sample", "contract_file"), CSV_CASES)
def test_arcion_s3_csv_lines_equal_python_normalize(
    spark: Any, sample: str, contract_file: str
) -> None:
    fmt = "arcion-s3-csv"
    c = contract(fmt, contract_file)
    want = python_feed(fmt, messages(fmt, sample), c)
    text = (FIXTURES / fmt / sample).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    rows = decode_changes(frame_from_values(spark, lines), c).orderBy("offset").collect()
    assert_same_feed(spark_feed(rows, c), want)


# --- control records and malformed messages: the same verdict as the Python normalize ----------


def _verdicts(spark: Any, fmt: str, contract_file: str, values: list[Any]) -> None:
    """Each message: Python's events (or its error) against Spark's row (or its ``_error``)."""
    c = contract(fmt, contract_file)
    f = get_format(fmt)
    raw = [v if isinstance(v, str) else json.dumps(v) for v in values]
    rows = decode_changes(frame_from_values(spark, raw), c).orderBy("offset").collect()
    assert len(rows) == len(values)
    for i, (value, row) in enumerate(zip(values, rows, strict=True)):
        cells = next(csv.reader([value])) if fmt == "arcion-s3-csv" else value
        try:
            events = f.normalize(Message(value=cells, where=f"m:{i + 2}"), c)
        except ContractsError:
            assert row["_error"] is not None, f"message {i}: Spark accepted what Python rejects"
            assert row["op"] is None and row["after"] is None
            continue
        (event,) = events
        got = spark_feed([row], c)[0][1]
        want = _vendor_text(from_python(event, c), c) if isinstance(event, ChangeEvent) else None
        assert got == (want or f"control:{getattr(event, 'kind', '')}"), f"message {i}"


def _vendor_text(event: dict[str, Any], c: Any) -> dict[str, Any]:
    """CDL's vendor Decimal (no precision) is a string column in Spark: its exact text."""
    for side in ("before", "after"):
        for f in c.row_schema.fields or ():
            image = event[side]
            if image is not None and f.name == "com.xxx.cdc.data.Decimal" and image[f.field]:
                image[f.field] = str(image[f.field])
    return event


def _fixture(fmt: str, sample: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / fmt / sample).read_text().splitlines()[0])
    return doc


def test_cdl_json_heartbeats_and_bad_operations(spark: Any) -> None:
    good = _fixture("cdl-json", "seed-v1.jsonl")
    beat = copy.deepcopy(good)
    beat["payload"].update(OPERATION=None, data=None, unique=None)
    unknown = copy.deepcopy(good)
    unknown["payload"]["OPERATION"] = "MERGE"
    repeated = copy.deepcopy(good)
    props = repeated["payload"]["transaction"]["properties"]
    props += [{"name": "lsn", "value": 7}, {"name": "txId", "value": None}]
    bad_value = copy.deepcopy(good)
    bad_value["payload"]["data"]["count1"] = "many"
    values = [good, {"HEARTBEAT_IDENTIFIER": "hb-1"}, beat, unknown, repeated, bad_value]
    _verdicts(spark, "cdl-json", "seed-v1.expected.yaml", values)


def test_cdl_debezium_json_heartbeats_and_vendor_values(spark: Any) -> None:
    good = _fixture("cdl-debezium-json", "seed-v2.jsonl")
    typed = copy.deepcopy(good)
    typed["payload"]["after"].update(time1="2024-02-04 12:01:02.5", decimalNum="12.3400")
    beat = copy.deepcopy(good)
    beat["payload"].update(op=None, after=None, HEARTBEAT_IDENTIFIER="hb")
    bad = copy.deepcopy(good)
    bad["payload"]["after"]["decimalNum"] = "twelve"
    values = [good, typed, {"HEARTBEAT_IDENTIFIER": "hb-2"}, beat, bad]
    _verdicts(spark, "cdl-debezium-json", "seed-v2.expected.yaml", values)


def test_shareplex_json_controls_overlays_and_errors(spark: Any) -> None:
    meta = {"time": "2017-06-16T14:24:34Z", "table": "CL_BIZ1.MIO_LOG", "scn": "1", "seq": 2}
    values = [
        {
            "meta": {**meta, "op": "UPDATE_AFTER"},
            "data": {"CNTR_NO": "x"},
            "key": {"MIO_LOG_ID": "5"},
        },
        {"meta": {**meta, "op": "UPDATE BEFORE"}, "data": {"CNTR_NO": "y"}},
        {"meta": {**meta, "op": "drop column"}},
        {"meta": {**meta, "op": "TRUNCATE"}},
        {"meta": {**meta, "op": "del", "rowid": None}, "data": {}, "key": {"MIO_LOG_ID": "6"}},
        {"meta": {"op": "ins", "table": "MIO_LOG"}, "data": {"MIO_LOG_ID": "7"}},
        {"meta": {**meta, "op": "merge"}, "data": {"MIO_LOG_ID": "8"}},
        {"meta": {**meta, "op": "ins"}, "data": {"MIO_LOG_ID": "eight"}},
        {"meta": {**meta, "op": "ins"}, "data": {"NOT_A_COLUMN": "1"}},
    ]
    _verdicts(spark, "shareplex-json", "dts-examples.typed.expected.yaml", values)


def test_opencdc_raw_data_without_a_raw_column_is_an_error(spark: Any) -> None:
    record = json.loads((FIXTURES / "opencdc-json" / "conduit-record.json").read_text())
    typed = (FIXTURES / "opencdc-json" / "conduit-record.typed.expected.yaml").read_text()
    raw_column = "  - {field: raw, type: bytes, optional: true}\n"
    assert raw_column in typed
    c = parse_contract(typed.replace(raw_column, ""))
    (row,) = decode_changes(frame_from_values(spark, [json.dumps(record)]), c).collect()
    assert row["_error"] == (
        "$.payload.before: is raw data (base64 bytes that are not a JSON object) and the "
        "contract has no bytes column 'raw' to hold it"
    )
    with pytest.raises(ContractsError, match="'raw' is not in the contract"):
        get_format("opencdc-json").normalize(Message(record, where="f:1"), c)
    # with the column the contract infers, the raw bytes are its value on both paths
    with_raw = contract("opencdc-json", "conduit-record.typed.expected.yaml")
    (row,) = decode_changes(frame_from_values(spark, [json.dumps(record)]), with_raw).collect()
    assert row["_error"] is None and row["before"]["raw"] == b"yellow"
    structured = _fixture("opencdc-json", "conduit-structured.jsonl")
    bad = copy.deepcopy(structured)
    bad["payload"]["after"] = "not base64!"
    unknown = copy.deepcopy(structured)
    unknown["operation"] = "upsert"
    values = [structured, bad, unknown]
    _verdicts(spark, "opencdc-json", "conduit-structured.typed.expected.yaml", values)


def test_arcion_s3_csv_rows_of_the_wrong_width_or_flags(spark: Any) -> None:
    good = (FIXTURES / "arcion-s3-csv" / "realtime-region.csv").read_text().splitlines()
    values = [
        *good,
        "India,NULL,1",
        good[0].replace(",1,India,", ",7,India,", 1),
        good[0].replace(",I,", ",X,", 1),
        good[0].replace("India,NULL,1,", '"In, ""dia""",NULL,1,', 1),
    ]
    _verdicts(spark, "arcion-s3-csv", "realtime-region.typed.expected.yaml", values)
