"""Value-based type inference and text decoding for formats without an embedded schema.

Arcion S3, SharePlex, Canal and OpenCDC carry row values as strings (or plain JSON scalars)
with no Connect schema beside them. This module holds what those formats share:

- :class:`ColumnSummary` / :class:`RowTypes` — streaming inference. Each column keeps a small
  summary (counts, candidate flags, ranges, digit counts), never the values, so memory stays
  bounded whatever the number of messages. Strings stay strings unless ``infer_types`` is set;
  then integers (int32/int64, a scale-0 Decimal beyond), decimals (observed precision/scale, else double), booleans,
  dates and timestamps are recognized conservatively: every non-null value must agree, and any
  conflict falls back to string.
- :data:`TEXT_DECODERS` / :func:`decode_text` — the table that turns a text value into the
  Python value of a contract column's Connect type (int, Decimal, date, aware datetime ...).
- :func:`decode_image` / :func:`check_image` — decode or check one row image against a contract.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from contracts.contract import Contract, contract_from_schema
from contracts.errors import DecodeError, InputError
from contracts.events import TableId
from contracts.formats.base import InferOptions, Violation
from contracts.formats.spec import DEFAULT_TEXT, Images
from contracts.jsonnumbers import as_written, integer_as_read
from contracts.logical import (
    CONNECT_DATE_NAME,
    DEBEZIUM_TIMESTAMP_NAME,
    DECIMAL_NAME,
    JSON_NAME,
    MICRO_TIMESTAMP_NAME,
    NANO_TIMESTAMP_NAME,
    PRECISION_PARAM,
    ZONED_TIMESTAMP_NAME,
    LogicalKey,
    as_float32,
    at_scale,
    decimal_precision,
    decimal_scale,
    json_number_decimal,
    lookup,
)
from contracts.schema import ConnectSchema, json_kind, primitive, struct

MAX_DECIMAL_PRECISION: Final = 38

_INT32: Final = (-(2**31), 2**31 - 1)
_INT64: Final = (-(2**63), 2**63 - 1)

_INT_RE: Final = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")
_DECIMAL_RE: Final = re.compile(r"[+-]?(0|[1-9][0-9]*)\.([0-9]+)")
_FLOAT_RE: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+")
_DATE_RE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP_RE: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:?[0-9]{2})?"
)
_BOOLEANS: Final = {
    **dict.fromkeys(DEFAULT_TEXT.true_texts, True),
    **dict.fromkeys(DEFAULT_TEXT.false_texts, False),
}
#: What a text value may carry around it (ASCII whitespace, stripped before decoding).
TEXT_WHITESPACE: Final = " \t\n\r\f\v"
# The grammars a text value must match to decode (the Spark bindings apply the same ones):
# a decimal in plain notation; a timestamp with seconds, up to nine fraction digits and an
# optional UTC offset.
_DECIMAL_TEXT_RE: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_TIMESTAMP_TEXT_RE: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)


# --- schemas for inferred types ---------------------------------------------------------------


def decimal_schema(precision: int | None, scale: int) -> ConnectSchema:
    """A Connect Decimal with ``scale`` and (when known) ``connect.decimal.precision``."""
    params = {"scale": str(scale)}
    if precision is not None:
        params[PRECISION_PARAM] = str(precision)
    return primitive("bytes", name=DECIMAL_NAME, version=1, parameters=params)


def logical(type_: str, name: str) -> ConnectSchema:
    """A primitive carrying a logical type name (version 1, as the producers write them)."""
    return primitive(type_, name=name, version=1)


def timestamp_schema(fraction_digits: int) -> ConnectSchema:
    """A zone-less timestamp whose unit covers ``fraction_digits`` (millis, micros or nanos)."""
    if fraction_digits <= 3:
        return logical("int64", DEBEZIUM_TIMESTAMP_NAME)
    if fraction_digits <= 6:
        return logical("int64", MICRO_TIMESTAMP_NAME)
    return logical("int64", NANO_TIMESTAMP_NAME)


STRING: Final = primitive("string")
JSON_TEXT: Final = logical("string", JSON_NAME)


# --- streaming inference ----------------------------------------------------------------------


@dataclass(slots=True)
class ColumnSummary:
    """What inference remembers about one column: counts and candidate types, never values."""

    values: int = 0
    nulls: int = 0
    texts: int = 0
    native: set[str] = field(default_factory=set)
    maybe_bool: bool = True
    maybe_int: bool = True
    maybe_decimal: bool = True
    maybe_double: bool = True
    maybe_date: bool = True
    maybe_timestamp: bool = True
    ints: int = 0
    int_min: int = 0
    int_max: int = 0
    int_digits: int = 0
    scale: int = 0
    fraction: int = 0
    zoned: set[bool] = field(default_factory=set)

    def observe(self, value: Any) -> None:
        """Add one value (None, a string, or a plain JSON scalar/object/array)."""
        if value is None:
            self.nulls += 1
            return
        self.values += 1
        if isinstance(value, str):
            self.texts += 1
            self._text(value)
        else:
            value = integer_as_read(value)
            self.native.add(_native_kind(value))
            if isinstance(value, int) and not isinstance(value, bool):
                self._int_range(value)

    def _text(self, text: str) -> None:
        if not self._shape_number(text):
            self.maybe_int = self.maybe_decimal = self.maybe_double = False
        if text not in _BOOLEANS:
            self.maybe_bool = False
        if not (self.maybe_date and _DATE_RE.fullmatch(text) and _valid_date(text)):
            self.maybe_date = False
        if self.maybe_timestamp:
            self._shape_timestamp(text)

    def _shape_number(self, text: str) -> bool:
        if _INT_RE.fullmatch(text):
            n = int(text)
            self._int_range(n)
            self.int_digits = max(self.int_digits, len(text.lstrip("+-")))
            return True
        self.maybe_int = False
        match = _DECIMAL_RE.fullmatch(text)
        if match:
            self.int_digits = max(self.int_digits, len(match.group(1)))
            self.scale = max(self.scale, len(match.group(2)))
            return True
        self.maybe_decimal = False
        return _FLOAT_RE.fullmatch(text) is not None

    def _int_range(self, n: int) -> None:
        if self.ints == 0:
            self.int_min = self.int_max = n
        else:
            self.int_min = min(self.int_min, n)
            self.int_max = max(self.int_max, n)
        self.ints += 1

    def _shape_timestamp(self, text: str) -> None:
        match = _TIMESTAMP_RE.fullmatch(text)
        if match is None or not _valid_timestamp(text):
            self.maybe_timestamp = False
            return
        self.fraction = max(self.fraction, len(match.group(1) or ""))
        self.zoned.add(match.group(2) is not None)

    # --- resolution ---------------------------------------------------------------------------

    @property
    def absent_or_null(self) -> bool:
        return self.nulls > 0

    def schema(self, infer_types: bool) -> ConnectSchema:
        """The narrowest Connect type every observed value fits (string on any conflict)."""
        if self.texts and self.native:
            return STRING
        if self.native:
            return native_schema(self.native, self.int_min, self.int_max)
        if not infer_types or self.values == 0:
            return STRING
        for test, build in _TEXT_RESOLUTION:
            if test(self):
                return build(self)
        return STRING


def _in(bounds: tuple[int, int], low: int, high: int) -> bool:
    return bounds[0] <= low and high <= bounds[1]


def _int_schema(s: ColumnSummary) -> ConnectSchema:
    if _in(_INT32, s.int_min, s.int_max):
        return primitive("int32")
    if _in(_INT64, s.int_min, s.int_max):
        return primitive("int64")
    return wide_int_schema(s.int_min, s.int_max)


#: The precision of a Decimal inferred for integers beyond int64. Such an integer is nearly
#: always an unsigned 64-bit value (MySQL ``BIGINT UNSIGNED``, ``SERIAL``, ``BIT(64)``: the
#: widest integer a JSON reader holds exactly), and every one of those needs 20 digits; it is
#: also the precision Debezium (2.4+) gives ``BIGINT UNSIGNED`` with
#: ``bigint.unsigned.handling.mode=precise``. A value seen with more digits widens it.
UNSIGNED_64_PRECISION: Final = 20


def int_digits(low: int, high: int) -> int:
    """The digits of the widest integer between ``low`` and ``high`` (signs not counted)."""
    return len(str(max(abs(low), abs(high))))


def wide_int_schema(low: int, high: int) -> ConnectSchema:
    """The exact type of integers from ``low`` to ``high`` when int64 cannot hold them: a
    Decimal of scale 0 (see :data:`UNSIGNED_64_PRECISION`)."""
    return decimal_schema(max(UNSIGNED_64_PRECISION, int_digits(low, high)), 0)


def _decimal_fits(s: ColumnSummary) -> bool:
    return s.maybe_decimal and s.int_digits + s.scale <= MAX_DECIMAL_PRECISION


def _timestamp_schema(s: ColumnSummary) -> ConnectSchema:
    return (
        logical("string", ZONED_TIMESTAMP_NAME) if True in s.zoned else timestamp_schema(s.fraction)
    )


#: Candidate text types from narrowest to widest: the first whose test holds wins.
_TEXT_RESOLUTION: Final[
    tuple[tuple[Callable[[ColumnSummary], bool], Callable[[ColumnSummary], ConnectSchema]], ...]
] = (
    (lambda s: s.maybe_bool, lambda s: primitive("boolean")),
    (
        lambda s: s.maybe_int and (s.int_digits <= MAX_DECIMAL_PRECISION),
        _int_schema,
    ),
    (_decimal_fits, lambda s: decimal_schema(s.int_digits + s.scale, s.scale)),
    (lambda s: s.maybe_double, lambda s: primitive("double")),
    (lambda s: s.maybe_date, lambda s: logical("int32", CONNECT_DATE_NAME)),
    (lambda s: s.maybe_timestamp and len(s.zoned) == 1, _timestamp_schema),
)


def _native_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "json"


def native_schema(kinds: Set[str], low: int, high: int) -> ConnectSchema:
    """The type of JSON values of ``kinds`` (``int``, ``float``, ``boolean``, ``json``) whose
    integers lie between ``low`` and ``high``; string for any other mix."""
    if kinds == {"boolean"}:
        return primitive("boolean")
    if kinds == {"int"}:
        if _in(_INT64, low, high):
            return primitive("int64")
        if int_digits(low, high) <= MAX_DECIMAL_PRECISION:
            return wide_int_schema(low, high)
        return primitive("double")  # beyond any Decimal: as a text integer that long
    if kinds <= {"int", "float"}:
        return primitive("double")
    if kinds == {"json"}:
        return JSON_TEXT
    return STRING


def _valid_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _valid_timestamp(text: str) -> bool:
    try:
        parse_timestamp_text(text)
    except ValueError:
        return False
    return True


class RowTypes:
    """Per-column summaries of one table's rows, in first-seen column order."""

    __slots__ = ("columns",)

    def __init__(self) -> None:
        self.columns: dict[str, ColumnSummary] = {}

    def observe_row(self, row: Mapping[str, Any]) -> None:
        """Add every value of one row image (absent columns are simply not observed)."""
        for name, value in row.items():
            self.summary(name).observe(value)

    def summary(self, name: str) -> ColumnSummary:
        found = self.columns.get(name)
        if found is None:
            found = self.columns[name] = ColumnSummary()
        return found

    def declare(self, names: Iterable[str]) -> None:
        """Make sure columns exist (in this order) even when no value was seen."""
        for name in names:
            self.summary(name)

    def fields(
        self, infer_types: bool, required: Iterable[str] = (), order: Iterable[str] | None = None
    ) -> list[ConnectSchema]:
        """Field schemas: ``required`` columns are non-optional, every other one optional."""
        must = set(required)
        names = list(order) if order is not None else list(self.columns)
        out = []
        for name in names:
            s = self.columns.get(name) or ColumnSummary()
            out.append(s.schema(infer_types).as_optional(name not in must).as_field(name))
        return out


# --- text decoding ----------------------------------------------------------------------------


def parse_timestamp_text(text: str) -> dt.datetime:
    """``yyyy-MM-dd[ T]HH:mm:ss[.f{1,9}][zone]`` → datetime (fractions beyond micros cut);
    ValueError for any other text."""
    if not _TIMESTAMP_TEXT_RE.fullmatch(text):
        raise ValueError(f"{text!r} is not a timestamp text")
    head, sep, rest = text.replace(" ", "T", 1).partition(".")
    if sep:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        frac, zone = rest[:digits], rest[digits:]
        text = f"{head}.{frac[:6].ljust(6, '0')}{zone}"
    else:
        text = head
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _fail(text: str, what: str) -> DecodeError:
    shown = text if len(text) <= 40 else text[:37] + "..."
    return DecodeError(f"{shown!r} is not {what}")


def _text_int(bounds: tuple[int, int], what: str) -> Callable[[str, ConnectSchema], int]:
    def decode(text: str, _schema: ConnectSchema) -> int:
        stripped = text.strip(TEXT_WHITESPACE)
        if not _INT_RE.fullmatch(stripped):
            raise _fail(text, f"an integer ({what})")
        n = int(stripped)
        if not bounds[0] <= n <= bounds[1]:
            raise _fail(text, f"in the {what} range")
        return n

    return decode


def _text_float(text: str, schema: ConnectSchema) -> float:
    try:
        number = float(text)
    except ValueError:
        raise _fail(text, "a number") from None
    return as_float32(number, text) if schema.type == "float" else number


def _text_bool(text: str, _schema: ConnectSchema) -> bool:
    found = _BOOLEANS.get(text)
    if found is None:
        raise _fail(text, "a boolean (true/false)")
    return found


def _text_decimal(text: str, schema: ConnectSchema) -> decimal.Decimal:
    stripped = text.strip(TEXT_WHITESPACE)
    if not _DECIMAL_TEXT_RE.fullmatch(stripped):
        raise _fail(text, "a decimal number")
    value = decimal.Decimal(stripped)
    scale = decimal_scale(schema)
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and -exponent > scale:
        raise _fail(text, f"a decimal with scale <= {scale}")
    precision = decimal_precision(schema)
    if precision is not None and abs(value) >= decimal.Decimal(10) ** (precision - scale):
        raise _fail(text, f"in the range of decimal({precision},{scale})")
    return at_scale(value, scale)


def _text_date(text: str, _schema: ConnectSchema) -> dt.date:
    try:
        stripped = text.strip(TEXT_WHITESPACE)
        if not _DATE_RE.fullmatch(stripped):
            raise ValueError(stripped)
        return dt.date.fromisoformat(stripped)
    except ValueError:
        raise _fail(text, "a date (yyyy-MM-dd)") from None


def _text_timestamp(text: str, _schema: ConnectSchema) -> dt.datetime:
    try:
        parsed = parse_timestamp_text(text.strip(TEXT_WHITESPACE))
    except ValueError:
        raise _fail(text, "a timestamp (yyyy-MM-dd HH:mm:ss[.f][zone])") from None
    # zone-less timestamps are wall-clock values, represented as UTC (as Debezium does)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _text_zoned(text: str, schema: ConnectSchema) -> dt.datetime:
    return _text_timestamp(text, schema)


_TIME_RE: Final = re.compile(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?")


def _text_time(text: str, _schema: ConnectSchema) -> dt.time:
    """``H[H]:MM[:SS[.f{1,9}]]`` (fractions beyond microseconds cut), a real time of day."""
    match = _TIME_RE.fullmatch(text.strip(TEXT_WHITESPACE))
    try:
        if match is None:
            raise ValueError(text)
        hour, minute, second, fraction = match.groups()
        micros = int((fraction or "")[:6].ljust(6, "0"))
        return dt.time(int(hour), int(minute), int(second or 0), micros)
    except ValueError:
        raise _fail(text, "a time of day (HH:mm:ss[.f])") from None


def _text_string(text: str, _schema: ConnectSchema) -> str:
    return text


def _text_bytes_utf8(text: str, _schema: ConnectSchema) -> bytes:
    return text.encode(DEFAULT_TEXT.bytes_charset)


TextDecoder = Callable[[str, ConnectSchema], Any]


def enum_members(schema: ConnectSchema) -> tuple[str, ...]:
    """The members an ENUM or SET column allows (its ``allowed`` parameter; none: any)."""
    allowed = schema.params.get("allowed")
    return tuple(allowed.split(",")) if isinstance(allowed, str) and allowed else ()


def enum_text(numbers: bool) -> TextDecoder:
    """An ENUM's text: one of its members, or (``numbers``) its 1-based index."""

    def decode(text: str, schema: ConnectSchema) -> str:
        members = enum_members(schema)
        if not members or text in members:
            return text
        if numbers and text.isascii() and text.isdigit():
            index = int(text)
            if 1 <= index <= len(members):
                return members[index - 1]
            raise _fail(text, f"an ENUM index in 1..{len(members)}")
        raise _fail(text, f"one of the ENUM members {','.join(members)}")

    return decode


def enum_set_text(numbers: bool) -> TextDecoder:
    """A SET's text: its members joined by commas (Debezium's EnumSet), or (``numbers``) its
    bitmask, bit i standing for member i."""

    def decode(text: str, schema: ConnectSchema) -> str:
        members = enum_members(schema)
        if not members:
            return text
        if numbers and text.isascii() and text.isdigit():
            mask = int(text)
            if mask >= 1 << len(members):
                raise _fail(text, f"a SET bitmask below {1 << len(members)}")
            return ",".join(m for i, m in enumerate(members) if mask >> i & 1)
        if text and not all(m in members for m in text.split(",")):
            raise _fail(text, f"a subset of the SET members {','.join(members)}")
        return text

    return decode


#: What a text decoder is keyed by: a logical type's (kind, unit), else a Connect base type.
TextKey = LogicalKey | str

#: Text → Python value, keyed by a logical type's (kind, unit) (when listed) or the Connect
#: base type (a logical type without an entry — Json, Enum, Uuid... — reads as its base type).
TEXT_DECODERS: Final[Mapping[TextKey, TextDecoder]] = {
    "boolean": _text_bool,
    "int8": _text_int((-(2**7), 2**7 - 1), "int8"),
    "int16": _text_int((-(2**15), 2**15 - 1), "int16"),
    "int32": _text_int(_INT32, "int32"),
    "int64": _text_int(_INT64, "int64"),
    "float": _text_float,
    "double": _text_float,
    "string": _text_string,
    "bytes": _text_bytes_utf8,
    ("decimal", "unscaled"): _text_decimal,
    ("date", "days"): _text_date,
    ("timestamp", "millis"): _text_timestamp,
    ("timestamp", "micros"): _text_timestamp,
    ("timestamp", "nanos"): _text_timestamp,
    ("timestamp", "text"): _text_timestamp,
    ("zoned-timestamp", "iso"): _text_zoned,
    ("time", "millis"): _text_time,
    ("time", "micros"): _text_time,
    ("time", "nanos"): _text_time,
    ("year", None): _text_int(_INT32, "year"),
    ("enum", None): enum_text(DEFAULT_TEXT.enum_numbers),
    ("enum-set", None): enum_set_text(DEFAULT_TEXT.enum_numbers),
}


def decoder_key(schema: ConnectSchema, table: Mapping[TextKey, TextDecoder]) -> TextKey:
    """The key of ``schema`` in a text-decoder table: its logical (kind, unit) if listed, else
    its type."""
    entry = lookup(schema)
    if entry is not None and entry.key in table:
        return entry.key
    return schema.type


def decode_text(
    text: str, schema: ConnectSchema, table: Mapping[TextKey, TextDecoder] = TEXT_DECODERS
) -> Any:
    """Decode one text value into the Python value of ``schema`` (raises DecodeError)."""
    fn = table.get(decoder_key(schema, table))
    if fn is None:
        raise DecodeError(f"no text decoding for Connect type {schema.type}")
    return fn(text, schema)


def decode_cell(
    value: Any, schema: ConnectSchema, table: Mapping[TextKey, TextDecoder] = TEXT_DECODERS
) -> Any:
    """Decode a cell that is a string or a plain JSON value (numbers, booleans, objects)."""
    if value is None:
        return None
    if isinstance(value, str):
        return decode_text(value, schema, table)
    return _decode_native(value, schema, table)


#: The JSON values other than a string that a plain-JSON cell of these Connect types refuses
#: (by :func:`_native_kind`): a number or a boolean is no text; an object or an array in a
#: ``string`` column is its JSON text, and no bytes; a number is no boolean (though Canal reads
#: the text ``1`` as one). Spark's decode asks these of the cell's JSON kind
#: (spark_bindings/build.py), which its map of texts does not keep.
TEXT_ONLY: Final[Mapping[str, frozenset[str]]] = {
    "string": frozenset({"int", "float", "boolean"}),
    "bytes": frozenset({"int", "float", "boolean", "json"}),
    "boolean": frozenset({"int", "float"}),
}


def refused_kinds(schema: ConnectSchema) -> frozenset[str]:
    """The JSON kinds other than a string a plain-JSON cell of ``schema`` refuses (a Decimal,
    though bytes, takes JSON numbers)."""
    if schema.name == DECIMAL_NAME:
        return frozenset()
    return TEXT_ONLY.get(schema.type, frozenset())


def cell_refused_kinds(schema: ConnectSchema, images: Images) -> frozenset[str]:
    """The JSON kinds other than a string a cell of ``schema`` refuses in a format's images:
    a plain-JSON (or typed text) cell by its column (:func:`refused_kinds`), and the kinds the
    format's cells hold in no column (``Images.cell_refuses``)."""
    typed = images.values == "json" or images.typed_cells
    own = refused_kinds(schema) if typed else frozenset()
    return own | images.cell_refuses


def _decode_native(value: Any, schema: ConnectSchema, table: Mapping[TextKey, TextDecoder]) -> Any:
    if isinstance(value, bytes):
        if schema.type == "bytes":
            return value
        raise DecodeError(f"raw bytes are not a {schema.name or schema.type}")
    kind = _native_kind(value)
    if kind in refused_kinds(schema):
        raise DecodeError(f"{json_kind(value)} is not a {schema.name or schema.type}")
    if kind == "json":
        if schema.type == "string":
            return orjson.dumps(value, default=as_written).decode("utf-8")
    elif kind == "boolean":
        if schema.type == "boolean":
            return value
    elif schema.type in ("float", "double"):
        number = float(value)
        return as_float32(number, value) if schema.type == "float" else number
    elif kind == "int" and schema.type.startswith("int"):
        # the number's digits through the column's text rule, as Spark reads the token's text:
        # an int16 holds no 70000, and a timestamp column no bare number
        return decode_text(str(value), schema, table)
    elif schema.name == DECIMAL_NAME:
        if kind == "int":  # exact: held to the declared precision as its digits are
            return _text_decimal(str(value), schema)
        return json_number_decimal(value, schema)  # the text a JsonNumber kept, at scale
    raise DecodeError(f"{json_kind(value)} is not a {schema.name or schema.type}")


# --- row images against a contract ------------------------------------------------------------


_CODECS: dict[tuple[int, int], tuple[Contract, RowCodec]] = {}


class RowCodec:
    """A contract's columns, ready to decode or check row images (one per contract)."""

    __slots__ = ("columns", "lenient", "names", "table")

    def __init__(
        self,
        fields: Iterable[ConnectSchema],
        table: Mapping[TextKey, TextDecoder] = TEXT_DECODERS,
        lenient: bool = False,
    ) -> None:
        self.columns: dict[str, ConnectSchema] = {f.field or "": f for f in fields}
        self.names = list(self.columns)
        self.table = table
        self.lenient = lenient

    @classmethod
    def of(
        cls, contract: Contract, table: Mapping[TextKey, TextDecoder] = TEXT_DECODERS
    ) -> RowCodec:
        """The codec of a contract's columns (cached per contract and decoder table)."""
        key = (id(contract), id(table))
        found = _CODECS.get(key)
        if found is None or found[0] is not contract:
            if len(_CODECS) > 64:
                _CODECS.clear()
            found = _CODECS[key] = (contract, cls(contract.row_schema.fields or (), table))
        return found[1]

    def decode(self, image: Mapping[str, Any] | None, path: str) -> dict[str, Any] | None:
        """Typed values of an image; unknown columns and bad values raise DecodeError."""
        if image is None:
            return None
        out: dict[str, Any] = {}
        for name, value in image.items():
            schema = self.columns.get(name)
            where = f"{path}.{name}"
            if schema is None:
                if self.lenient:
                    out[name] = value
                    continue
                raise DecodeError(f"column {name!r} is not in the contract", where)
            out[name] = self._one(value, schema, where)
        return out

    def _one(self, value: Any, schema: ConnectSchema, where: str) -> Any:
        if value is None:
            if not schema.optional:
                raise DecodeError("null in a required column", where)
            return None
        try:
            return decode_cell(value, schema, self.table)
        except DecodeError as err:
            raise DecodeError(err.what, where) from None

    def check(
        self, image: Mapping[str, Any] | None, path: str, where: str, full: bool
    ) -> list[Violation]:
        """Every problem of one image: extra columns, bad values, and (``full``) missing ones."""
        if image is None:
            return []
        found: list[Violation] = []
        for name, value in image.items():
            schema = self.columns.get(name)
            at = f"{path}.{name}"
            if schema is None:
                found.append(
                    Violation(where, at, "extra-column", f"column {name!r} is not in the contract")
                )
                continue
            try:
                self._one(value, schema, at)
            except DecodeError as err:
                if value is None:
                    found.append(Violation(where, at, "wrong-type", err.what))
                else:
                    found.append(Violation(where, at, "undecodable", err.what))
        if full:
            for name in self.names:
                if name not in image:
                    found.append(
                        Violation(
                            where, f"{path}.{name}", "missing-column", f"column {name!r} is missing"
                        )
                    )
        return found


def key_from(names: Iterable[str], *images: Any) -> dict[str, Any] | None:
    """The key columns' values from the first image (or key object) holding a value for every
    one of them (None: no key columns, or none holds them all). Every path (the Spark feed
    too) reads a change's key this way."""
    wanted = list(names)
    if not wanted:
        return None
    for image in images:
        if isinstance(image, dict) and all(image.get(k) is not None for k in wanted):
            return {k: image[k] for k in wanted}
    return None


def position_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A position dict of JSON scalars (nested values as compact JSON text)."""
    out: dict[str, Any] = {}
    for k, v in fields.items():
        if v is None or isinstance(v, str | int | float | bool):
            out[k] = v
        else:
            out[k] = orjson.dumps(v, default=as_written).decode("utf-8")
    return out


# --- inference scaffolding --------------------------------------------------------------------


class TableSeen:
    """The one table a sample describes; a second table is an error (one contract per table)."""

    __slots__ = ("table", "where")

    def __init__(self) -> None:
        self.table: TableId | None = None
        self.where = ""

    def see(self, table: TableId, where: str) -> None:
        if self.table is None:
            self.table, self.where = table, where
        elif table != self.table:
            raise InputError(
                f"the sample holds rows of several tables ({self.table.qualified()} from "
                f"{self.where}, then {table.qualified()}); infer one table at a time (--table REGEX) or one contract per table (--split-by-table -o DIR)",
                where,
            )


_NAME_CLEAN: Final = re.compile(r"[^A-Za-z0-9_.\-]+")


def contract_name(options: InferOptions, table: TableId | None, fallback: str) -> str:
    """The contract name: ``--name``, else the qualified table name, else ``fallback``."""
    if options.name:
        return options.name
    text = table.qualified() if table is not None else ""
    cleaned = _NAME_CLEAN.sub("_", text).strip("_.-")
    return cleaned or fallback


def build_contract(
    *,
    fmt: str,
    options: InferOptions,
    table: TableId | None,
    fields: list[ConnectSchema],
    key: Iterable[str] = (),
    format_options: Mapping[str, Any] | None = None,
) -> Contract:
    """A contract for an inferred row (the table name falls back to the contract name)."""
    if not fields:
        raise InputError("no row changes in the sample: nothing to infer columns from")
    name = contract_name(options, table, fmt)
    row = struct(fields)
    return contract_from_schema(
        name=name,
        format=fmt,
        table=table or TableId(name=name),
        row=row,
        key=list(key),
        topic=options.topic,
        options=dict(format_options or {}),
    )


def parse_json_text(text: Any, where: str, path: str, what: str) -> dict[str, Any]:
    """A JSON object carried inside a string (e.g. Arcion's ``cursor``)."""
    if isinstance(text, dict):
        return text
    if not isinstance(text, str):
        raise InputError(
            f"expected {what} (a JSON string), got {json_kind(text)}", f"{where} {path}"
        )
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise InputError(f"{what} is not valid JSON", f"{where} {path}") from None
    if not isinstance(value, dict):
        raise InputError(f"{what} is not a JSON object", f"{where} {path}")
    return dict(value)


def path_of(err: InputError) -> str:
    """The JSON path part of an error's ``where`` (``file:3 $.cursor`` → ``$.cursor``)."""
    _, sep, path = (err.where or "").partition(" $")
    return f"${path}" if sep else "$"


def lenient_int(value: Any) -> int | None:
    """An integer from a JSON number or a string of digits; None otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def decode_located(
    codec: RowCodec | None, image: Mapping[str, Any] | None, path: str, where: str
) -> dict[str, Any] | None:
    """Typed values of an image (as-is without a contract); errors carry ``where`` + path."""
    if image is None:
        return None
    if codec is None:
        return dict(image)
    try:
        return codec.decode(image, path)
    except DecodeError as err:
        raise err.located(where) from None
