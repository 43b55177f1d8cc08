"""Issue #25: real published messages decode to the values their sources state.

Sources (read from ``../shared/realworld``, skipped where absent; provenance in its README):
- Kafka ``JsonConverterTest`` (apache/kafka connect/json, decimal.format=NUMERIC):
  ``1.23456789123456789`` at scale 17 and ``1.5600`` at scale 4 are those numbers.
- Paimon ``KafkaCanalSyncTableActionITCase`` / ``KafkaDebeziumSyncTableActionITCase``
  (apache/paimon paimon-flink/paimon-flink-cdc, all-types data): ``_fixed`` DECIMAL(40,3)
  ``123456789876543212345678987654321.110``, ``_numeric`` DECIMAL(8,3) ``12345.110``, Canal's
  ``"_enum":"1"`` of enum('value1','value2','value3') is ``value1`` and ``"_set":"3"`` of
  set('a','b','c','d') is ``[a, b]`` (Debezium's EnumSet text ``a,b`` here).
- TiCDC (pingcap/ticdc decoder_test.go data): ``_tidb.commitTs`` of each row change.
Canal's own LogEventConvert (alibaba/canal @ 0208a2e6) writes the binlog value's text: the
ENUM index and the SET bitmask.
"""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import pytest

from contracts.contract import parse_contract
from contracts.errors import DecodeError, InputError
from contracts.formats import get_format
from contracts.formats.base import InferOptions, Message
from contracts.io import read_messages
from contracts.jsondoc import parse_document
from contracts.jsonnumbers import JsonNumber, may_lose_digits

_ROOT = Path(__file__).resolve().parents[2]
#: ``../shared/realworld`` beside the checkout (or beside the worktrees' parent).
_CORPORA = [_ROOT.parent / "shared" / "realworld", _ROOT.parent.parent / "shared" / "realworld"]


def _real(path: str) -> Path:
    for corpus in _CORPORA:
        found = corpus / "real_world" / path
        if found.is_file():
            return found
    pytest.skip(f"real_world/{path} is absent (no ../shared/realworld corpus here)")


def _json_lines(path: Path, tmp_path: Path) -> Path:
    """Paimon's files open with a license comment: keep the JSON lines."""
    lines = [line for line in path.read_text().splitlines() if line.startswith("{")]
    out = tmp_path / path.name
    out.write_text("\n".join(lines) + "\n")
    return out


def _events(fmt_name: str, path: Path) -> list[Any]:
    fmt = get_format(fmt_name)
    messages = list(fmt.assemble(read_messages([path], fmt.input_kind)))
    contract = fmt.infer(messages, InferOptions()).contract
    return [e for m in messages for e in fmt.normalize(m, contract)], contract, messages


@pytest.mark.parametrize(
    "sample, column, text",
    [
        ("assembled-dec_highprec.jsonl", "dec_highprec", "1.23456789123456789"),
        ("assembled-dec_trailing.jsonl", "dec_trailing", "1.5600"),
        ("assembled-dec_num.jsonl", "dec_num", "1.56"),
    ],
)
def test_jsonconverter_numeric_decimals_keep_digits_and_scale(
    sample: str, column: str, text: str
) -> None:
    events, _, _ = _events("debezium-json", _real(f"kafka-jsonconverter/{sample}"))
    (event,) = events
    assert format(event.after[column], "f") == text


def test_paimon_debezium_numeric_decimals(tmp_path: Path) -> None:
    path = _json_lines(_real("paimon/debezium-alltype-data-1.txt"), tmp_path)
    (event,), _, _ = _events("debezium-json", path)
    after = {k: format(v, "f") for k, v in event.after.items() if isinstance(v, decimal.Decimal)}
    assert after["_fixed"] == "123456789876543212345678987654321.110"
    assert after["_numeric"] == "12345.110"
    assert after["_big_decimal"] == "2222222222222222300000001111.1234567890"


def test_paimon_canal_enum_set_and_decimals(tmp_path: Path) -> None:
    path = _json_lines(_real("paimon/canal-alltype-data.txt"), tmp_path)
    events, contract, messages = _events("canal-json", path)
    first = events[0].after
    assert first["_enum"] == "value1"
    assert first["_set"] == "a,b"
    assert format(first["_numeric"], "f") == "12345.110"
    assert format(first["_fixed"], "f") == "123456789876543212345678987654321.110"
    assert events[1].after["_enum"] is None
    fmt = get_format("canal-json")
    assert all(not fmt.validate(m, contract) for m in messages)


def _canal(data: dict[str, Any], mysql: dict[str, str], type_: str = "INSERT") -> Message:
    import orjson

    doc = {
        "data": [data],
        "old": None,
        "database": "db",
        "table": "t",
        "type": type_,
        "isDdl": False,
        "mysqlType": mysql,
        "pkNames": ["id"],
        "es": 1,
        "ts": 2,
        "id": 7,
    }
    return Message(value=parse_document(orjson.dumps(doc), "m:1"), where="m:1")


ENUM_TYPES = {"id": "int", "e": "enum('value1','value2','value3')", "s": "set('a','b','c','d')"}


@pytest.mark.parametrize(
    "e, s, want",
    [
        ("1", "3", ("value1", "a,b")),
        ("value2", "a,c", ("value2", "a,c")),
        ("3", "0", ("value3", "")),
        ("value3", "15", ("value3", "a,b,c,d")),
    ],
)
def test_canal_enum_index_and_text_read_as_text(e: str, s: str, want: tuple[str, str]) -> None:
    fmt = get_format("canal-json")
    (event,) = fmt.normalize(_canal({"id": "1", "e": e, "s": s}, ENUM_TYPES))
    assert (event.after["e"], event.after["s"]) == want


@pytest.mark.parametrize(
    "e, s", [("4", "1"), ("0", "1"), ("value9", "1"), ("1", "16"), ("1", "a,z")]
)
def test_canal_enum_out_of_range_is_an_error(e: str, s: str) -> None:
    fmt = get_format("canal-json")
    with pytest.raises(DecodeError):
        fmt.normalize(_canal({"id": "1", "e": e, "s": s}, ENUM_TYPES))


def test_ticdc_commit_ts_is_the_position() -> None:
    path = _real("ticdc/data-content-2.canal.jsonl")
    events, _, _ = _events("canal-json", path)
    assert [e.position for e in events] == [
        {"id": 0, "commitTs": 464085165736198159, "row": 0},
        {"id": 0, "commitTs": 464085169694572575, "row": 0},
    ]


#: TiCDC's WATERMARK event as TiCDC's canal-json page and the PingCAP forum show it
#: (docs.pingcap.com/tidb/stable/ticdc-canal-json, ask.pingcap.com/t/9061).
WATERMARK = (
    b'{"id":0,"database":"","table":"","pkNames":null,"isDdl":false,"type":"TIDB_WATERMARK",'
    b'"es":1659085352032,"ts":1659085354502,"sql":"","sqlType":null,"mysqlType":null,'
    b'"data":null,"old":null,"_tidb":{"watermarkTs":434919270523076621}}'
)


def test_ticdc_watermark_is_a_control_record() -> None:
    fmt = get_format("canal-json")
    message = Message(value=parse_document(WATERMARK, "m:1"), where="m:1")
    assert fmt.detect(message)
    (record,) = fmt.normalize(message)
    assert record.kind == "heartbeat"
    assert record.reason == "TIDB_WATERMARK"


MINIMAL_DELETE = {"id": "int", "name": "varchar(10)", "qty": "int"}


def test_minimal_row_image_delete_validates_against_its_inferred_contract() -> None:
    fmt = get_format("canal-json")
    full = _canal({"id": "1", "name": "a", "qty": None}, MINIMAL_DELETE)
    minimal = _canal({"id": "1"}, MINIMAL_DELETE, "DELETE")
    contract = fmt.infer([full, minimal], InferOptions()).contract
    assert contract.option("partial_images") is True
    assert fmt.validate(minimal, contract) == []
    (event,) = fmt.normalize(minimal, contract)
    assert event.before == {"id": 1}  # absent stays absent; qty of the full row was null
    # a contract inferred from full images only still wants every column
    strict = fmt.infer([full], InferOptions()).contract
    assert strict.option("partial_images") is None
    assert [v.kind for v in fmt.validate(minimal, strict)] == ["missing-column"] * 2


def _schema_message(payload: bytes) -> bytes:
    return b'{"schema":{"type":"struct","name":"issue25.judge"},"payload":' + payload + b"}"


def test_the_judge_keeps_long_numbers_and_wide_integers_of_every_payload() -> None:
    # the first message of a schema and the next (whose schema is shared, not read again)
    first = parse_document(_schema_message(b'{"d":1.23456789123456789,"ts_us":1}'), "m:1")
    again = parse_document(_schema_message(b'{"d":12345678901234.5600,"ts_us":2}'), "m:2")
    assert first["schema"] is again["schema"]
    for doc, text in ((first, "1.23456789123456789"), (again, "12345678901234.5600")):
        assert isinstance(doc["payload"]["d"], JsonNumber)
        assert doc["payload"]["d"].text == text
    plain = parse_document(
        b'{"d":1.5600,"ts_us":1700000000000000,"ts_ns":1700000000000000001}', "m:3"
    )
    assert not isinstance(plain["d"], JsonNumber)
    assert plain["ts_ns"] == 1700000000000000001
    # an integer beyond 64 bits keeps its digits: the column that reads it judges it
    wide = parse_document(_schema_message(b'{"d":1.5,"ts_us":18446744073709551616}'), "m:4")
    assert wide["schema"] is first["schema"]
    assert isinstance(wide["payload"]["ts_us"], JsonNumber)
    assert wide["payload"]["ts_us"].text == "18446744073709551616"
    low = parse_document(b'{"n":-9223372036854775809}', "m:5")["n"]
    assert isinstance(low, JsonNumber) and str(low) == "-9223372036854775809"


@pytest.mark.parametrize(
    ("text", "second_read"),
    [
        (b'{"ts_us":1700000000000000,"ts_ns":1700000000000000000}', False),  # int64: exact
        (b'{"a":1234567890123456789}', False),
        (b'{"a":1.5600}', False),
        (b'{"a":1.23456789123456789}', True),
        (b'{"a":1234567890123456e5}', True),
        (b'{"a":12345678901234567890}', True),
        (b'{"a":-1234567890123456789}', True),
        # where a run starts or ends at the document's edge, and a second run after a fine one
        (b"1234567890123456", False),
        (b"1234567890123456789", False),
        (b"1234567890123456.7", True),
        (b"-12345678901234567890", True),
        (b'[1700000000000000,"x",1234567890123456.7]', True),
        (b'[1700000000000000,"x",1700000000000000]', False),
    ],
)
def test_only_numbers_a_double_may_change_are_read_twice(text: bytes, second_read: bool) -> None:
    assert may_lose_digits(text) is second_read


_PLAIN_DECIMALS = """
name: db.p
format: maxwell-json
table: {database: db, name: p}
key: [id]
columns:
  - {field: id, type: int64, optional: false}
  - {field: price, type: bytes, optional: true, name: org.apache.kafka.connect.data.Decimal,
     version: 1, parameters: {scale: '4', connect.decimal.precision: '30'}}
"""


@pytest.mark.parametrize(
    ("written", "decoded"),
    [
        ("12345678901234567.1234", "12345678901234567.1234"),
        ("1.56", "1.5600"),
        ("7", "7.0000"),
    ],
)
def test_a_plain_json_number_in_a_decimal_column_keeps_its_digits(
    written: str, decoded: str
) -> None:
    """A contract may type a column of a plain-JSON format (Maxwell writes DECIMAL as a JSON
    number) as a Decimal: the digits as written, at the declared scale."""
    contract = parse_contract(_PLAIN_DECIMALS)
    text = (
        '{"database":"db","table":"p","type":"insert","ts":1796000000,'
        f'"data":{{"id":1,"price":{written}}}}}'
    )
    message = Message(value=parse_document(text, "m"), where="m")
    (event,) = get_format("maxwell-json").normalize(message, contract)
    assert format(event.after["price"], "f") == decoded


def test_a_plain_json_number_beyond_a_decimal_columns_scale_is_refused() -> None:
    contract = parse_contract(_PLAIN_DECIMALS)
    text = '{"database":"db","table":"p","type":"insert","ts":1,"data":{"id":1,"price":1.23456}}'
    message = Message(value=parse_document(text, "m"), where="m")
    with pytest.raises((DecodeError, InputError), match="scale"):
        get_format("maxwell-json").normalize(message, contract)
