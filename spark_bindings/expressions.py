"""Native Spark expressions that turn wire values into decoded values.

Every function here builds a :class:`~pyspark.sql.Column` expression: no Python UDF, so Spark
code-generates the whole decode. Two families, chosen by how a format carries its values:

- ``json`` wire values (Connect's JsonConverter): base64 two's-complement decimals, epoch
  days/millis/micros/nanos, ISO-8601 strings — :func:`decode_json_value`;
- ``text`` wire values (Canal, Arcion S3, SharePlex, CSV): every value a string —
  :func:`decode_text_value`.

Both return a :class:`Decoded`: the value expression and the conditions under which a non-null
wire value failed to decode, each with its JSON path, so the caller can build ``_error``.
Spark's ANSI mode is on by default in Spark 4: every cast that may fail is a ``try_`` form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DecimalType,
    DoubleType,
    MapType,
    StructField,
    StructType,
    VariantType,
)

from contracts.formats._typing import TEXT_WHITESPACE, enum_members
from contracts.formats.spec import DEFAULT_TEXT, TextConventions
from contracts.logical import (
    DECIMAL_NAME,
    EXACT_JSON_NUMBER_DIGITS,
    MAX_SPARK_DECIMAL_PRECISION,
    LogicalKey,
    decimal_precision,
    decimal_scale,
    lookup,
)
from contracts.schema import ConnectSchema

WireKind = Literal["json", "text"]

MICROS_PER_DAY: Final = 86_400_000_000
_HEX_DIGITS: Final = "0123456789ABCDEF"
_HEX_COMPLEMENT: Final = "FEDCBA9876543210"
#: 2**64 as a decimal literal: the weight of the high 64 bits of a 128-bit unscaled value.
_TWO_POW_64: Final = "18446744073709551616"
#: The most decimal digits every value of which fits a signed 64-bit integer.
_LONG_DIGITS: Final = 18


@dataclass(frozen=True)
class Problem:
    """A condition under which a value failed to decode, and what to say about it."""

    #: Where (a JSON path); empty when ``message`` names its own paths.
    path: str
    #: What to say: a fixed text, or a string Column (read on the rows where it holds).
    message: str | Column
    condition: Column
    #: The condition rebuilt from whether the value is null (a staged flag), when it depends
    #: on the value only through that.
    rebuild: Callable[[Column], Column] | None = None
    #: Conditions that must also hold (outermost first), kept apart from ``condition`` so
    #: that :func:`error_text` tests a gate shared by many problems once, not once each.
    gates: tuple[Column, ...] = ()

    def gated(self, gate: Column) -> Problem:
        """This problem, counted only where ``gate`` holds too."""
        return replace(self, gates=(gate, *self.gates))

    def narrowed(self, condition: Column) -> Problem:
        """This problem with ``condition`` joined to its own (its rebuild no longer applies)."""
        return Problem(self.path, self.message, condition & self.condition, gates=self.gates)

    def holds(self) -> Column:
        """Where the problem holds: its gates and its condition."""
        return _all((*self.gates, self.condition))


@dataclass(frozen=True)
class Decoded:
    """A decoded value expression and the problems that can null it."""

    value: Column
    problems: tuple[Problem, ...] = field(default_factory=tuple)


def spark_type_of(type_json: Any) -> DataType:
    """A Spark DataType from its ``jsonValue()`` form (a leaf, an array, a map or a struct)."""
    wrapper = {
        "type": "struct",
        "fields": [{"name": "v", "type": type_json, "nullable": True, "metadata": {}}],
    }
    return StructType.fromJson(wrapper).fields[0].dataType


def error_text(problems: tuple[Problem, ...] | list[Problem]) -> Column:
    """One string naming every problem that holds (null when none does)."""
    if not problems:
        return F.lit(None).cast("string")
    parts: list[Column] = []
    found: list[Column] = []
    for gates, members in _by_gates(problems):
        texts = [F.when(p.condition, problem_text(p)) for p in members]
        if not gates:
            parts += texts
            found += [p.condition for p in members]
            continue
        # a gate shared by consecutive problems is tested once for all of them
        some = _all(gates) & _any([p.condition for p in members])
        found.append(some)
        parts.append(F.when(some, texts[0] if len(texts) == 1 else F.concat_ws("; ", *texts)))
    # The text is built only on rows where some problem holds: a clean row pays for the
    # (short-circuited) conditions, not for assembling strings.
    return F.when(F.coalesce(_any(found), F.lit(False)), F.concat_ws("; ", *parts))


def _by_gates(problems: Sequence[Problem]) -> list[tuple[tuple[Column, ...], list[Problem]]]:
    """Runs of consecutive problems under the same gates (the same Column objects)."""
    runs: list[tuple[tuple[Column, ...], list[Problem]]] = []
    for p in problems:
        if runs and [id(g) for g in runs[-1][0]] == [id(g) for g in p.gates]:
            runs[-1][1].append(p)
        else:
            runs.append((p.gates, [p]))
    return runs


def _all(conditions: Sequence[Column]) -> Column:
    out = conditions[0]
    for c in conditions[1:]:
        out = out & c
    return out


def _any(conditions: Sequence[Column]) -> Column:
    out = conditions[0]
    for c in conditions[1:]:
        out = out | c
    return out


def problem_text(p: Problem) -> Column:
    """``path: message`` (a problem without a path: its message, which names its own)."""
    if not p.path:
        return F.lit(p.message) if isinstance(p.message, str) else p.message
    if isinstance(p.message, str):
        return F.lit(f"{p.path}: {p.message}")
    return F.concat(F.lit(f"{p.path}: "), p.message)


def failed(wire: Column, value: Column, path: str, message: str) -> Problem:
    """The usual problem: a non-null wire value whose decoded value is null."""
    return Problem(
        path, message, wire.isNotNull() & value.isNull(), lambda null: wire.isNotNull() & null
    )


# --- integers and decimals ---------------------------------------------------------------------


def signed_unscaled_digits(raw: Column, max_bytes: int = 16, hexed: Column | None = None) -> Column:
    """Big-endian two's-complement bytes → the signed integer as decimal digits.

    Up to 8 bytes: sign-extend the hex to 64 bits and let ``conv`` read it as signed. Up to 16
    bytes: read the magnitude (the bytes, or their complement when negative) as two unsigned
    64-bit halves and combine them with exact decimal arithmetic. Values longer than
    ``max_bytes`` (8 or 16) give null; with ``max_bytes=8`` the 128-bit branch is not built at
    all, which keeps the generated code small (a decimal of precision ≤ 18 always fits 8 bytes).
    ``hexed``: ``hex(raw)`` computed before (it is read four times).
    """
    hexed = F.hex(raw) if hexed is None else hexed
    size = F.length(hexed)
    negative = F.substring(hexed, 1, 1) >= F.lit("8")
    pad = F.when(negative, F.lit("F")).otherwise(F.lit("0"))
    short = F.conv(_sign_extend(hexed, pad), 16, -10)
    if max_bytes <= 8:
        return F.when((size > 0) & (size <= 16), short)
    magnitude = F.when(negative, F.translate(hexed, _HEX_DIGITS, _HEX_COMPLEMENT)).otherwise(hexed)
    padded = F.lpad(magnitude, 32, "0")
    high = F.conv(F.substring(padded, 1, 16), 16, 10).cast("decimal(20,0)")
    low = F.conv(F.substring(padded, 17, 16), 16, 10).cast("decimal(20,0)")
    unsigned = F.try_add(F.try_multiply(high, F.lit(_TWO_POW_64).cast("decimal(20,0)")), low)
    long_digits = F.when(
        negative, F.concat(F.lit("-"), F.try_add(unsigned, F.lit(1)).cast("string"))
    ).otherwise(unsigned.cast("string"))
    return (
        F.when(size == 0, F.lit(None))
        .when(size <= 16, short)
        .when(size <= 32, long_digits)
        .otherwise(F.lit(None))
    )


def _sign_extend(hexed: Column, pad: Column) -> Column:
    return F.concat(F.repeat(pad, F.lit(16) - F.length(hexed)), hexed)


def padded_base64(text: Column) -> Column:
    """The bytes of padded base64 text, as Jackson and the core's strict decoder read it
    (Spark's own ``to_binary`` would also take unpadded text)."""
    return F.when(F.length(text) % 4 == 0, F.try_to_binary(text, F.lit("base64")))


def base64_decimal(
    wire: Column, scale: int, target: DecimalType, hexed: Column | None = None
) -> Column:
    """A Connect Decimal (base64 two's-complement unscaled bytes) → DecimalType, natively
    (``hexed``: the bytes' hex, computed before)."""
    raw = padded_base64(wire)
    max_bytes = 8 if target.precision <= _LONG_DIGITS else 16
    digits = signed_unscaled_digits(raw, max_bytes, hexed)
    text = F.concat(digits, F.lit(f"E{-scale}")) if scale else digits
    return text.try_cast(target)


def digits_with_scale(digits: Column, scale: Column) -> Column:
    """Signed integer digits and a scale → the exact decimal text (``format(Decimal, "f")``)."""
    negative = F.startswith(digits, F.lit("-"))
    bare = F.ltrim(F.regexp_replace(digits, "^-", ""))
    padded = F.lpad(bare, (scale + 1).cast("int"), "0")
    int_len = F.length(padded) - scale
    fraction = F.when(
        scale > 0,
        F.concat(
            F.substring(padded, 1, int_len.cast("int")),
            F.lit("."),
            F.substring(padded, (int_len + 1).cast("int"), scale.cast("int")),
        ),
    ).otherwise(F.concat(bare, F.repeat(F.lit("0"), (-scale).cast("int"))))
    return F.when(digits.isNull(), F.lit(None)).otherwise(
        F.concat(F.when(negative, F.lit("-")).otherwise(F.lit("")), fraction)
    )


def variable_scale_decimal(wire: Column) -> Column:
    """Debezium VariableScaleDecimal ``{scale, value}`` → the exact decimal text."""
    digits = signed_unscaled_digits(padded_base64(wire["value"]))
    return F.when(wire.isNull(), F.lit(None)).otherwise(
        digits_with_scale(digits, wire["scale"].cast("int"))
    )


# --- temporal ----------------------------------------------------------------------------------


def floor_div(value: Column, divisor: int) -> Column:
    """Exact floor division of a long (Python's ``//``)."""
    return F.floor(value.cast("decimal(20,0)") / F.lit(divisor)).cast("long")


def time_of_day_text(micros: Column) -> Column:
    """Microseconds since midnight → ``HH:MM:SS.ffffff`` (``time.isoformat("microseconds")``);
    null outside one day."""
    seconds = F.floor(micros / F.lit(1_000_000)).cast("long")
    text = F.format_string(
        "%02d:%02d:%02d.%06d",
        F.floor(seconds / F.lit(3600)).cast("long"),
        F.pmod(F.floor(seconds / F.lit(60)).cast("long"), F.lit(60)),
        F.pmod(seconds, F.lit(60)),
        F.pmod(micros, F.lit(1_000_000)),
    )
    valid = (micros >= F.lit(0)) & (micros < F.lit(MICROS_PER_DAY))
    return F.when(valid, text)


#: A UTC offset as ISO-8601 texts write it, and a text that ends with one.
_OFFSET: Final = r"(Z|[+-][0-9]{2}(:?[0-9]{2})?)"
_ZONE_TEXT: Final = _OFFSET + "$"


def zoned_text_timestamp(text: Column) -> Column:
    """ISO-8601 text → timestamp; text without a zone is read as UTC (as Python does)."""
    trimmed = F.trim(text)
    # Debezium writes every ZonedTimestamp in UTC ("…Z"): that test is a byte compare, the
    # offset pattern a scan of the whole text
    has_zone = trimmed.endswith(F.lit("Z")) | trimmed.rlike(_ZONE_TEXT)
    value = F.when(has_zone, trimmed.try_cast("timestamp")).otherwise(
        F.concat(F.regexp_replace(trimmed, " ", "T"), F.lit("Z")).try_cast("timestamp")
    )
    return in_timestamp_range(value)


_TIME_TEXT: Final = r"^([0-9]{1,2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?$"


def text_time_of_day(text: Column) -> Column:
    """``H[H]:MM[:SS[.f{1,9}]]`` text (stripped) → ``HH:MM:SS.ffffff`` (fractions beyond
    micros cut), null unless a real time of day (as the core's text decoder)."""
    matches = text.rlike(_TIME_TEXT)

    def group(i: int) -> Column:
        return F.regexp_extract(text, _TIME_TEXT, i)

    minute = group(2).try_cast("long")
    second = F.coalesce(F.nullif(group(3), F.lit("")).try_cast("long"), F.lit(0))
    fraction = F.substring(F.rpad(group(4), 6, "0"), 1, 6).try_cast("long")
    micros = ((group(1).try_cast("long") * 60 + minute) * 60 + second) * 1_000_000 + fraction
    return F.when(matches & (minute < 60) & (second < 60), time_of_day_text(micros))


# --- the logical-type table (JSON wire) --------------------------------------------------------

JsonRule = Callable[[Column, ConnectSchema, DataType], Column]


def _decimal_rule(wire: Column, schema: ConnectSchema, target: DataType) -> Column:
    """A Decimal parsed as text (one parsed as a variant goes to :func:`variant_decimal`)."""
    assert isinstance(target, DecimalType)
    return within_declared(base64_decimal(wire, decimal_scale(schema), target), schema)


def within_declared(value: Column, schema: ConnectSchema) -> Column:
    """``value`` where it fits the column's declared precision. The Spark type already says so
    unless the scale is above the precision (``decimal(2,5)`` is stored as ``decimal(5,5)``,
    which also holds ``0.00123``: three digits, over the precision of two)."""
    precision, scale = decimal_precision(schema), decimal_scale(schema)
    if precision is None or scale <= precision:
        return value
    digits = min(scale, MAX_SPARK_DECIMAL_PRECISION)  # as the column's Spark type is capped
    bound = F.lit(f"1E{precision - scale}").cast(f"decimal({digits},{digits})")
    return F.when(F.abs(value) < bound, value)


# --- JSON wire types: a Decimal is a variant ---------------------------------------------------


def variant_wire(schema: ConnectSchema) -> bool:
    """Whether ``from_json`` parses values of ``schema`` as a variant: a Connect Decimal, which
    JsonConverter writes as base64 text, or as a JSON number with ``decimal.format=NUMERIC``
    (as a string the two would be one text: ``1234`` is valid base64); and every string, which
    the core refuses as any other JSON value (``from_json`` reads a number, a boolean or an
    object into a string as its JSON text: ``5`` and ``"5"`` would be one value); and every
    other bytes value, base64 text that ``true`` or ``1234`` would otherwise pass for."""
    return schema.type in ("string", "bytes")


def _is_decimal_variant(schema: ConnectSchema) -> bool:
    logical = lookup(schema)
    return schema.type == "bytes" and logical is not None and logical.name == DECIMAL_NAME


#: The first characters of the JSON text of each kind of value (``_typing._native_kind``).
KIND_STARTS: Final = {
    "json": "[{",
    "boolean": "tf",
    "int": "-0123456789",
    "float": "-0123456789",
}


def could_be_no_string(text: Column) -> Column:
    """Whether ``text`` (a JSON value as Spark reads it into a string) could be the text of a
    number, ``true``/``false``, an array or an object: only then is its JSON kind asked."""
    return could_be_kind(text, frozenset(KIND_STARTS))


def could_be_kind(text: Column, kinds: frozenset[str]) -> Column:
    """Whether ``text`` (a JSON value as Spark reads it into a string) could be the text of
    a value of one of ``kinds``: only then is its JSON kind asked."""
    starts = sorted({c for kind in kinds for c in KIND_STARTS[kind]})
    return F.substring(text, 1, 1).isin(*starts)


def json_string(
    wire: Column, path: str, stage_text: Callable[[Column], Column] | None = None
) -> tuple[Column, Problem]:
    """A string parsed as a variant → (its text, the problem of a JSON value that is not a
    string). Only a text a non-string could also read as (a number, ``true``/``false``, an
    array or an object) is asked the variant's kind."""
    stage = stage_text or as_is
    text = F.variant_get(wire, "$", "string")
    could = could_be_no_string(text)
    bad = F.coalesce(could & (F.schema_of_variant(wire) != F.lit("STRING")), F.lit(False))
    return stage(text), Problem(path, "is not a string", stage(bad))


def json_wire_type(schema: ConnectSchema, wire: DataType) -> DataType:
    """The type ``from_json`` parses values of ``schema`` into: ``wire`` (the contract's wire
    view) with every Decimal a ``VariantType``."""
    if variant_wire(schema):
        return VariantType()
    if schema.type == "float" and lookup(schema) is None:
        return DoubleType()  # narrowed by the decode, which refuses what overflows a float
    if isinstance(wire, StructType) and schema.type == "struct":
        return StructType(
            [
                StructField(f.name, json_wire_type(fs, f.dataType), f.nullable)
                for fs, f in zip(schema.fields or (), wire.fields, strict=True)
            ]
        )
    if isinstance(wire, ArrayType) and schema.type == "array" and schema.items is not None:
        return ArrayType(json_wire_type(schema.items, wire.elementType), wire.containsNull)
    if isinstance(wire, MapType) and schema.type == "map" and schema.values is not None:
        value = json_wire_type(schema.values, wire.valueType)
        return MapType(wire.keyType, value, wire.valueContainsNull)
    return wire


def json_absent(wire: Column, schema: ConnectSchema) -> Column:
    """Whether a parsed JSON value is missing or null (a variant holds JSON null as a value)."""
    return (wire.isNull() | F.is_variant_null(wire)) if variant_wire(schema) else wire.isNull()


def variant_decimal(
    wire: Column,
    schema: ConnectSchema,
    target: DataType,
    path: str,
    stage_text: Callable[[Column], Column] | None = None,
) -> Decoded:
    """A Connect Decimal parsed as a variant → DecimalType: base64 text (JsonConverter's
    default), or a JSON number held exactly (an integer; another number only with at most 15
    significant digits) that needs no rounding to the scale and fits the precision.

    ``stage_text`` may make the variant's text and kind columns of an earlier projection: each
    is read several times, and every decimal column's code lands in the decode stage's
    generated method, which the JIT leaves interpreted above 8,000 bytes."""
    assert isinstance(target, DecimalType)
    stage = stage_text or as_is
    text = stage(F.variant_get(wire, "$", "string"))
    kind = stage(F.schema_of_variant(wire))
    # the bytes of base64 text as hex, read four times by the base64 rule: staged, once
    base64 = F.schema_of_variant(wire) == F.lit("STRING")
    hexed = stage(F.when(base64, F.hex(padded_base64(F.variant_get(wire, "$", "string")))))
    number = stage(F.variant_get(wire, "$", "string").try_cast(target))  # read twice
    # ints and decimals: the variant holds the digits as written (as the core's JsonNumber
    # text); a double (an exponent, or beyond 38 digits) only with at most 15 significant
    # digits; never rounded to the column's scale
    plain = kind.endswith("INT") | kind.startswith("DECIMAL")
    exact = F.when(plain, _within_scale(text, decimal_scale(schema))).otherwise(
        (F.length(_significant_digits(text)) <= F.lit(EXACT_JSON_NUMBER_DIGITS))
        & (number.cast("double") == text.try_cast("double"))
    )
    value = within_declared(
        F.when(kind == "STRING", base64_decimal(text, decimal_scale(schema), target, hexed)).when(
            exact, number
        ),
        schema,
    )
    present = text.isNotNull()  # null for SQL null and for JSON null
    bad = Problem(path, _FAILURE["decimal"], present & value.isNull(), lambda null: present & null)
    return Decoded(value, (bad,))


def _within_scale(number: Column, scale: int) -> Column:
    """Whether a plain number's text has at most ``scale`` digits after the point (trailing
    zeros aside): the core refuses to round a decimal."""
    fraction = F.regexp_replace(F.regexp_extract(number, r"\.([0-9]*)$", 1), "0+$", "")
    return F.length(fraction) <= F.lit(scale)


def _significant_digits(number: Column) -> Column:
    """The significant digits of a number's text (``-1.50E3`` → ``15``)."""
    return F.trim(F.regexp_replace(number, r"[eE].*|[^0-9]", ""), F.lit("0"))


#: The instants Python's datetime holds (0001-01-01 to 9999-12-31T23:59:59.999999 UTC), as
#: microseconds since the epoch: the core refuses the others, and so does the Spark decode.
MIN_MICROS: Final = -62_135_596_800_000_000
MAX_MICROS: Final = 253_402_300_799_999_999
#: The same range as days since the epoch (for Date).
MIN_DAYS: Final = -719_162
MAX_DAYS: Final = 2_932_896


def _by_unit(unit: str) -> JsonRule:
    """An epoch count in ``unit`` → timestamp, null outside the range (checked on the count
    itself, before a multiplication that would overflow in ANSI mode and fail the job)."""
    to_micros, bounds = _MICROS[unit], _EPOCH_RANGE[unit]

    def rule(wire: Column, _schema: ConnectSchema, _target: DataType) -> Column:
        value = F.timestamp_micros(to_micros(wire))
        return value if bounds is None else F.when(wire.between(*bounds), value)

    return rule


def _date_rule(wire: Column, _schema: ConnectSchema, _target: DataType) -> Column:
    """Epoch days → date, null outside the years 1-9999."""
    return F.when(wire.between(MIN_DAYS, MAX_DAYS), F.date_from_unix_date(wire))


def in_timestamp_range(value: Column) -> Column:
    """``value`` (a timestamp) where Python's datetime can hold it, else null."""
    low, high = F.timestamp_micros(F.lit(MIN_MICROS)), F.timestamp_micros(F.lit(MAX_MICROS))
    return F.when(value.between(low, high), value)


def _time_rule(unit_to_micros: Callable[[Column], Column]) -> JsonRule:
    def rule(wire: Column, _schema: ConnectSchema, _target: DataType) -> Column:
        return time_of_day_text(unit_to_micros(wire))

    return rule


def _cast_rule(wire: Column, _schema: ConnectSchema, target: DataType) -> Column:
    return wire.try_cast(target)


def _decimal_text_rule(wire: Column, _schema: ConnectSchema, _target: DataType) -> Column:
    # the value stays text; it must still be a number
    return F.when(F.trim(wire).try_cast("decimal(38,10)").isNotNull() | _is_big_number(wire), wire)


def _is_big_number(wire: Column) -> Column:
    return F.trim(wire).rlike(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


_MICROS: Final[Mapping[str, Callable[[Column], Column]]] = {
    # a long first: Connect's Time is an int32 of millis, and int32 * 1000 overflows (ANSI
    # mode fails the job) from 00:00:02.148 on
    "millis": lambda c: c.cast("long") * F.lit(1000),
    "micros": lambda c: c,
    "nanos": lambda c: floor_div(c, 1000),
}
#: The epoch counts in each unit that fall in the years 1-9999 (nanos: every long does).
_EPOCH_RANGE: Final[Mapping[str, tuple[int, int] | None]] = {
    "millis": (-(-MIN_MICROS // 1000), MAX_MICROS // 1000),
    "micros": (MIN_MICROS, MAX_MICROS),
    "nanos": None,
}

#: A logical type's (kind, unit) (``contracts.logical.LOGICAL_TYPES``) → how its JSON wire
#: value becomes the decoded Spark value. A type without a rule is marked ``as_base`` there.
JSON_RULES: Final[Mapping[LogicalKey, JsonRule]] = {
    ("decimal", "unscaled"): _decimal_rule,
    ("date", "days"): _date_rule,
    ("time", "millis"): _time_rule(_MICROS["millis"]),
    ("time", "micros"): _time_rule(_MICROS["micros"]),
    ("time", "nanos"): _time_rule(_MICROS["nanos"]),
    ("timestamp", "millis"): _by_unit("millis"),
    ("timestamp", "micros"): _by_unit("micros"),
    ("timestamp", "nanos"): _by_unit("nanos"),
    ("zoned-timestamp", "iso"): lambda w, _s, _t: zoned_text_timestamp(w),
    ("variable-decimal", "unscaled"): lambda w, _s, _t: variable_scale_decimal(w),
    ("decimal", "text"): _decimal_text_rule,
    ("timestamp", "text"): lambda w, _s, _t: zoned_text_timestamp(w),
    ("year", None): _cast_rule,
    ("interval", "micros"): _cast_rule,
}

#: What a failure of each logical kind (or base type) is called in ``_error``.
_FAILURE: Final[Mapping[str, str]] = {
    "decimal": "is not a valid decimal for its precision and scale",
    "variable-decimal": "is not a valid VariableScaleDecimal",
    "date": "is not a date in range",
    "time": "is not a time of day",
    "timestamp": "is not a timestamp in range",
    "zoned-timestamp": "is not an ISO-8601 timestamp",
    "boolean": "is not a boolean",
    "int8": "is not an integer in the int8 range",
    "int16": "is not an integer in the int16 range",
    "int32": "is not an integer in the int32 range",
    "int64": "is not an integer in the int64 range",
    "float": "is not a number in the float range",
    "double": "is not a number",
    "bytes": "is not encodable as bytes",
    "year": "is not a year",
    "interval": "is not a duration",
}


def decode_json_value(
    wire: Column,
    schema: ConnectSchema,
    target: DataType,
    path: str,
    stage_text: Callable[[Column], Column] | None = None,
) -> Decoded:
    """Decode one JsonConverter wire value (already parsed by ``from_json``) to ``target``
    (``stage_text``: see :func:`variant_decimal`)."""
    if _is_decimal_variant(schema):
        return variant_decimal(wire, schema, target, path, stage_text)
    if variant_wire(schema):  # a string or bytes: its text, decoded as that wire value
        text, not_string = json_string(wire, path, stage_text)
        found = _decode_json_wire(text, schema, target, path)
        return Decoded(found.value, (not_string, *found.problems))
    return _decode_json_wire(wire, schema, target, path)


def _decode_json_wire(wire: Column, schema: ConnectSchema, target: DataType, path: str) -> Decoded:
    logical = lookup(schema)
    if logical is not None and logical.key in JSON_RULES:
        value = JSON_RULES[logical.key](wire, schema, target)
        message = _FAILURE.get(logical.kind, f"is not a valid {logical.kind}")
        return Decoded(value, (failed(wire, value, path, message),))
    if schema.type == "bytes":
        value = padded_base64(wire)
        return Decoded(value, (failed(wire, value, path, "is not valid base64"),))
    if schema.type == "float":
        value = narrowed_float(wire)
        return Decoded(value, (failed(wire, value, path, _FAILURE["float"]),))
    if schema.type == "struct":
        return decode_struct(wire, schema, target, path, decode_json_value)
    if schema.type == "array":
        return _decode_array(wire, schema, target, path, decode_json_value)
    if schema.type == "map":
        return _decode_map(wire, schema, target, path, decode_json_value)
    return Decoded(wire)


# --- text wire values --------------------------------------------------------------------------
#
# The same rules as the core's text decoders (contracts/formats/_typing.py TEXT_DECODERS, and
# Canal's variant in canal_json.canal_text_decoders), written as Spark expressions.

# The core's grammars (contracts/formats/_typing.py). Each rule is one regular expression and a
# cast: compact generated code matters more than the match's cost, since every column's rule
# lands in one generated method, which the JIT leaves interpreted above 8,000 bytes.
_INT_TEXT: Final = r"^[+-]?(0|[1-9][0-9]*)$"
_DATE_TEXT: Final = r"^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_TIMESTAMP_TEXT: Final = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?" + _OFFSET + "?$"
)
#: A text that matched _TIMESTAMP_TEXT and has no offset: only digits and the point after the
#: seconds (one anchored pass, where searching for the offset scans every position).
_ZONELESS_AFTER_SECONDS: Final = r"^.{19}[.0-9]*$"


def decimal_text_pattern(scale: int) -> str:
    """Plain decimal notation with at most ``scale`` digits after the point."""
    if scale <= 0:
        return r"^[+-]?[0-9]+\.?$"
    return rf"^[+-]?([0-9]+(\.[0-9]{{0,{scale}}})?|\.[0-9]{{1,{scale}}})$"


def stripped(wire: Column) -> Column:
    """The text without the ASCII whitespace around it (the core's ``TEXT_WHITESPACE``)."""
    return F.trim(wire, F.lit(TEXT_WHITESPACE))


@dataclass(frozen=True)
class TextRule:
    """How a text value becomes its Spark value.

    ``strips``: ``decode`` reads the text :func:`stripped` (the caller strips it once, and may
    stage the stripped text as a column, since every read of an expression repeats its code);
    otherwise ``decode`` reads the wire text as it is."""

    decode: Callable[[Column], Column]
    strips: bool = True


def narrowed_float(number: Column) -> Column:
    """A double as a float, null where the float would overflow to infinity (a double that
    is infinite itself stays so)."""
    narrowed = number.cast("float")
    overflow = (F.abs(narrowed) == F.lit(float("inf"))) & (F.abs(number) != F.lit(float("inf")))
    return F.when(~overflow, narrowed)


def _text_bool(text: Column, d: TextConventions) -> Column:
    if d.fold_booleans:
        text = F.lower(text)
    return F.when(text.isin(*d.true_texts), F.lit(True)).when(
        text.isin(*d.false_texts), F.lit(False)
    )


def _text_int(text: Column, target: DataType) -> Column:
    """``[+-]?(0|[1-9][0-9]*)`` in the target's range."""
    return F.when(text.rlike(_INT_TEXT), text.try_cast(target))


def _text_decimal(text: Column, schema: ConnectSchema, target: DataType) -> Column:
    """Plain notation, at most the column's scale after the point, in its precision."""
    pattern = decimal_text_pattern(decimal_scale(schema))
    return within_declared(F.when(text.rlike(pattern), text.try_cast(target)), schema)


def _text_date(text: Column) -> Column:
    """``yyyy-MM-dd``, a real calendar date from year 1 on."""
    return F.when(text.rlike(_DATE_TEXT), text.try_cast("date"))


def text_timestamp(text: Column, time_zone: str) -> Column:
    """``yyyy-MM-dd[ T]HH:mm:ss[.f{1,9}][zone]``; without a zone, wall-clock time in
    ``time_zone``."""
    as_utc = F.concat(text, F.lit("Z")).try_cast("timestamp")
    zoneless = as_utc if time_zone == "UTC" else F.to_utc_timestamp(as_utc, time_zone)
    value = F.when(text.rlike(_ZONELESS_AFTER_SECONDS), zoneless).otherwise(
        text.try_cast("timestamp")
    )
    return F.when(text.rlike(_TIMESTAMP_TEXT), value)


def _power_of_two(n: int) -> Column:
    return F.lit(str(1 << n)).cast("decimal(38,0)")


def _text_enum(text: Column, members: tuple[str, ...], numbers: bool) -> Column:
    """One of the members, or (``numbers``) its 1-based index (the core's ``enum_text``)."""
    value = F.when(text.isin(*members), text)
    if not numbers:
        return value
    index = F.when(text.rlike("^[0-9]+$"), text.try_cast("int"))
    by_index = F.when(index.between(1, len(members)), F.array(*map(F.lit, members))[index - 1])
    return value.otherwise(by_index)


def _text_enum_set(text: Column, members: tuple[str, ...], numbers: bool) -> Column:
    """Members joined by commas, or (``numbers``) a bitmask (the core's ``enum_set_text``)."""
    subset = F.forall(F.split(text, ",", -1), lambda m: m.isin(*members))
    value = F.when((text == F.lit("")) | subset, text)
    if not numbers:
        return value
    mask = F.when(text.rlike("^[0-9]+$"), text.try_cast("decimal(38,0)"))
    picked = [
        F.when(F.floor(mask / _power_of_two(i)) % 2 == 1, F.lit(m)) for i, m in enumerate(members)
    ]
    from_mask = F.when(mask < _power_of_two(len(members)), F.concat_ws(",", *picked))
    return F.when(text.rlike("^[0-9]+$"), from_mask).otherwise(value)


def _zero_or(rule: Callable[[Column], Column], d: TextConventions) -> Callable[[Column], Column]:
    zero = d.zero_date
    if zero is None:
        return rule
    return lambda text: F.when(~F.startswith(text, F.lit(zero)), rule(text))


def text_rule(schema: ConnectSchema, target: DataType, d: TextConventions) -> TextRule | None:
    """How a text value of ``schema`` becomes its Spark value (None: the text as-is)."""
    logical = lookup(schema)
    kind = logical.kind if logical is not None else None
    if kind == "decimal" and isinstance(target, DecimalType):
        return TextRule(lambda t: _text_decimal(t, schema, target))
    if kind == "date":
        return TextRule(_zero_or(_text_date, d))
    if kind == "zoned-timestamp":
        return TextRule(_zero_or(lambda t: text_timestamp(t, d.time_zone), d))
    if kind == "timestamp":
        # a wall-clock value (MySQL DATETIME): UTC whatever the dialect's time zone
        return TextRule(_zero_or(lambda t: text_timestamp(t, "UTC"), d))
    if kind == "time":
        return TextRule(text_time_of_day)
    if kind == "year":
        return TextRule(lambda t: _text_int(t, target))
    members = enum_members(schema)
    if kind == "enum" and members:
        return TextRule(lambda t: _text_enum(t, members, d.enum_numbers), strips=False)
    if kind == "enum-set" and members:
        return TextRule(lambda t: _text_enum_set(t, members, d.enum_numbers), strips=False)
    base: Mapping[str, TextRule | None] = {
        # the default dialect's booleans are exact texts; Canal's are stripped and lowered
        "boolean": TextRule(lambda t: _text_bool(t, d), strips=d.fold_booleans),
        "int8": TextRule(lambda t: _text_int(t, target)),
        "int16": TextRule(lambda t: _text_int(t, target)),
        "int32": TextRule(lambda t: _text_int(t, target)),
        "int64": TextRule(lambda t: _text_int(t, target)),
        "float": TextRule(lambda t: narrowed_float(t.try_cast("double"))),
        "double": TextRule(lambda t: t.try_cast(target)),
        "bytes": TextRule(lambda w: F.encode(w, d.bytes_charset), strips=False),
        "string": None,
    }
    return base.get(schema.type)


def as_is(text: Column) -> Column:
    """The text itself (where a text need not be staged)."""
    return text


def decode_text_value(
    wire: Column,
    schema: ConnectSchema,
    target: DataType,
    path: str,
    dialect: TextConventions = DEFAULT_TEXT,
    stage: Callable[[Column], Column] = as_is,
) -> Decoded:
    """Decode one text wire value (a string, already null where the producer said NULL).

    ``stage`` receives the text the rule reads (stripped, when the rule strips) and may return
    a reference to it as a column of an earlier projection."""
    rule = text_rule(schema, target, dialect)
    if rule is None:
        return Decoded(stage(wire))
    text = stage(stripped(wire) if rule.strips else wire)
    value = rule.decode(text)
    logical = lookup(schema)
    kind = logical.kind if logical is not None else schema.type
    message = _FAILURE.get(kind, f"is not a valid {kind}")
    zero = dialect.zero_date
    zero_ok = zero is not None and kind in ("date", "timestamp", "zoned-timestamp")

    # Whether there is a text: asked of a staged column (stripping keeps nullness), not of an
    # expression a check would compute again.
    present = (wire if stage is as_is else text).isNotNull()

    def bad(null: Column) -> Column:
        cond = present & null
        return cond & ~F.startswith(text, F.lit(zero)) if zero_ok else cond

    return Decoded(value, (Problem(path, message, bad(value.isNull()), bad),))


# --- containers --------------------------------------------------------------------------------

ValueRule = Callable[[Column, ConnectSchema, DataType, str], Decoded]


def decode_struct(
    wire: Column, schema: ConnectSchema, target: DataType, path: str, rule: ValueRule
) -> Decoded:
    """Decode every field of a struct; a missing required field is a problem."""
    assert isinstance(target, StructType)
    values: list[Column] = []
    problems: list[Problem] = []
    for field_schema, spark_field in zip(schema.fields or (), target.fields, strict=True):
        name = field_schema.field or spark_field.name
        child = rule(wire[name], field_schema, spark_field.dataType, f"{path}.{name}")
        values.append(child.value.alias(spark_field.name))
        problems.extend(p.narrowed(wire.isNotNull()) for p in child.problems)
        if not field_schema.optional and not field_schema.has_default:
            problems.append(
                Problem(
                    f"{path}.{name}",
                    "is null but the column is required",
                    wire.isNotNull() & json_absent(wire[name], field_schema),
                )
            )
    value = F.when(wire.isNotNull(), F.struct(*values))
    return Decoded(value, tuple(problems))


def _decode_array(
    wire: Column, schema: ConnectSchema, target: DataType, path: str, rule: ValueRule
) -> Decoded:
    assert schema.items is not None
    element_type = target.elementType  # type: ignore[attr-defined]
    probe = rule(F.lit(None).cast("string"), schema.items, element_type, f"{path}[]")
    if not probe.problems:
        return Decoded(F.transform(wire, lambda x: rule(x, schema.items, element_type, "").value))  # type: ignore[arg-type]
    value = F.transform(wire, lambda x: rule(x, schema.items, element_type, "").value)  # type: ignore[arg-type]
    bad = F.exists(
        wire,
        lambda x: _any_condition(rule(x, schema.items, element_type, f"{path}[]").problems),  # type: ignore[arg-type]
    )
    return Decoded(value, (Problem(f"{path}[]", "holds a value that does not decode", bad),))


def _decode_map(
    wire: Column, schema: ConnectSchema, target: DataType, path: str, rule: ValueRule
) -> Decoded:
    assert schema.values is not None
    value_type = target.valueType  # type: ignore[attr-defined]
    value = F.transform_values(
        wire,
        lambda _k, v: rule(v, schema.values, value_type, "").value,  # type: ignore[arg-type]
    )
    probe = rule(F.lit(None).cast("string"), schema.values, value_type, f"{path}{{}}")
    if not probe.problems:
        return Decoded(value)
    bad = F.exists(
        F.map_values(wire),
        lambda x: _any_condition(rule(x, schema.values, value_type, f"{path}{{}}").problems),  # type: ignore[arg-type]
    )
    return Decoded(value, (Problem(f"{path}{{}}", "holds a value that does not decode", bad),))


def _any_condition(problems: tuple[Problem, ...]) -> Column:
    if not problems:
        return F.lit(False)
    return F.coalesce(_any([p.holds() for p in problems]), F.lit(False))
