"""Contracts and messages of every registered format, written from the format's own spec.

A producer writes a change as its format's :class:`~contracts.formats.spec.FormatSpec` says:
the op code at ``ops.at``, the images where ``images.rules(op)`` reads them (an update's changed
columns as the top of an ``Overlay``, flags for ``Exists``), the table parts, the times, the
position, the key. :func:`messages` draws such messages for a contract — values valid for their
column types with their extremes, and values and envelopes no producer should write — so every
registered format is exercised without a hand-written generator; a new format is in the run as
soon as it is registered.

Everything is drawn as *wire* values: the test does not need to know the right answer, only that
the Python and the Spark decoders give the same one.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from struct import pack, unpack
from typing import Any

from hypothesis import strategies as st

from contracts.contract import Contract, contract_from_schema, load_contract
from contracts.events import TableId
from contracts.formats import FORMATS, get_format
from contracts.formats.spec import (
    Absent,
    AllOf,
    AnyOf,
    Equals,
    FirstOf,
    FormatSpec,
    Image,
    ImageRule,
    Only,
    Overlay,
    Present,
    at,
)
from contracts.logical import (
    CONNECT_DATE_NAME,
    CONNECT_TIME_NAME,
    CONNECT_TIMESTAMP_NAME,
    DEBEZIUM_DATE_NAME,
    DEBEZIUM_TIMESTAMP_NAME,
    DECIMAL_NAME,
    ENUM_NAME,
    JSON_NAME,
    MICRO_TIME_NAME,
    MICRO_TIMESTAMP_NAME,
    NANO_TIME_NAME,
    NANO_TIMESTAMP_NAME,
    PRECISION_PARAM,
    YEAR_NAME,
    ZONED_TIMESTAMP_NAME,
    decimal_to_unscaled,
)
from contracts.schema import ConnectSchema, primitive, struct

FIXTURES = Path(__file__).parent.parent / "fixtures"

#: A contract of each format whose options (envelope layout, source block...) the generated
#: contracts take; their columns are drawn.
TEMPLATES: dict[str, str] = {
    "debezium-json": "debezium-json/postgres-orders.expected.yaml",
    "arcion-json": "arcion-json/realtime.expected.yaml",
    "cdl-json": "cdl-json/seed-v1.expected.yaml",
    "cdl-debezium-json": "cdl-debezium-json/seed-v2.expected.yaml",
    "arcion-s3-json": "arcion-s3-json/realtime-region.expected.yaml",
    "arcion-s3-csv": "arcion-s3-csv/realtime-region.expected.yaml",
    "shareplex-json": "shareplex-json/dts-examples.expected.yaml",
    "canal-json": "canal-json/flink-products.expected.yaml",
    "opencdc-json": "opencdc-json/conduit-structured.expected.yaml",
    "maxwell-json": "maxwell-json/flink-maxwell-data.expected.yaml",
    "ogg-json": "ogg-json/flink-ogg-data.expected.yaml",
}

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


# --- column types and their values -----------------------------------------------------------


Draw = Callable[[random.Random], Any]


@dataclass(frozen=True)
class ColumnType:
    """A column type and how its values are drawn as Python values (``values``: extremes
    first; a random value otherwise)."""

    schema: ConnectSchema
    extremes: tuple[Any, ...]
    random: Draw

    def value(self, rnd: random.Random) -> Any:
        return rnd.choice(self.extremes) if rnd.random() < 0.3 else self.random(rnd)


def _logical(base: str, name: str) -> ConnectSchema:
    return primitive(base, name=name, version=1)


def _ints(bits: int) -> ColumnType:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return ColumnType(
        primitive(f"int{bits}"), (low, high, 0, -1, 1), lambda r: r.randint(low, high)
    )


def _decimal_type(precision: int, scale: int) -> ColumnType:
    schema = primitive(
        "bytes",
        name=DECIMAL_NAME,
        version=1,
        parameters={"scale": str(scale), PRECISION_PARAM: str(precision)},
    )
    bound = 10**precision - 1

    def of(n: int) -> decimal.Decimal:
        return decimal.Decimal(n).scaleb(-scale)

    extremes = tuple(of(n) for n in (bound, -bound, 0, 1, -1, 10**scale))
    return ColumnType(schema, extremes, lambda r: of(r.randint(-bound, bound)))


_MIN_DAY, _MAX_DAY = dt.date(1, 1, 1).toordinal(), dt.date(9999, 12, 31).toordinal()
_DATE_EXTREMES = (
    dt.date(1, 1, 1),
    dt.date(9999, 12, 31),
    dt.date(1970, 1, 1),
    dt.date(1969, 12, 31),
)


def _date(r: random.Random) -> dt.date:
    return dt.date.fromordinal(r.randint(_MIN_DAY, _MAX_DAY))


_MIN_US = (dt.datetime(1, 1, 2, tzinfo=dt.UTC) - EPOCH) // dt.timedelta(microseconds=1)
_MAX_US = (dt.datetime(9999, 12, 30, tzinfo=dt.UTC) - EPOCH) // dt.timedelta(microseconds=1)
_INSTANT_EXTREMES = (EPOCH, EPOCH - dt.timedelta(microseconds=1), EPOCH + dt.timedelta(days=1))


def _instant(r: random.Random) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=r.randint(_MIN_US, _MAX_US))


def _time(r: random.Random) -> dt.time:
    micros = r.randint(0, 86_400 * 10**6 - 1)
    seconds, micro = divmod(micros, 10**6)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micro)


_TEXTS = ("", " ", "null", "NULL", "é", "\u2028", "😀", "a,b", 'q"uote', "tab\t")


def _text(r: random.Random) -> str:
    alphabet = "abcXYZ 09,.-_\u00e9\u4e2d😀"
    return "".join(r.choice(alphabet) for _ in range(r.randint(0, 6)))


def _float(r: random.Random) -> float:
    return r.choice([r.uniform(-1e6, 1e6), r.uniform(-1, 1) * 10 ** r.randint(-300, 300)])


def _float32(r: random.Random) -> float:
    return float(unpack("f", pack("f", r.uniform(-1e6, 1e6)))[0])


_COMMON = [
    _ints(8),
    _ints(16),
    _ints(32),
    _ints(64),
    ColumnType(primitive("boolean"), (True, False), lambda r: r.random() < 0.5),
    ColumnType(primitive("string"), _TEXTS, _text),
    ColumnType(primitive("double"), (0.0, -0.0, 1.5, 1e308, -1e-308, 5e-324), _float),
    ColumnType(primitive("float"), (0.0, 1.5, 3.4028234663852886e38, -1.0), _float32),
    _decimal_type(10, 2),
    _decimal_type(38, 0),
    _decimal_type(5, 5),
    ColumnType(_logical("int32", CONNECT_DATE_NAME), _DATE_EXTREMES, _date),
    ColumnType(_logical("int64", DEBEZIUM_TIMESTAMP_NAME), _INSTANT_EXTREMES, _instant),
    ColumnType(_logical("int64", MICRO_TIMESTAMP_NAME), _INSTANT_EXTREMES, _instant),
    ColumnType(_logical("string", ZONED_TIMESTAMP_NAME), _INSTANT_EXTREMES, _instant),
    ColumnType(
        _logical("int64", MICRO_TIME_NAME), (dt.time(0), dt.time(23, 59, 59, 999999)), _time
    ),
    ColumnType(_logical("int32", YEAR_NAME), (0, 1970, 2155), lambda r: r.randint(1901, 2155)),
    ColumnType(_logical("string", JSON_NAME), ('{"a": [1, 2]}', "[]"), lambda r: '{"k": 1}'),
    ColumnType(
        primitive("string", name=ENUM_NAME, version=1, parameters={"allowed": "a,b"}),
        ("a", "b"),
        lambda r: r.choice("ab"),
    ),
    ColumnType(
        primitive("bytes"),
        (b"", b"\x00", b"\xff"),
        lambda r: bytes(r.randrange(256) for _ in range(3)),
    ),
]

#: Every column type a contract may draw, per how the format writes values.
COLUMN_TYPES: dict[str, list[ColumnType]] = {"text": _COMMON, "json": _COMMON}
COLUMN_TYPES["connect"] = [
    *_COMMON,
    ColumnType(
        _logical("int32", CONNECT_TIME_NAME), (dt.time(0), dt.time(23, 59, 59, 999000)), _time
    ),
    ColumnType(_logical("int64", CONNECT_TIMESTAMP_NAME), _INSTANT_EXTREMES, _instant),
    ColumnType(_logical("int32", DEBEZIUM_DATE_NAME), _DATE_EXTREMES, _date),
    ColumnType(_logical("int64", NANO_TIMESTAMP_NAME), _INSTANT_EXTREMES, _instant),
    ColumnType(_logical("int64", NANO_TIME_NAME), (dt.time(0),), _time),
]

#: debezium-mongodb-json: the column types its extended-JSON documents carry.
COLUMN_TYPES["ejson"] = [
    *[
        t
        for t in _COMMON
        if t.schema.name is None and t.schema.type in ("boolean", "string", "double", "bytes")
    ],
    _ints(32),
    _ints(64),
    _decimal_type(10, 2),
    ColumnType(_logical("int64", CONNECT_TIMESTAMP_NAME), _INSTANT_EXTREMES, _instant),
]

_NAMES = st.sampled_from(["id", "name", "amount", "at", "flag", "note", "Qty", "x_1"])


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    optional: bool


@dataclass(frozen=True)
class Case:
    """A contract and how its columns' values are drawn."""

    contract: Contract
    columns: tuple[Column, ...]

    @property
    def spec(self) -> FormatSpec:
        return get_format(self.contract.format).spec


def template_of(fmt: str) -> Path:
    """The contract whose options a format's generated contracts take: the one named in
    :data:`TEMPLATES`, else the first expected contract of its fixtures (so a newly registered
    format is in the run without an edit here)."""
    if fmt in TEMPLATES:
        return FIXTURES / TEMPLATES[fmt]
    found = sorted((FIXTURES / fmt).glob("*.expected.yaml"))
    if not found:
        raise LookupError(f"{fmt}: no tests/fixtures/{fmt}/*.expected.yaml to take options from")
    return found[0]


@st.composite
def cases(draw: st.DrawFn, fmt: str) -> Case:
    """A contract of ``fmt`` (its template's options) with 1-4 drawn columns."""
    spec = get_format(fmt).spec
    template = load_contract(template_of(fmt))
    names = draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True))
    kinds = COLUMN_TYPES[spec.images.values]
    columns = tuple(
        Column(n, draw(st.sampled_from(kinds)), draw(st.booleans()) if i else False)
        for i, n in enumerate(names)
    )
    keyed = draw(st.booleans())
    row = struct(
        [c.type.schema.replace(field=c.name, optional=c.optional) for c in columns],
        name=template.option("row_name"),
    )
    options = dict(template.options)
    if fmt == "debezium-json" and draw(st.booleans()):
        options["schemas_enable"] = False
    if fmt == "arcion-s3-csv":
        options["column_order"] = list(names)
        options["mode"] = "realtime"
    if fmt == "canal-json":
        options.pop("mysql_types", None)
        options["time_zone"] = draw(st.sampled_from(["UTC", "Asia/Kolkata"]))
    contract = contract_from_schema(
        name="parity",
        format=fmt,
        table=template.table_id,
        row=row,
        key=[names[0]] if keyed else [],
        options=options,
    )
    return Case(contract, columns)


# --- wire values ---------------------------------------------------------------------------------


def one_in(rnd: random.Random, n: int) -> bool:
    """True about once in ``n`` calls (hypothesis favours small integers; this does not)."""
    return rnd.random() < 1 / n


def _kind_unit(schema: ConnectSchema) -> tuple[str | None, str | None]:
    from contracts.logical import lookup

    entry = lookup(schema)
    return (entry.kind, entry.unit) if entry is not None else (None, None)


def connect_value(value: Any, schema: ConnectSchema) -> Any:
    """A Python value as Kafka's JsonConverter writes it."""
    kind, unit = _kind_unit(schema)
    if kind == "decimal":
        scale = int(schema.parameter("scale", "0") or 0)
        return base64.b64encode(decimal_to_unscaled(value, scale)).decode()
    if kind == "date":
        return (value - dt.date(1970, 1, 1)).days
    if kind == "timestamp":
        micros = (value - EPOCH) // dt.timedelta(microseconds=1)
        return {"millis": micros // 1000, "micros": micros, "nanos": micros * 1000}[str(unit)]
    if kind == "zoned-timestamp":
        return value.isoformat().replace("+00:00", "Z")
    if kind == "time":
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6 + value.microsecond
        return {"millis": micros // 1000, "micros": micros, "nanos": micros * 1000}[str(unit)]
    if schema.type == "bytes":
        return base64.b64encode(value).decode()
    return value


def text_value(value: Any, schema: ConnectSchema) -> str:
    """A Python value as the text formats write it."""
    kind, _unit = _kind_unit(schema)
    if kind == "decimal":
        return format(value, "f")
    if kind == "date":
        return value.isoformat()
    if kind == "timestamp":
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if kind == "zoned-timestamp":
        return value.isoformat()
    if kind == "time":
        return value.isoformat()
    if schema.type == "boolean":
        return "true" if value else "false"
    if schema.type == "bytes":
        return value.decode("latin-1")
    if isinstance(value, float):
        return repr(value)
    return str(value)


#: Wire values no producer should write (or odd ones it might), per how values are written.
_ODD_JSON: list[Any] = [
    "abc",
    "",
    " 1",
    "1e3",
    "+5",
    "007",
    "0x10",
    "1.5",
    1.5,
    1.0,
    -0.0,
    2**63,
    -(2**63) - 1,
    2**64,
    True,
    [1],
    {"a": 1},
    "AAAA",
    "AA=",
    "////",
    "2024-02-30",
    "0000-00-00 00:00:00",
    "24:00:00",
    "12:60",
    "\ud7ff",
    "1970-01-01T00:00:00",
    "9999-12-31T23:59:59.999999999Z",
]
_ODD_TEXT: list[Any] = [v for v in _ODD_JSON if isinstance(v, str)] + (
    [
        "1",
        "0",
        "TRUE",
        "yes",
        "-9223372036854775809",
        "18446744073709551615",
        "  7  ",
        "\t1\n",
        "12:00",
        "1:02:03.1234567891",
        "2024-01-01 00:00:00+05:30",
        "2024-01-01T00:00:00Z",
        "0000-00-00",
        "1e400",
        "NaN",
        "Infinity",
        "-1.",
        ".5",
    ]
)


#: JSON tokens other than a string a text or plain-JSON image cell may hold (no producer of a
#: text format writes them; a plain-JSON one writes some for its typed columns): each column
#: type judges them by the core's rules (``_typing.cell_refused_kinds``).
_ODD_TOKENS: list[Any] = [
    0,
    7,
    -3,
    1.5,
    -2.5e-05,
    1e300,
    2**63,
    2**64,
    -(2**63) - 1,
    True,
    False,
    [],
    [1],
    {},
    {"a": 1},
]


def wire_value(column: Column, values: str, rnd: random.Random, tokens: bool = False) -> Any:
    """One column's wire value: mostly a valid one, sometimes null or odd (``tokens``: the
    image's cells are JSON values, so an odd one may be a number, a boolean, an array or an
    object rather than a string)."""
    if one_in(rnd, 12):
        return None
    if values == "ejson":
        return rnd.choice(_ODD_EJSON) if one_in(rnd, 12) else ejson_value(column, rnd)
    if one_in(rnd, 12):
        if values == "connect":
            return rnd.choice(_ODD_JSON)
        return rnd.choice(_ODD_TEXT + _ODD_TOKENS if tokens else _ODD_TEXT)
    value = column.type.value(rnd)
    schema = column.type.schema
    if values == "connect":
        return connect_value(value, schema)
    plain = schema.name is None and schema.type in ("boolean", "int8", "int16", "int32", "int64")
    if values == "json" and (plain or schema.type == "double") and rnd.random() < 0.5:
        return value  # a JSON scalar (OpenCDC structured data)
    if schema.type == "bytes" and _kind_unit(schema)[0] is None:
        return rnd.choice([value.decode("latin-1"), "abc", ""])
    return text_value(value, schema)


#: Extended-JSON values no producer should write for a column (or odd ones it might).
_ODD_EJSON: list[Any] = [
    "abc",
    1.5,
    2**31,
    True,
    [1],
    {"a": 1},
    {"$numberLong": "x"},
    {"$numberInt": "2147483648"},
    {"$oid": 5},
    {"$date": "soon"},
    {"$binary": "!!"},
    {"$numberDecimal": "1.234"},
    {"$numberDecimal": "NaN"},
    {"$timestamp": {"t": -1, "i": 0}},
    {"$regularExpression": {"pattern": "x", "options": ""}},
]


def ejson_value(column: Column, rnd: random.Random) -> Any:
    """A valid value as MongoDB Extended JSON writes it, canonical or relaxed."""
    value = column.type.value(rnd)
    schema = column.type.schema
    kind, _unit = _kind_unit(schema)
    if kind == "decimal":
        return {"$numberDecimal": rnd.choice([format(value, "f"), str(value)])}
    if kind == "timestamp":
        millis = (value - EPOCH) // dt.timedelta(milliseconds=1)
        forms: list[Any] = [{"$numberLong": str(millis)}, millis]
        if value.year >= 1900:
            at = EPOCH + dt.timedelta(milliseconds=millis)
            forms.append(at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")
        return {"$date": rnd.choice(forms)}
    if schema.type == "bytes":
        text = base64.b64encode(value).decode()
        return rnd.choice(
            [{"$binary": {"base64": text, "subType": "00"}}, {"$binary": text, "$type": "00"}]
        )
    if schema.type == "int32":
        return rnd.choice([value, {"$numberInt": str(value)}])
    if schema.type == "int64":
        return rnd.choice([value, {"$numberLong": str(value)}])
    if schema.type == "double":
        return rnd.choice([value, {"$numberDouble": repr(value)}])
    if schema.type == "string" and rnd.random() < 0.2:
        return {"$oid": value}
    return value


# --- envelopes -------------------------------------------------------------------------------------


def _put(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = doc
    for step in path[:-1]:
        child = node.get(step)
        if not isinstance(child, dict):
            child = node[step] = {}
        node = child
    node[path[-1]] = value


@dataclass
class Message:
    """A drawn message: its value (and Kafka key) as bytes or text, and what it is meant to be."""

    value: bytes | None
    key: bytes | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def image(case: Case, complete: bool, rnd: random.Random) -> dict[str, Any]:
    """One row image of wire values (``complete``: every column; else some left out)."""
    values = case.spec.images.values
    tokens = get_format(case.contract.format).input_kind == "json"  # not CSV cells
    out: dict[str, Any] = {}
    for c in case.columns:
        if complete or not one_in(rnd, 4):
            out[c.name] = wire_value(c, values, rnd, tokens)
    if not complete and one_in(rnd, 10):
        out["not_a_column"] = "1"
    return out


def _op_codes(spec: FormatSpec) -> list[str]:
    return [*spec.ops.codes, *spec.ops.controls]


def envelope(case: Case, rnd: random.Random) -> dict[str, Any]:
    """An envelope as the spec says a producer writes it."""
    spec = case.spec
    doc: dict[str, Any] = {}
    codes = _op_codes(spec)
    code = rnd.choice([*codes, *codes, "unknown"])
    op, _kind = spec.ops.read(code)
    if code in spec.ops.codes and spec.ops.spelling == "words" and (rnd.random() < 0.5):
        code = code.upper().replace(" ", "_")
    _put(doc, spec.ops.at, code)
    complete = spec.images.values == "connect" or (rnd.random() < 0.5)
    before_rule, after_rule = spec.images.rules(op or "")
    for rule in (before_rule, after_rule):
        for path in _rule_paths_to_write(rule, rnd):
            if spec.rows is not None:
                rows = rnd.randint(1, 2)
                found = [
                    image(case, complete or path == spec.images.after, rnd) for _ in range(rows)
                ]
                if path == spec.images.before and isinstance(before_rule, Overlay):
                    found = [image(case, False, rnd) for _ in range(rows)]
                _put(doc, path, found)
            elif spec.images.values == "ejson":  # a document in a string
                _put(doc, path, json.dumps(image(case, complete, rnd)))
            else:
                _put(doc, path, image(case, complete, rnd))
    if spec.rows is not None and isinstance(before_rule, Overlay):
        data = doc.get(spec.images.after[0])
        if isinstance(data, list) and isinstance(doc.get(spec.images.before[0]), list):
            doc[spec.images.before[0]] = doc[spec.images.before[0]][: len(data)]
            while len(doc[spec.images.before[0]]) < len(data):
                doc[spec.images.before[0]].append({})
    if spec.images.raw is not None and one_in(rnd, 5):
        # raw data: base64 of bytes that hold a JSON object, or of other bytes (or not base64)
        side = rnd.choice([spec.images.before, spec.images.after])
        inner = json.dumps(image(case, False, rnd)).encode()
        raw = rnd.choice([inner, b"yellow", b"", b"{not json"])
        encoded = base64.b64encode(raw).decode()
        _put(doc, side, rnd.choice([encoded] * 4 + [encoded.rstrip("="), "yellow!"]))
    if spec.images.empty_is_absent and one_in(rnd, 5):
        _put(doc, rnd.choice([spec.images.before, spec.images.after]), {})
    if spec.images.exists is not None:
        flags: dict[str, Any] = {}
        before = doc.get(spec.images.before[0]) or {}
        after = doc.get(spec.images.after[0]) or {}
        by_presence = {v: k for k, v in spec.images.exists.flags.items()}
        for c in case.columns:
            flags[c.name] = by_presence[(c.name in before, c.name in after)]
            if one_in(rnd, 20):
                flags[c.name] = "7"
        _put(doc, spec.images.exists.at, flags)
        if spec.images.null_text is not None:
            for part in (before, after):
                for k, v in list(part.items()):
                    if v is None:
                        part[k] = spec.images.null_text
    for path in spec.table.paths().values():
        value = rnd.choice(["shop", "orders", "s.orders"] * 3 + ["", None])
        if one_in(rnd, 30):
            value = rnd.choice([["shop"], 5, True])
        if value is not None or (rnd.random() < 0.5):
            _put(doc, path, value)
    for rule in (*spec.ts_ms, *spec.source_ts_ms):
        if not one_in(rnd, 5):
            _put(doc, rule.at, _when(rnd, rule.unit, rule.text))
    position = spec.position
    for path in position.named.values():
        _put(doc, path, rnd.choice(["c3RhbmRpbmc=", "MQ==", "", None] * 4 + ["42", 42, "x y"]))
    if position.at and position.by_connector is not None:
        _put(
            doc,
            (*position.at, position.connector),
            rnd.choice(["mysql", "postgresql", "other"]),
        )
        for keys in position.by_connector.values():
            for k in keys:
                if one_in(rnd, 3):
                    _put(doc, (*position.at, k), rnd.choice([7, "lsn-1", True, None]))
    elif position.at and position.pairs:
        pairs = [{"name": n, "value": rnd.choice([1, "a", None])} for n in ("lsn", "txId", "lsn")]
        _put(doc, position.at, pairs[: rnd.randint(0, 3)])
    elif position.at and position.at not in spec.json_texts:
        for k in position.keys or ("k",):
            if rnd.random() < 0.5:
                _put(doc, (*position.at, k), rnd.choice(["1", 2, None, "a/b"]))
    if spec.key.unique:
        key_cols = [c for c in case.columns if c.name in case.contract.key]
        _put(
            doc,
            spec.key.unique,
            {c.name: wire_value(c, spec.images.values, rnd) for c in key_cols},
        )
    if spec.key.record:
        record_key: list[Any] = [None, "cGFkbG9jaw==", {"id": "1"}, {"id": 1}] * 3 + ["!!"]
        _put(doc, spec.key.record, rnd.choice(record_key))
    for path in spec.base64:
        if one_in(rnd, 10):
            _put(doc, path, "not base64!")
    for path in spec.required:
        if not one_in(rnd, 20) and at(doc, path) is None:
            _put(doc, path, False)
    if spec.controls and one_in(rnd, 6):
        doc = _control(rnd, spec, doc)
    for block in spec.json_texts:
        parts = {
            "extractionTimestamp": _when(rnd, "ms", True),
            "timestamp": _when(rnd, "ms", True),
        }
        if one_in(rnd, 10):
            _put(doc, block, "{not json")
        else:
            _put(doc, block, json.dumps(parts))
    return doc


def _rule_paths_to_write(rule: ImageRule | None, rnd: random.Random) -> list[tuple[str, ...]]:
    if rule is None:
        return []
    if isinstance(rule, Image):
        return [rule.at] if rule.empty is False or (rnd.random() < 0.5) else []
    if isinstance(rule, Overlay):
        out = [rule.base]
        if not rule.needs_top or not one_in(rnd, 6):
            out.append(rule.top)
        return out
    assert isinstance(rule, FirstOf)
    return [rnd.choice(rule.images)]


def _when(rnd: random.Random, unit: str, text: bool) -> Any:
    """A timestamp's wire value: mostly a valid one, sometimes odd."""
    if unit == "iso":
        return rnd.choice(
            [
                "2017-06-16T14:24:34",
                "2017-06-16T14:24:34Z",
                "2017-06-16 14:24:34.5+01:00",
                "2017-06-16",
                "soon",
                5,
            ][: 3 if rnd.random() < 0.8 else 6]
        )
    number = rnd.choice([rnd.randint(-(2**62), 2**62), 0, -1, 1718000000123])
    if rnd.random() < 0.85:
        return str(number) if text and rnd.random() < 0.5 else number
    odd: list[Any] = ["", " 12 ", "1.5", "-", "\u0661\u0662", 1.5] if text else ["123", 1.5]
    return rnd.choice(odd)


def _control(rnd: random.Random, spec: FormatSpec, doc: dict[str, Any]) -> dict[str, Any]:
    """The envelope made into one a control rule matches."""
    rule = rnd.choice(spec.controls)
    return _satisfy(rule.when, dict(doc), spec)


def _satisfy(condition: object, doc: dict[str, Any], spec: FormatSpec) -> dict[str, Any]:
    if isinstance(condition, Equals):
        _put(doc, condition.at, sorted(condition.values, key=str)[0])
    elif isinstance(condition, Present):
        _put(doc, condition.at, "x")
    elif isinstance(condition, Absent):
        node: Any = doc
        for step in condition.at[:-1]:
            node = node.get(step) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(condition.at[-1], None)
    elif isinstance(condition, Only):
        return {name: 1 for name in condition.present}
    elif isinstance(condition, AllOf):
        for c in condition.conditions:
            doc = _satisfy(c, doc, spec)
    elif isinstance(condition, AnyOf):
        doc = _satisfy(condition.conditions[0], doc, spec)
    return doc


# --- whole messages --------------------------------------------------------------------------------


def _wrap(case: Case, payload: dict[str, Any]) -> dict[str, Any]:
    """``{schema, payload}`` with the envelope schema the contract derives."""
    connect = case.spec.connect
    assert connect is not None
    if case.contract.option("schemas_enable", True) is False:
        return payload
    schema = get_format(case.contract.format).derive(case.contract).value
    return {connect.schema: schema.to_json(), connect.payload: payload}


def _csv_line(case: Case, doc: dict[str, Any]) -> str:
    """The row of ``doc`` (an Arcion S3 JSON document) as Arcion S3 CSV writes it."""
    spec = case.spec
    names = [c.name for c in case.columns]
    before = doc.get(spec.images.before[0]) or {}
    after = doc.get(spec.images.after[0]) or {}
    flags = doc.get(spec.images.exists.at[0]) if spec.images.exists else {}
    null = spec.images.null_text or ""
    cells: list[str] = []
    for n in names:
        cells += [
            _cell(after.get(n), null),
            _cell(before.get(n), null),
            str((flags or {}).get(n, "0")),
        ]
    cells += [str(doc.get(spec.ops.at[0], "")), str(doc.get("cursor", "{}")), "{}"]
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    return out.getvalue()


def _cell(value: Any, null: str) -> str:
    return null if value is None else value if isinstance(value, str) else str(value)


#: Damage done to a message's text.
_DAMAGE: list[tuple[str, Callable[[str], bytes]]] = [
    ("truncated", lambda t: t[: max(1, len(t) // 2)].encode()),
    ("trailing", lambda t: (t + " x").encode()),
    ("not utf-8", lambda t: t.encode().replace(b"a", b"\xc3\x28", 1) + b"\xff"),
    ("lone surrogate", lambda t: t.replace('"', '"\\ud800', 1).encode()),
    ("deep", lambda t: ('{"a":' * 1100 + "1" + "}" * 1100).encode()),
    ("array", lambda t: f"[{t}]".encode()),
    ("null", lambda _t: b"null"),
    ("empty", lambda _t: b""),
]


#: How a CSV record may sit in a Kafka value: one message holds one record, with an optional
#: line terminator and blank lines around it; a line break outside quotes starts a second one.
_CSV_FRAMING: list[tuple[str, Callable[[str], str]]] = [
    ("line terminator", lambda t: t + "\r\n"),
    ("blank lines", lambda t: "\n" + t + "\n \n"),
    ("two records", lambda t: t + "\n" + t),
    ("a one-cell record after it", lambda t: t + "\nx"),
    ("bare carriage return", lambda t: t.replace(",", "\r", 1)),
]


def message(case: Case, rnd: random.Random) -> Message:
    """One message of ``case``'s format (sometimes damaged)."""
    fmt = case.contract.format
    spec = case.spec
    doc = envelope(case, rnd)
    note = "written"
    if fmt == "arcion-s3-csv":
        text = _csv_line(case, doc)
        if one_in(rnd, 6):
            note, frame = rnd.choice(_CSV_FRAMING)
            text = frame(text)
    else:
        if spec.connect is not None:
            doc = _wrap(case, doc)
        text = json.dumps(doc, ensure_ascii=(rnd.random() < 0.5), separators=(",", ":"))
    value = text.encode()
    if one_in(rnd, 8):
        note, damage = rnd.choice(_DAMAGE)
        value = damage(text)
    key = None
    if spec.images.values == "ejson" and case.contract.key and (rnd.random() < 0.5):
        # Debezium MongoDB's key: {"id": "<extended JSON of the first key column>"}
        first = next(c for c in case.columns if c.name in case.contract.key)
        key = json.dumps({"id": json.dumps(ejson_value(first, rnd))}).encode()
    elif spec.key.kafka and case.contract.key and (rnd.random() < 0.5):
        key_cols = [c for c in case.columns if c.name in case.contract.key]
        payload = {c.name: wire_value(c, "connect", rnd) for c in key_cols}
        document: dict[str, Any] = payload
        if rnd.random() < 0.6:
            document = {"schema": _key_schema(case, rnd), "payload": payload}
        key = json.dumps(document, separators=(",", ":")).encode()
    return Message(value=value, key=key, note=note)


def _key_schema(case: Case, rnd: random.Random) -> Any:
    """A Kafka key's embedded schema: none (null), the contract's key schema, or one that
    states another key (a column of another type or logical name, one left out or added)."""
    if rnd.random() < 0.4:
        return None
    derived = get_format(case.contract.format).derive_key(case.contract)
    if derived is None:
        return None
    schema: dict[str, Any] = derived.to_json()
    if not one_in(rnd, 3):
        return schema
    fields = schema["fields"]
    damage = rnd.choice(["type", "name", "left out", "added", "not a struct"])
    if damage == "type":
        fields[0]["type"] = "string" if fields[0]["type"] != "string" else "int64"
    elif damage == "name":
        fields[0]["name"] = None if fields[0].get("name") else "io.debezium.time.Date"
    elif damage == "left out":
        schema["fields"] = fields[1:]
    elif damage == "added":
        fields.append({"type": "int32", "optional": True, "field": "extra_key"})
    else:
        schema = {"type": "string", "optional": False}
    return schema


def messages(case: Case, size: int) -> st.SearchStrategy[list[Message]]:
    """``size`` messages of ``case``, each from its own random source seeded from one drawn
    seed (hypothesis would draw many equal elements, and large messages exhaust its data
    budget; each message is reproducible, so a failure names the messages that differ)."""
    return st.randoms(use_true_random=True).map(
        lambda seed: [message(case, random.Random(seed.getrandbits(64))) for _ in range(size)]
    )


def registered_text_formats() -> list[str]:
    """The registered formats the differential run writes messages for (Avro records are
    compared on their own fixtures)."""
    return [n for n in FORMATS if get_format(n).input_kind != "avro"]


def table_of(case: Case) -> TableId:
    return case.contract.table_id
