"""Alibaba Cloud DTS Avro: ``com.alibaba.dts.formats.avro.Record`` change records.

DTS writes every change as one Avro-binary ``Record`` (schema: ``dts_record.avsc`` beside this
module, a copy of ``avro/Record.avsc`` from the public repository LioRoger/subscribe_example,
Alibaba's DTS subscription example). A record carries the table as ``objectName``
(``db.table``), the columns as ``fields[]`` (name + MySQL binlog ``dataTypeNumber``) and the row
images as ``beforeImages`` / ``afterImages``: arrays aligned with ``fields`` whose items are typed
value records (Integer, Character, Decimal, Float, Timestamp, DateTime, ...). ``operation`` INSERT,
UPDATE and DELETE are row changes; DDL, BEGIN, COMMIT, HEARTBEAT and the other operations are
control records.

Input: files of concatenated Avro-binary records (each optionally behind the Confluent wire
header ``0x00`` + 4-byte schema id) and Avro container files. :meth:`DtsAvro.assemble` splits the
raw file bytes into one message per record (``where`` is ``file@offset`` or ``file#N``).

Types: ``dataTypeNumber`` maps to a Connect column type through :data:`MYSQL_TYPES`; the value
records refine it (a ``binary`` charset is bytes, a BLOB read as text is a string, decimals take
their precision and scale from the Decimal value record, integers widen when values need it).
DTS says nothing about nullability: key columns (from ``tags.pk_uk_info``) are required, every
other column is optional.
"""

from __future__ import annotations

import codecs
import datetime as dt
import decimal
import functools
import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

import fastavro

from contracts.contract import Contract, contract_from_schema
from contracts.errors import ContractsError, DecodeError, InputError, reason_of
from contracts.events import ChangeEvent, ControlKind, ControlRecord, Normalized, Op, TableId
from contracts.formats.base import (
    Derived,
    Format,
    Inference,
    InferOptions,
    InputErrorSink,
    Message,
    SchemaVersionSeen,
    Violation,
    counted,
)
from contracts.formats.spec import (
    FormatSpec,
    Image,
    Images,
    Ops,
    Position,
    Table,
    Time,
    read_position,
    read_time,
)
from contracts.logical import (
    BITS_NAME,
    DEBEZIUM_DATE_NAME,
    DECIMAL_NAME,
    ENUM_NAME,
    ENUM_SET_NAME,
    GEOMETRY_NAME,
    JSON_NAME,
    MICRO_TIME_NAME,
    MICRO_TIMESTAMP_NAME,
    PRECISION_PARAM,
    YEAR_NAME,
    ZONED_TIMESTAMP_NAME,
    LogicalKey,
    decimal_scale,
    lookup,
)
from contracts.schema import ConnectSchema, primitive, struct

SCHEMA_FILE: Final = Path(__file__).with_name("dts_record.avsc")
NAMESPACE: Final = "com.alibaba.dts.formats.avro"
RECORD_NAME: Final = f"{NAMESPACE}.Record"
CONFLUENT_MAGIC: Final = 0
CONFLUENT_HEADER: Final = 5

#: Row-change operations → canonical op codes.
ROW_OPS: Final[Mapping[str, Op]] = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}

#: Every other operation is a control record of this kind.
CONTROL_OPS: Final[Mapping[str, ControlKind]] = {
    "DDL": "ddl",
    "BEGIN": "transaction",
    "COMMIT": "transaction",
    "ROLLBACK": "transaction",
    "ABORT": "transaction",
    "HEARTBEAT": "heartbeat",
    "CHECKPOINT": "other",
    "COMMAND": "other",
    "FILL": "other",
    "FINISH": "other",
    "CONTROL": "other",
    "RDB": "other",
    "NOOP": "other",
    "INIT": "other",
}

_ENVELOPE_KEYS: Final = frozenset({"version", "id", "sourceTimestamp", "source", "operation"})


# --- the fixed Avro schema ----------------------------------------------------------------------


@functools.cache
def avro_schema() -> list[Any]:
    """The DTS Avro schema as written in ``dts_record.avsc`` (a list of named types)."""
    loaded: list[Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def parsed_record_schema() -> Any:
    """The DTS ``Record`` schema parsed by fastavro (named types resolved)."""
    named: dict[str, Any] = {}
    *support, record = avro_schema()
    for named_type in support:
        fastavro.parse_schema(named_type, named_schemas=named)
    return fastavro.parse_schema(record, named_schemas=named)


# --- framing: raw bytes → one message per record -----------------------------------------------


def _read_one(buffer: io.BytesIO) -> dict[str, Any]:
    record = fastavro.schemaless_reader(
        buffer, parsed_record_schema(), None, return_record_name=True
    )
    if not isinstance(record, dict):
        raise InputError("a DTS record must decode to a record")
    return record


def _plausible(record: Mapping[str, Any]) -> bool:
    """Whether a decoded record looks like a real DTS record (guards framing guesses)."""
    return bool(
        0 <= record.get("version", -1) < 1000
        and record.get("id", -1) >= 0
        and 0 <= record.get("sourceTimestamp", -1) < 10**14
    )


def _try_decode(data: bytes, start: int) -> tuple[dict[str, Any], int] | None:
    buffer = io.BytesIO(data)
    buffer.seek(start)
    try:
        record = _read_one(buffer)
    except Exception:
        return None
    return (record, buffer.tell()) if _plausible(record) else None


def _header_length(data: bytes) -> int:
    """5 when records carry the Confluent wire header, else 0 (decided on the first record).

    DTS writes ``version`` 0, whose encoding is also a zero byte, so the header is only
    assumed when the record decodes behind it and the next record (if any) starts with one too.
    """
    if len(data) > CONFLUENT_HEADER and data[0] == CONFLUENT_MAGIC:
        decoded = _try_decode(data, CONFLUENT_HEADER)
        if decoded is not None:
            end = decoded[1]
            if end == len(data) or data[end] == CONFLUENT_MAGIC:
                return CONFLUENT_HEADER
    return 0


def split_records(data: bytes, name: str) -> Iterator[Message]:
    """One message per DTS record in a file's bytes (container file or concatenated records)."""
    if data.startswith(b"Obj\x01"):
        yield from _container_records(data, name)
    else:
        yield from _binary_records(data, name)


def _binary_records(data: bytes, name: str) -> Iterator[Message]:
    header = _header_length(data)
    framing = "confluent" if header else "plain"
    buffer = io.BytesIO(data)
    offset = 0
    while offset < len(data):
        where = f"{name}@{offset}"
        meta: dict[str, Any] = {"framing": framing, "offset": offset}
        if header:
            if data[offset] != CONFLUENT_MAGIC or offset + header > len(data):
                raise InputError("expected the Confluent wire header (magic byte 0)", where)
            meta["schema_id"] = int.from_bytes(data[offset + 1 : offset + header], "big")
        buffer.seek(offset + header)
        try:
            record = _read_one(buffer)
        except Exception as err:
            raise InputError(
                f"not a DTS Avro record (truncated or malformed: {reason_of(err)})", where
            ) from None
        if not _plausible(record):
            raise InputError("not a DTS Avro record (implausible envelope values)", where)
        yield Message(value=record, where=where, meta=meta)
        offset = buffer.tell()


def _container_records(data: bytes, name: str) -> Iterator[Message]:
    try:
        reader = fastavro.reader(io.BytesIO(data), return_record_name=True)
    except Exception as err:
        raise InputError(f"not a readable Avro container file: {reason_of(err)}", name) from None
    writer = reader.writer_schema
    writer_name = writer.get("name") if isinstance(writer, dict) else None
    if writer_name not in (RECORD_NAME, "Record"):
        raise InputError(
            f"the Avro container holds {writer_name or 'unnamed'} records, not {RECORD_NAME}",
            name,
        )
    index = 0
    try:
        for index, record in enumerate(reader, start=1):
            yield Message(value=record, where=f"{name}#{index}", meta={"framing": "container"})
    except ContractsError:
        raise
    except Exception as err:
        raise InputError(
            f"truncated or malformed Avro container block: {reason_of(err)}", f"{name}#{index + 1}"
        ) from None


# --- value records → Python values ---------------------------------------------------------------

#: MySQL charset names → Python codecs (unknown names are tried as Python codec names).
CHARSETS: Final[Mapping[str, str]] = {
    "utf8mb4": "utf-8",
    "utf8mb3": "utf-8",
    "utf8": "utf-8",
    "latin1": "cp1252",
    "ascii": "ascii",
    "gbk": "gbk",
    "gb2312": "gb2312",
    "gb18030": "gb18030",
    "big5": "big5",
    "sjis": "shift_jis",
    "ujis": "euc_jp",
    "euckr": "euc_kr",
    "ucs2": "utf-16-be",
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
    "cp1251": "cp1251",
    "latin2": "iso8859-2",
    "greek": "iso8859-7",
    "hebrew": "iso8859-8",
}

_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _integer(v: Mapping[str, Any]) -> int:
    try:
        return int(str(v["value"]).strip())
    except ValueError:
        raise DecodeError(f"Integer value {v['value']!r} is not an integer") from None


def _character(v: Mapping[str, Any]) -> str | bytes:
    charset = str(v["charset"]).lower()
    raw = bytes(v["value"])
    if charset == "binary":
        return raw
    codec = CHARSETS.get(charset, charset)
    try:
        codecs.lookup(codec)
    except LookupError:
        raise DecodeError(f"unknown character set {v['charset']!r}") from None
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        raise DecodeError(f"bytes are not valid {v['charset']} text") from None


def _decimal(v: Mapping[str, Any]) -> decimal.Decimal:
    try:
        value = decimal.Decimal(str(v["value"]).strip())
    except decimal.InvalidOperation:
        raise DecodeError(f"Decimal value {v['value']!r} is not a decimal number") from None
    if not value.is_finite():
        raise DecodeError(f"Decimal value {v['value']!r} is not a finite number")
    return value


def _float(v: Mapping[str, Any]) -> float:
    return float(v["value"])


def _timestamp(v: Mapping[str, Any]) -> dt.datetime:
    """Seconds since the epoch plus ``millis`` (DTS writes microseconds there)."""
    micros = int(v.get("millis") or 0)
    try:
        return _EPOCH + dt.timedelta(seconds=int(v["timestamp"]), microseconds=micros)
    except OverflowError:
        raise DecodeError(f"Timestamp {v['timestamp']} is out of range") from None


def _datetime(v: Mapping[str, Any]) -> int | dt.date | dt.time | dt.datetime:
    """A DateTime record: a year (YEAR), a date, a time of day or a date and time (UTC)."""
    year, month, day = v.get("year"), v.get("month"), v.get("day")
    hour, minute, second = v.get("hour"), v.get("minute"), v.get("second")
    micros = v.get("millis") or 0
    try:
        if year is not None and month is None and hour is None:
            return int(year)
        if year is None:
            return dt.time(hour or 0, minute or 0, second or 0, micros)
        if hour is None:
            return dt.date(year, month or 1, day or 1)
        return dt.datetime(
            year, month or 1, day or 1, hour, minute or 0, second or 0, micros, tzinfo=dt.UTC
        )
    except (ValueError, TypeError) as err:
        raise DecodeError(f"DateTime {dict(v)} is not a valid date or time ({err})") from None


def _zoned(v: Mapping[str, Any]) -> dt.datetime:
    local = _datetime(v["value"])
    if not isinstance(local, dt.datetime):
        raise DecodeError("TimestampWithTimeZone holds no date and time")
    zone = str(v["timezone"])
    try:
        offset = dt.datetime.strptime(zone.replace("UTC", "").replace("GMT", ""), "%z").utcoffset()
        tz: dt.tzinfo = dt.timezone(offset or dt.timedelta(0))
    except ValueError:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            tz = ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise DecodeError(f"unknown time zone {zone!r}") from None
    return local.replace(tzinfo=tz)


def _binary_geometry(v: Mapping[str, Any]) -> dict[str, Any]:
    return {"wkb": bytes(v["value"]), "srid": None}


def _text(v: Mapping[str, Any]) -> str:
    return str(v["value"])


def _binary(v: Mapping[str, Any]) -> bytes:
    return bytes(v["value"])


_ABSENT: Final = object()


def _empty(v: Any) -> Any:
    return None if v == "NULL" else _ABSENT


#: Value record (simple name) → decoder of its payload.
VALUE_KINDS: Final[Mapping[str, Callable[[Any], Any]]] = {
    "Integer": _integer,
    "Character": _character,
    "Decimal": _decimal,
    "Float": _float,
    "Timestamp": _timestamp,
    "DateTime": _datetime,
    "TimestampWithTimeZone": _zoned,
    "BinaryGeometry": _binary_geometry,
    "TextGeometry": _text,
    "BinaryObject": _binary,
    "TextObject": _text,
    "EmptyObject": _empty,
}


def image_item(item: Any) -> tuple[str | None, Any]:
    """``(kind, payload)`` of one image item: fastavro's ``(name, value)`` pair, Avro JSON's
    ``{"<name>": value}`` or None."""
    if item is None:
        return None, None
    if isinstance(item, tuple) and len(item) == 2:
        name, payload = item
    elif isinstance(item, dict) and len(item) == 1:
        ((name, payload),) = item.items()
    else:
        raise DecodeError("image item is not a typed DTS value record")
    kind = str(name).rsplit(".", 1)[-1]
    if kind not in VALUE_KINDS:
        raise DecodeError(f"unknown DTS value record {name!r}")
    return kind, payload


def decode_item(item: Any) -> tuple[str | None, Any]:
    """``(kind, python value)`` of one image item (value None for NULL, ``_ABSENT`` for NONE)."""
    kind, payload = image_item(item)
    if kind is None:
        return None, None
    try:
        return kind, VALUE_KINDS[kind](payload)
    except DecodeError:
        raise
    except (KeyError, TypeError, ValueError) as err:
        raise DecodeError(f"malformed {kind} value record ({reason_of(err)})") from None


# --- column types ------------------------------------------------------------------------------


def _named(type_: str, name: str, **params: str) -> ConnectSchema:
    return primitive(type_, name=name, version=1, parameters=params or None)


def decimal_column(precision: int | None, scale: int) -> ConnectSchema:
    """A Connect Decimal column schema (precision omitted when unknown)."""
    params = {"scale": str(scale)}
    if precision is not None:
        params[PRECISION_PARAM] = str(precision)
    return primitive("bytes", name=DECIMAL_NAME, version=1, parameters=params)


GEOMETRY: Final = struct(
    [primitive("bytes", field="wkb"), primitive("int32", optional=True, field="srid")],
    name=GEOMETRY_NAME,
    version=1,
    doc="Geometry",
)


@dataclass(frozen=True, slots=True)
class MysqlType:
    """One binlog type code: its name and default Connect column schema."""

    name: str
    schema: ConnectSchema


def _t(name: str, schema: ConnectSchema) -> MysqlType:
    return MysqlType(name, schema)


_STRING: Final = primitive("string")

#: MySQL binlog ``dataTypeNumber`` → type name and default Connect column schema
#: (Debezium's MySQL mappings; decimals get their precision/scale from the values).
MYSQL_TYPES: Final[Mapping[int, MysqlType]] = {
    0: _t("DECIMAL", decimal_column(None, 0)),
    1: _t("TINY", primitive("int16")),
    2: _t("SHORT", primitive("int16")),
    3: _t("LONG", primitive("int32")),
    4: _t("FLOAT", primitive("float")),
    5: _t("DOUBLE", primitive("double")),
    6: _t("NULL", _STRING),
    7: _t("TIMESTAMP", _named("string", ZONED_TIMESTAMP_NAME)),
    8: _t("LONGLONG", primitive("int64")),
    9: _t("INT24", primitive("int32")),
    10: _t("DATE", _named("int32", DEBEZIUM_DATE_NAME)),
    11: _t("TIME", _named("int64", MICRO_TIME_NAME)),
    12: _t("DATETIME", _named("int64", MICRO_TIMESTAMP_NAME)),
    13: _t("YEAR", _named("int32", YEAR_NAME)),
    14: _t("NEWDATE", _named("int32", DEBEZIUM_DATE_NAME)),
    15: _t("VARCHAR", _STRING),
    16: _t("BIT", _named("bytes", BITS_NAME)),
    17: _t("TIMESTAMP2", _named("string", ZONED_TIMESTAMP_NAME)),
    18: _t("DATETIME2", _named("int64", MICRO_TIMESTAMP_NAME)),
    19: _t("TIME2", _named("int64", MICRO_TIME_NAME)),
    245: _t("JSON", _named("string", JSON_NAME)),
    246: _t("NEWDECIMAL", decimal_column(None, 0)),
    247: _t("ENUM", _named("string", ENUM_NAME)),
    248: _t("SET", _named("string", ENUM_SET_NAME)),
    249: _t("TINY_BLOB", primitive("bytes")),
    250: _t("MEDIUM_BLOB", primitive("bytes")),
    251: _t("LONG_BLOB", primitive("bytes")),
    252: _t("BLOB", primitive("bytes")),
    253: _t("VAR_STRING", _STRING),
    254: _t("STRING", _STRING),
    255: _t("GEOMETRY", GEOMETRY),
}

#: Column type for a value record kind when the type code is unknown (non-MySQL sources).
KIND_TYPES: Final[Mapping[str, ConnectSchema]] = {
    "Integer": primitive("int64"),
    "Character": _STRING,
    "Decimal": decimal_column(None, 0),
    "Float": primitive("double"),
    "Timestamp": _named("string", ZONED_TIMESTAMP_NAME),
    "DateTime": _named("int64", MICRO_TIMESTAMP_NAME),
    "TimestampWithTimeZone": _named("string", ZONED_TIMESTAMP_NAME),
    "BinaryGeometry": GEOMETRY,
    "TextGeometry": _STRING,
    "BinaryObject": primitive("bytes"),
    "TextObject": _STRING,
}

#: Integer column types, narrowest first, with the values they hold.
_INT_LADDER: Final = (
    ("int16", -(2**15), 2**15 - 1),
    ("int32", -(2**31), 2**31 - 1),
    ("int64", -(2**63), 2**63 - 1),
)


def type_name(code: int) -> str:
    """``253 (VAR_STRING)`` for messages."""
    entry = MYSQL_TYPES.get(code)
    return f"{code} ({entry.name})" if entry else str(code)


def widen_int(schema: ConnectSchema, low: int, high: int) -> ConnectSchema:
    """The narrowest integer type at least as wide as ``schema`` holding ``low..high``."""
    order = [t for t, _, _ in _INT_LADDER]
    start = order.index(schema.type) if schema.type in order else 0
    for t, lo, hi in _INT_LADDER[start:]:
        if lo <= low and high <= hi:
            return primitive(t)
    return decimal_column(20, 0)


# --- fitting a decoded value to its column type --------------------------------------------------


def _family(schema: ConnectSchema) -> str:
    """What kind of Python value a column holds."""
    entry = lookup(schema)
    if entry is not None and entry.key in _LOGICAL_FAMILIES:
        return _LOGICAL_FAMILIES[entry.key]
    return _BASE_FAMILIES.get(schema.type, schema.type)


#: A logical type's (kind, unit) → the family of its decoded values.
_LOGICAL_FAMILIES: Final[Mapping[LogicalKey, str]] = {
    ("decimal", "unscaled"): "decimal",
    ("date", "days"): "date",
    ("time", "millis"): "time",
    ("time", "micros"): "time",
    ("timestamp", "millis"): "timestamp",
    ("timestamp", "micros"): "timestamp",
    ("zoned-timestamp", "iso"): "timestamp",
    ("year", None): "year",
    ("bits", None): "bits",
    ("geometry", None): "geometry",
}

_BASE_FAMILIES: Final[Mapping[str, str]] = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "float": "float",
    "double": "float",
    "string": "string",
    "bytes": "bytes",
    "boolean": "boolean",
}

_INT_RANGE: Final[Mapping[str, tuple[int, int]]] = {
    "int8": (-(2**7), 2**7 - 1),
    **{t: (lo, hi) for t, lo, hi in _INT_LADDER},
}


def _fit_int(value: Any, schema: ConnectSchema) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _misfit(value, schema)
    low, high = _INT_RANGE.get(schema.type, (-(2**63), 2**63 - 1))
    if not low <= value <= high:
        raise DecodeError(f"{value} is out of the {schema.type} range")
    return value


def _fit_float(value: Any, schema: ConnectSchema) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _misfit(value, schema)


def _fit_decimal(value: Any, schema: ConnectSchema) -> decimal.Decimal:
    if isinstance(value, int) and not isinstance(value, bool):
        value = decimal.Decimal(value)
    if not isinstance(value, decimal.Decimal):
        raise _misfit(value, schema)
    scale = decimal_scale(schema)
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and -exponent > scale:
        raise DecodeError(f"{value} has more than {scale} decimal places")
    return value.quantize(decimal.Decimal(1).scaleb(-scale))


def _fit_exact(kind: type, check: Callable[[Any], bool] | None = None) -> Callable[..., Any]:
    def fit(value: Any, schema: ConnectSchema) -> Any:
        if type(value) is kind and (check is None or check(value)):
            return value
        raise _misfit(value, schema)

    return fit


def _fit_bits(value: Any, schema: ConnectSchema) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "little")
    raise _misfit(value, schema)


def _fit_year(value: Any, schema: ConnectSchema) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _misfit(value, schema)


def _fit_geometry(value: Any, schema: ConnectSchema) -> dict[str, Any]:
    if isinstance(value, dict) and "wkb" in value:
        return value
    raise _misfit(value, schema)


#: Column family → function checking (and converting) a decoded value for that column.
FITTERS: Final[Mapping[str, Callable[[Any, ConnectSchema], Any]]] = {
    "int": _fit_int,
    "float": _fit_float,
    "decimal": _fit_decimal,
    "string": _fit_exact(str),
    "bytes": _fit_exact(bytes),
    "boolean": _fit_exact(bool),
    "date": _fit_exact(dt.date),
    "time": _fit_exact(dt.time),
    "timestamp": _fit_exact(dt.datetime),
    "year": _fit_year,
    "bits": _fit_bits,
    "geometry": _fit_geometry,
}


def _misfit(value: Any, schema: ConnectSchema) -> DecodeError:
    shown = repr(value)
    shown = shown if len(shown) <= 50 else shown[:47] + "..."
    return DecodeError(f"{shown} does not fit column type {schema.describe()}")


def fit_value(value: Any, schema: ConnectSchema) -> Any:
    """A decoded value checked against (and converted to) its column's type."""
    if value is None:
        return None
    fitter = FITTERS.get(_family(schema))
    if fitter is None:
        raise DecodeError(f"column type {schema.describe()} is not supported for DTS values")
    return fitter(value, schema)


# --- record helpers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Columns:
    """The record's ``fields[]`` as names and type codes."""

    names: tuple[str, ...]
    codes: tuple[int, ...]


def _record(message: Message) -> dict[str, Any]:
    value = message.value
    if not isinstance(value, dict) or not value.keys() >= _ENVELOPE_KEYS:
        raise InputError("not a DTS Avro record", message.where)
    return value


def _columns(record: Mapping[str, Any], where: str) -> _Columns:
    raw = record.get("fields")
    if not isinstance(raw, list):
        raise InputError(
            "a row change needs fields[] (column names and types)", f"{where} $.fields"
        )
    names: list[str] = []
    codes: list[int] = []
    for i, f in enumerate(raw):
        if not isinstance(f, dict) or "name" not in f or "dataTypeNumber" not in f:
            raise InputError("expected {name, dataTypeNumber}", f"{where} $.fields[{i}]")
        names.append(str(f["name"]))
        codes.append(int(f["dataTypeNumber"]))
    return _Columns(tuple(names), tuple(codes))


def table_of(record: Mapping[str, Any]) -> TableId:
    """``objectName`` (``db.table`` or ``db.schema.table``; ``\\u002E`` escapes a dot)."""
    raw = record.get("objectName")
    if not raw:
        return TableId()
    parts = [p.replace("\\u002E", ".") for p in str(raw).split(".")]
    if len(parts) == 1:
        return TableId(database=parts[0])
    if len(parts) == 2:
        return TableId(database=parts[0], name=parts[1])
    return TableId(database=parts[0], schema=".".join(parts[1:-1]), name=parts[-1])


def key_columns(record: Mapping[str, Any]) -> list[str]:
    """Primary key columns from ``tags.pk_uk_info`` (``{"PRIMARY": [...]}``), if present."""
    tags = record.get("tags") or {}
    raw = tags.get("pk_uk_info") if isinstance(tags, dict) else None
    if not raw:
        return []
    try:
        info = json.loads(raw)
    except ValueError:
        return []
    primary = info.get("PRIMARY") if isinstance(info, dict) else None
    return [str(c) for c in primary] if isinstance(primary, list) else []


def _images(record: Mapping[str, Any], key: str, where: str, width: int) -> list[Any] | None:
    raw = record.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise InputError(f"{key} must be an array of values", f"{where} $.{key}")
    if len(raw) != width:
        raise InputError(f"{key} holds {len(raw)} values for {width} fields", f"{where} $.{key}")
    return raw


_IMAGES_FOR_OP: Final[Mapping[str, tuple[bool, bool]]] = {
    # operation → (before image expected, after image expected)
    "INSERT": (False, True),
    "UPDATE": (True, True),
    "DELETE": (True, False),
}


#: DTS's ``Record``: ``operation`` (row changes and control records), typed value records in
#: ``beforeImages``/``afterImages`` (read by this module), the table in ``objectName``, the
#: reader's time in ``tags``, the commit time in seconds, and the position.
SPEC: Final = FormatSpec(
    ops=Ops(("operation",), ROW_OPS, CONTROL_OPS),
    images=Images(
        before=("beforeImages",),
        after=("afterImages",),
        values="avro",
        by_op={
            op: (Image(("beforeImages",)) if b else None, Image(("afterImages",)) if a else None)
            for op, (b, a) in _IMAGES_FOR_OP.items()
        },
    ),
    # objectName (``db.table``, ``db.schema.table``, ``\u002E`` escaping a dot): table_of
    table=Table(fallback=True),
    ts_ms=(Time(("tags", "readerThroughoutTime"), text=True),),
    source_ts_ms=(Time(("sourceTimestamp",), "s"),),
    position=Position(
        at=(),
        named={"id": ("id",)},
        keys=("sourcePosition", "safeSourcePosition", "sourceTxid"),
        drop_empty=True,
    ),
    fields=("version", "source", "fields", "tags", "objectName"),
)


@dataclass(frozen=True, slots=True)
class EnvelopeFacts:
    """What a record says besides its row images (kept on a row that fails to decode)."""

    table: TableId
    ts_ms: int | None
    source_ts_ms: int | None
    position: dict[str, Any]


def envelope_facts(record: Mapping[str, Any], where: str = "") -> EnvelopeFacts:
    """The table, times and position of a record, as :data:`SPEC` says."""
    return EnvelopeFacts(
        table=table_of(record),
        ts_ms=read_time(SPEC.ts_ms, record, where),
        source_ts_ms=read_time(SPEC.source_ts_ms, record, where),
        position=read_position(SPEC.position, record, where),
    )


# --- inference state -----------------------------------------------------------------------------


@dataclass(slots=True)
class _ColumnStats:
    code: int
    kinds: set[str] = field(default_factory=set)
    charsets: set[str] = field(default_factory=set)
    int_low: int = 0
    int_high: int = 0
    precision: int | None = None
    scale: int | None = None

    def observe(self, kind: str, payload: Any, value: Any) -> None:
        self.kinds.add(kind)
        if kind == "Character":
            self.charsets.add(str(payload.get("charset", "")).lower())
        elif kind == "Integer" and isinstance(value, int):
            self.int_low = min(self.int_low, value)
            self.int_high = max(self.int_high, value)
        elif kind == "Decimal":
            self.precision = max(self.precision or 0, int(payload.get("precision") or 0)) or None
            self.scale = max(self.scale or 0, int(payload.get("scale") or 0))

    def schema(self) -> ConnectSchema:
        entry = MYSQL_TYPES.get(self.code)
        base = entry.schema if entry else self._from_kinds()
        family = _family(base)
        if family == "decimal":
            return decimal_column(self.precision, self.scale or 0)
        if family == "int" and (self.kinds & {"Integer"}):
            return widen_int(base, self.int_low, self.int_high)
        if family == "string" and self.charsets == {"binary"}:
            return primitive("bytes")
        if family == "bytes" and self.kinds and self.kinds <= {"TextObject", "Character"}:
            return _STRING
        if family == "geometry" and self.kinds == {"TextGeometry"}:
            return _STRING
        return base

    def _from_kinds(self) -> ConnectSchema:
        for kind in sorted(self.kinds - {"EmptyObject"}):
            return KIND_TYPES[kind]
        return _STRING


@dataclass(slots=True)
class _TableState:
    table: TableId
    columns: dict[str, _ColumnStats] = field(default_factory=dict)
    order: tuple[str, ...] = ()
    key: list[str] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)
    versions: dict[tuple[tuple[str, int], ...], list[Any]] = field(default_factory=dict)


# --- the format ----------------------------------------------------------------------------------


class DtsAvro(Format):
    """Alibaba Cloud DTS Avro (``com.alibaba.dts.formats.avro.Record``)."""

    name = "dts-avro"
    description = "Alibaba Cloud DTS Avro Record: fields[] with MySQL type codes, typed images"
    embedded_schema = "no"
    input_kind = "avro"
    spec: ClassVar[FormatSpec] = SPEC

    def assemble(
        self, messages: Iterable[Message], on_error: InputErrorSink | None = None
    ) -> Iterator[Message]:
        """Split raw file bytes into one message per record; decoded records pass through."""
        for message in messages:
            if isinstance(message.value, bytes | bytearray):
                yield from split_records(bytes(message.value), message.where)
            else:
                yield message

    def detect(self, message: Message) -> bool:
        value = message.value
        if isinstance(value, bytes | bytearray):
            data = bytes(value)
            if data.startswith(b"Obj\x01"):
                return RECORD_NAME.encode() in data[:4096] or b'"Record"' in data[:4096]
            return _try_decode(data, _header_length(data)) is not None
        return (
            isinstance(value, dict)
            and value.keys() >= _ENVELOPE_KEYS
            and isinstance(value.get("source"), dict)
            and value.get("operation") in {**ROW_OPS, **CONTROL_OPS}
        )

    # --- infer ---------------------------------------------------------------------------------

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        controls: Counter[str] = Counter()
        state: _TableState | None = None
        others: Counter[str] = Counter()
        rows = 0
        total = 0
        for message in messages:
            total += 1
            if message.value is None:
                controls["tombstone"] += 1
                continue
            record = _record(message)
            op = record.get("operation")
            if op not in ROW_OPS:
                controls[CONTROL_OPS.get(str(op), "other")] += 1
                continue
            table = table_of(record)
            if state is None:
                state = _TableState(table)
            elif table != state.table:
                others[table.qualified()] += 1
                continue
            self._observe(state, record, message.where)
            rows += 1
        if state is None:
            raise InputError("no row changes (INSERT/UPDATE/DELETE) to infer a contract from")
        warnings = [
            f"skipped {n} row change(s) of table {name} (one contract per table)"
            for name, n in sorted(others.items())
        ]
        warnings += [
            f"column {c}: no non-null value seen; decimal precision unknown"
            for c in state.order
            if _family(state.columns[c].schema()) == "decimal"
            and state.columns[c].precision is None
        ]
        return Inference(
            contract=self._contract(state, options),
            messages=total,
            history=tuple(
                SchemaVersionSeen(i, first, n, tuple(name for name, _ in sig))
                for i, (sig, (first, n)) in enumerate(state.versions.items(), start=1)
            ),
            controls=counted(controls),
            warnings=tuple(warnings),
        )

    def _observe(self, state: _TableState, record: dict[str, Any], where: str) -> None:
        cols = _columns(record, where)
        signature = tuple(zip(cols.names, cols.codes, strict=True))
        seen = state.versions.get(signature)
        if seen is None:
            state.versions[signature] = [where, 1]
        else:
            seen[1] += 1
        state.order = cols.names
        for name, code in signature:
            stats = state.columns.get(name)
            if stats is None or stats.code != code:
                state.columns[name] = stats = _ColumnStats(code)
        state.key = key_columns(record) or state.key
        source = record.get("source")
        if isinstance(source, dict):
            state.source = source
        for image_key in ("beforeImages", "afterImages"):
            items = _images(record, image_key, where, len(cols.names))
            for i, item in enumerate(items or ()):
                try:
                    kind, value = decode_item(item)
                except DecodeError as err:
                    raise err.located(f"{where} $.{image_key}[{i}]") from None
                if kind is not None:
                    payload = image_item(item)[1]
                    state.columns[cols.names[i]].observe(kind, payload, value)

    def _contract(self, state: _TableState, options: InferOptions) -> Contract:
        key = [k for k in state.key if k in state.order]
        fields = [
            state.columns[name].schema().replace(optional=name not in key, field=name)
            for name in state.order
        ]
        opts: dict[str, Any] = {}
        if state.source.get("sourceType"):
            opts["source_type"] = str(state.source["sourceType"])
        table = state.table
        default_name = table.qualified() or "dts"
        return contract_from_schema(
            name=options.name or default_name,
            format=self.name,
            table=TableId(table.database, table.schema, table.name or table.database),
            row=struct(fields),
            key=key,
            topic=options.topic,
            options=opts,
        )

    # --- derive --------------------------------------------------------------------------------

    def derive(self, contract: Contract) -> Derived:
        """The fixed DTS Record schema as a Connect struct (DTS writes no Kafka key schema)."""
        return Derived(key=None, value=record_connect_schema())

    # --- validate ------------------------------------------------------------------------------

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        where = message.where
        if message.value is None:
            return []
        try:
            record = _record(message)
        except InputError as err:
            return [Violation(where, "$", "envelope", err.what)]
        op = str(record.get("operation"))
        if op not in ROW_OPS:
            return []
        problems: list[Violation] = []
        table = table_of(record)
        if table.name != contract.table.name or (
            contract.table.database and table.database != contract.table.database
        ):
            problems.append(
                Violation(
                    where,
                    "$.objectName",
                    "envelope",
                    f"table {table.qualified()} is not the contract's table "
                    f"{contract.table_id.qualified()}",
                )
            )
        try:
            cols = _columns(record, where)
        except InputError as err:
            return [*problems, Violation(where, "$.fields", "envelope", err.what)]
        problems += self._check_columns(cols, contract, where)
        expect = _IMAGES_FOR_OP[op]
        for image_key, wanted in zip(("beforeImages", "afterImages"), expect, strict=True):
            problems += self._check_image(record, image_key, wanted, op, cols, contract, where)
        return problems

    def _check_columns(self, cols: _Columns, contract: Contract, where: str) -> list[Violation]:
        row = contract.row_schema
        problems: list[Violation] = []
        present = set(cols.names)
        for i, (name, code) in enumerate(zip(cols.names, cols.codes, strict=True)):
            column = row.get_field(name)
            path = f"$.fields[{i}]"
            if column is None:
                problems.append(
                    Violation(
                        where, path, "extra-column", f"column {name!r} is not in the contract"
                    )
                )
            elif not _code_fits(code, column):
                problems.append(
                    Violation(
                        where,
                        f"{path}.dataTypeNumber",
                        "wrong-type",
                        f"column {name!r} has type {type_name(code)}, the contract says "
                        f"{column.describe()}",
                    )
                )
        for column in row.fields or ():
            name = column.field or ""
            if name not in present and not column.optional:
                problems.append(
                    Violation(where, "$.fields", "missing-column", f"column {name!r} is missing")
                )
        return problems

    def _check_image(
        self,
        record: Mapping[str, Any],
        image_key: str,
        wanted: bool,
        op: str,
        cols: _Columns,
        contract: Contract,
        where: str,
    ) -> list[Violation]:
        raw = record.get(image_key)
        path = f"$.{image_key}"
        if raw is None:
            if wanted:
                return [Violation(where, path, "envelope", f"an {op} needs {image_key}")]
            return []
        if not wanted:
            return [Violation(where, path, "envelope", f"an {op} carries no {image_key}")]
        try:
            items = _images(record, image_key, where, len(cols.names)) or []
        except InputError as err:
            return [Violation(where, path, "envelope", err.what)]
        problems: list[Violation] = []
        row = contract.row_schema
        for i, item in enumerate(items):
            column = row.get_field(cols.names[i])
            if column is None:
                continue
            item_path = f"{path}[{i}]"
            try:
                _, value = decode_item(item)
            except DecodeError as err:
                problems.append(Violation(where, item_path, "undecodable", err.what))
                continue
            if value is None and not column.optional:
                problems.append(
                    Violation(
                        where, item_path, "wrong-type", f"null for required column {column.field!r}"
                    )
                )
                continue
            if value is _ABSENT:
                continue
            try:
                fit_value(value, column)
            except DecodeError as err:
                problems.append(
                    Violation(where, item_path, "wrong-type", f"{column.field}: {err.what}")
                )
        return problems

    # --- normalize -----------------------------------------------------------------------------

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        if message.value is None:
            return [ControlRecord("tombstone", "empty message")]
        record = _record(message)
        op = str(record.get("operation"))
        table = table_of(record)
        if op not in ROW_OPS:
            kind = CONTROL_OPS.get(op, "other")
            return [ControlRecord(kind, f"DTS {op} record", table if table.database else None)]
        where = message.where
        cols = _columns(record, where)
        schemas = self._column_schemas(cols, record, contract)
        before = self._row(record, "beforeImages", cols, schemas, where)
        after = self._row(record, "afterImages", cols, schemas, where)
        expect_before, expect_after = _IMAGES_FOR_OP[op]
        if (before is None) == expect_before or (after is None) == expect_after:
            raise InputError(
                f"an {op} needs {'beforeImages' if expect_before else 'no beforeImages'} and "
                f"{'afterImages' if expect_after else 'no afterImages'}",
                where,
            )
        key_names = list(contract.key) if contract else key_columns(record)
        image = after if after is not None else before
        key = {k: image.get(k) for k in key_names} if key_names and image is not None else None
        facts = envelope_facts(record, where)
        return [
            ChangeEvent(
                op=ROW_OPS[op],
                table=table,
                key=key,
                before=before,
                after=after,
                ts_ms=facts.ts_ms,
                source_ts_ms=facts.source_ts_ms,
                position=facts.position,
            )
        ]

    def _column_schemas(
        self, cols: _Columns, record: Mapping[str, Any], contract: Contract | None
    ) -> list[ConnectSchema]:
        """Each column's type: the contract's, else inferred from this record alone."""
        row = contract.row_schema if contract is not None else None
        out: list[ConnectSchema] = []
        for i, (name, code) in enumerate(zip(cols.names, cols.codes, strict=True)):
            declared = row.get_field(name) if row is not None else None
            if declared is not None:
                out.append(declared)
                continue
            stats = _ColumnStats(code)
            for image_key in ("beforeImages", "afterImages"):
                items = record.get(image_key)
                if isinstance(items, list) and i < len(items):
                    try:
                        kind, value = decode_item(items[i])
                    except DecodeError:
                        continue
                    if kind is not None:
                        stats.observe(kind, image_item(items[i])[1], value)
            out.append(stats.schema().replace(optional=True, field=name))
        return out

    def _row(
        self,
        record: Mapping[str, Any],
        image_key: str,
        cols: _Columns,
        schemas: list[ConnectSchema],
        where: str,
    ) -> dict[str, Any] | None:
        items = _images(record, image_key, where, len(cols.names))
        if items is None:
            return None
        row: dict[str, Any] = {}
        for i, item in enumerate(items):
            path = f"$.{image_key}[{i}]"
            try:
                _, value = decode_item(item)
                if value is _ABSENT:
                    continue
                row[cols.names[i]] = fit_value(value, schemas[i])
            except DecodeError as err:
                raise DecodeError(f"{cols.names[i]}: {err.what}", f"{where} {path}") from None
        return row


def _code_fits(code: int, column: ConnectSchema) -> bool:
    """Whether a column of binlog type ``code`` may be declared as ``column``."""
    entry = MYSQL_TYPES.get(code)
    if entry is None:
        return True
    return _family(column) in _CODE_FAMILIES.get(_family(entry.schema), {_family(entry.schema)})


#: Declared families a binlog type's default family may also appear as (after refinement).
_CODE_FAMILIES: Final[Mapping[str, frozenset[str]]] = {
    "int": frozenset({"int", "decimal"}),
    "string": frozenset({"string", "bytes"}),
    "bytes": frozenset({"bytes", "string"}),
    "geometry": frozenset({"geometry", "string"}),
    "float": frozenset({"float"}),
}


# --- the Record schema as Connect (AvroData's rules) ---------------------------------------------


@functools.cache
def standalone_record_schema() -> dict[str, Any]:
    """The Record schema alone, each named type defined at its first use (as Java's
    ``Schema.toString`` writes it): what an Avro container file's header holds."""
    *support, record = avro_schema()
    defs = {f"{t.get('namespace', NAMESPACE)}.{t['name']}": t for t in support}
    done: set[str] = set()

    def inline(node: Any) -> Any:
        if isinstance(node, str):
            full = node if "." in node else f"{NAMESPACE}.{node}"
            if full not in defs:
                return node
            if full in done:
                return full
            done.add(full)
            return inline(defs[full])
        if isinstance(node, list):
            return [inline(n) for n in node]
        if isinstance(node, dict):
            return {
                k: inline(v) if k in ("type", "items", "values", "fields") else v
                for k, v in node.items()
            }
        return node

    inlined: dict[str, Any] = inline(record)
    return inlined


@functools.cache
def record_connect_schema() -> ConnectSchema:
    """The DTS Record as the Connect struct Confluent's AvroData converter derives from it."""
    from contracts.translate.avro import avro_to_connect

    return avro_to_connect(standalone_record_schema())
