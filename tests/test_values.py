"""Compiled value decoders: the generated struct decoders and the specialized logical decoders
must give exactly what the generic paths give, errors (with JSON paths) included."""

from __future__ import annotations

import decimal
from typing import Any

import pytest

from contracts.errors import DecodeError
from contracts.jsonnumbers import JsonNumber
from contracts.logical import DECIMAL_NAME, LOGICAL_TYPES, fast_decoder, lookup
from contracts.schema import ConnectSchema, parse_connect
from contracts.values import compile_decoder

ROW = parse_connect(
    {
        "type": "struct",
        "name": "t.Value",
        "fields": [
            {"field": "id", "type": "int64"},
            {"field": "small", "type": "int8", "optional": True},
            {"field": "name", "type": "string", "optional": True},
            {"field": "flag", "type": "boolean"},
            {"field": "ratio", "type": "float", "optional": True},
            {"field": "odd 'name'", "type": "double", "optional": True},
            {"field": "with_default", "type": "int32", "optional": True, "default": 7},
            {
                "field": "amount",
                "type": "bytes",
                "optional": True,
                "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "2"},
            },
            {
                "field": "nested",
                "type": "struct",
                "optional": True,
                "fields": [{"field": "day", "type": "int32", "name": "io.debezium.time.Date"}],
            },
        ],
    }
)

GOOD: dict[str, Any] = {
    "id": 1,
    "small": -128,
    "name": "x",
    "flag": True,
    "ratio": 2,
    "odd 'name'": 1.5,
    "with_default": None,
    "amount": "AxyM",
    "nested": {"day": 20771},
}


def decode(value: Any) -> Any:
    return compile_decoder(ROW)(value, "$.after")


def error_of(value: Any) -> tuple[str, str | None]:
    with pytest.raises(DecodeError) as info:
        decode(value)
    return info.value.what, info.value.where


def test_all_fields_present_decodes_in_schema_order() -> None:
    out = decode(dict(reversed(list(GOOD.items()))))
    assert list(out) == [f.field for f in ROW.fields or ()]
    assert out["amount"] == decimal.Decimal("2039.16")
    assert out["ratio"] == 2.0 and type(out["ratio"]) is float
    assert out["nested"]["day"].isoformat() == "2026-11-14"
    assert out["with_default"] is None


def test_absent_optional_and_default_fields() -> None:
    value = {"id": 1, "flag": False}
    out = decode(value)
    assert out["with_default"] == 7 and out["name"] is None and out["nested"] is None


@pytest.mark.parametrize(
    ("change", "what", "where"),
    [
        ({"id": 2**63}, "in the int64 range", "$.after.id"),
        ({"small": 128}, "in the int8 range", "$.after.small"),
        ({"id": True}, "is not an integer", "$.after.id"),
        ({"flag": None}, "null is not allowed", "$.after.flag"),
        ({"name": 3}, "is not a string", "$.after.name"),
        ({"odd 'name'": "1.5"}, "is not a number", "$.after.odd 'name'"),
        ({"amount": "A*yM"}, "valid base64", "$.after.amount"),
        ({"nested": {"day": "x"}}, "is not an integer", "$.after.nested.day"),
        ({"nested": {"day": 1, "more": 2}}, "unexpected field(s) more", "$.after.nested"),
        ({"extra": 1}, "unexpected field(s) extra", "$.after"),
    ],
)
def test_errors_carry_their_json_path(change: dict[str, Any], what: str, where: str) -> None:
    got_what, got_where = error_of({**GOOD, **change})
    assert what in got_what
    assert got_where == where


def test_missing_required_field_and_non_objects() -> None:
    value = dict(GOOD)
    del value["flag"]
    assert error_of(value) == ("required field 'flag' is missing", "$.after")
    assert error_of([1]) == ("expected an object, got an array", "$.after")


def _logical_schema(name: str) -> ConnectSchema:
    entry = LOGICAL_TYPES[name]
    base = sorted(entry.base)[0]
    return parse_connect({"type": base, "name": name, "parameters": {"scale": "3"}})


SPECIALIZED = [
    n
    for n, entry in LOGICAL_TYPES.items()
    if "struct" not in entry.base and fast_decoder(_logical_schema(n)) is not None
]
WIRE_VALUES: list[Any] = [
    0,
    -1,
    1795742481114516,
    2932896,
    10**30,
    True,
    1.0,
    1.5,
    "AxyM",
    "",
    "/w==",
    "YQ",
    "A===",
    "A*yM",
    "é",
    None,
    {"x": 1},
]


def _outcome(fn: Any, value: Any) -> tuple[str, Any]:
    try:
        return ("ok", repr(fn(value)))
    except DecodeError as err:
        return ("error", err.what)


@pytest.mark.parametrize("name", SPECIALIZED)
def test_specialized_logical_decoders_match_the_generic_ones(name: str) -> None:
    schema = _logical_schema(name)
    entry = lookup(schema)
    fast = fast_decoder(schema)
    assert entry is not None and fast is not None
    for value in WIRE_VALUES:
        assert _outcome(fast, value) == _outcome(lambda v: entry.decode(v, schema), value), value


def test_the_common_types_are_specialized() -> None:
    assert {
        "org.apache.kafka.connect.data.Decimal",
        "io.debezium.time.MicroTimestamp",
        "io.debezium.time.Date",
    } <= set(SPECIALIZED)


def test_empty_struct() -> None:
    empty = parse_connect({"type": "struct", "fields": []})
    assert compile_decoder(empty)({}, "$") == {}
    with pytest.raises(DecodeError, match="unexpected field"):
        compile_decoder(empty)({"a": 1}, "$")


#: JSON numbers in a Decimal column (decimal.format=NUMERIC): ones the fast path takes (digits
#: within the scale and precision) and every way of leaving it (a digit beyond the scale, the
#: precision overflowing, zeros, 16+ significant digits, kept text, exponents).
NUMERIC_VALUES: list[Any] = [
    1.5,
    -1.56,
    100.0,
    1.5600,
    1234567.891,
    0.001,
    0.0,
    -0.0,
    0,
    7,
    -12345,
    10**20,
    1e16,
    1e-7,
    123456789012.345,
    0.30000000000000004,
    JsonNumber("1.5600"),
    JsonNumber("12345.110"),
    JsonNumber("1.23456789123456789"),
    JsonNumber("0.000000000000000000"),
    JsonNumber("-98765432109876543.2100"),
    JsonNumber("1E+3"),
]


@pytest.mark.parametrize(("scale", "precision"), [(0, None), (3, None), (3, 8), (2, 12), (17, 40)])
def test_json_number_decimals_on_the_fast_path_match_the_generic_rule(
    scale: int, precision: int | None
) -> None:
    parameters = {"scale": str(scale)}
    if precision is not None:
        parameters["connect.decimal.precision"] = str(precision)
    schema = parse_connect({"type": "bytes", "name": DECIMAL_NAME, "parameters": parameters})
    entry = lookup(schema)
    fast = fast_decoder(schema)
    assert entry is not None and fast is not None
    outcomes = set()
    for value in NUMERIC_VALUES:
        expected = _outcome(lambda v: entry.decode(v, schema), value)
        assert _outcome(fast, value) == expected, value
        outcomes.add(expected[0])
    assert outcomes == {"ok", "error"}  # both sides of the rule were exercised
