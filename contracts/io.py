"""Reading input files into :class:`~contracts.formats.base.Message` values, streaming.

Accepted JSON inputs: JSON lines; a JSON array; concatenated (pretty-printed) JSON documents, as
in vendor docs; kcat ``-J`` records (``{topic, partition, offset, key, payload}`` with key and
payload as strings). CSV rows for ``arcion-s3-csv``. Avro for ``dts-avro``: Avro container files
and files of concatenated Avro-binary messages (read by the format itself from raw bytes).

Every message carries ``where`` (``file:line``); malformed input raises :class:`InputError`
naming the file and line. Memory stays bounded: files are read line by line.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import orjson

from contracts.errors import InputError
from contracts.formats.base import Message, SharedJson

_KCAT_KEYS = frozenset({"topic", "partition", "offset"})


def read_json_messages(path: str | Path) -> Iterator[Message]:
    """Messages from a JSON input file (JSONL, array, concatenated documents or kcat -J)."""
    p = Path(path)
    try:
        handle = p.open("rb")
    except FileNotFoundError:
        raise InputError("no such file", str(p)) from None
    with handle:
        yield from iter_json_stream(handle, str(p))


def iter_json_stream(handle: IO[bytes], name: str) -> Iterator[Message]:
    """Messages from a binary stream of JSON (see :func:`read_json_messages`)."""
    first = _peek_non_space(handle)
    if first == b"[":
        yield from _json_array(handle, name)
        return
    yield from _json_documents(handle, name)


def _peek_non_space(handle: IO[bytes]) -> bytes:
    pos = handle.tell()
    while True:
        ch = handle.read(1)
        if not ch or not ch.isspace():
            handle.seek(pos)
            return ch
        pos += 1


def _json_array(handle: IO[bytes], name: str) -> Iterator[Message]:
    data = handle.read()
    try:
        items = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise InputError(
            f"malformed JSON array: {_json_problem(err)}", f"{name}:{_line(err)}"
        ) from None
    if not isinstance(items, list):
        raise InputError("expected a JSON array", f"{name}:1")
    for i, item in enumerate(items):
        yield to_message(item, f"{name}[{i}]")


def _json_documents(handle: IO[bytes], name: str) -> Iterator[Message]:
    """JSON lines, falling back to concatenated multi-line documents where a line is partial."""
    decoder = json.JSONDecoder()
    buffer = ""
    start_line = 0
    for lineno, raw in enumerate(handle, start=1):
        if not buffer:
            stripped = raw.strip()
            if not stripped:
                continue
            try:
                value = loads_document(stripped)
            except orjson.JSONDecodeError:
                pass
            else:
                yield to_message(value, f"{name}:{lineno}")
                continue
            start_line = lineno
        try:
            buffer += raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("input is not UTF-8 text", f"{name}:{lineno}") from None
        buffer, start_line = yield from _drain(decoder, buffer, name, start_line, lineno)
    if buffer.strip():
        raise InputError(
            "truncated JSON: the document that starts here never ends", f"{name}:{start_line}"
        )


def _drain(
    decoder: json.JSONDecoder, buffer: str, name: str, start_line: int, lineno: int
) -> Generator[Message, None, tuple[str, int]]:
    """Yield every complete document at the start of ``buffer``; return the rest."""
    while True:
        text = buffer.lstrip()
        start_line += buffer[: len(buffer) - len(text)].count("\n")
        if not text:
            return ("", lineno + 1)
        if _is_incomplete(text):
            return (text, start_line)
        try:
            value, end = decoder.raw_decode(text)
        except json.JSONDecodeError as err:
            where = f"{name}:{start_line + err.lineno - 1}"
            raise InputError(f"malformed JSON: {err.msg}", where) from None
        yield to_message(value, f"{name}:{start_line}")
        start_line += text[:end].count("\n")
        buffer = text[end:]


def _is_incomplete(text: str) -> bool:
    """Whether ``text`` could still become valid JSON with more lines (brackets unbalanced)."""
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


def to_message(value: Any, where: str) -> Message:
    """Wrap a parsed JSON document; kcat ``-J`` records are unwrapped (key and payload parsed)."""
    if isinstance(value, dict) and value.keys() >= _KCAT_KEYS and "payload" in value:
        payload = value.get("payload")
        if payload is None or isinstance(payload, str):
            meta = {
                k: value.get(k)
                for k in ("topic", "partition", "offset", "ts", "tstype")
                if k in value
            }
            return Message(
                value=_parse_embedded(payload, where, "payload"),
                key=_parse_embedded(value.get("key"), where, "key"),
                where=where,
                meta=meta,
                has_key=True,
            )
    return Message(value=value, where=where)


def _parse_embedded(text: Any, where: str, what: str) -> Any:
    if text is None or not isinstance(text, str):
        return text
    stripped = text.strip()
    if not stripped:
        return None
    if stripped[0] in "{[" or stripped in ("null", "true", "false") or stripped[0] == '"':
        try:
            return orjson.loads(stripped)
        except orjson.JSONDecodeError as err:
            raise InputError(
                f"kcat {what} is not valid JSON: {_json_problem(err)}", f"{where} $.{what}"
            ) from None
    return text


def _line(err: orjson.JSONDecodeError) -> int:
    return int(getattr(err, "lineno", 1) or 1)


def _json_problem(err: orjson.JSONDecodeError) -> str:
    return str(getattr(err, "msg", err)).split(":")[0]


def read_csv_rows(path: str | Path) -> Iterator[Message]:
    """CSV rows as messages whose value is the list of cells (``where`` is ``file:line``)."""
    p = Path(path)
    try:
        raw = p.open("rb")
    except FileNotFoundError:
        raise InputError("no such file", str(p)) from None
    with raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        reader = csv.reader(text)
        try:
            line = 1
            for row in reader:
                if row and any(cell.strip() for cell in row):
                    yield Message(value=row, where=f"{p}:{line}")
                line = reader.line_num + 1
        except UnicodeDecodeError:
            raise InputError("input is not UTF-8 text", f"{p}:{line}") from None
        except csv.Error as err:
            raise InputError(f"malformed CSV: {err}", f"{p}:{reader.line_num}") from None


def read_bytes_messages(path: str | Path) -> Iterator[Message]:
    """The whole file as one message of raw bytes (for binary formats that frame themselves)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", str(p)) from None
    yield Message(value=data, where=str(p))


def read_messages(paths: Iterable[str | Path], kind: str = "json") -> Iterator[Message]:
    """Messages from every file, in order, read as ``kind`` (json, csv or avro)."""
    reader = {"json": read_json_messages, "csv": read_csv_rows, "avro": read_bytes_messages}.get(
        kind
    )
    if reader is None:
        raise InputError(f"unknown input kind {kind!r}")
    for path in paths:
        yield from reader(path)


def sniff_kind(path: str | Path) -> str:
    """Guess a file's input kind from its first bytes: avro, json or csv."""
    p = Path(path)
    try:
        with p.open("rb") as handle:
            head = handle.read(512)
    except FileNotFoundError:
        raise InputError("no such file", str(p)) from None
    if head.startswith(b"Obj\x01") or p.suffix in (".avro", ".bin"):
        return "avro"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"[") or stripped.startswith(b"null"):
        return "json"
    if p.suffix == ".csv" or b"," in head:
        return "csv"
    return "json"
