"""MongoDB Extended JSON v2 (canonical and relaxed, plus the legacy ``$binary``/``$date``
spellings) read into typed values.

A document is JSON in which an object whose only keys are one of :data:`WRAPPERS` (with its
companion keys) stands for one BSON value. The table says, per wrapper, which BSON kind it is;
:func:`typed` turns a parsed document into :class:`Typed` values (kind + Python value), which
inference summarizes and decoding checks against a contract. Plain JSON numbers are the relaxed
form: an integer is an ``int32`` when it fits, else an ``int64``; a fraction is a ``double``.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from contracts.errors import DecodeError
from contracts.formats.spec import iso_epoch_ms
from contracts.schema import json_kind

#: The BSON kinds a value can have after decoding.
Kind = Literal[
    "null",
    "boolean",
    "string",
    "objectId",
    "int32",
    "int64",
    "double",
    "decimal",
    "date",
    "binary",
    "timestamp",
    "document",
    "array",
]

INT32: Final = (-(2**31), 2**31 - 1)
INT64: Final = (-(2**63), 2**63 - 1)
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class Typed:
    """One decoded value: its BSON kind and Python value (a document: ``{name: Typed}``; an
    array: ``[Typed]``)."""

    kind: Kind
    value: Any


def _string(inner: Any, path: str) -> str:
    if not isinstance(inner, str):
        raise DecodeError(f"expected a string, got {json_kind(inner)}", path)
    return inner


def _int(bounds: tuple[int, int], what: str) -> Callable[[Any, str], int]:
    def read(inner: Any, path: str) -> int:
        text = _string(inner, path)
        digits = text.removeprefix("-")
        if not (digits.isascii() and digits.isdigit()):
            raise DecodeError(f"{text!r} is not an {what}", path)
        number = int(text)
        if not bounds[0] <= number <= bounds[1]:
            raise DecodeError(f"{text} is out of range for an {what}", path)
        return number

    return read


_SPECIAL_DOUBLES: Final = {
    "Infinity": float("inf"),
    "-Infinity": float("-inf"),
    "NaN": float("nan"),
}


def _double(inner: Any, path: str) -> float:
    text = _string(inner, path)
    if text in _SPECIAL_DOUBLES:
        return _SPECIAL_DOUBLES[text]
    try:
        return float(text)
    except ValueError:
        raise DecodeError(f"{text!r} is not a double", path) from None


def _decimal(inner: Any, path: str) -> decimal.Decimal:
    text = _string(inner, path)
    try:
        found = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise DecodeError(f"{text!r} is not a decimal", path) from None
    if not found.is_finite():
        raise DecodeError(f"{text!r} is not a finite decimal", path)
    return found


def _date(inner: Any, path: str) -> dt.datetime:
    """``{"$numberLong": "<ms>"}`` (canonical), an ISO-8601 text (relaxed) or a JSON integer of
    milliseconds (legacy relaxed)."""
    if isinstance(inner, dict) and set(inner) == {"$numberLong"}:
        millis = _int(INT64, "int64")(inner["$numberLong"], f"{path}.$numberLong")
    elif isinstance(inner, int) and not isinstance(inner, bool):
        millis = inner
    elif isinstance(inner, str):
        found = iso_epoch_ms(inner)
        if found is None:
            raise DecodeError(f"{inner!r} is not an ISO-8601 date", path)
        millis = found
    else:
        raise DecodeError(
            f"expected {{$numberLong}}, an ISO-8601 text or milliseconds, got {json_kind(inner)}",
            path,
        )
    try:
        return _EPOCH + dt.timedelta(milliseconds=millis)
    except OverflowError:
        raise DecodeError(f"{millis} ms is outside the years 1-9999", path) from None


def _base64(text: Any, path: str) -> bytes:
    try:
        return base64.b64decode(_string(text, path), validate=True)
    except (binascii.Error, ValueError):
        raise DecodeError("is not valid base64", path) from None


#: The fields of a v2 ``$binary`` (the base64 text first) and of a ``$timestamp``.
BINARY_PARTS: Final = ("base64", "subType")
TIMESTAMP_PARTS: Final = ("t", "i")


def _binary(inner: Any, path: str) -> bytes:
    """v2 ``{"base64", "subType"}``; the legacy form is ``{"$binary": "<b64>", "$type"}``
    (read by :func:`typed`, which sees both keys)."""
    if isinstance(inner, dict) and set(inner) == set(BINARY_PARTS):
        return _base64(inner["base64"], f"{path}.base64")
    return _base64(inner, path)


def _timestamp(inner: Any, path: str) -> dict[str, int]:
    if not isinstance(inner, dict) or set(inner) != set(TIMESTAMP_PARTS):
        raise DecodeError("expected {t, i}", path)
    out = {}
    for part in TIMESTAMP_PARTS:
        value = inner[part]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
            raise DecodeError("expected an unsigned 32-bit integer", f"{path}.{part}")
        out[part] = value
    return out


@dataclass(frozen=True, slots=True)
class Wrapper:
    """One extended-JSON wrapper: the BSON kind it stands for, how its inner value is read,
    and the companion keys it may carry (legacy ``$binary``'s ``$type``)."""

    kind: Kind
    read: Callable[[Any, str], Any]
    companions: frozenset[str] = frozenset()


#: Wrapper key → what it is. Keys beginning with ``$`` that are not here are refused.
WRAPPERS: Final[Mapping[str, Wrapper]] = {
    "$oid": Wrapper("objectId", _string),
    "$numberInt": Wrapper("int32", _int(INT32, "int32")),
    "$numberLong": Wrapper("int64", _int(INT64, "int64")),
    "$numberDouble": Wrapper("double", _double),
    "$numberDecimal": Wrapper("decimal", _decimal),
    "$date": Wrapper("date", _date),
    "$binary": Wrapper("binary", _binary, frozenset({"$type"})),
    "$timestamp": Wrapper("timestamp", _timestamp),
}

#: BSON kind → the wrapper key that writes it.
KEY_OF: Final[Mapping[Kind, str]] = {rule.kind: key for key, rule in WRAPPERS.items()}

#: Wrappers this reader does not turn into a typed value (they are refused with their name).
UNSUPPORTED: Final = frozenset(
    {
        "$regularExpression",
        "$regex",
        "$symbol",
        "$code",
        "$scope",
        "$dbPointer",
        "$minKey",
        "$maxKey",
        "$undefined",
        "$uuid",
        "$ref",
    }
)


def typed(value: Any, path: str = "$") -> Typed:
    """The typed value of a parsed extended-JSON value (``path``: where it is, for errors)."""
    if value is None:
        return Typed("null", None)
    if isinstance(value, bool):
        return Typed("boolean", value)
    if isinstance(value, int):
        if INT32[0] <= value <= INT32[1]:
            return Typed("int32", value)
        if INT64[0] <= value <= INT64[1]:
            return Typed("int64", value)
        raise DecodeError(f"{value} is out of range for an int64", path)
    if isinstance(value, float):
        return Typed("double", value)
    if isinstance(value, str):
        return Typed("string", value)
    if isinstance(value, list):
        return Typed("array", [typed(v, f"{path}[{i}]") for i, v in enumerate(value)])
    if isinstance(value, dict):
        wrapper = _wrapper_of(value, path)
        if wrapper is not None:
            key, rule = wrapper
            return Typed(rule.kind, rule.read(value[key], f"{path}.{key}"))
        return Typed("document", {k: typed(v, f"{path}.{k}") for k, v in value.items()})
    raise DecodeError(f"unexpected {json_kind(value)}", path)


def _wrapper_of(value: dict[str, Any], path: str) -> tuple[str, Wrapper] | None:
    dollars = [k for k in value if k.startswith("$")]
    if not dollars:
        return None
    for key in dollars:
        rule = WRAPPERS.get(key)
        if rule is not None and set(value) <= {key, *rule.companions}:
            return key, rule
    first = dollars[0]
    if first in UNSUPPORTED or first in WRAPPERS:
        what = "is not read by this tool" if first in UNSUPPORTED else "has unexpected keys"
        raise DecodeError(f"extended JSON {first} {what}", path)
    return None  # a plain field whose name starts with $ (allowed since MongoDB 5.0)


def parse_document(text: Any, path: str) -> dict[str, Typed]:
    """A document written as extended-JSON text (Debezium's ``after``, ``before``, ``patch``,
    ``updatedFields``), typed."""
    if not isinstance(text, str):
        raise DecodeError(f"expected extended JSON text (a string), got {json_kind(text)}", path)
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError as err:
        raise DecodeError(f"is not JSON: {err}", path) from None
    if not isinstance(parsed, dict):
        raise DecodeError(f"expected a document (an object), got {json_kind(parsed)}", path)
    found = typed(parsed, path)
    if found.kind != "document":
        raise DecodeError(f"is a single {found.kind} value, not a document", path)
    return dict(found.value)


def parse_value(text: Any, path: str) -> Typed:
    """One value written as extended-JSON text (the key document's ``id``)."""
    if not isinstance(text, str):
        raise DecodeError(f"expected extended JSON text (a string), got {json_kind(text)}", path)
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        # a bare string id (no quotes) as older connectors wrote it
        return Typed("string", text)
    return typed(parsed, path)


def plain(value: Typed) -> Any:
    """The Python value of a typed value, documents and arrays included."""
    if value.kind == "document":
        return {k: plain(v) for k, v in value.value.items()}
    if value.kind == "array":
        return [plain(v) for v in value.value]
    return value.value
