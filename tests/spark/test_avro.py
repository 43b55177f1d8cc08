"""Avro topics in Spark: DTS records and Confluent-framed Debezium Avro (fastavro decoder).

The Debezium case produces messages with Confluent's own ``AvroSerializer`` against the real
embedded registry (``python -m api.registry`` over HTTP), with two schema versions mixed in one
DataFrame.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from clirun import run

# The registry tests' server class (tests/ is on sys.path for the registry package's conftest).
from registry.conftest import RegistryServer

from contracts.contract import Contract, load_contract
from contracts.render import contract_avro
from spark_bindings import decode_changes
from spark_bindings.avro import dts_values, spark_avro_available
from spark_bindings.inputs import frame_from_values

from .parity import (
    FIXTURES,
    assert_same_feed,
    contract,
    from_spark,
    messages,
    python_feed,
    spark_feed,
)

pytestmark = pytest.mark.spark

DTS = FIXTURES / "dts-avro"

#: (sample, contract): every framing DTS files come in.
DTS_CASES = [
    ("orders.bin", "orders.expected.yaml"),
    ("orders.confluent.bin", "orders.expected.yaml"),
    ("orders.avro", "orders.expected.yaml"),
    ("items-pg.bin", "items-pg.expected.yaml"),
]


def _dts_frame(spark: Any, sample: str) -> Any:
    return frame_from_values(spark, _values(DTS / sample))


def _values(path: Path) -> list[bytes]:
    return [value for value, _where in dts_values(path.read_bytes(), path.name)]


@pytest.mark.parametrize(("sample", "contract_file"), DTS_CASES)
def test_dts_equals_python_normalize(spark: Any, sample: str, contract_file: str) -> None:
    c = contract("dts-avro", contract_file)
    want = python_feed("dts-avro", messages("dts-avro", sample), c)
    rows = decode_changes(_dts_frame(spark, sample), c).orderBy("offset").collect()
    assert_same_feed(spark_feed(rows, c), want)


def test_dts_malformed_values_are_kept_with_a_reason(spark: Any) -> None:
    c = contract("dts-avro", "orders.expected.yaml")
    good = _values(DTS / "orders.bin")
    bad = _values(DTS / "bad" / "bad-values.bin")
    # good[2] is an INSERT; bad holds two undecodable INSERTs around a good one
    values = [good[2], good[3][:40], b"\x07garbage", None, bad[0], bad[2], good[4] + b"\x00\x00"]
    feed = decode_changes(frame_from_values(spark, values, topic="dts"), c)
    rows = feed.orderBy("offset").collect()
    assert len(rows) == len(values)
    errors = [r["_error"] for r in rows]
    assert errors[0] is None and rows[0]["op"] == "c" and rows[0]["key"]["id"] == 1001
    assert "not a DTS Avro record" in errors[1]
    assert errors[2] is not None
    assert errors[3] is None and rows[3]["_control"] == "tombstone" and rows[3]["op"] is None
    assert "$.afterImages[1]" in errors[4] and "customer_id" in errors[4]
    assert "$.afterImages[6]" in errors[5] and "utf8mb4" in errors[5]
    assert "not a DTS Avro record" in errors[6]
    for r in rows[1:3] + rows[4:]:
        assert r["op"] is None and r["after"] is None and r["topic"] == "dts"
    # an undecodable value keeps the envelope facts that did decode
    assert rows[4]["table"]["name"] == "orders" and rows[4]["position"]["id"]
    assert (
        decode_changes(frame_from_values(spark, values), c, drop_control_records=True)
        .where("_control is not null")
        .count()
        == 0
    )


# --- Confluent-framed Debezium Avro ---------------------------------------------------------------


@pytest.fixture(scope="module")
def registry_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("avro-registry")
    server = RegistryServer(base / "registry.db", base / "server.log").start()
    yield server.url
    server.stop()


ORDERS = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"
UTC = dt.UTC


def _versions() -> tuple[Contract, Contract]:
    """v1 without ``note``; v2 (the contract jobs decode with) adds it as an optional column."""
    v2 = load_contract(ORDERS)
    columns = [col for col in v2.columns if col["field"] != "note"]
    v1 = _changed(v2, columns=columns)
    return v1, v2


def _changed(c: Contract, **update: Any) -> Contract:
    """A validated copy of a contract with some top-level fields replaced."""
    return Contract.model_validate({**c.model_dump(by_alias=True), **update})


def _row(i: int, amount: str, note: str | None, with_note: bool) -> dict[str, Any]:
    row = {
        "id": i,
        "customer": f"c{i}",
        "amount": Decimal(amount),
        "created_at": 1_700_000_000_123_456 + i,
        "order_date": 19_000 + i,
        "updated_at": "2024-02-04T10:00:00+02:00",
    }
    if with_note:
        row["note"] = note
    return row


def _envelope(op: str, before: Any, after: Any, ts: int) -> dict[str, Any]:
    source = {
        "version": "2.5.0.Final",
        "connector": "postgresql",
        "name": "pgserver1",
        "ts_ms": ts - 5,
        "snapshot": "false",
        "db": "shop",
        "schema": "public",
        "table": "orders",
        "lsn": 1000 + ts,
        "txId": 77,
    }
    return {"before": before, "after": after, "source": source, "op": op, "ts_ms": ts}


def _serialized(url: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:

    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": url})
    v1, v2 = _versions()
    value_ctx = SerializationContext(topic, MessageField.VALUE)
    key_ctx = SerializationContext(topic, MessageField.KEY)
    ser = {
        n: AvroSerializer(client, json.dumps(contract_avro(v, "value")))
        for n, v in (("v1", v1), ("v2", v2))
    }
    key_ser = AvroSerializer(client, json.dumps(contract_avro(v2, "key")))

    def msg(version: str, op: str, before: Any, after: Any, ts: int) -> tuple[bytes, bytes]:
        key_id = (after or before)["id"]
        value = ser[version](_envelope(op, before, after, ts), value_ctx)
        return key_ser({"id": key_id}, key_ctx), value

    return [
        msg("v1", "c", None, _row(1, "-123.45", None, False), 10),
        msg("v2", "c", None, _row(2, "99999999.99", "gift", True), 11),
        msg("v1", "u", _row(1, "-123.45", None, False), _row(1, "0.01", None, False), 12),
        msg("v2", "d", _row(2, "99999999.99", "gift", True), None, 13),
        (key_ser({"id": 2}, key_ctx), None),  # tombstone
    ]


def _expected_after(i: int, amount: str, note: str | None) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"c{i}",
        "amount": Decimal(amount),
        "created_at": dt.datetime(2023, 11, 14, 22, 13, 20, 123_456 + i, tzinfo=UTC),
        "order_date": dt.date(2022, 1, 8) + dt.timedelta(days=i),
        "updated_at": dt.datetime(2024, 2, 4, 8, 0, tzinfo=UTC),
        "note": note,
    }


def _decode(df: Any, c: Contract, url: str, **options: Any) -> Any:
    """Through the public entry point: decode_changes routes encoding="avro" to the Avro path."""
    from spark_bindings import decode_changes

    return decode_changes(df, c, registry=url, encoding="avro", **options)


def _kafka_frame(spark: Any, pairs: list[tuple[bytes | None, bytes | None]], topic: str) -> Any:
    from spark_bindings.inputs import KAFKA_SCHEMA

    rows = [(k, v, topic, 0, i, None) for i, (k, v) in enumerate(pairs)]
    return spark.createDataFrame(rows, KAFKA_SCHEMA)


def test_confluent_debezium_avro_with_two_schema_versions(spark: Any, registry_url: str) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    pairs = _serialized(registry_url, topic)
    ids = {int.from_bytes(v[1:5], "big") for _, v in pairs if v is not None}
    assert len(ids) == 2, "the topic must mix two writer schemas"
    _, c = _versions()
    rows = _decode(_kafka_frame(spark, pairs, topic), c, registry_url).orderBy("offset").collect()
    assert [r["_error"] for r in rows] == [None] * 5
    assert [r["op"] for r in rows] == ["c", "c", "u", "d", None]
    assert rows[4]["_control"] == "tombstone"
    got = [from_spark(r, c) for r in rows[:4]]
    assert got[0]["after"] == _expected_after(1, "-123.45", None)
    assert got[1]["after"] == _expected_after(2, "99999999.99", "gift")
    assert got[2]["before"] == _expected_after(1, "-123.45", None)
    assert got[2]["after"] == {**_expected_after(1, "0.01", None)}
    assert got[3]["before"] == _expected_after(2, "99999999.99", "gift")
    assert got[3]["after"] is None
    assert [g["key"] for g in got] == [{"id": 1}, {"id": 2}, {"id": 1}, {"id": 2}]
    assert got[0]["table"] == {"database": "shop", "schema": "public", "name": "orders"}
    assert [g["ts_ms"] for g in got] == [10, 11, 12, 13]
    assert [g["source_ts_ms"] for g in got] == [5, 6, 7, 8]
    assert got[0]["position"]["lsn"] == "1010" and got[0]["position"]["txId"] == "77"
    assert rows[0]["topic"] == topic and rows[3]["offset"] == 3


def test_confluent_malformed_frames_become_errors(spark: Any, registry_url: str) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    _, good = _serialized(registry_url, topic)[0]
    assert good is not None
    unknown = b"\x00" + (987_654).to_bytes(4, "big") + good[5:]
    values = [good, b"\x01" + good[1:], unknown, good[:-3], good[:3], good + b"\x00"]
    _, c = _versions()
    df = frame_from_values(spark, values, topic=topic)
    rows = _decode(df, c, registry_url).orderBy("offset").collect()  # the default decoder
    assert len(rows) == len(values)
    errors = [r["_error"] for r in rows]
    assert errors[0] is None and rows[0]["op"] == "c"
    assert "magic byte is 1" in errors[1]
    assert "schema id 987654 is not in the registry" in errors[2]
    assert "truncated or malformed" in errors[3]
    assert "the header alone needs 5" in errors[4]
    if spark_avro_available(spark):
        # the default is then spark-avro's from_avro: Java Avro's reader stops at the end of
        # the datum, so the byte after it is not reported and the row decodes like the good one
        assert errors[5] is None and rows[5]["after"] == rows[0]["after"]
        failed = [1, 2, 3, 4]
    else:
        print("spark-avro absent: the default decoder here is fastavro, not from_avro")
        assert errors[5] == f"$: 1 bytes left after the Avro value of schema id {_id(good)}"
        failed = [1, 2, 3, 4, 5]
    assert all(rows[i]["op"] is None and rows[i]["after"] is None for i in failed)


def _id(framed: bytes) -> int:
    return int.from_bytes(framed[1:5], "big")


def test_contract_option_selects_avro(spark: Any, registry_url: str, tmp_path: Path) -> None:
    _, c = _versions()
    avro_contract = _changed(c, options={**c.options, "value_encoding": "avro"})
    from spark_bindings.avro import wants_avro

    assert wants_avro(avro_contract, {}) and wants_avro(c, {"encoding": "avro"})
    assert not wants_avro(c, {})
    with pytest.raises(Exception, match="registry="):
        _decode(frame_from_values(spark, [b"x"]), c, None)  # type: ignore[arg-type]


def _kafka_parquet(spark: Any, pairs: list[tuple[bytes | None, bytes | None]], path: Path) -> None:
    """The topic as a job would write it out of ``spark.read.format("kafka")``."""
    _kafka_frame(spark, pairs, "orders-topic").coalesce(1).write.parquet(str(path))


def _failing_cli(args: list[str]) -> str:
    """Run the real entry point (which turns errors into one line); its stderr."""
    result = run(*args)
    assert result.code != 0
    err = result.err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_cli_decodes_confluent_avro_from_kafka_parquet(
    spark: Any, registry_url: str, tmp_path: Path
) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    pairs = _serialized(registry_url, topic)
    _kafka_parquet(spark, pairs, tmp_path / "topic")
    contract = tmp_path / "orders.yaml"
    contract.write_text(ORDERS.read_text())
    out = tmp_path / "feed"
    args = ["spark", "decode", "--contract", str(contract), "--input", str(tmp_path / "topic")]
    args += ["--output", str(out), "--encoding", "avro", "--registry", registry_url]
    result = run(*args, "--output-format", "json")  # reuses the test session (never stops it)
    assert result.code == 0, result.output
    summary = json.loads(result.text)
    assert summary["counts"] == {"c": 2, "control:tombstone": 1, "d": 1, "u": 1}
    assert summary["errors"] == 0
    written = spark.read.parquet(str(out)).orderBy("offset").collect()
    assert [r["after"]["amount"] for r in written[:2]] == [
        Decimal("-123.45"),
        Decimal("99999999.99"),
    ]
    assert {r["topic"] for r in written} == {"orders-topic"}


def test_cli_avro_without_registry_is_one_clear_line(
    spark: Any, registry_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    _kafka_parquet(spark, _serialized(registry_url, topic), tmp_path / "topic")
    args = ["spark", "decode", "--contract", str(ORDERS), "--input", str(tmp_path / "topic")]
    monkeypatch.delenv("SCHEMA_REGISTRY_URL", raising=False)
    args += ["--output", str(tmp_path / "feed"), "--encoding", "avro"]
    assert "give --registry URL or set SCHEMA_REGISTRY_URL" in _failing_cli(args)


def test_cli_registry_flags_for_json_values_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl"
    args = ["spark", "decode", "--contract", str(ORDERS), "--input", str(sample)]
    args += ["--output", str(tmp_path / "feed"), "--registry", "http://127.0.0.1:1"]
    err = _failing_cli([*args, "--subject", "s-value"])
    assert "--registry and --subject apply to Avro values" in err
    assert "--encoding avro" in err


def test_cli_json_encoding_for_dts_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dts = FIXTURES / "dts-avro"
    contract_file = next(dts.glob("*.expected.yaml"))
    args = ["spark", "decode", "--contract", str(contract_file), "--input", str(contract_file)]
    args += ["--output", str(tmp_path / "feed"), "--encoding", "json"]
    err = _failing_cli(args)
    assert "values are Avro records; --encoding json does not apply" in err
    args[-2:] = ["--subject", "orders-value"]
    err = _failing_cli(args)
    assert (
        "--subject applies to Confluent-framed values; dts-avro records carry no schema id" in err
    )


def test_cli_parquet_without_value_column(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spark.createDataFrame([(1, "x")], "offset long, payload string").write.parquet(
        str(tmp_path / "odd")
    )
    args = ["spark", "decode", "--contract", str(ORDERS), "--input", str(tmp_path / "odd")]
    err = _failing_cli([*args, "--output", str(tmp_path / "feed")])
    assert "no 'value' column (found: offset, payload)" in err
    assert str(tmp_path / "odd") in err


def test_cli_parquet_input_that_is_not_parquet(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl"
    args = ["spark", "decode", "--contract", str(ORDERS), "--input", str(sample)]
    args += ["--output", str(tmp_path / "feed"), "--input-format", "parquet"]
    err = _failing_cli(args)
    assert f"{sample}: is not a Parquet file" in err


def test_parquet_inputs_are_checked_file_by_file(spark: Any, tmp_path: Path) -> None:
    import shutil

    from contracts.errors import InputError
    from spark_bindings.inputs import read_input

    def read(*paths: Path, layout: str = "auto") -> Any:
        return read_input(spark, [str(p) for p in paths], layout, "debezium-json")  # type: ignore[arg-type]

    good = tmp_path / "good"
    _kafka_parquet(spark, [(None, b"{}"), (b"k", b"[]")], good)
    part = next(good.glob("*.parquet"))
    # data files named without a suffix, an empty file and Spark's markers are all fine
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(part, plain / "000000_0")
    (plain / "000001_0").write_bytes(b"")
    (plain / "_SUCCESS").write_bytes(b"")
    assert read(plain).count() == 2 and read(good, plain).count() == 4
    # one file of a directory with an int value: that file is named
    mixed = tmp_path / "mixed"
    shutil.copytree(good, mixed)
    odd = mixed / "part-odd.parquet"
    spark.createDataFrame([(1,)], "value int").coalesce(1).write.parquet(str(tmp_path / "ints"))
    shutil.copy(next((tmp_path / "ints").glob("*.parquet")), odd)
    with pytest.raises(InputError, match="column 'value' is int32") as bad:
        read(good, mixed)
    assert str(odd) in str(bad.value)
    # a damaged footer is named before Spark reads anything
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    with pytest.raises(InputError, match="is not readable as Parquet") as bad:
        read(cut)
    assert str(cut) in str(bad.value)
    # auto-detection looks at every input
    sample = FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl"
    with pytest.raises(InputError, match=r"looks like parquet, but .*kcat.jsonl looks like"):
        read(sample, good)
    with pytest.raises(InputError, match="is a directory; only 'kcat' files are read"):
        read(sample, good, layout="kcat")


def test_cli_avro_input_format_for_a_confluent_contract_says_what_to_use(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = tmp_path / "frames.bin"
    frame.write_bytes(b"\x00\x00\x00\x00\x01\x02")
    args = ["spark", "decode", "--contract", str(ORDERS), "--input", str(frame)]
    err = _failing_cli([*args, "--output", str(tmp_path / "feed")])
    assert "--input-format parquet" in err


def test_sniff_knows_parquet_files_and_directories(spark: Any, tmp_path: Path) -> None:
    from contracts.errors import InputError
    from spark_bindings.inputs import sniff

    _kafka_parquet(spark, [(None, b"{}")], tmp_path / "topic")
    part = next((tmp_path / "topic").glob("*.parquet"))
    assert sniff(str(tmp_path / "topic")) == "parquet" and sniff(str(part)) == "parquet"
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="directory without Parquet files"):
        sniff(str(tmp_path / "empty"))


# --- the from_avro decoder (spark_bindings.from_avro) ----------------------------------------------


@pytest.fixture
def standin_from_avro(spark: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """spark-avro's from_avro: the real one when its jar is on the classpath, else the fastavro
    stand-in of tests/spark/avro_standin.py (the real jar is then not exercised)."""
    import spark_bindings.avro as avro_module
    import spark_bindings.from_avro as from_avro_module

    from .avro_standin import standin_from_avro as standin

    if not spark_avro_available(spark):
        monkeypatch.setattr(from_avro_module, "FROM_AVRO", standin)
        monkeypatch.setattr(avro_module, "spark_avro_available", lambda _spark: True)
        print("spark-avro absent: from_avro decoded by the fastavro stand-in, not the real jar")
    return from_avro_module


def _rows(df: Any) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.orderBy("offset").collect()]


def test_from_avro_equals_fastavro_on_mixed_versions(
    spark: Any, registry_url: str, standin_from_avro: Any
) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    df = _kafka_frame(spark, _serialized(registry_url, topic), topic)
    _, c = _versions()
    fast = _rows(_decode(df, c, registry_url, use_spark_avro=False))
    native = _rows(_decode(df, c, registry_url))  # auto: from_avro when available
    assert [r["_error"] for r in native] == [None] * 5
    assert native == fast
    assert native[1]["after"]["amount"] == Decimal("99999999.99")
    assert native[4]["_control"] == "tombstone" and native[4]["key"] == {"id": 2}


def test_from_avro_malformed_frames_become_errors(
    spark: Any, registry_url: str, standin_from_avro: Any
) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    _, good = _serialized(registry_url, topic)[0]
    assert good is not None
    unknown = b"\x00" + (987_654).to_bytes(4, "big") + good[5:]
    values = [good, b"\x01" + good[1:], unknown, good[:-3], good[:3], good + b"\x00", good[:5]]
    _, c = _versions()
    df = frame_from_values(spark, values, topic=topic)
    native = _rows(_decode(df, c, registry_url, use_spark_avro=True))
    fast = _rows(_decode(df, c, registry_url, use_spark_avro=False))
    assert len(native) == len(values)
    errors = [r["_error"] for r in native]
    assert errors[0] is None and native[0]["op"] == "c"
    assert errors[1] == "$: not Confluent wire format: magic byte is 1, expected 0"
    assert errors[2] == "$: schema id 987654 is not in the registry (40403)"
    assert "truncated or malformed" in errors[3] and "truncated or malformed" in errors[6]
    assert errors[4] == "$: not Confluent wire format: 3 bytes, the header alone needs 5"
    # Java Avro's reader stops at the end of the datum: trailing bytes are not reported.
    assert errors[5] is None and native[5]["after"] == native[0]["after"]
    for i in (1, 2, 4):
        assert errors[i] == fast[i]["_error"]
    assert all(r["op"] is None and r["after"] is None for i, r in enumerate(native) if errors[i])


def test_from_avro_plans_writer_ids(spark: Any, registry_url: str, standin_from_avro: Any) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    pairs = _serialized(registry_url, topic)
    df = _kafka_frame(spark, pairs, topic)
    _, c = _versions()
    ids = sorted({int.from_bytes(v[1:5], "big") for _, v in pairs if v is not None})
    by_subject = _rows(_decode(df, c, registry_url, subject=f"{topic}-value"))
    assert [r["_error"] for r in by_subject] == [None] * 5
    only_first = _rows(_decode(df, c, registry_url, writer_ids=[ids[0]]))
    v2_rows = [i for i, (_, v) in enumerate(pairs) if v is not None and v[1:5] != pairs[0][1][1:5]]
    for i, row in enumerate(only_first):
        if i in v2_rows:
            assert row["_error"] == (
                f"$: schema id {ids[1]} was not planned for this decode "
                "(pass writer_ids= or subject=)"
            )
        else:
            assert row["_error"] is None
    with pytest.raises(Exception, match="subject 'nope-value' has no versions in the registry"):
        _decode(df, c, registry_url, subject="nope-value")


def test_a_registry_url_that_is_not_a_registry_fails_the_decode_at_once(
    spark: Any, registry_url: str, tmp_path: Path
) -> None:
    from registry_sync.protocol import NotARegistryError

    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    pairs = _serialized(registry_url, topic)
    _, c = _versions()
    df = _kafka_frame(spark, pairs, topic)
    for use_spark_avro in (False, None):  # fastavro, and from_avro where spark-avro is there
        with pytest.raises(NotARegistryError, match=r"not a Schema Registry path"):
            _decode(df, c, f"{registry_url}/typo", use_spark_avro=use_spark_avro)


def test_from_avro_streaming_needs_planned_ids(
    spark: Any, registry_url: str, standin_from_avro: Any, tmp_path: Path
) -> None:
    from contracts.errors import InputError
    from spark_bindings.inputs import KAFKA_SCHEMA

    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    pairs = _serialized(registry_url, topic)
    _kafka_frame(spark, pairs, topic).write.parquet(str(tmp_path / "in"))
    stream = spark.readStream.schema(KAFKA_SCHEMA).parquet(str(tmp_path / "in"))
    _, c = _versions()
    with pytest.raises(InputError, match="streaming decode with from_avro needs writer_ids="):
        _decode(stream, c, registry_url)
    decoded = _decode(stream, c, registry_url, subject=f"{topic}-value")  # and <topic>-key
    query = decoded.writeStream.format("memory").queryName(f"q{uuid.uuid4().hex[:8]}").start()
    try:
        query.processAllAvailable()
        rows = _rows(spark.table(query.name))
    finally:
        query.stop()
    batch = _rows(_decode(_kafka_frame(spark, pairs, topic), c, registry_url))
    assert rows == batch


def test_dts_is_never_read_with_from_avro(spark: Any, standin_from_avro: Any) -> None:
    c = contract("dts-avro", "orders.expected.yaml")
    with pytest.raises(Exception, match="read by the fastavro decoder only"):
        decode_changes(_dts_frame(spark, "orders.bin"), c, use_spark_avro=True)
    auto = decode_changes(_dts_frame(spark, "orders.bin"), c).collect()
    assert auto and all(r["_error"] is None for r in auto)


def test_from_avro_unreadable_keys(spark: Any, registry_url: str, standin_from_avro: Any) -> None:
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    key, value = _serialized(registry_url, topic)[0]
    assert key is not None and value is not None
    unknown_key = b"\x00" + (987_655).to_bytes(4, "big") + key[5:]
    truncated = key[:5] + b"\x80"  # a varint cut short
    pairs = [(key, value), (unknown_key, value), (truncated, value), (b"plain", value)]
    df = _kafka_frame(spark, pairs, topic)
    _, c = _versions()
    native = _rows(_decode(df, c, registry_url, use_spark_avro=True))
    fast = _rows(_decode(df, c, registry_url, use_spark_avro=False))
    key_id = int.from_bytes(key[1:5], "big")
    bad = f"$key: not valid Avro for schema id {key_id} (truncated or malformed"
    assert [r["_error"] for r in native] == [None, fast[1]["_error"], bad + ")", None]
    assert fast[2]["_error"].startswith(bad) and fast[3]["_error"] is None
    assert native[1]["_error"].startswith("$key: schema id 987655 is not in the registry")
    assert native[0]["key"] == native[3]["key"] == {"id": 1}  # an unframed key: from the row


def test_from_avro_with_the_real_jar(spark: Any, registry_url: str) -> None:
    if not spark_avro_available(spark):
        pytest.skip(
            "spark-avro jar not on the classpath: the real from_avro was not exercised (the "
            "from_avro tests above ran on the fastavro stand-in)"
        )
    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    df = _kafka_frame(spark, _serialized(registry_url, topic), topic)
    _, c = _versions()
    fast = _rows(_decode(df, c, registry_url, use_spark_avro=False))
    assert _rows(_decode(df, c, registry_url, use_spark_avro=True)) == fast


def test_from_avro_writer_the_contract_cannot_take(
    spark: Any, registry_url: str, standin_from_avro: Any
) -> None:
    """A writer schema whose envelope does not fit the contract fails its own messages only."""
    import io

    import fastavro
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    topic = f"t{uuid.uuid4().hex[:8]}.public.orders"
    pairs = _serialized(registry_url, topic)
    _, c = _versions()
    odd = contract_avro(c, "value")
    odd["fields"] = [{**f, "type": "string"} if f["name"] == "source" else f for f in odd["fields"]]
    client = SchemaRegistryClient({"url": registry_url})
    odd_id = client.register_schema(f"{topic}-odd", Schema(json.dumps(odd), "AVRO"))
    record = {**_envelope("c", None, _row(9, "1.00", None, True), 20), "source": "pg"}
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(odd), record)
    framed = b"\x00" + odd_id.to_bytes(4, "big") + body.getvalue()
    df = _kafka_frame(spark, [*pairs[:2], (None, framed)], topic)
    rows = _rows(_decode(df, c, registry_url, use_spark_avro=True))
    assert [r["_error"] for r in rows[:2]] == [None, None]
    assert rows[2]["_error"] == (
        f"$: schema id {odd_id}.source: the writer's string is not the record the contract expects"
    )


_DETECT = """
import sys
from pyspark.sql import SparkSession
from spark_bindings.avro import SPARK_AVRO_CLASS, spark_avro_available

spark = (
    SparkSession.builder.master("local[1]").appName("detect")
    .config("spark.ui.enabled", "false").config("spark.jars", sys.argv[1]).getOrCreate()
)
try:
    spark._jvm.java.lang.Class.forName(SPARK_AVRO_CLASS)  # the system class path only
    on_system_path = True
except Exception:
    on_system_path = False
print("found", spark_avro_available(spark), "system", on_system_path)
spark.stop()
"""


def test_spark_avro_is_found_through_the_context_class_loader(tmp_path: Path) -> None:
    """A jar added with ``spark.jars`` (as ``--packages`` and ``--jars`` add spark-avro) is on
    Spark's context class loader, not on the JVM's system class path, and is found there.

    The jar here holds only a class of spark-avro's name, compiled with javac: it proves the
    lookup, not spark-avro (which comes from Maven Central, out of reach here)."""
    import os
    import shutil
    import subprocess
    import sys

    javac, jar = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar is None:
        pytest.skip("no JDK (javac, jar): the context-class-loader lookup was not exercised")
    source = tmp_path / "src" / "org" / "apache" / "spark" / "sql" / "avro"
    source.mkdir(parents=True)
    (source / "AvroDataToCatalyst.java").write_text(
        "package org.apache.spark.sql.avro;\npublic class AvroDataToCatalyst {}\n"
    )
    classes = tmp_path / "classes"
    subprocess.run([javac, "-d", str(classes), str(source / "AvroDataToCatalyst.java")], check=True)
    marker = tmp_path / "marker-spark-avro.jar"
    subprocess.run([jar, "cf", str(marker), "-C", str(classes), "."], check=True)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    done = subprocess.run(
        [sys.executable, "-c", _DETECT, str(marker)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "found True system False"
