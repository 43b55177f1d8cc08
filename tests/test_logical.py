"""The logical-type table: wire values decode to real values; unknown names fall back with a warning."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import warnings

import pytest

from contracts.errors import DecodeError
from contracts.logical import (
    LOGICAL_TYPES,
    LogicalTypeWarning,
    decimal_to_unscaled,
    lookup,
    lookup_or_warn,
    unscaled_to_decimal,
)
from contracts.schema import ConnectSchema, primitive

UTC = dt.UTC


def decode(name: str, type_: str, value: object, **params: str) -> object:
    schema = primitive(type_, name=name, parameters=params or None)
    entry = lookup(schema)
    assert entry is not None, name
    return entry.decode(value, schema)


def test_table_covers_connect_debezium_and_vendor_names() -> None:
    expected = {
        "org.apache.kafka.connect.data.Decimal",
        "org.apache.kafka.connect.data.Date",
        "org.apache.kafka.connect.data.Time",
        "org.apache.kafka.connect.data.Timestamp",
        "io.debezium.time.MicroTimestamp",
        "io.debezium.time.NanoTimestamp",
        "io.debezium.time.ZonedTimestamp",
        "io.debezium.data.VariableScaleDecimal",
        "com.xxx.cdc.data.Decimal",
        "com.xxx.cdc.data.timestamp",
    }
    assert expected <= set(LOGICAL_TYPES)


def test_decimal_is_base64_twos_complement_with_scale() -> None:
    raw = base64.b64encode((-12345).to_bytes(2, "big", signed=True)).decode()
    got = decode("org.apache.kafka.connect.data.Decimal", "bytes", raw, scale="2")
    assert got == decimal.Decimal("-123.45")


@pytest.mark.parametrize("text", ["0", "1.5", "-99999999999999999999.123", "0.001"])
def test_unscaled_bytes_round_trip(text: str) -> None:
    value = decimal.Decimal(text)
    scale = max(0, -value.as_tuple().exponent)  # type: ignore[operator]
    assert unscaled_to_decimal(decimal_to_unscaled(value, scale), scale) == value


def test_temporal_units() -> None:
    assert decode("org.apache.kafka.connect.data.Date", "int32", 19000) == dt.date(2022, 1, 8)
    assert decode("io.debezium.time.MicroTimestamp", "int64", 1_500_000) == dt.datetime(
        1970, 1, 1, 0, 0, 1, 500_000, tzinfo=UTC
    )
    assert decode("io.debezium.time.NanoTimestamp", "int64", 2_000_000_000) == dt.datetime(
        1970, 1, 1, 0, 0, 2, tzinfo=UTC
    )
    assert decode("org.apache.kafka.connect.data.Time", "int32", 3_600_001) == dt.time(
        1, 0, 0, 1000
    )
    zoned = decode("io.debezium.time.ZonedTimestamp", "string", "2024-02-01T10:00:00+02:00")
    assert zoned == dt.datetime(2024, 2, 1, 8, 0, tzinfo=UTC)


def test_vendor_string_types() -> None:
    assert decode("com.xxx.cdc.data.Decimal", "string", "12.50") == decimal.Decimal("12.50")
    ts = decode("com.xxx.cdc.data.timestamp", "string", "2024-02-04 11:59:56.013")
    assert ts == dt.datetime(2024, 2, 4, 11, 59, 56, 13000, tzinfo=UTC)


def test_bad_wire_value_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="not valid base64"):
        decode("org.apache.kafka.connect.data.Decimal", "bytes", "***", scale="0")
    with pytest.raises(DecodeError, match="not an integer"):
        decode("io.debezium.time.MicroTimestamp", "int64", "soon")


def test_unknown_name_falls_back_with_a_warning() -> None:
    schema = primitive("string", name="com.example.Mystery")
    with pytest.warns(LogicalTypeWarning, match="unknown logical type com.example.Mystery"):
        assert lookup_or_warn(schema) is None


def test_known_name_on_wrong_base_type_warns_and_uses_base() -> None:
    schema = primitive("string", name="io.debezium.time.MicroTimestamp")
    with pytest.warns(LogicalTypeWarning, match="not the expected int64"):
        assert lookup_or_warn(schema) is None


def test_structs_with_names_do_not_warn() -> None:
    schema = ConnectSchema(type="struct", fields=(), name="db.table.Value")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lookup_or_warn(schema) is None
