"""Reading input files into :class:`~contracts.formats.base.Message` values, streaming.

Accepted JSON inputs: JSON lines; a JSON array; concatenated (pretty-printed) JSON documents, as
in vendor docs; kcat ``-J`` records (``{topic, partition, offset, key, payload}`` with key and
payload as strings). CSV rows for ``arcion-s3-csv``. Avro for ``dts-avro``: Avro container files
and files of concatenated Avro-binary messages (read by the format itself from raw bytes).

An input is a file path, or ``-`` for standard input; pipes, FIFOs and ``/dev/stdin`` are read
as they come (what an earlier pass read, e.g. to detect the format, is kept and replayed). A
UTF-8 byte order mark at the start of a file is skipped.

Every message carries ``where`` (``file:line``). A damaged message (a malformed, truncated or
non-UTF-8 line, a kcat record whose payload is not JSON) is an :class:`InputError` naming the
file and line: given an ``on_error`` callback, the readers hand it the error and carry on with
the next message; without one they raise it. Memory stays bounded: files are read line by line.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import stat
import sys
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import orjson

from contracts.errors import InputError
from contracts.formats.base import Message, SharedJson

_KCAT_KEYS = frozenset({"topic", "partition", "offset"})

#: Called with each damaged message's error; the reader then continues with the next one.
ErrorSink = Callable[[InputError], None]

#: The file name that means standard input, and how messages read from it are located.
STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"

BOM: Final = b"\xef\xbb\xbf"

#: How far the JSON reader looks for a whole JSON-object line to call a file JSON lines (the
#: same rule and limit as the Spark reader, ``spark_bindings.inputs``).
HEAD_BYTES: Final = 1 << 16


def _report(on_error: ErrorSink | None, err: InputError) -> None:
    if on_error is None:
        raise err
    on_error(err)


def _checked(value: Any, where: str, on_error: ErrorSink | None) -> Message | None:
    """The message ``value`` makes, or None when it makes none (the error is reported)."""
    try:
        return to_message(value, where)
    except InputError as err:
        _report(on_error, err)
        return None


# --- opening inputs ---------------------------------------------------------------------------


def input_name(path: str | Path) -> str:
    """How messages of ``path`` are located: the path as given, ``<stdin>`` for ``-``."""
    name = str(path)
    return STDIN_NAME if name == STDIN else name


def is_stdin(path: str | Path) -> bool:
    return str(path) == STDIN


def open_input(path: str | Path) -> IO[bytes]:
    """A binary handle on an input (``-`` is standard input); an unusable path raises an
    :class:`InputError` naming it (missing, a directory, not readable).

    Regular files are opened as they are. Anything else (standard input, a pipe, a FIFO,
    ``/dev/stdin``) can be read once only, so it is wrapped: every open replays what earlier
    opens read (kept up to :data:`REPLAY_LIMIT` bytes), then goes on reading. That lasts for
    the process (a command reads its inputs once, detection included): a long-lived program
    that reads a FIFO again for new data calls :func:`forget_one_time_inputs` first.
    """
    name = str(path)
    if name == STDIN:
        stdin = sys.stdin.buffer
        # keyed by the object itself (held), not its id(), which a later object may reuse
        return _replayable(("-", stdin), lambda: stdin, STDIN_NAME, owned=False).open()
    try:
        info = os.stat(name)
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except NotADirectoryError:
        raise InputError("no such file (a directory in its path is a file)", name) from None
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", name) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError("is a directory, not a file", name)
    try:
        if stat.S_ISREG(info.st_mode):
            return open(name, "rb")
        key = (name, info.st_dev, info.st_ino)
        return _replayable(key, lambda: open(name, "rb"), name, owned=True).open()
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", name) from None


#: How many bytes of a one-time input (standard input, a pipe) are kept for later passes.
REPLAY_LIMIT: Final = 16 << 20

_one_time_inputs: dict[tuple[object, ...], _OneTimeInput] = {}


def forget_one_time_inputs() -> None:
    """Drop what was kept of one-time inputs (see :func:`open_input`): the next open of a
    pipe or FIFO reads it afresh."""
    _one_time_inputs.clear()


def _replayable(
    key: tuple[object, ...], opener: Callable[[], IO[bytes]], name: str, *, owned: bool
) -> _OneTimeInput:
    found = _one_time_inputs.get(key)
    if found is None:
        found = _one_time_inputs[key] = _OneTimeInput(opener(), name, owned)
    return found


class _OneTimeInput:
    """An input that can be read only once (a pipe), opened several times: the bytes read so
    far are kept (up to :data:`REPLAY_LIMIT`), so that each open starts from the beginning.
    ``owned``: the handle was opened here, and is closed at its end."""

    def __init__(self, raw: IO[bytes], name: str, owned: bool) -> None:
        self.raw = raw
        self.name = name
        self.owned = owned
        self.ended = False
        self.kept = bytearray()
        self.consumed = 0  # bytes read from ``raw``; == len(kept) while keeping

    def open(self) -> IO[bytes]:
        return io.BufferedReader(_Replay(self))

    def read_at(self, pos: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``pos`` (``b""`` at the end)."""
        kept = len(self.kept)
        if pos < kept:
            return bytes(self.kept[pos : pos + size])
        if pos != self.consumed:
            raise InputError(
                f"was already read further than the {REPLAY_LIMIT >> 20} MiB kept to read it "
                "again (e.g. to detect its format): save it to a file, or name the format",
                self.name,
            )
        if self.ended:
            return b""
        read1 = getattr(self.raw, "read1", None)
        data = read1(size) if read1 is not None else self.raw.read(size)
        if not data:
            self.ended = True
            if self.owned:
                self.raw.close()
        self.consumed += len(data)
        if kept == pos and kept + len(data) <= REPLAY_LIMIT:
            self.kept += data
        return bytes(data)


class _Replay(io.RawIOBase):
    """One reading pass over a :class:`_OneTimeInput`, from its first byte."""

    def __init__(self, source: _OneTimeInput) -> None:
        self.source = source
        self.pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.source.read_at(self.pos, len(buffer))
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


# --- JSON ---------------------------------------------------------------------------------------


def read_json_messages(path: str | Path, on_error: ErrorSink | None = None) -> Iterator[Message]:
    """Messages from a JSON input (JSON lines, an array, concatenated documents or kcat -J)."""
    handle = open_input(path)
    with handle:
        yield from iter_json_stream(handle, input_name(path), on_error)


def iter_json_stream(
    handle: IO[bytes], name: str, on_error: ErrorSink | None = None
) -> Iterator[Message]:
    """Messages from a binary stream of JSON (see :func:`read_json_messages`).

    The layout is decided from the stream's head, as the Spark reader decides it: ``[`` first
    is an array; a lone ``{`` first opens pretty-printed documents; otherwise the stream is
    JSON lines when a line in its first 64 KiB is a whole JSON object (the first non-blank line
    may be indented, a later one must start in column 0), else concatenated documents. In JSON
    lines a damaged line is one error, and reading goes on with the next line.
    """
    head: list[bytes] = []
    layout = _json_layout(handle, head)
    lines = itertools.chain(head, handle)
    if layout == "array":
        yield from _json_array(lines, name, on_error)
    elif layout == "lines":
        yield from _json_lines(lines, name, on_error)
    else:
        yield from _json_documents(lines, name, on_error)


def _json_layout(handle: IO[bytes], head: list[bytes]) -> str:
    """``array``, ``lines`` or ``documents``, reading lines into ``head`` until it is known."""
    size = 0
    first = True
    for raw in handle:
        if not head:
            raw = raw.removeprefix(BOM)
        head.append(raw)
        size += len(raw)
        stripped = raw.strip()
        if stripped:
            if first:
                first = False
                if stripped[:1] == b"[":
                    return "array"
                if stripped == b"{":
                    return "documents"
                candidate = True
            else:
                candidate = raw[:1] == b"{"
            ends_at = size - (len(raw) - len(raw.rstrip()))
            if candidate and ends_at <= HEAD_BYTES:
                try:
                    doc = orjson.loads(stripped)
                except orjson.JSONDecodeError:
                    pass
                else:
                    if isinstance(doc, dict):
                        return "lines"
        if size >= HEAD_BYTES:
            break
    return "documents"


def _json_lines(lines: Iterable[bytes], name: str, on_error: ErrorSink | None) -> Iterator[Message]:
    """One document per line; a damaged line is reported and skipped."""
    for lineno, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        try:
            value = loads_document(stripped)
        except orjson.JSONDecodeError as err:
            _report(on_error, _bad_line(stripped, err, f"{name}:{lineno}"))
            continue
        message = _checked(value, f"{name}:{lineno}", on_error)
        if message is not None:
            yield message


def _bad_line(line: bytes, err: orjson.JSONDecodeError, where: str) -> InputError:
    """What is wrong with one line that does not parse: encoding, truncation or syntax."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return InputError("input is not UTF-8 text", where)
    if _is_incomplete(text):
        return InputError("truncated JSON: the line ends inside a document", where)
    try:
        json.loads(text)
    except json.JSONDecodeError as std:
        return InputError(f"malformed JSON: {std.msg} (column {std.colno})", where)
    return InputError(f"malformed JSON: {_json_problem(err)}", where)


def _json_array(lines: Iterable[bytes], name: str, on_error: ErrorSink | None) -> Iterator[Message]:
    data = b"".join(lines)
    try:
        items = orjson.loads(data)
    except orjson.JSONDecodeError:
        yield from _salvage_array(data, name, on_error)
        return
    if not isinstance(items, list):
        _report(on_error, InputError("expected a JSON array", f"{name}:1"))
        return
    for i, item in enumerate(items):
        message = _checked(item, f"{name}[{i}]", on_error)
        if message is not None:
            yield message


def _salvage_array(data: bytes, name: str, on_error: ErrorSink | None) -> Iterator[Message]:
    """The elements of a damaged array up to the damage, then one error where it is."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        _report(
            on_error, InputError("input is not UTF-8 text (the array is skipped)", f"{name}:{line}")
        )
        return
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    i = 0
    while True:
        pos = _skip_space(text, pos)
        if text.startswith("]", pos):
            _after_array(text, pos + 1, name, on_error)
            return
        start = pos
        try:
            item, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            if start >= len(text):
                ended = f"after element {i - 1}" if i else "before its first element"
                what = f"truncated JSON array: it ends {ended}"
                line = text.count("\n") + 1
            elif _is_incomplete(text[start:]):
                what = f"truncated JSON array: element {i} never ends"
                line = text.count("\n", 0, start) + 1
            else:
                what, line = f"malformed JSON array: {err.msg}", err.lineno
            _report(
                on_error,
                InputError(
                    f"{what} (element {i} and the rest of the array are skipped)",
                    f"{name}:{line}",
                ),
            )
            return
        message = _checked(item, f"{name}[{i}]", on_error)
        if message is not None:
            yield message
        i += 1
        pos = _skip_space(text, pos)
        if text.startswith(",", pos):
            pos += 1
        elif text.startswith("]", pos):
            _after_array(text, pos + 1, name, on_error)
            return
        else:
            line = text.count("\n", 0, pos) + 1
            what = "truncated" if pos >= len(text) else "malformed"
            _report(
                on_error,
                InputError(
                    f"{what} JSON array: expected ',' or ']' after element {i - 1} (the rest "
                    "of the array is skipped)",
                    f"{name}:{line}",
                ),
            )
            return


def _after_array(text: str, pos: int, name: str, on_error: ErrorSink | None) -> None:
    """Anything but white space after the array's closing bracket is reported."""
    pos = _skip_space(text, pos)
    if pos < len(text):
        line = text.count("\n", 0, pos) + 1
        _report(
            on_error,
            InputError("malformed JSON: text after the array's closing bracket", f"{name}:{line}"),
        )


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _json_documents(
    lines: Iterable[bytes], name: str, on_error: ErrorSink | None
) -> Iterator[Message]:
    """Concatenated (pretty-printed) documents, and single-line ones between them.

    A damaged document is reported and skipped up to the next line that opens one in column 0.
    A line opening an object in column 0 while a document is still open ends the open one (it
    was truncated), unless the open one is not indented and its last line asks for a value
    (ends in ``[``, ``,`` or ``:``).
    """
    decoder = json.JSONDecoder()
    buffer = ""
    start_line = 0
    indented = False  # whether the open document has an indented line (pretty-printed)
    last = b""  # the open document's last non-blank line
    skipping = False
    for lineno, raw in enumerate(lines, start=1):
        if skipping:
            if raw[:1] not in (b"{", b"["):
                continue
            skipping = False
        if not buffer:
            stripped = raw.strip()
            if not stripped:
                continue
            try:
                value = loads_document(stripped)
            except orjson.JSONDecodeError:
                pass
            else:
                message = _checked(value, f"{name}:{lineno}", on_error)
                if message is not None:
                    yield message
                continue
            start_line, indented = lineno, False
        elif raw[:1] == b"{" and (indented or not last.endswith((b"[", b",", b":"))):
            where = f"{name}:{start_line}"
            what = (
                f"truncated JSON: the document is cut off before line {lineno}, which opens another"
            )
            _report(on_error, InputError(what, where))
            buffer, start_line, indented = "", lineno, False
        elif raw[:1] in (b" ", b"\t"):
            indented = True
        if raw.strip():
            last = raw.rstrip()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            what = "input is not UTF-8 text" + (
                f" (in the document at line {start_line})" if buffer else ""
            )
            _report(on_error, InputError(what, f"{name}:{lineno}"))
            buffer, skipping = "", True
            continue
        buffer += text
        buffer, start_line, damaged = yield from _drain(
            decoder, buffer, name, start_line, lineno, on_error
        )
        if damaged:
            buffer, skipping = "", True
    if buffer.strip():
        _report(
            on_error,
            InputError(
                "truncated JSON: the document that starts here never ends", f"{name}:{start_line}"
            ),
        )


def _drain(
    decoder: json.JSONDecoder,
    buffer: str,
    name: str,
    start_line: int,
    lineno: int,
    on_error: ErrorSink | None,
) -> Generator[Message, None, tuple[str, int, bool]]:
    """Yield every complete document at the start of ``buffer``; return the rest, the line it
    starts on, and whether a damaged document was met (the rest is then dropped)."""
    while True:
        text = buffer.lstrip()
        start_line += buffer[: len(buffer) - len(text)].count("\n")
        if not text:
            return ("", lineno + 1, False)
        if _is_incomplete(text):
            return (text, start_line, False)
        try:
            value, end = decoder.raw_decode(text)
        except json.JSONDecodeError as err:
            where = f"{name}:{start_line + err.lineno - 1}"
            _report(on_error, InputError(f"malformed JSON: {err.msg}", where))
            return ("", lineno + 1, True)
        message = _checked(value, f"{name}:{start_line}", on_error)
        if message is not None:
            yield message
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
                f"kcat {what} is not valid JSON: {_json_problem(err)}", f"{where}: $.{what}"
            ) from None
    return text


def _json_problem(err: orjson.JSONDecodeError) -> str:
    return str(getattr(err, "msg", err)).split(":")[0]


# --- CSV ----------------------------------------------------------------------------------------


def read_csv_rows(path: str | Path, on_error: ErrorSink | None = None) -> Iterator[Message]:
    """CSV rows as messages whose value is the list of cells (``where`` is ``file:line``).

    A line that is not UTF-8 text, or a row the CSV reader refuses, is reported and skipped.
    """
    handle = open_input(path)
    with handle:
        yield from _csv_rows(handle, input_name(path), on_error)


def _csv_rows(handle: IO[bytes], name: str, on_error: ErrorSink | None) -> Iterator[Message]:
    taken: list[int] = []  # the numbers of the lines the CSV reader took since the last row

    def text_lines() -> Iterator[str]:
        for lineno, raw in enumerate(handle, start=1):
            try:
                text = (raw.removeprefix(BOM) if lineno == 1 else raw).decode("utf-8")
            except UnicodeDecodeError:
                _report(on_error, InputError("input is not UTF-8 text", f"{name}:{lineno}"))
                continue
            taken.append(lineno)
            yield text

    reader = csv.reader(text_lines())
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            line = taken[0] if taken else reader.line_num
            taken.clear()
            _report(on_error, InputError(f"malformed CSV: {err}", f"{name}:{line}"))
            continue
        line = taken[0] if taken else reader.line_num
        taken.clear()
        if row and any(cell.strip() for cell in row):
            yield Message(value=row, where=f"{name}:{line}")


# --- raw bytes ----------------------------------------------------------------------------------


def read_bytes_messages(path: str | Path, on_error: ErrorSink | None = None) -> Iterator[Message]:
    """The whole file as one message of raw bytes (for binary formats that frame themselves)."""
    handle = open_input(path)
    with handle:
        data = handle.read()
    yield Message(value=data, where=input_name(path))


def read_messages(
    paths: Iterable[str | Path], kind: str = "json", on_error: ErrorSink | None = None
) -> Iterator[Message]:
    """Messages from every file, in order, read as ``kind`` (json, csv or avro)."""
    reader = {"json": read_json_messages, "csv": read_csv_rows, "avro": read_bytes_messages}.get(
        kind
    )
    if reader is None:
        raise InputError(f"unknown input kind {kind!r}")
    for path in paths:
        yield from reader(path, on_error)


def sniff_kind(path: str | Path) -> str:
    """Guess a file's input kind from its first bytes: avro, json or csv."""
    p = Path(path)
    with open_input(path) as handle:
        head = handle.read(512).removeprefix(BOM)
    if head.startswith(b"Obj\x01") or p.suffix in (".avro", ".bin"):
        return "avro"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"[") or stripped.startswith(b"null"):
        return "json"
    if p.suffix == ".csv" or b"," in head:
        return "csv"
    return "json"
