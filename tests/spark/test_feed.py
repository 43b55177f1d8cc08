"""Malformed messages, control records, streaming, latest_state and the CLI."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from clirun import run

from contracts.contract import load_contract
from spark_bindings import decode_changes, latest_state, spark_schema
from spark_bindings.inputs import frame_from_values

from .parity import FIXTURES

pytestmark = pytest.mark.spark

ORDERS = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"


def _payload(
    op: str, after: dict[str, Any] | None, before: dict[str, Any] | None = None, ts: int = 1
) -> str:
    source = {
        "connector": "postgresql",
        "db": "shop",
        "schema": "public",
        "table": "orders",
        "ts_ms": ts,
        "lsn": 100 + ts,
        "txId": 7,
    }
    payload = {"before": before, "after": after, "source": source, "op": op, "ts_ms": ts}
    return json.dumps({"schema": {"type": "struct", "fields": []}, "payload": payload})


def _amount(cents: int) -> str:
    raw = cents.to_bytes(max(1, (cents.bit_length() + 8) // 8), "big", signed=True)
    return base64.b64encode(raw).decode()


def _row(i: int, cents: int) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"c{i}",
        "amount": _amount(cents),
        "created_at": 1_700_000_000_123_456,
        "order_date": 19_000,
        "updated_at": "2024-02-04T10:00:00+02:00",
        "note": None,
    }


def test_malformed_messages_are_kept_with_a_reason(spark: Any) -> None:
    values = [
        _payload("c", _row(1, -12345)),
        "not json at all",
        _payload("c", {**_row(2, 1), "amount": "@@not base64@@"}),
        _payload("x", _row(3, 1)),
        _payload("c", {**_row(4, 1), "customer": None}),
        None,
        json.dumps({"schema": None, "payload": {"ts_ms": 5}}),
    ]
    rows = decode_changes(frame_from_values(spark, values), ORDERS).orderBy("offset").collect()
    assert len(rows) == len(values)
    good = rows[0]
    assert good["_error"] is None and good["op"] == "c"
    assert good["after"]["amount"] == Decimal("-123.45")
    assert good["position"] == {"lsn": "101", "txId": "7"}
    assert "not valid JSON" in rows[1]["_error"]
    assert (
        rows[2]["_error"]
        == "$.payload.after.amount: is not a valid decimal for its precision and scale"
    )
    assert rows[3]["_error"] == "$.payload.op: is not a known op code"
    assert rows[4]["_error"] == "$.payload.after.customer: is null but the column is required"
    assert all(r["op"] is None and r["after"] is None for r in rows[1:5])
    assert (rows[5]["_control"], rows[5]["_error"]) == ("tombstone", None)
    assert (rows[6]["_control"], rows[6]["_error"]) == ("heartbeat", None)
    dropped = decode_changes(frame_from_values(spark, values), ORDERS, drop_control_records=True)
    assert dropped.count() == len(values) - 2


def test_a_misspelt_option_is_an_error(spark: Any) -> None:
    df = frame_from_values(spark, [_payload("c", _row(1, 5))])
    with pytest.raises(TypeError, match=r"'drop_control'.*did you mean 'drop_control_records'"):
        decode_changes(df, ORDERS, drop_control=True)


def test_spark_schema_parts_are_checked() -> None:
    from contracts.errors import SchemaError

    with pytest.raises(SchemaError, match="unknown part 'foo'"):
        spark_schema(ORDERS, part="foo")  # type: ignore[arg-type]
    canal = FIXTURES / "canal-json" / "flink-products.typed.expected.yaml"
    with pytest.raises(SchemaError, match=r"sends no Kafka message key.*key columns \(id\)"):
        spark_schema(canal, part="key")


def test_decoded_columns_have_the_contract_types(spark: Any) -> None:
    out = decode_changes(frame_from_values(spark, [_payload("c", _row(1, 5))]), ORDERS)
    want = spark_schema(ORDERS)
    assert [(f.name, f.dataType) for f in out.schema["after"].dataType.fields] == [
        (f.name, f.dataType) for f in want.fields
    ]


def test_latest_state_keeps_the_newest_row_and_drops_deleted_keys(spark: Any) -> None:
    values = [
        _payload("c", _row(1, 100), ts=1),
        _payload("c", _row(2, 200), ts=2),
        _payload("u", _row(1, 150), _row(1, 100), ts=3),
        _payload("d", None, _row(2, 200), ts=4),
        _payload("c", _row(3, 300), ts=5),
    ]
    feed = decode_changes(frame_from_values(spark, values), ORDERS)
    state = {r["id"]: r["amount"] for r in latest_state(feed).collect()}
    assert state == {1: Decimal("1.50"), 3: Decimal("3.00")}


def test_latest_state_ignores_truncates_errors_and_control_records(spark: Any) -> None:
    values = [
        _payload("c", _row(1, 100), ts=1),
        _payload("c", _row(2, 200), ts=2),
        _payload("t", None, ts=3),  # a truncate names no row: no all-null row appears
        _payload("u", {**_row(1, 1), "amount": "@@"}, _row(1, 100), ts=4),  # an _error row
        None,  # a tombstone
        "not json",
    ]
    feed = decode_changes(frame_from_values(spark, values), ORDERS)
    state = {r["id"]: r["amount"] for r in latest_state(feed).collect()}
    assert state == {1: Decimal("1.00"), 2: Decimal("2.00")}


def test_latest_state_on_a_wide_contract_matches_python(spark: Any) -> None:
    """The 12-column Debezium orders topic of examples/ (Spark's constraint inference once ran
    out of memory planning this, because the rank filter was pushed into the decode)."""
    from contracts.contract import Contract
    from contracts.formats import get_format
    from contracts.formats.base import InferOptions, Message

    topic = Path(__file__).parents[2] / "examples/topics/debezium-json/dbserver1.shop.orders.jsonl"
    messages = topic.read_text().splitlines()[:400]
    sample = [Message(value=json.loads(m), where=f"message {i}") for i, m in enumerate(messages)]
    inferred = get_format("debezium-json").infer(sample, InferOptions(infer_types=True)).contract
    c = Contract.model_validate({**inferred.model_dump(by_alias=True), "key": ["id"]})
    want: dict[int, str] = {}
    for m in messages:  # in order: each message is newer than the one before
        p = json.loads(m)["payload"]
        if p["op"] == "d":
            want.pop(p["before"]["id"], None)
        else:
            want[p["after"]["id"]] = p["after"]["status"]
    feed = decode_changes(frame_from_values(spark, messages), c)
    state = latest_state(feed, order_by=["offset"])
    assert {r["id"]: r["status"] for r in state.collect()} == want


def test_a_canal_message_with_many_rows_decodes_in_linear_memory(spark: Any) -> None:
    """20,000 rows in one message (1.6 MB): each exploded row once carried the whole parsed
    ``data`` array, so memory and time grew with rows x message size (out of memory from a few
    thousand rows)."""
    first = json.loads(
        (FIXTURES / "canal-json" / "flink-products.jsonl").read_text().splitlines()[0]
    )
    rows = [{**first["data"][0], "id": str(i)} for i in range(20_000)]
    message = json.dumps({**first, "data": rows})
    c = FIXTURES / "canal-json" / "flink-products.typed.expected.yaml"
    feed = decode_changes(frame_from_values(spark, [message]), c)
    got = feed.selectExpr(
        "count(*) as n", "count(_error) as errors", "sum(after.id) as ids"
    ).first()
    assert (got["n"], got["errors"], got["ids"]) == (20_000, 0, sum(range(20_000)))


def test_kcat_lines_that_are_not_records_become_errors(spark: Any, tmp_path: Path) -> None:
    from contracts.errors import InputError
    from spark_bindings.inputs import read_input

    good = {"topic": "t", "partition": 0, "offset": 7, "ts": 1, "key": None}
    lines = [
        json.dumps({**good, "payload": _payload("c", _row(1, 5))}),
        "",
        json.dumps({**good, "payload": _payload("c", _row(2, 5))})[:60],  # truncated
        json.dumps({"topic": "t", "offset": 9}),  # no payload: not a tombstone
        json.dumps({**good, "payload": None}),  # a real tombstone
    ]
    path = tmp_path / "dump.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rows = decode_changes(read_input(spark, [str(path)], "kcat", "debezium-json"), ORDERS).collect()
    assert [(r["op"], r["_control"], r["_error"] is not None) for r in rows] == [
        ("c", None, False),
        (None, None, True),
        (None, None, True),
        (None, "tombstone", False),
    ]
    plain = tmp_path / "values.jsonl"
    plain.write_text("\n" + _payload("c", _row(1, 5)) + "\n")
    with pytest.raises(InputError, match=r"values.jsonl:2: is not a kcat -J record"):
        read_input(spark, [str(plain)], "kcat", "debezium-json")


def test_streaming_file_source(spark: Any, tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    (source / "part-1.jsonl").write_text(
        "\n".join([_payload("c", _row(1, 1)), "garbage", _payload("c", _row(2, 2))]) + "\n"
    )
    stream = spark.readStream.schema("value string").text(str(source))
    feed = decode_changes(stream, ORDERS)
    query = (
        feed.writeStream.format("memory")
        .queryName("cdc_stream_test")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    rows = spark.sql("select op, after.id as id, _error from cdc_stream_test").collect()
    assert sorted((r["op"], r["id"]) for r in rows if r["_error"] is None) == [("c", 1), ("c", 2)]
    assert sum(1 for r in rows if r["_error"] is not None) == 1


def test_cli_spark_decode_writes_parquet_and_counts(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "feed"
    sample = FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl"
    args = ["spark", "decode", "--contract", str(ORDERS), "--input", str(sample)]
    args += ["--output", str(out), "--output-format", "json"]
    result = run(*args)  # reuses the test session (never stops it)
    assert result.code == 0, result.output
    summary = json.loads(result.text)
    assert summary["errors"] == 0
    assert summary["rows"] == len(sample.read_text().splitlines())
    assert summary["counts"]["c"] >= 1
    assert any(p.suffix == ".parquet" for p in out.iterdir())
    assert spark.read.parquet(str(out)).count() == summary["rows"]


def test_cli_spark_schema_python_is_pasteable() -> None:
    result = run("spark-schema", str(ORDERS), "--as", "python")
    assert result.code == 0, result.output
    scope: dict[str, Any] = {}
    exec(result.text, scope)
    assert scope["schema"] == spark_schema(ORDERS)


def test_contract_file_path_is_accepted(spark: Any) -> None:
    c = load_contract(ORDERS)
    df = frame_from_values(spark, [_payload("r", _row(9, 9))])
    assert (
        decode_changes(df, str(ORDERS)).collect()[0]["after"]
        == decode_changes(df, c).collect()[0]["after"]
    )


def test_a_damaged_first_line_does_not_hide_json_lines(spark: Any, tmp_path: Path) -> None:
    """``auto`` decides the layout by the first whole JSON line: a truncated first message is
    one ``_error`` row, not a failed run (nor a guess of pretty-printed documents)."""
    from spark_bindings.inputs import read_input, sniff

    good = [_payload("c", _row(1, 5)), _payload("c", _row(2, 7))]
    values = tmp_path / "values.jsonl"
    values.write_text("\n".join([good[0][:50], *good]) + "\n")
    meta = {"topic": "t", "partition": 0, "offset": 7, "ts": 1, "key": None}
    kcat = tmp_path / "dump.jsonl"
    kcat.write_text("\n".join(["{garbage", *(json.dumps({**meta, "payload": g}) for g in good)]))
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(good[0]), indent=2) + "\n" + json.dumps({"a": 1}))
    assert (sniff(str(values)), sniff(str(kcat)), sniff(str(pretty))) == ("values", "kcat", "json")
    for path in (values, kcat):
        rows = decode_changes(read_input(spark, [str(path)], "auto", "debezium-json"), ORDERS)
        got = [(r["op"], r["_error"] is not None) for r in rows.collect()]
        assert got == [(None, True), ("c", False), ("c", False)], path.name


def test_kcat_input_without_any_json_line_is_refused(spark: Any, tmp_path: Path) -> None:
    from contracts.errors import InputError
    from spark_bindings.inputs import read_input

    path = tmp_path / "rows.csv"
    path.write_text("1,a\n2,b\n")
    with pytest.raises(InputError, match=r"rows.csv: holds no JSON line in its first 64 KiB"):
        read_input(spark, [str(path)], "kcat", "debezium-json")


def test_file_inputs_say_where_each_message_is(spark: Any, tmp_path: Path) -> None:
    """``location``: ``file:line`` as the Python commands say it, blank lines counted, also
    when Spark reads a file as several splits."""
    from spark_bindings.inputs import read_input

    folder = tmp_path / "in dir"
    folder.mkdir()
    small = folder / "a b.jsonl"
    small.write_text(
        _payload("c", _row(1, 5)) + "\n\nnot json\n" + _payload("c", _row(2, 5)) + "\n"
    )
    big = tmp_path / "big.jsonl"
    big.write_text("".join(_payload("c", _row(i, i)) + "\n" for i in range(1, 3001)))
    spark.conf.set("spark.sql.files.maxPartitionBytes", "65536")  # ~30 splits of big
    try:
        df = read_input(spark, [str(small), str(big)], "values", "debezium-json")
        assert df.rdd.getNumPartitions() > 10
        feed = decode_changes(df, ORDERS).select("location", "after.id", "_error").collect()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    at = {r["location"]: r for r in feed}
    assert [at[f"{small}:{n}"]["id"] for n in (1, 4)] == [1, 2]
    assert at[f"{small}:3"]["_error"] is not None and f"{small}:2" not in at
    assert all(at[f"{big}:{i}"]["id"] == i for i in range(1, 3001))
    assert len(feed) == 3003


def test_kcat_json_and_avro_inputs_carry_their_locations(spark: Any, tmp_path: Path) -> None:
    from spark_bindings.inputs import read_input

    kcat = FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl"
    rows = read_input(spark, [str(kcat)], "kcat", "debezium-json").collect()
    assert [r["location"] for r in rows] == [f"{kcat}:{n}" for n in range(1, len(rows) + 1)]
    documents = tmp_path / "docs.json"
    documents.write_text(json.dumps([json.loads(_payload("c", _row(i, 1))) for i in (1, 2)]))
    rows = read_input(spark, [str(documents)], "json", "debezium-json").collect()
    assert [r["location"] for r in rows] == [f"{documents}[0]", f"{documents}[1]"]
    dts = FIXTURES / "dts-avro" / "orders.bin"
    rows = read_input(spark, [str(dts)], "avro", "dts-avro").collect()
    assert rows[0]["location"] == f"{dts}@0" and len({r["location"] for r in rows}) == len(rows)
