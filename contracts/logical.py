"""Logical and semantic types: one table keyed by the Connect schema ``name``.

Each :class:`LogicalType` knows its base Connect type(s), its Avro form, its decoded Spark type,
the Spark type ``from_json`` must parse on the wire, and how a wire value decodes to a real
Python value. Unknown names fall back to the base type (with a warning from :func:`lookup_or_warn`),
never to an error.

To add a type: add one entry to :data:`LOGICAL_TYPES`. Decoders take ``(value, schema)`` and
return the Python value (``decimal.Decimal``, ``datetime.date``, aware UTC ``datetime.datetime``,
``datetime.time``, ``bytes``, ``int``, ``str``...).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
import struct
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from contracts.errors import DecodeError
from contracts.schema import ConnectSchema

Decoder = Callable[[Any, ConnectSchema], Any]

EPOCH_DATE: Final = dt.date(1970, 1, 1)
EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MAX_SPARK_DECIMAL_PRECISION: Final = 38
#: AvroData's precision when a Connect Decimal carries no ``connect.decimal.precision``.
CONNECT_DEFAULT_DECIMAL_PRECISION: Final = 64

PRECISION_PARAM: Final = "connect.decimal.precision"

# The names of the logical and semantic types: every other module takes them from here.
# Kafka Connect's built-ins:
DECIMAL_NAME: Final = "org.apache.kafka.connect.data.Decimal"
CONNECT_DATE_NAME: Final = "org.apache.kafka.connect.data.Date"
CONNECT_TIME_NAME: Final = "org.apache.kafka.connect.data.Time"
CONNECT_TIMESTAMP_NAME: Final = "org.apache.kafka.connect.data.Timestamp"
# Debezium's temporal types:
DEBEZIUM_DATE_NAME: Final = "io.debezium.time.Date"
DEBEZIUM_TIME_NAME: Final = "io.debezium.time.Time"
MICRO_TIME_NAME: Final = "io.debezium.time.MicroTime"
NANO_TIME_NAME: Final = "io.debezium.time.NanoTime"
DEBEZIUM_TIMESTAMP_NAME: Final = "io.debezium.time.Timestamp"
MICRO_TIMESTAMP_NAME: Final = "io.debezium.time.MicroTimestamp"
NANO_TIMESTAMP_NAME: Final = "io.debezium.time.NanoTimestamp"
ZONED_TIMESTAMP_NAME: Final = "io.debezium.time.ZonedTimestamp"
ZONED_TIME_NAME: Final = "io.debezium.time.ZonedTime"
YEAR_NAME: Final = "io.debezium.time.Year"
INTERVAL_NAME: Final = "io.debezium.time.Interval"
MICRO_DURATION_NAME: Final = "io.debezium.time.MicroDuration"
# Debezium's semantic types:
JSON_NAME: Final = "io.debezium.data.Json"
XML_NAME: Final = "io.debezium.data.Xml"
UUID_NAME: Final = "io.debezium.data.Uuid"
ENUM_NAME: Final = "io.debezium.data.Enum"
ENUM_SET_NAME: Final = "io.debezium.data.EnumSet"
BITS_NAME: Final = "io.debezium.data.Bits"
VARIABLE_DECIMAL_NAME: Final = "io.debezium.data.VariableScaleDecimal"
GEOMETRY_NAME: Final = "io.debezium.data.geometry.Geometry"
GEOGRAPHY_NAME: Final = "io.debezium.data.geometry.Geography"
POINT_NAME: Final = "io.debezium.data.geometry.Point"
# Huawei CDL's vendor types (values travel as strings):
CDL_DECIMAL_NAME: Final = "com.xxx.cdc.data.Decimal"
CDL_TIMESTAMP_NAME: Final = "com.xxx.cdc.data.timestamp"

#: Spark JSON type names for Connect base types (as ``DataType.jsonValue()`` writes them).
SPARK_BASE_TYPES: Final[Mapping[str, str]] = {
    "boolean": "boolean",
    "int8": "byte",
    "int16": "short",
    "int32": "integer",
    "int64": "long",
    "float": "float",
    "double": "double",
    "bytes": "binary",
    "string": "string",
}

#: What ``from_json`` must parse for a Connect base type: bytes travel as base64 strings.
SPARK_WIRE_BASE_TYPES: Final[Mapping[str, str]] = {**SPARK_BASE_TYPES, "bytes": "string"}


class LogicalTypeWarning(UserWarning):
    """A schema name is unknown or a logical type cannot be translated exactly."""


@dataclass(frozen=True, slots=True)
class LogicalType:
    """One logical or semantic type.

    ``kind`` groups types by meaning (``decimal``, ``date``, ``time``, ``timestamp``,
    ``zoned-timestamp``, ``json``, ...) and ``unit`` tells the wire unit (``days``, ``millis``,
    ``micros``, ``nanos``, ``iso``): the diff engine compares both.
    ``avro_logical`` is the Avro ``logicalType`` AvroData writes (None: base type plus
    ``connect.name``). ``spark`` is the decoded Spark type, ``spark_wire`` the wire type
    (None: those of the base type).
    """

    name: str
    base: frozenset[str]
    kind: str
    unit: str | None
    decode: Decoder
    avro_logical: str | None = None
    spark: str | Callable[[ConnectSchema], Any] | None = None
    spark_wire: str | None = None
    description: str = ""
    #: Decoded as its base type on every path (no rule of its own: a string stays the string,
    #: bytes are their base64, a struct its fields).
    as_base: bool = False

    @property
    def key(self) -> LogicalKey:
        """What the decoders of every path (fast paths, Spark rules, DTS families) are keyed
        by: two types of one kind and unit decode alike."""
        return (self.kind, self.unit)


#: (kind, unit) of a logical type: the key of every table of decoders.
LogicalKey = tuple[str, str | None]


# --- decoders ---------------------------------------------------------------------------------


#: The largest finite float32; a double beyond it may still round to it (see :func:`as_float32`).
FLOAT32_MAX: Final = 3.4028234663852886e38


def as_float32(number: float, value: Any) -> float:
    """``number`` (the double read from ``value``) when a float32 column holds it: the cast to
    float32 (what Spark and Java do) must not overflow to infinity."""
    if -FLOAT32_MAX <= number <= FLOAT32_MAX or number != number:  # the common case, and NaN
        return number
    try:
        struct.pack("<f", number)  # rounds as a C cast does; raises where that overflows
    except OverflowError:
        raise _fail(value, "a number in the float range") from None
    return number


#: The texts JsonConverter writes for the non-finite doubles (Jackson's quoted non-numerics).
_NON_FINITE: Final = frozenset({"NaN", "Infinity", "-Infinity"})


def _floating(value: Any, t: str) -> float:
    """A number (or one of :data:`_NON_FINITE`) for a ``float``/``double`` column; an integer
    beyond a double's range is refused. A float that is already infinite or NaN is kept: binary
    formats (Avro) carry them as values."""
    if isinstance(value, str) and value in _NON_FINITE:
        return float(value)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _fail(value, "a number")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the double range
        raise _fail(value, f"a number in the {t} range") from None
    return as_float32(number, value) if t == "float" else number


def _fail(value: Any, what: str) -> DecodeError:
    return DecodeError(f"{_short(value)} is not {what}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_int(value: Any, _schema: ConnectSchema | None = None) -> int:
    """An integer wire value: a JSON integer (``1.0`` is a number with a fraction part, which
    an integer column refuses, as Spark's JSON reader and Kafka's JsonConverter do)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _fail(value, "an integer")


def as_bytes(value: Any, _schema: ConnectSchema | None = None) -> bytes:
    """Bytes: raw, or a base64 string as JsonConverter writes them."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise _fail(value, "valid base64") from None
    raise _fail(value, "bytes (a base64 string)")


def decimal_scale(schema: ConnectSchema) -> int:
    """The ``scale`` parameter of a Decimal schema (0 when absent)."""
    raw = schema.parameter("scale", "0") or "0"
    try:
        return int(raw)
    except ValueError:
        raise DecodeError(f"decimal scale parameter {raw!r} is not an integer") from None


def decimal_precision(schema: ConnectSchema) -> int | None:
    """The ``connect.decimal.precision`` parameter, or None when the producer did not say."""
    raw = schema.parameter(PRECISION_PARAM)
    return int(raw) if raw is not None and raw.isdigit() else None


def unscaled_to_decimal(raw: bytes, scale: int) -> decimal.Decimal:
    """Big-endian two's-complement unscaled bytes and a scale → Decimal."""
    unscaled = int.from_bytes(raw, "big", signed=True)
    return decimal.Decimal(unscaled).scaleb(-scale)


def decimal_to_unscaled(value: decimal.Decimal, scale: int) -> bytes:
    """Decimal → big-endian two's-complement unscaled bytes (the wire form of Connect Decimal)."""
    unscaled = int(value.scaleb(scale).to_integral_value())
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(length, "big", signed=True)


#: Significant digits a JSON number with a fraction or exponent is read with exactly (JSON
#: readers, ours included, parse it as a double; DBL_DIG is 15).
EXACT_JSON_NUMBER_DIGITS: Final = 15
_INT64_RANGE: Final = range(-(2**63), 2**63)


def _decode_decimal(value: Any, schema: ConnectSchema) -> decimal.Decimal:
    if isinstance(value, decimal.Decimal):
        return value
    scale = decimal_scale(schema)
    if isinstance(value, int | float) and not isinstance(value, bool):
        # JsonConverter's decimal.format=NUMERIC writes the decimal as a JSON number
        return json_number_decimal(value, schema)
    raw = as_bytes(value)
    if not raw:
        raise DecodeError(f"{_short(value)} is an empty unscaled value, not a decimal")
    return _fitting(unscaled_to_decimal(raw, scale), scale, decimal_precision(schema))


def json_number_decimal(value: int | float, schema: ConnectSchema) -> decimal.Decimal:
    """A JSON number in a Decimal column ``schema``: its digits as written (see
    :func:`_json_number_decimal`), at the column's scale, refused when the column's scale or
    precision cannot hold it."""
    found = _json_number_decimal(value)
    return _fitting(found, decimal_scale(schema), decimal_precision(schema))


def _json_number_decimal(value: int | float) -> decimal.Decimal:
    """A JSON number as a Decimal: the digits as written when the reader kept its text (a
    :class:`~contracts.jsonnumbers.JsonNumber`), integers exactly; any other number only when
    its double holds at most 15 significant digits (more could differ from the text)."""
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return decimal.Decimal(text)
    if isinstance(value, int):
        return decimal.Decimal(value)
    found = decimal.Decimal(repr(value))
    if len(found.normalize().as_tuple().digits) > EXACT_JSON_NUMBER_DIGITS:
        raise DecodeError(
            f"JSON number {_short(value)} has more than {EXACT_JSON_NUMBER_DIGITS} significant "
            "digits, which a JSON number is not read with exactly (decimal.format=BASE64 "
            "writes decimals losslessly)"
        )
    return found


#: Wide enough for any decimal a column declares: quantizing never rounds or overflows.
_EXACT: Final = decimal.Context(prec=100_000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def at_scale(value: decimal.Decimal, scale: int) -> decimal.Decimal:
    """``value`` written with the column's declared scale (``1.56`` at scale 4 is
    ``1.5600``); the caller has checked that no digit beyond the scale is lost."""
    exponent = value.as_tuple().exponent
    if not isinstance(exponent, int) or exponent == -scale:
        return value
    return value.quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)


def _fitting(value: decimal.Decimal, scale: int, precision: int | None) -> decimal.Decimal:
    """``value`` at the column's scale, when the scale and (declared) precision hold it."""
    if value.is_zero():
        return at_scale(value, scale)
    if value.normalize(_EXACT).as_tuple().exponent < -scale:  # type: ignore[operator]
        raise DecodeError(
            f"{value} has more digits after the point than the column's scale {scale}"
        )
    if precision is not None and value.adjusted() + 1 > precision - scale:
        raise DecodeError(
            f"{value} does not fit the column's precision {precision} (scale {scale})"
        )
    return at_scale(value, scale)


def _decode_variable_scale(value: Any, _schema: ConnectSchema) -> decimal.Decimal:
    if not isinstance(value, dict) or "scale" not in value or "value" not in value:
        raise _fail(value, "a VariableScaleDecimal struct {scale, value}")
    return unscaled_to_decimal(as_bytes(value["value"]), as_int(value["scale"]))


def _decode_decimal_string(value: Any, _schema: ConnectSchema) -> decimal.Decimal:
    if not isinstance(value, str):
        raise _fail(value, "a decimal string")
    try:
        return decimal.Decimal(value.strip())
    except decimal.InvalidOperation:
        raise _fail(value, "a decimal number") from None


def _days(value: Any, _schema: ConnectSchema) -> dt.date:
    try:
        return EPOCH_DATE + dt.timedelta(days=as_int(value))
    except OverflowError:
        raise _fail(value, "a date in range") from None


def _instant(divisor: int) -> Decoder:
    def decode(value: Any, _schema: ConnectSchema) -> dt.datetime:
        n = as_int(value)
        try:
            return EPOCH + dt.timedelta(microseconds=n * 1_000_000 // divisor)
        except OverflowError:
            raise _fail(value, "a timestamp in range") from None

    return decode


def _time_of_day(divisor: int) -> Decoder:
    def decode(value: Any, _schema: ConnectSchema) -> dt.time:
        micros = as_int(value) * 1_000_000 // divisor
        if not 0 <= micros < 86_400_000_000:
            raise _fail(value, "a time of day")
        seconds, micro = divmod(micros, 1_000_000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return dt.time(hour, minute, second, micro)

    return decode


def _zoned_timestamp(value: Any, _schema: ConnectSchema) -> dt.datetime:
    if not isinstance(value, str):
        raise _fail(value, "an ISO-8601 timestamp string")
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise _fail(value, "an ISO-8601 timestamp with zone") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _local_timestamp_string(value: Any, _schema: ConnectSchema) -> dt.datetime:
    if not isinstance(value, str):
        raise _fail(value, "a timestamp string")
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace(" ", "T", 1))
    except ValueError:
        raise _fail(value, "a timestamp (yyyy-MM-dd HH:mm:ss[.f])") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _string(value: Any, _schema: ConnectSchema) -> str:
    if isinstance(value, str):
        return value
    raise _fail(value, "a string")


def _bytes(value: Any, schema: ConnectSchema) -> bytes:
    return as_bytes(value, schema)


def _struct_passthrough(value: Any, _schema: ConnectSchema) -> Any:
    if isinstance(value, dict):
        return {k: (as_bytes(v) if k == "wkb" and v is not None else v) for k, v in value.items()}
    raise _fail(value, "a struct")


def _spark_decimal(schema: ConnectSchema) -> str:
    """``decimal(p,s)`` holding every value of the column. A scale outside ``0..precision``
    (Connect allows both) still gets a type that keeps every digit: a negative scale (Oracle's
    ``NUMBER(p,-s)``) holds integers of ``p + s`` digits, a scale above the precision holds
    fractions of ``scale`` digits."""
    precision = decimal_precision(schema)
    scale = decimal_scale(schema)
    if scale < 0:
        precision, scale = (None if precision is None else precision - scale), 0
    elif precision is not None and scale > precision:
        precision = scale
    if scale > MAX_SPARK_DECIMAL_PRECISION:
        warnings.warn(
            f"decimal {schema.field or schema.name}: scale {scale} is above Spark's "
            f"{MAX_SPARK_DECIMAL_PRECISION}: values lose their last digits",
            LogicalTypeWarning,
            stacklevel=3,
        )
        scale = MAX_SPARK_DECIMAL_PRECISION
    if precision is None or precision > MAX_SPARK_DECIMAL_PRECISION:
        said = "unknown" if precision is None else str(precision)
        warnings.warn(
            f"decimal {schema.field or schema.name}: precision {said} capped at "
            f"{MAX_SPARK_DECIMAL_PRECISION} for Spark",
            LogicalTypeWarning,
            stacklevel=3,
        )
        precision = MAX_SPARK_DECIMAL_PRECISION
    return f"decimal({precision},{min(scale, precision)})"


_INT32 = frozenset({"int32"})
_INT64 = frozenset({"int64"})
_STRING = frozenset({"string"})
_BYTES = frozenset({"bytes"})
_STRUCT = frozenset({"struct"})


def _entry(
    name: str, base: frozenset[str], kind: str, unit: str | None, decode: Decoder, **kw: Any
) -> tuple[str, LogicalType]:
    return name, LogicalType(name=name, base=base, kind=kind, unit=unit, decode=decode, **kw)


#: The table. Kafka Connect, Debezium and vendor names, keyed by schema ``name``.
LOGICAL_TYPES: Final[Mapping[str, LogicalType]] = dict(
    [
        # Kafka Connect built-ins (AvroData maps these to Avro logical types).
        _entry(
            DECIMAL_NAME,
            _BYTES,
            "decimal",
            "unscaled",
            _decode_decimal,
            avro_logical="decimal",
            spark=_spark_decimal,
            spark_wire="string",
            description="base64 two's-complement unscaled value + scale",
        ),
        _entry(
            CONNECT_DATE_NAME,
            _INT32,
            "date",
            "days",
            _days,
            avro_logical="date",
            spark="date",
            description="days since epoch",
        ),
        _entry(
            CONNECT_TIME_NAME,
            _INT32,
            "time",
            "millis",
            _time_of_day(1_000),
            avro_logical="time-millis",
            spark="string",
            description="milliseconds since midnight",
        ),
        _entry(
            CONNECT_TIMESTAMP_NAME,
            _INT64,
            "timestamp",
            "millis",
            _instant(1_000),
            avro_logical="timestamp-millis",
            spark="timestamp",
            description="milliseconds since epoch",
        ),
        # Debezium temporal types (kept as their base Avro type plus connect.name).
        _entry(
            DEBEZIUM_DATE_NAME,
            _INT32,
            "date",
            "days",
            _days,
            spark="date",
            description="days since epoch",
        ),
        _entry(
            DEBEZIUM_TIME_NAME,
            _INT32,
            "time",
            "millis",
            _time_of_day(1_000),
            spark="string",
            description="milliseconds since midnight",
        ),
        _entry(
            MICRO_TIME_NAME,
            _INT64,
            "time",
            "micros",
            _time_of_day(1_000_000),
            spark="string",
            description="microseconds since midnight",
        ),
        _entry(
            NANO_TIME_NAME,
            _INT64,
            "time",
            "nanos",
            _time_of_day(1_000_000_000),
            spark="string",
            description="nanoseconds since midnight",
        ),
        _entry(
            DEBEZIUM_TIMESTAMP_NAME,
            _INT64,
            "timestamp",
            "millis",
            _instant(1_000),
            spark="timestamp",
            description="milliseconds since epoch, no zone",
        ),
        _entry(
            MICRO_TIMESTAMP_NAME,
            _INT64,
            "timestamp",
            "micros",
            _instant(1_000_000),
            spark="timestamp",
            description="microseconds since epoch, no zone",
        ),
        _entry(
            NANO_TIMESTAMP_NAME,
            _INT64,
            "timestamp",
            "nanos",
            _instant(1_000_000_000),
            spark="timestamp",
            description="nanoseconds since epoch, no zone",
        ),
        _entry(
            ZONED_TIMESTAMP_NAME,
            _STRING,
            "zoned-timestamp",
            "iso",
            _zoned_timestamp,
            spark="timestamp",
            description="ISO-8601 timestamp with zone offset",
        ),
        _entry(
            ZONED_TIME_NAME,
            _STRING,
            "zoned-time",
            "iso",
            _string,
            spark="string",
            description="ISO-8601 time with zone offset",
            as_base=True,
        ),
        _entry(
            YEAR_NAME,
            _INT32,
            "year",
            None,
            as_int,
            spark="integer",
            description="a year",
        ),
        _entry(
            INTERVAL_NAME,
            _STRING,
            "interval",
            "iso",
            _string,
            spark="string",
            description="ISO-8601 duration",
            as_base=True,
        ),
        _entry(
            MICRO_DURATION_NAME,
            _INT64,
            "interval",
            "micros",
            as_int,
            spark="long",
            description="duration in microseconds",
        ),
        # Debezium semantic types.
        _entry(
            JSON_NAME,
            _STRING,
            "json",
            None,
            _string,
            description="JSON document as text",
            as_base=True,
        ),
        _entry(
            XML_NAME,
            _STRING,
            "xml",
            None,
            _string,
            description="XML document as text",
            as_base=True,
        ),
        _entry(UUID_NAME, _STRING, "uuid", None, _string, description="UUID as text", as_base=True),
        _entry(
            ENUM_NAME,
            _STRING,
            "enum",
            None,
            _string,
            description="one of parameters.allowed",
            as_base=True,
        ),
        _entry(
            ENUM_SET_NAME,
            _STRING,
            "enum-set",
            None,
            _string,
            description="comma-separated subset of parameters.allowed",
            as_base=True,
        ),
        _entry(
            BITS_NAME,
            _BYTES,
            "bits",
            None,
            _bytes,
            description="bit string as little-endian bytes",
            as_base=True,
        ),
        _entry(
            VARIABLE_DECIMAL_NAME,
            _STRUCT,
            "variable-decimal",
            "unscaled",
            _decode_variable_scale,
            spark="string",
            description="struct {scale, value}; Spark carries the exact decimal text",
        ),
        _entry(
            GEOMETRY_NAME,
            _STRUCT,
            "geometry",
            None,
            _struct_passthrough,
            description="struct {wkb, srid}",
            as_base=True,
        ),
        _entry(
            GEOGRAPHY_NAME,
            _STRUCT,
            "geometry",
            None,
            _struct_passthrough,
            description="struct {wkb, srid}",
            as_base=True,
        ),
        _entry(
            POINT_NAME,
            _STRUCT,
            "geometry",
            None,
            _struct_passthrough,
            description="struct {x, y, wkb, srid}",
            as_base=True,
        ),
        # Vendor names seen in the seeds (Huawei CDL): values travel as strings.
        _entry(
            CDL_DECIMAL_NAME,
            _STRING,
            "decimal",
            "text",
            _decode_decimal_string,
            spark="string",
            description="decimal as text (precision unknown)",
        ),
        _entry(
            CDL_TIMESTAMP_NAME,
            _STRING,
            "timestamp",
            "text",
            _local_timestamp_string,
            spark="timestamp",
            description="timestamp as text",
        ),
    ]
)


def lookup(schema: ConnectSchema) -> LogicalType | None:
    """The logical type of a schema, or None for a plain (or unknown) name."""
    if schema.name is None:
        return None
    entry = LOGICAL_TYPES.get(schema.name)
    if entry is None or schema.type not in entry.base:
        return None
    return entry


# --- specialized decoders (speed) --------------------------------------------------------------

#: A decoder specialized for one schema: ``value -> python value``.
FastDecoder = Callable[[Any], Any]


def fast_decoder(schema: ConnectSchema) -> FastDecoder | None:
    """A one-argument decoder for ``schema``'s logical type, built once per schema, or None.

    It reads the common wire form directly (parameters such as the decimal scale are read once)
    and hands everything else to the type's generic decoder, so results and errors are exactly
    those of ``lookup(schema).decode(value, schema)``.
    """
    entry = lookup(schema)
    if entry is None:
        return None
    specialize = _SPECIALIZERS.get(entry.key)
    return specialize(schema, entry.decode) if specialize is not None else None


def _fast_decimal(schema: ConnectSchema, generic: Decoder) -> FastDecoder | None:
    try:
        exponent = -decimal_scale(schema)
    except DecodeError:
        return None  # every value fails the same way: leave it to the generic decoder
    a2b, from_bytes, make = binascii.a2b_base64, int.from_bytes, decimal.Decimal
    precision = decimal_precision(schema)
    # the unscaled value fits the declared precision when its magnitude is below this
    bound = 10**precision if precision is not None else None

    # a JSON number (decimal.format=NUMERIC) fits when its most significant digit is below this
    limit = precision + exponent if precision is not None else None
    quantum = make(1).scaleb(exponent)

    def decode(value: Any) -> Any:
        kind = type(value)
        if kind is str:
            try:
                raw = a2b(value, strict_mode=True)
            except (binascii.Error, ValueError):
                return generic(value, schema)
            unscaled = from_bytes(raw, "big", signed=True)
            if raw and (bound is None or -bound < unscaled < bound):
                return make(unscaled).scaleb(exponent)
        elif kind is float or kind is int or (kind is not bool and isinstance(value, float)):
            fitted = _json_number_at_scale(value, kind is float, quantum, limit)
            if fitted is not None:
                return fitted
        return generic(value, schema)

    return decode


def _json_number_at_scale(
    value: float, plain: bool, quantum: decimal.Decimal, limit: int | None
) -> decimal.Decimal | None:
    """:func:`json_number_decimal`'s result for the common case (the number's digits as
    written, nonzero, at most the column's scale and precision), else None (the caller then
    asks the generic rule, which also says what is wrong). ``plain``: a float without its text,
    taken only when its repr is at most 15 characters (so of at most 15 significant digits)."""
    if plain:
        text = repr(value)
        if len(text) > EXACT_JSON_NUMBER_DIGITS:
            return None
        found = decimal.Decimal(text)
    else:
        kept = getattr(value, "text", None)  # a JsonNumber's digits; an int is exact
        if isinstance(kept, str):
            found = decimal.Decimal(kept)
        elif type(value) is int:
            found = decimal.Decimal(value)
        else:
            return None
    if not found.is_finite() or found.is_zero():
        return None
    try:
        fitted = found.quantize(quantum, context=_EXACT)
    except decimal.InvalidOperation:
        return None
    # equal: no digit beyond the scale was dropped; then the precision (as _fitting checks it)
    if fitted != found or (limit is not None and fitted.adjusted() >= limit):
        return None
    return fitted


def _fast_days(schema: ConnectSchema, generic: Decoder) -> FastDecoder:
    epoch_ordinal = EPOCH_DATE.toordinal()
    from_ordinal = dt.date.fromordinal

    def decode(value: Any) -> Any:
        if type(value) is int:
            try:
                return from_ordinal(epoch_ordinal + value)
            except (ValueError, OverflowError):
                pass
        return generic(value, schema)

    return decode


def _fast_instant(divisor: int) -> Callable[[ConnectSchema, Decoder], FastDecoder]:
    def specialize(schema: ConnectSchema, generic: Decoder) -> FastDecoder:
        delta = dt.timedelta

        def decode(value: Any) -> Any:
            if type(value) is int:
                try:
                    return EPOCH + delta(microseconds=value * 1_000_000 // divisor)
                except OverflowError:
                    pass
            return generic(value, schema)

        return decode

    return specialize


#: (kind, unit) → the specializer of a fast decoder for types of that kind and unit.
_SPECIALIZERS: Final[
    Mapping[LogicalKey, Callable[[ConnectSchema, Decoder], FastDecoder | None]]
] = {
    ("decimal", "unscaled"): _fast_decimal,
    ("date", "days"): _fast_days,
    ("timestamp", "millis"): _fast_instant(1_000),
    ("timestamp", "micros"): _fast_instant(1_000_000),
    ("timestamp", "nanos"): _fast_instant(1_000_000_000),
}


def is_known_name(name: str) -> bool:
    """Whether ``name`` is a logical type in the table."""
    return name in LOGICAL_TYPES


def lookup_or_warn(schema: ConnectSchema) -> LogicalType | None:
    """Like :func:`lookup`, warning when a primitive carries a name the table does not know."""
    entry = lookup(schema)
    avro_enum = "io.confluent.connect.avro.Enum" in schema.params  # AvroData's enums: named
    if entry is None and schema.name is not None and schema.type != "struct" and not avro_enum:
        if schema.name in LOGICAL_TYPES:
            warnings.warn(
                f"{schema.name} on base type {schema.type} is not the expected "
                f"{'/'.join(sorted(LOGICAL_TYPES[schema.name].base))}; using the base type",
                LogicalTypeWarning,
                stacklevel=2,
            )
        else:
            warnings.warn(
                f"unknown logical type {schema.name}; using base type {schema.type}",
                LogicalTypeWarning,
                stacklevel=2,
            )
    return entry


# --- base-type decoding -----------------------------------------------------------------------

_INT_RANGES: Final[Mapping[str, tuple[int, int]]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def decode_base(value: Any, schema: ConnectSchema) -> Any:
    """Decode a primitive wire value by its Connect base type (no logical type)."""
    t = schema.type
    if t in _INT_RANGES:
        n = as_int(value)
        low, high = _INT_RANGES[t]
        if not low <= n <= high:
            raise _fail(value, f"in the {t} range")
        return n
    if t == "string":
        return _string(value, schema)
    if t in ("float", "double"):
        return _floating(value, t)
    if t == "boolean":
        if isinstance(value, bool):
            return value
        raise _fail(value, "a boolean")
    if t == "bytes":
        return as_bytes(value)
    raise _fail(value, f"a {t}")
