"""A column's SQL ``DEFAULT`` as the Connect default Debezium puts in the schema.

JsonConverter writes a default in the field's own encoding: integers and floats as numbers, a
Decimal as the base64 of its unscaled two's-complement bytes, a date as epoch days, a
timestamp as epoch milli/microseconds, a zoned timestamp as ISO-8601 text. A ``NULL`` default
writes no default. ``CURRENT_TIMESTAMP`` on a MySQL temporal column becomes the epoch
(``mysql-temporal-types``: "the value 1970-01-01 00:00:00 is used as the default value"); a
PostgreSQL ``nextval(...)`` on a ``NOT NULL`` column becomes zero (Debezium's
``AbstractRecordsProducerTest``: ``smallserial``/``bigserial`` default 0).

Any other PostgreSQL function default (``now()``, ``gen_random_uuid()``, ``clock_timestamp()``,
``lower('X')``) and the SQL value functions (``CURRENT_TIMESTAMP``, ``CURRENT_DATE``,
``LOCALTIMESTAMP`` ...) are never evaluated by the connector: from Debezium 2.0 on it writes a
placeholder of the column's type instead (``PostgresDefaultValueConverter``: a default matching
its function pattern, or one of its ``CURRENT_DATE_TIMES``, maps to the type's placeholder;
DBZ-4137, DBZ-5384). The values are those Debezium's own
``PostgresSchemaIT.shouldProperlyGetDefaultColumnValues`` expects (debezium/debezium
``debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/PostgresSchemaIT.java``
at f8df77a38a0af3843100fb8927ab9804d42e58f7): 0 for numbers, dates, times, timestamps and
intervals, the epoch for ``timestamptz``, the zero UUID, ``""`` for text, ``{}`` for JSON. A
type the converter has no mapper for (``bytea``, ``inet``, ``citext`` ...), an enum, and a
variable-scale ``numeric`` (a Struct, KAFKA-12694) get no default. What earlier versions
write is not known here: an error says so. Any other expression cannot be evaluated here and
is an error naming the column and quoting the default as written: never a guess.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from contracts.derive.model import Column, Default
from contracts.derive.typemap import Version
from contracts.errors import InputError
from contracts.logical import (
    CONNECT_DATE_NAME,
    CONNECT_TIME_NAME,
    CONNECT_TIMESTAMP_NAME,
    DEBEZIUM_DATE_NAME,
    DEBEZIUM_TIME_NAME,
    DEBEZIUM_TIMESTAMP_NAME,
    DECIMAL_NAME,
    MICRO_DURATION_NAME,
    MICRO_TIME_NAME,
    MICRO_TIMESTAMP_NAME,
    YEAR_NAME,
    ZONED_TIMESTAMP_NAME,
)
from contracts.schema import MISSING, ConnectSchema

_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ZERO_DATE: Final = re.compile(r"0000-00-00")


class DefaultError(InputError):
    """A column default that cannot be turned into the connector's Connect default."""


def connect_default(
    column: Column, schema: ConnectSchema, dialect: str, version: Version = (3, 0)
) -> Any:
    """The Connect default for ``column`` typed as ``schema`` (``MISSING``: none)."""
    default = column.default
    if default is None or default.kind == "null":
        return MISSING
    if default.kind in ("expression", "function"):
        return _expression(column, schema, default, dialect, version)
    convert = _CONVERTERS.get(schema.name or "") or _CONVERTERS.get(schema.type)
    if convert is None:
        raise _cannot(column, f"a {schema.name or schema.type} column")
    text = _at_scale(default.text, column) if default.kind in ("number", "string") else default.text
    if _ZERO_DATE.match(text) and schema.name in _TEMPORAL_NAMES:
        return MISSING if column.nullable else 0  # MySQL zero dates: null, or the epoch
    try:
        return convert(text, schema, default)
    except (ValueError, ArithmeticError):
        raise _cannot(column, f"a {schema.name or schema.type} column") from None


def _at_scale(text: str, column: Column) -> str:
    """A decimal column's default at the column's scale (``3.25`` in DECIMAL(12,4) is
    ``3.2500``, as the server stores it and reports it back)."""
    if column.type.name not in ("decimal", "numeric") or column.type.scale is None:
        return text
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        return text
    return str(value.quantize(decimal.Decimal(1).scaleb(-column.type.scale), decimal.ROUND_HALF_UP))


def _cannot(column: Column, what: str, then: str = "") -> DefaultError:
    default = column.default
    shown = (default.written or default.text) if default is not None else ""
    return DefaultError(
        f"column {column.name}: cannot derive the Connect default of DEFAULT {shown} for {what}"
        + (then or _PROCEED),
        column.where or None,
    )


_PROCEED: Final = (
    "; derive does not guess it: write the default the connector gives into the derived "
    "contract, or declare a literal default"
)


def _expression(
    column: Column, schema: ConnectSchema, default: Default, dialect: str, version: Version
) -> Any:
    if default.text == "nextval" and dialect == "postgres":
        if column.nullable or version < (3, 0):
            return MISSING  # Debezium 1.2's messages carry no default for a serial column
        if schema.type in ("int16", "int32", "int64"):
            return 0
    if default.text == "CURRENT_TIMESTAMP" and dialect != "postgres":
        if schema.name == ZONED_TIMESTAMP_NAME:
            return "1970-01-01T00:00:00Z"
        if schema.name in _TEMPORAL_NAMES:
            return 0
    if dialect == "postgres" and (
        default.kind == "function" or default.text == "CURRENT_TIMESTAMP"
    ):
        return _generated(column, schema, version)
    raise _cannot(column, "an expression (only literals, CURRENT_TIMESTAMP on MySQL and "
                          "function defaults on PostgreSQL are known)")  # fmt: skip


#: Debezium's placeholder for a PostgreSQL default it does not evaluate, by column type
#: (the literal it then converts as it converts any literal default).
_PG_PLACEHOLDERS: Final[Mapping[str, Default]] = {
    "boolean": Default("boolean", "false"),
    "smallint": Default("number", "0"),
    "integer": Default("number", "0"),
    "bigint": Default("number", "0"),
    "real": Default("number", "0.0"),
    "double precision": Default("number", "0.0"),
    "numeric": Default("number", "0.0"),
    "character": Default("string", ""),
    "character varying": Default("string", ""),
    "text": Default("string", ""),
    "json": Default("string", "{}"),
    "jsonb": Default("string", "{}"),
    "xml": Default("string", ""),
    "uuid": Default("string", "00000000-0000-0000-0000-000000000000"),
    "date": Default("string", "1970-01-01"),
    "time": Default("string", "00:00"),
    "timestamp": Default("string", "1970-01-01"),
    "timestamptz": Default("string", "1970-01-01"),
}
#: Types whose generated default Debezium's test does not pin down: refused, not guessed.
_PG_UNSURE: Final = frozenset({"bit", "bit varying"})
#: The first Debezium version writing placeholders for function and CURRENT_* defaults.
_PLACEHOLDERS_SINCE: Final = (2, 0)


def _generated(column: Column, schema: ConnectSchema, version: Version) -> Any:
    """What Debezium's PostgreSQL connector writes for a default it does not evaluate."""
    sql = column.type
    if version < _PLACEHOLDERS_SINCE:
        raise _cannot(
            column,
            f"Debezium {'.'.join(map(str, version))}",
            " (Debezium 2.0 and later write a placeholder of the column's type; which default "
            "earlier versions write is not known here): derive with --debezium-version 2.0 or "
            "later, or write the default into the derived contract",
        )
    if sql.name == "interval" and not sql.array:
        if schema.name == MICRO_DURATION_NAME:
            return 0
        raise _cannot(column, "an interval in interval.handling.mode=string")
    if sql.array or sql.name in _PG_UNSURE:
        raise _cannot(column, f"a {sql.spelled()} column (a function default)")
    placeholder = _PG_PLACEHOLDERS.get(sql.name)
    if placeholder is None or schema.type.startswith("struct"):
        return MISSING  # no default mapper for the type (enums, bytea, inet ...), or a Struct
    return connect_default(column.but(default=placeholder), schema, "postgres", version)


def _int(text: str, _schema: ConnectSchema, default: Default) -> int:
    if default.kind == "boolean":
        return 1 if text == "true" else 0
    if default.kind == "bits":
        return int(text or "0", 2)
    return int(decimal.Decimal(text))


def _float(text: str, _schema: ConnectSchema, _default: Default) -> float:
    return float(text)


def _bool(text: str, _schema: ConnectSchema, default: Default) -> bool:
    if default.kind == "bits":
        return int(text or "0", 2) != 0
    lowered = text.strip().lower()
    if lowered in ("true", "1", "t", "y", "yes", "on"):
        return True
    if lowered in ("false", "0", "f", "n", "no", "off"):
        return False
    raise ValueError(text)


def _string(text: str, _schema: ConnectSchema, _default: Default) -> str:
    return text


def _decimal(text: str, schema: ConnectSchema, _default: Default) -> str:
    scale = int(schema.parameter("scale", "0") or "0")
    unscaled = int(decimal.Decimal(text).scaleb(scale).to_integral_value())
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode("ascii")


def _timestamp(text: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(text.strip().replace(" ", "T"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _micros(moment: dt.datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _epoch_days(text: str, _schema: ConnectSchema, _default: Default) -> int:
    return (dt.date.fromisoformat(text.strip()) - _EPOCH.date()).days


def _millis(text: str, _schema: ConnectSchema, _default: Default) -> int:
    return _micros(_timestamp(text)) // 1_000


def _micro_ts(text: str, _schema: ConnectSchema, _default: Default) -> int:
    return _micros(_timestamp(text))


def _time_micros(text: str) -> int:
    parsed = dt.time.fromisoformat(text.strip())
    seconds = parsed.hour * 3600 + parsed.minute * 60 + parsed.second
    return seconds * 1_000_000 + parsed.microsecond


def _zoned(text: str, _schema: ConnectSchema, _default: Default) -> str:
    moment = _timestamp(text).astimezone(dt.UTC)
    fraction = f".{moment.microsecond:06d}".rstrip("0") if moment.microsecond else ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction.rstrip(".") + "Z"


_TEMPORAL_NAMES: Final = frozenset(
    {
        DEBEZIUM_DATE_NAME,
        DEBEZIUM_TIMESTAMP_NAME,
        MICRO_TIMESTAMP_NAME,
        ZONED_TIMESTAMP_NAME,
        CONNECT_DATE_NAME,
        CONNECT_TIMESTAMP_NAME,
    }
)

#: Literal text → Connect default, by semantic name first, then by Connect type.
_CONVERTERS: Final[Mapping[str, Callable[[str, ConnectSchema, Default], Any]]] = {
    "int8": _int,
    "int16": _int,
    "int32": _int,
    "int64": _int,
    "float": _float,
    "double": _float,
    "boolean": _bool,
    "string": _string,
    DECIMAL_NAME: _decimal,
    DEBEZIUM_DATE_NAME: _epoch_days,
    CONNECT_DATE_NAME: _epoch_days,
    DEBEZIUM_TIMESTAMP_NAME: _millis,
    CONNECT_TIMESTAMP_NAME: _millis,
    MICRO_TIMESTAMP_NAME: _micro_ts,
    ZONED_TIMESTAMP_NAME: _zoned,
    MICRO_TIME_NAME: lambda t, _s, _d: _time_micros(t),
    DEBEZIUM_TIME_NAME: lambda t, _s, _d: _time_micros(t) // 1_000,
    CONNECT_TIME_NAME: lambda t, _s, _d: _time_micros(t) // 1_000,
    YEAR_NAME: _int,
}
