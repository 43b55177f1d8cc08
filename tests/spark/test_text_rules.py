"""The Spark text rules hold to the core's text decoders, text by text.

Formats that write values as text (Canal, Arcion S3, SharePlex, CSV) go through
``spark_bindings.expressions.decode_text_value`` on Spark and through
``contracts.formats._typing.TEXT_DECODERS`` (Canal: ``canal_text_decoders``) in Python. For
every text below both must agree: the same value, or both calling it invalid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
from pyspark.sql import functions as F

from contracts.errors import DecodeError
from contracts.formats._typing import TEXT_DECODERS, TextDecoder, decode_text
from contracts.formats.canal_json import canal_text_decoders
from contracts.formats.spec import CANAL_TEXT, DEFAULT_TEXT, TextConventions
from contracts.schema import ConnectSchema, primitive
from spark_bindings.expressions import decode_text_value, error_text
from spark_bindings.schema import spark_type

from .parity import _value

pytestmark = pytest.mark.spark

INTS = [
    *["0", "-0", "+0", "7", "+7", "-7", "12", "-12", "00", "007", "-01", "+012"],
    *[" 12", "12 ", "  -3  ", "\t12", "12\n", "1 2", "1.0", "1.5", "1e3", "0x1F"],
    *["", " ", "-", "+", "--1", "+-1", "-+1", "++1", "12a", "a12", "\uff11\uff12", "٣"],
    *["127", "128", "-128", "-129", "32767", "32768", "-32768", "-32769"],
    *["2147483647", "2147483648", "-2147483648", "-2147483649"],
    *["9223372036854775807", "9223372036854775808", "-9223372036854775808"],
    *["-9223372036854775809", "99999999999999999999999"],
]
DECIMALS = [
    *["0", "1", "-1", "1.5", "1.50", "1.505", "-0.01", ".5", "5.", "-.5", "+1.25", "00012.30"],
    *[" 3.14 ", "3.14\t", "1e2", "1.5E1", "1.5e-1", "1.5E-3", "1E+2", "12345.67", "123456.78"],
    *["99999.99", "100000.00", "-99999.99", "NaN", "Infinity", "-inf", "", " ", "1,5", "1.2.3"],
    *["abc", "0x10", "\uff11.\uff15", "1.0000", "1.000", "1_000", "--1", "+-1"],
]
DATES = [
    *["2024-02-29", "2023-02-29", "2024-13-01", "2024-00-10", "2024-01-32", "0001-01-01"],
    *["9999-12-31", "2024-1-05", "2024-01-5", "24-01-05", "2024/01/05", "20240105", " 2024-01-05"],
    *["2024-01-05 ", "2024-01-05T00:00:00", "2024-01-05 10:00", "", "x", "0000-00-00"],
    *["0000-00-00 00:00:00", "+2024-01-05", "-2024-01-05", "١٢٣٤-01-05"],
]
TIMESTAMPS = [
    *["2024-01-05 10:20:30", "2024-01-05T10:20:30", "2024-01-05 10:20", "2024-01-05T10:20"],
    *["2024-01-05 10:20:30.1", "2024-01-05 10:20:30.123456", "2024-01-05 10:20:30.1234567"],
    *["2024-01-05 10:20:30.123456789", "2024-01-05 10:20:30.1234567890", "2024-01-05 10:20:30."],
    *["2024-01-05 10:20:30Z", "2024-01-05T10:20:30+02:00", "2024-01-05T10:20:30-0530"],
    *["2024-01-05T10:20:30+02", "2024-01-05 10:20:30.5-03:00", "2024-01-05T10:20:30 +02:00"],
    *["2024-01-05T10:20:30UTC", "2024-01-05T10:20:30 Europe/Paris", "2024-01-05T10:20:30z"],
    *[" 2024-01-05 10:20:30 ", "2024-01-05  10:20:30", "2024-01-05", "2024-01-05 10", "10:20:30"],
    *["2024-1-05 10:20:30", "2024-01-05 1:20:30", "2024-01-05 10:20:3", "2024-02-30 10:00:00"],
    *["2024-01-05 24:00:00", "2024-01-05 23:60:00", "2024-01-05 23:59:60", "+2024-01-05 10:00"],
    *["2024-01-05 10:20:30+24:00", "2024-01-05 10:20:30+2:00", "", "now", "0000-00-00 00:00:00"],
    *["2024-01-05 10:20:30.123Z", "2024-01-05T10:20:30.000001-00:00", "2024-01-05T10:20:30+0000"],
    *["2024-01-05T10:20+02:00", "2024-01-05 10:20Z", "2024-01-05 10:20-0130", "2024-01-05T10:20Z "],
    *["2024-01-05 10:20:30\t", "١٢٣٤-01-05 10:20:30", "2024-01-05T10:20:30.12345678901234"],
]
BOOLEANS = ["true", "false", "TRUE", "FALSE", "True", "1", "0", " 1 ", "yes", "", "t", "01"]

DATE = primitive("int32", name="org.apache.kafka.connect.data.Date")
MICRO_TS = primitive("int64", name="io.debezium.time.MicroTimestamp")
ZONED = primitive("string", name="io.debezium.time.ZonedTimestamp")
DECIMAL = primitive(
    "bytes",
    name="org.apache.kafka.connect.data.Decimal",
    parameters={"scale": "2", "connect.decimal.precision": "7"},
)
CASES: list[tuple[str, ConnectSchema, list[str]]] = [
    ("int8", primitive("int8"), INTS),
    ("int16", primitive("int16"), INTS),
    ("int32", primitive("int32"), INTS),
    ("int64", primitive("int64"), INTS),
    ("decimal", DECIMAL, DECIMALS),
    ("date", DATE, DATES),
    ("timestamp", MICRO_TS, TIMESTAMPS),
    ("zoned", ZONED, TIMESTAMPS),
    ("boolean", primitive("boolean"), BOOLEANS),
]
DIALECTS: list[tuple[str, TextConventions, Mapping[str, TextDecoder]]] = [
    ("default", DEFAULT_TEXT, TEXT_DECODERS),
    ("canal", CANAL_TEXT, canal_text_decoders("UTC")),
    (
        "canal-kolkata",
        replace(CANAL_TEXT, time_zone="Asia/Kolkata"),
        canal_text_decoders("Asia/Kolkata"),
    ),
]


def _python(text: str, schema: ConnectSchema, table: Mapping[str, TextDecoder]) -> Any:
    try:
        return ("ok", _value(decode_text(text, schema, table), schema))
    except DecodeError:
        return ("invalid", None)


def _spark(
    spark: Any, texts: list[str], schema: ConnectSchema, dialect: TextConventions, staged: bool
) -> list[Any]:
    """Decode ``texts`` on Spark; ``staged``: the text the rule reads is a column of its own
    projection first (as ``decode_changes`` does), else the rule reads the expression."""
    df = spark.createDataFrame(list(enumerate(texts)), "i int, t string")
    columns: dict[str, Any] = {}

    def stage(text: Any) -> Any:
        columns["read"] = text
        return F.col("read")

    decoded = decode_text_value(
        F.col("t"),
        schema,
        spark_type(schema),
        "$.t",
        dialect,
        **({"stage": stage} if staged else {}),
    )
    if staged:
        df = df.select("i", *[c.alias(n) for n, c in columns.items()])
    out = df.select("i", decoded.value.alias("v"), error_text(decoded.problems).alias("e"))
    rows = sorted(out.collect(), key=lambda r: r["i"])
    return [("invalid", None) if r["e"] else ("ok", _value(r["v"], schema)) for r in rows]


@pytest.mark.parametrize("staged", [False, True], ids=["inline", "staged"])
@pytest.mark.parametrize("dialect_name, dialect, table", DIALECTS, ids=[d[0] for d in DIALECTS])
@pytest.mark.parametrize("kind, schema, texts", CASES, ids=[c[0] for c in CASES])
def test_text_rules_agree_with_the_core(
    spark: Any,
    kind: str,
    schema: ConnectSchema,
    texts: list[str],
    dialect_name: str,
    dialect: TextConventions,
    table: Mapping[str, TextDecoder],
    staged: bool,
) -> None:
    got = _spark(spark, texts, schema, dialect, staged)
    expected = [_python(t, schema, table) for t in texts]
    differ = [
        f"{t!r}: spark {g}, python {e}"
        for t, g, e in zip(texts, got, expected, strict=True)
        if g != e
    ]
    assert not differ, f"{dialect_name} {kind}:\n" + "\n".join(differ)
