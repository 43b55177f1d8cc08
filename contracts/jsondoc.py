"""The one judge of a JSON document: every input layout (JSON lines, arrays, concatenated
documents, kcat records) and every command (infer, validate, normalize) accepts or refuses the
same bytes the same way, because they all parse each document here.

A document is parsed by orjson and refused, as an :class:`~contracts.errors.InputError` naming
where and what, when it is not strict JSON (malformed, not UTF-8, a lone surrogate, ``NaN`` or
``Infinity``), or when it is nested deeper than :data:`MAX_JSON_DEPTH` levels. A number written
with more digits than a double keeps, or an integer outside the 64-bit range (which orjson
would read as an inexact double), is read as a :class:`~contracts.jsonnumbers.JsonNumber`,
which keeps its text: the decoder of the column that reads it judges it (out of range for an
integer column, exact for a wide decimal, not a string for a string column), as Spark's does.
"""

from __future__ import annotations

import functools
import json
import re
from itertools import accumulate
from typing import Any, Final

import orjson

from contracts.errors import InputError
from contracts.formats.base import SharedJson
from contracts.jsonnumbers import JsonNumber, may_lose_digits, number_keeping_text

#: How deeply a document may nest objects and arrays. Deeper documents are refused: every
#: later step (writing events, Spark's reader, the contracts inferred from them) stays well
#: inside its own limits, and no real change event comes near it.
MAX_JSON_DEPTH: Final = 64

#: The integers a JSON number may hold exactly: int64 and uint64 (what orjson reads as ints).
INT_RANGE: Final = range(-(2**63), 2**64)

_STRINGS: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_STEP: Final = [0] * 256
for _open in b"[{":
    _STEP[_open] = 1
for _close in b"]}":
    _STEP[_close] = -1
#: An integer literal that may lie outside :data:`INT_RANGE` is 20 digits, or 19 and a sign:
#: looked for with every digit made ``0`` (a C-speed ``find``; a regex costs ~10x more).
_ALL_DIGITS_ZERO: Final = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN: Final = b"0" * 20
_LONG_NEGATIVE_RUN: Final = b"-" + b"0" * 19
_NON_FINITE: Final = frozenset({"NaN", "Infinity", "-Infinity"})


def nesting_depth(data: bytes) -> int:
    """How deeply ``data`` nests objects and arrays (brackets inside strings do not count)."""
    brackets = _STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def too_deep(where: str) -> InputError:
    return InputError(f"the document is nested deeper than {MAX_JSON_DEPTH} levels", where)


def check_depth(data: bytes, where: str) -> None:
    """Refuse ``data`` when it nests deeper than :data:`MAX_JSON_DEPTH` (cheap when it has
    fewer brackets than that)."""
    if data.count(b"{") + data.count(b"[") > MAX_JSON_DEPTH and (
        nesting_depth(data) > MAX_JSON_DEPTH
    ):
        raise too_deep(where)


def _exact_int(text: str) -> int | JsonNumber:
    """An integer as Python reads it, or beyond :data:`INT_RANGE` a :class:`JsonNumber` that
    keeps its digits (what orjson and every writer of events hold is a 64-bit integer)."""
    value = int(text)
    return value if value in INT_RANGE else JsonNumber(text)


def may_hold_wide_integers(data: bytes) -> bool:
    """Whether ``data`` may hold an integer outside :data:`INT_RANGE` (a run of 20 digits, or
    19 and a minus: rare, and found at C speed)."""
    digits = data.translate(_ALL_DIGITS_ZERO)
    return _LONG_RUN in digits or _LONG_NEGATIVE_RUN in digits


@functools.lru_cache(maxsize=64)
def _wide_head(head: bytes) -> bool:
    """:func:`may_hold_wide_integers` of a shared schema's text, once per schema (the head is
    the same bytes object on every message of the schema: hashed and compared once)."""
    return may_hold_wide_integers(head)


def parse_document(data: bytes | str, where: str) -> Any:
    """One JSON document, judged (see the module docstring); ``data`` is its whole text."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    # a schema shared with the previous message was checked with it: check the rest alone
    last = _LastSchema.current
    fresh = raw[len(last[0]) :] if last is not None and raw.startswith(last[0]) else raw
    check_depth(fresh, where)
    try:
        value = loads_document(raw)
    except orjson.JSONDecodeError as err:
        raise malformed(raw, err, where) from None
    head = _LastSchema.current
    if isinstance(value, dict) and head is not None and value.get("schema") is head[1]:
        if _wide_head(head[0]):  # the shared schema would hold a double
            return exact_numbers(raw, value, where)
        # only the payload is read again, when it must be
        value["payload"] = exact_numbers(raw[len(head[0]) : -1], value["payload"], where)
        return value
    return exact_numbers(raw, value, where)


def exact_numbers(data: bytes, parsed: Any, where: str) -> Any:
    """``parsed`` (``data`` as orjson read it), read again keeping the text of numbers longer
    than a double holds and of integers outside :data:`INT_RANGE` (:mod:`contracts.jsonnumbers`)
    — only when ``data`` holds a run of 16 digits or points, which is rare and found at C
    speed, so nearly every document is read once."""
    if not may_lose_digits(data):
        return parsed
    try:
        return json.loads(data, parse_int=_exact_int, parse_float=number_keeping_text)
    except (ValueError, RecursionError):  # not parseable by the standard reader: orjson decided
        return parsed


def malformed(data: bytes, err: orjson.JSONDecodeError, where: str) -> InputError:
    """What is wrong with a document orjson refused: encoding, truncation, a non-JSON number,
    a lone surrogate, or a syntax error (with its column when the text is one line)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return InputError("input is not UTF-8 text", where)
    if is_incomplete(text):
        cut = "line ends inside a document" if "\n" not in text else "document never ends"
        return InputError(f"truncated JSON: the {cut}", where)

    def refuse_constant(name: str) -> Any:
        raise _NonFinite(name)

    try:
        json.loads(text, parse_constant=refuse_constant)
    except _NonFinite as bad:
        return InputError(f"malformed JSON: {bad} is not a JSON number", where)
    except json.JSONDecodeError as std:
        column = f" (column {std.colno})" if std.lineno == 1 else ""
        return InputError(f"malformed JSON: {std.msg}{column}", where)
    except RecursionError:
        return too_deep(where)
    problem = json_problem(err)
    if "surrogate" in problem:
        problem = "a string holds a lone UTF-16 surrogate escape, which is not a character"
    return InputError(f"malformed JSON: {problem}", where)


class _NonFinite(ValueError):
    pass


def json_problem(err: orjson.JSONDecodeError) -> str:
    """orjson's reason, without its position (the caller locates the error)."""
    return str(getattr(err, "msg", err)).split(":")[0]


def is_incomplete(text: str) -> bool:
    """Whether ``text`` could still become valid JSON with more text (brackets unbalanced)."""
    depth = 0
    in_string = False
    escape = False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth < 0:
                return False
    return depth > 0 or in_string


# --- embedded schemas parsed once -------------------------------------------------------------

_SCHEMA_HEAD: Final = b'{"schema":'
_PAYLOAD_SEPARATOR: Final = b',"payload":'
_SHARED_SCHEMA_LIMIT: Final = 256
_shared_schemas: dict[bytes, SharedJson] = {}


class _LastSchema:
    """The previous schema message's ``{"schema": <text>,"payload":`` head and its shared
    schema, swapped as one tuple: consecutive messages usually repeat it, and comparing a
    prefix is cheaper than finding the payload and hashing the schema text."""

    current: tuple[bytes, SharedJson] | None = None


def loads_document(line: bytes) -> Any:
    """Parse one JSON document; a compact ``{"schema": …, "payload": …}`` message parses only
    its payload, sharing one parsed schema object among every message with the same schema text.

    Embedded schemas repeat on every message (and are most of its bytes), so this parses each
    distinct schema once. Anything that does not split cleanly is parsed whole.
    """
    if line.endswith(b"}"):
        last = _LastSchema.current
        if last is not None and line.startswith(last[0]):
            try:
                payload = orjson.loads(line[len(last[0]) : -1])
            except orjson.JSONDecodeError:
                return orjson.loads(line)
            return {"schema": last[1], "payload": payload}
        if line.startswith(_SCHEMA_HEAD):
            return _loads_schema_message(line)
    return orjson.loads(line)


def _loads_schema_message(line: bytes) -> Any:
    cut = line.find(_PAYLOAD_SEPARATOR)
    if cut > 0:
        schema_text = line[len(_SCHEMA_HEAD) : cut]
        schema = _shared_schemas.get(schema_text)
        try:
            if schema is None:
                schema = _share(schema_text)
            payload = orjson.loads(line[cut + len(_PAYLOAD_SEPARATOR) : -1])
        except orjson.JSONDecodeError:
            return orjson.loads(line)
        if schema is not None:
            _LastSchema.current = (line[: cut + len(_PAYLOAD_SEPARATOR)], schema)
            return {"schema": schema, "payload": payload}
    return orjson.loads(line)


def _share(schema_text: bytes) -> SharedJson | None:
    parsed = orjson.loads(schema_text)
    if not isinstance(parsed, dict):
        return None
    if len(_shared_schemas) >= _SHARED_SCHEMA_LIMIT:
        _shared_schemas.clear()
    shared = SharedJson(parsed)
    _shared_schemas[schema_text] = shared
    return shared


# --- values parsed elsewhere (an HTTP request body) -------------------------------------------


def check_value(value: Any, where: str, path: str = "$", depth: int = 1) -> Any:
    """Apply the document rules to a value parsed by another JSON reader (one that accepts
    lone surrogates, NaN or huge integers): the first offence raises, located by JSON path.
    Returns the value as this package's readers hold it: an integer outside
    :data:`INT_RANGE` is a :class:`JsonNumber` keeping its digits, judged by the column that
    reads it (as the CLI's reader and Spark do)."""
    if depth > MAX_JSON_DEPTH and isinstance(value, dict | list):
        raise too_deep(f"{where} {path}".strip())
    if isinstance(value, str):
        _check_text(value, where, path)
    elif isinstance(value, bool) or value is None:
        return value
    elif isinstance(value, int):
        return value if value in INT_RANGE else JsonNumber(str(value))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError("NaN and Infinity are not JSON numbers", f"{where} {path}".strip())
    elif isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            # a path that names a bad key must itself be printable text
            named = f"{path}.{str(key).encode('utf-8', 'backslashreplace').decode()}"
            _check_text(str(key), where, named)
            out[key] = check_value(item, where, named, depth + 1)
        return out
    elif isinstance(value, list):
        return [check_value(item, where, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    return value


def _check_text(text: str, where: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            "a string holds a lone UTF-16 surrogate, which is not a character",
            f"{where} {path}".strip(),
        ) from None


__all__ = [
    "INT_RANGE",
    "MAX_JSON_DEPTH",
    "check_depth",
    "check_value",
    "exact_numbers",
    "is_incomplete",
    "json_problem",
    "loads_document",
    "malformed",
    "may_hold_wide_integers",
    "nesting_depth",
    "parse_document",
    "too_deep",
]
