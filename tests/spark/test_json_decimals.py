"""Connect Decimals in JSON: the Spark decode and the core agree on every wire form.

JsonConverter writes a Decimal as base64 text (``decimal.format=BASE64``, the default) or as a
JSON number (``NUMERIC``). Both paths must accept the same values and refuse the same ones:
over the column's precision or scale, empty bytes, numbers not read exactly, other JSON types.
Spark parses a Decimal as a variant, since as text ``1234`` (a number) would be valid base64.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from contracts.contract import load_contract
from contracts.errors import DecodeError
from contracts.formats import get_format
from contracts.io import read_messages
from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_messages

pytestmark = pytest.mark.spark

FIXTURES = Path(__file__).parent.parent / "fixtures" / "debezium-json"
AMOUNT_LINE = (
    "  - {field: amount, type: bytes, optional: true, name: org.apache.kafka.connect.data.Decimal,"
    " version: 1, parameters: {scale: '2', connect.decimal.precision: '10'}}"
)


def _b64(unscaled: int) -> str:
    size = (unscaled.bit_length() + 8) // 8
    return json.dumps(base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode())


#: The JSON text of ``after.amount`` in each message.
WIRE = [
    *[_b64(1250), _b64(-1), _b64(0), _b64(9_999_999_999), _b64(10**10), _b64(-(10**10) + 1)],
    *[_b64(12345678901234), '""', '"!!"', '"12.34"', '"BOI"', '"BOI=\\n"'],
    *["1234", "12.34", "12.5", "12.50", "12.345", "12.3400", "-0.5", "0", "0.0", "-0"],
    *["1.5e3", "1E-2", "1.0E-3", "1e20", "1e7", "99999999.99", "100000000.00", "-99999999.99"],
    *["12345678901234567", "1234567.891", "0.1", "123456789012.5", "9223372036854775807"],
    *["18446744073709551615", "true", '{"a": 1}', "[1]", "null"],
]


def _contract_file(tmp_path: Path, scale: int, optional: bool, precision: int = 10) -> Path:
    text = (FIXTURES / "postgres-orders.expected.yaml").read_text(encoding="utf-8")
    assert AMOUNT_LINE in text
    line = AMOUNT_LINE.replace("scale: '2'", f"scale: '{scale}'")
    line = line.replace("precision: '10'", f"precision: '{precision}'")
    line = line.replace("optional: true", f"optional: {str(optional).lower()}")
    path = tmp_path / "orders.yaml"
    path.write_text(text.replace(AMOUNT_LINE, line), encoding="utf-8")
    return path


def _messages_file(
    tmp_path: Path,
    scale: int = 2,
    optional: bool = True,
    precision: int = 10,
    wires: list[str] = WIRE,
) -> Path:
    """One message per wire text (:data:`WIRE`), the embedded schema saying what the contract
    says."""
    first = (FIXTURES / "postgres-orders.kcat.jsonl").read_text(encoding="utf-8").splitlines()[0]
    message = json.loads(json.loads(first)["payload"])
    for image in message["schema"]["fields"][:2]:  # before, after
        (amount,) = [f for f in image["fields"] if f["field"] == "amount"]
        amount["parameters"]["scale"] = str(scale)
        amount["parameters"]["connect.decimal.precision"] = str(precision)
        amount["optional"] = optional
    lines = []
    for i, wire in enumerate(wires):
        message["payload"]["after"]["id"] = i
        message["payload"]["after"]["amount"] = "__AMOUNT__"
        lines.append(json.dumps(message).replace('"__AMOUNT__"', wire))
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _python(messages: list[Any], contract: Any) -> list[tuple[str, Any]]:
    fmt = get_format("debezium-json")
    out: list[tuple[str, Any]] = []
    for m in messages:
        try:
            (event,) = fmt.normalize(m, contract)
        except DecodeError:
            out.append(("invalid", None))
            continue
        out.append(("ok", event.after["amount"]))
    return out


def _spark(spark: Any, messages: list[Any], contract: Any) -> list[tuple[str, Any]]:
    rows = decode_changes(frame_from_messages(spark, messages), contract).orderBy("offset")
    return [
        ("invalid", None) if r["_error"] else ("ok", r["after"]["amount"]) for r in rows.collect()
    ]


@pytest.mark.parametrize(
    "precision, scale, optional",
    [(10, 2, True), (10, 0, False), (20, 0, True)],
    ids=["decimal(10,2)", "decimal(10,0)-required", "decimal(20,0)"],
)
def test_decimal_wire_forms_agree_with_the_core(
    spark: Any, tmp_path: Path, precision: int, scale: int, optional: bool
) -> None:
    contract = load_contract(_contract_file(tmp_path, scale, optional, precision))
    fmt = get_format("debezium-json")
    path = _messages_file(tmp_path, scale, optional, precision)
    messages = list(fmt.assemble(read_messages([path], fmt.input_kind)))
    assert len(messages) == len(WIRE)
    expected = _python(messages, contract)
    got = _spark(spark, messages, contract)
    differ = [
        f"{wire}: spark {g}, python {e}"
        for wire, g, e in zip(WIRE, got, expected, strict=True)
        if g != e
    ]
    assert not differ, "\n".join(differ)
    # the forms that matter are really exercised, on both sides
    verdicts = dict(zip(WIRE, expected, strict=True))
    assert verdicts["1234"][0] == "ok"
    assert verdicts[_b64(12345678901234)][0] == ("ok" if precision >= 14 + scale else "invalid")
    # an integer is exact at any length (orjson reads up to uint64 exactly)
    wide = precision >= 17
    assert verdicts["12345678901234567"][0] == ("ok" if wide else "invalid")
    assert verdicts["9223372036854775807"][0] == ("ok" if wide else "invalid")
    assert verdicts["18446744073709551615"][0] == ("ok" if precision >= 20 else "invalid")
    assert verdicts["1234567.891"] == ("invalid", None)  # over the scale either way
    assert verdicts['"12.34"'] == ("invalid", None)
    assert verdicts["null"] == (("ok", None) if optional else ("invalid", None))


def test_a_numeric_integer_decimal_is_not_read_as_base64(spark: Any, tmp_path: Path) -> None:
    """``1234`` is valid base64 too: as a string wire type it decoded to -26588.24."""
    contract = load_contract(_contract_file(tmp_path, 2, True))
    fmt = get_format("debezium-json")
    messages = list(fmt.assemble(read_messages([_messages_file(tmp_path)], fmt.input_kind)))
    got = dict(zip(WIRE, _spark(spark, messages, contract), strict=True))
    assert str(got["1234"][1]) == "1234.00"
    assert str(got[_b64(1250)][1]) == "12.50"


#: Base64 Decimals for the out-of-spec scales below (unscaled values).
OUT_OF_SPEC = [_b64(1), _b64(-123), _b64(99_999), _b64(100_000), _b64(0)]


@pytest.mark.parametrize(
    "precision, scale, spark_type",
    [(5, -2, "decimal(7,0)"), (2, 5, "decimal(5,5)")],
    ids=["NUMBER(5,-2)", "scale-above-precision"],
)
def test_out_of_spec_scales_keep_every_digit(
    spark: Any, tmp_path: Path, precision: int, scale: int, spark_type: str
) -> None:
    """Connect allows a negative scale (Oracle's NUMBER(p,-s)) and a scale above the
    precision; the Spark type holds every value and both decoders read the same ones."""
    from spark_bindings import spark_schema

    contract = load_contract(_contract_file(tmp_path, scale, True, precision))
    assert spark_schema(contract, "row")["amount"].dataType.simpleString() == spark_type
    fmt = get_format("debezium-json")
    path = _messages_file(tmp_path, scale, True, precision, OUT_OF_SPEC)
    messages = list(fmt.assemble(read_messages([path], fmt.input_kind)))
    expected = _python(messages, contract)
    assert _spark(spark, messages, contract) == expected
    oks = [value for verdict, value in expected if verdict == "ok"]
    if scale < 0:  # at most five unscaled digits: 100000 is over
        assert [int(v) for v in oks] == [100, -12300, 9_999_900, 0]
    else:  # at most two unscaled digits: -0.00123 and 0.99999 are over
        assert [str(v) for v in oks] == ["0.00001", "0.00000"]


#: JSON numbers with more digits than a double holds, and trailing zeros: the values Kafka's
#: JsonConverterTest (decimal.format=NUMERIC: ``1.23456789123456789``, ``1.5600``) and Paimon's
#: Debezium all-types data (``_fixed`` DECIMAL(40,3), ``_numeric`` DECIMAL(8,3)) write.
LONG = ["1.23456789123456789", "123456789876543212345678987654321.110", "1.5600", "12345.110"]
LONG += ["12345.1101", "1.234567891234567891", "0.00000000000000001"]


@pytest.mark.parametrize("scale", [17, 3, 4])
def test_long_numeric_decimals_are_read_as_written_on_both_paths(
    spark: Any, tmp_path: Path, scale: int
) -> None:
    contract = load_contract(_contract_file(tmp_path, scale, True, 38))
    fmt = get_format("debezium-json")
    path = _messages_file(tmp_path, scale, True, 38, LONG)
    messages = list(fmt.assemble(read_messages([path], fmt.input_kind)))
    expected = _python(messages, contract)
    assert _spark(spark, messages, contract) == expected
    said = {
        w: (v, str(d) if d is not None else None) for w, (v, d) in zip(LONG, expected, strict=True)
    }
    if scale == 17:
        assert said["1.23456789123456789"] == ("ok", "1.23456789123456789")
        assert said["1.5600"] == ("ok", "1.56000000000000000")
        assert said["1.234567891234567891"] == ("invalid", None)  # 18 places: never rounded
        assert said["0.00000000000000001"] == ("ok", "1E-17")
    if scale == 3:
        assert said["123456789876543212345678987654321.110"] == (
            "ok",
            "123456789876543212345678987654321.110",
        )
        assert said["12345.110"] == ("ok", "12345.110")
        assert said["12345.1101"] == ("invalid", None)
    if scale == 4:
        assert said["1.5600"] == ("ok", "1.5600")
