"""Reading input files into :class:`~contracts.formats.base.Message` values, streaming.

Accepted JSON inputs: JSON lines; a JSON array; concatenated (pretty-printed) JSON documents, as
in vendor docs; kcat ``-J`` records (``{topic, partition, offset, key, payload}`` with key and
payload as strings). CSV rows for ``arcion-s3-csv``. Avro for ``dts-avro``: Avro container files
and files of concatenated Avro-binary messages (read by the format itself from raw bytes).

An input is a file path, or ``-`` for standard input; pipes, FIFOs and ``/dev/stdin`` are read
as they come (what an earlier pass read, e.g. to detect the format, is kept and replayed). A
UTF-8 byte order mark at the start of a file is skipped; gzip and zstd inputs are decompressed
and UTF-16/32 text (with its byte order mark) decoded as they are read (:func:`decoded`).

Every message carries ``where`` (``file:line``). A damaged message (a malformed, truncated or
non-UTF-8 line, a kcat record whose payload is not JSON) is an :class:`InputError` naming the
file and line: given an ``on_error`` callback, the readers hand it the error and carry on with
the next message; without one they raise it. Every JSON document, whatever the layout, is judged
by :func:`contracts.jsondoc.parse_document`. Memory stays bounded: JSON lines and CSV are read
line by line, arrays and concatenated documents in chunks (one document at a time).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import orjson

from contracts.errors import InputError, reason_of
from contracts.formats.base import Message
from contracts.jsondoc import (
    check_depth,
    exact_numbers,
    is_incomplete,
    json_problem,
    parse_document,
    too_deep,
)
from contracts.jsondoc import loads_document as loads_document  # re-exported

_KCAT_KEYS = frozenset({"topic", "partition", "offset"})

#: Called with each damaged message's error; the reader then continues with the next one.
ErrorSink = Callable[[InputError], None]

#: The file name that means standard input, and how messages read from it are located.
STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"

BOM: Final = b"\xef\xbb\xbf"

#: The read buffer of a regular file: lines of a few KB (Debezium messages with schemas) are
#: split 2-3x faster from a 64 KiB buffer than from Python's default 8 KiB.
READ_BUFFER: Final = 1 << 16
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
        replay = _replayable(("-", stdin), lambda: stdin, STDIN_NAME, owned=False).open()
        return decoded(replay, STDIN_NAME)
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
            return decoded(open(name, "rb", buffering=READ_BUFFER), name)
        key = (name, info.st_dev, info.st_ino)
        return decoded(_replayable(key, lambda: open(name, "rb"), name, owned=True).open(), name)
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", name) from None


# --- compressed and UTF-16/32 inputs, read transparently --------------------------------------

GZIP_MAGIC: Final = b"\x1f\x8b"
ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
#: Byte order marks of the encodings decoded to UTF-8 on the fly (the longer ones first).
_UNICODE_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
ZSTD_MISSING: Final = (
    "is zstd-compressed: install the [zstd] extra to read it "
    "(pip install 'cdc-contracts[zstd]'), "
    "or decompress it first (zstd -d)"
)


def decoded(handle: IO[bytes], name: str) -> IO[bytes]:
    """``handle`` read as its plain bytes: a gzip or zstd stream is decompressed, UTF-16 or
    UTF-32 text (with its byte order mark) becomes UTF-8, whatever the file's name.

    zstd needs the optional ``zstandard`` package; without it the input is refused, saying
    so. Damaged compressed data is an :class:`InputError` when reading reaches it."""
    head = _peek(handle, 4)
    if head.startswith(GZIP_MAGIC):
        handle = _buffered(_Guarded(gzip.GzipFile(fileobj=handle, mode="rb"), handle, name, "gzip"))
    elif head.startswith(ZSTD_MAGIC):
        try:
            import zstandard
        except ImportError:
            handle.close()
            raise InputError(ZSTD_MISSING, name) from None
        reader = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)
        handle = _buffered(_Guarded(reader, handle, name, "zstd"))
    head = _peek(handle, 4)
    for bom, encoding in _UNICODE_BOMS:
        if head.startswith(bom):
            return _buffered(_Guarded(_Transcoded(handle, encoding), handle, name, encoding))
    return handle


def _peek(handle: IO[bytes], size: int) -> bytes:
    peek = getattr(handle, "peek", None)
    return bytes(peek(size)[:size]) if peek is not None else b""


def _buffered(raw: io.RawIOBase) -> IO[bytes]:
    return io.BufferedReader(raw, buffer_size=CHUNK_BYTES)


class _Transcoded:
    """UTF-16 or UTF-32 text (byte order mark first) as UTF-8 bytes, decoded as it is read."""

    def __init__(self, handle: IO[bytes], encoding: str) -> None:
        self._handle = handle
        self._decoder = codecs.getincrementaldecoder(encoding)("strict")
        self._ended = False

    def read(self, size: int) -> bytes:
        out = b""
        while not out and not self._ended:
            data = self._handle.read(size)
            self._ended = not data
            out = self._decoder.decode(data, final=self._ended).encode("utf-8", "surrogatepass")
        return out

    def close(self) -> None:
        self._handle.close()


class _Guarded(io.RawIOBase):
    """A decoding reader whose failures (damaged or cut-short data) are one
    :class:`InputError` naming the input, not a library's exception."""

    def __init__(self, inner: Any, handle: IO[bytes], name: str, what: str) -> None:
        self._inner = inner
        self._handle = handle
        self._name = name
        self._what = what
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._pending:
            try:
                self._pending = bytes(self._inner.read(len(buffer)))
            except InputError:
                raise
            except Exception as err:  # the decoder's own error family (zlib, zstandard, codecs)
                raise InputError(_damage(self._what, err), self._name) from None
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
            self._handle.close()
        super().close()


def _damage(what: str, err: BaseException) -> str:
    if isinstance(err, UnicodeDecodeError):
        return f"is not {what.upper()} text at decoded byte {err.start}: {err.reason}"
    if isinstance(err, EOFError):
        return f"the {what} data is cut short (the file ends inside it)"
    return f"the {what} data is damaged: {reason_of(err)}"


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
    may be indented, a later one must start in column 0), else concatenated documents. Lines
    starting with ``%`` (kcat's status lines, when its standard error was captured too) are
    not messages and are skipped. Arrays and documents are read in chunks, so memory stays
    bounded by the largest document, not the file. Every document is judged by
    :func:`contracts.jsondoc.parse_document`; a damaged one is one error, and reading goes on.
    """
    head: list[bytes] = []
    layout = _json_layout(handle, head)
    data = b"".join(head)
    if layout == "lines":
        yield from _json_lines(_lines_of(data, handle), name, on_error)
    else:
        text = _Text(data, handle)
        if layout == "array":
            yield from _json_array(text, name, on_error)
        else:
            yield from _json_documents(text, name, on_error)


def _is_status_line(line: bytes) -> bool:
    """kcat's ``% Reached end of topic ...`` lines (no JSON document starts with ``%``)."""
    return line[:1] == b"%"


def _json_layout(handle: IO[bytes], head: list[bytes]) -> str:
    """``array``, ``lines`` or ``documents``, from the stream's first bytes (put in ``head``)."""
    data = handle.read(HEAD_BYTES + 1)
    data = data.removeprefix(BOM)
    head.append(data)
    ended = len(data) <= HEAD_BYTES
    lines = data.split(b"\n")
    if not ended:
        lines.pop()  # the last line may go on beyond the head
    first = True
    offset = 0
    for raw in lines:
        line_end = offset + len(raw.rstrip())
        offset += len(raw) + 1
        stripped = raw.strip()
        if not stripped or _is_status_line(stripped):
            continue
        if first:
            first = False
            if stripped[:1] == b"[":
                return "array"
            if stripped == b"{":
                return "documents"
            candidate = True
        else:
            candidate = raw[:1] == b"{"
        if candidate and line_end <= HEAD_BYTES and _is_object(stripped):
            return "lines"
    return "documents"


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


def _lines_of(head: bytes, handle: IO[bytes]) -> Iterator[bytes]:
    """The lines of ``head`` and then of ``handle`` (split at ``\n`` only, as files are)."""
    pieces = head.split(b"\n")
    last = pieces.pop()
    for piece in pieces:
        yield piece + b"\n"
    if last:
        rest = handle.readline()
        yield last + rest
    yield from handle


def _json_lines(lines: Iterable[bytes], name: str, on_error: ErrorSink | None) -> Iterator[Message]:
    """One document per line; a damaged line is reported and skipped."""
    for lineno, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped or _is_status_line(stripped):
            continue
        where = f"{name}:{lineno}"
        try:
            value = parse_document(stripped, where)
        except InputError as err:
            _report(on_error, err)
            continue
        message = _checked(value, where, on_error)
        if message is not None:
            yield message


#: How many bytes arrays and concatenated documents are read at a time.
CHUNK_BYTES: Final = 1 << 20

_SPACE: Final = re.compile(r"[ \t\r\n]*")
_TOKENS: Final = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[\[\]{}]')
_OPENER_LINE: Final = re.compile(r"\n[{\[]")


class _Text:
    """The text of a binary stream, read in chunks: a window ``buf`` that starts at line
    ``base_line``. Bytes that are not UTF-8 are kept as surrogate escapes, so that the
    document holding them is refused as such (by the judge) and the rest is read."""

    def __init__(self, head: bytes, handle: IO[bytes]) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._handle = handle
        self.buf = self._decoder.decode(head)
        self.ended = False
        self.base_line = 1

    def more(self) -> bool:
        """Read the next chunk (at least as much as is held, so that re-scanning a growing
        document stays linear); False at the end of the stream."""
        if self.ended:
            return False
        data = self._handle.read(max(CHUNK_BYTES, len(self.buf)))
        if not data:
            self.ended = True
            self.buf += self._decoder.decode(b"", final=True)
            return False
        self.buf += self._decoder.decode(data)
        return True

    def drop(self, upto: int) -> None:
        """Forget the text before ``upto`` (positions shift down by it)."""
        self.base_line += self.buf.count("\n", 0, upto)
        self.buf = self.buf[upto:]

    def line_at(self, pos: int) -> int:
        return self.base_line + self.buf.count("\n", 0, pos)

    def skip_space(self, pos: int) -> int:
        """The first position at or after ``pos`` that is not white space (reading more as
        needed); ``len(buf)`` at the end of the stream."""
        while True:
            match = _SPACE.match(self.buf, pos)
            end = match.end() if match else pos
            if end < len(self.buf) or not self.more():
                return end

    def decode_at(self, decoder: json.JSONDecoder, pos: int) -> int | json.JSONDecodeError:
        """Where the JSON value starting at ``pos`` ends, or the error that stops it once enough
        text is held to know it is damaged."""
        while True:
            try:
                return decoder.raw_decode(self.buf, pos)[1]
            except json.JSONDecodeError as err:
                if not self._cut_short(err, pos) or not self.more():
                    return err
            except RecursionError:
                end = self.bracket_end(pos)
                if end is not None:
                    return json.JSONDecodeError("nested too deeply", self.buf, pos)
                if not self.more():
                    return json.JSONDecodeError("nested too deeply", self.buf, pos)

    def _cut_short(self, err: json.JSONDecodeError, pos: int) -> bool:
        """Whether the error may only mean that the held text ends inside the value."""
        if self.ended:
            return False
        if err.pos >= len(self.buf) - 1:
            return True
        if err.msg.startswith("Unterminated string") and "\n" not in self.buf[err.pos :]:
            return True
        return self.bracket_end(pos) is None and _OPENER_LINE.search(self.buf, err.pos) is None

    def bracket_end(self, pos: int) -> int | None:
        """The end of the bracketed value at ``pos`` by counting brackets outside strings
        (None: it does not close within the held text)."""
        depth = 0
        for match in _TOKENS.finditer(self.buf, pos):
            token = match.group()
            if token in "[{":
                depth += 1
            elif token in "]}":
                depth -= 1
                if depth <= 0:
                    return match.end()
        return None

    def opener_after(self, pos: int) -> int | None:
        """The start of the first line after ``pos`` that opens an object or array in column 0."""
        found = _OPENER_LINE.search(self.buf, pos)
        return found.start() + 1 if found else None


def _judged(
    text: _Text, start: int, end: int, where: str, on_error: ErrorSink | None
) -> Message | None:
    try:
        value = parse_document(text.buf[start:end], where)
    except InputError as err:
        _report(on_error, err)
        return None
    return _checked(value, where, on_error)


def _json_documents(text: _Text, name: str, on_error: ErrorSink | None) -> Iterator[Message]:
    """Concatenated (pretty-printed) documents, and single-line ones between them.

    A damaged document is one error: it is skipped to its closing bracket when its brackets
    balance, else to the next line that opens a document in column 0 (a document cut short
    by the start of the next one is reported as truncated there).
    """
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        if pos > CHUNK_BYTES:
            text.drop(pos)
            pos = 0
        start = text.skip_space(pos)
        if start >= len(text.buf):
            return
        if text.buf.startswith("%", start):  # a kcat status line (see _is_status_line)
            pos = _line_end(text, start)
            continue
        start_line = text.line_at(start)
        found = text.decode_at(decoder, start)
        if isinstance(found, int):
            message = _judged(text, start, found, f"{name}:{start_line}", on_error)
            if message is not None:
                yield message
            pos = found
            continue
        err, pos = _damaged_document(text, start, found, name)
        _report(on_error, err)


def _line_end(text: _Text, pos: int) -> int:
    while True:
        cut = text.buf.find("\n", pos)
        if cut >= 0:
            return cut + 1
        if not text.more():
            return len(text.buf)


def _damaged_document(
    text: _Text, start: int, err: json.JSONDecodeError, name: str
) -> tuple[InputError, int]:
    """The error for a document that does not parse, and where reading resumes."""
    start_line = text.line_at(start)
    after_junk = _past_undecodable(text.buf, start)
    if after_junk > start and text.buf.startswith(("{", "["), after_junk):
        # bytes that are not UTF-8 before a document: one error, and the document is skipped
        end = text.bracket_end(after_junk)
        resume = end if end is not None else (text.opener_after(start) or len(text.buf))
        return InputError("input is not UTF-8 text", f"{name}:{start_line}"), resume
    if err.msg == "nested too deeply":
        end = text.bracket_end(start)
        return too_deep(f"{name}:{start_line}"), end if end is not None else len(text.buf)
    end = text.bracket_end(start) if text.buf[start] in "[{" else None
    if end is not None:
        return InputError(f"malformed JSON: {err.msg}", f"{name}:{text.line_at(err.pos)}"), end
    opener = text.opener_after(start)
    if opener is not None and opener <= _line_end(text, err.pos):
        what = (
            "truncated JSON: the document is cut off before line "
            f"{text.line_at(opener)}, which opens another"
        )
        return InputError(what, f"{name}:{start_line}"), opener
    resume = opener if opener is not None else len(text.buf)
    if text.ended and opener is None and is_incomplete(text.buf[start:]):
        what = "truncated JSON: the document that starts here never ends"
        return InputError(what, f"{name}:{start_line}"), resume
    if text.buf[start] not in "[{":
        resume = _line_end(text, start)
    return InputError(f"malformed JSON: {err.msg}", f"{name}:{text.line_at(err.pos)}"), resume


def _past_undecodable(buf: str, pos: int) -> int:
    """The first position at or after ``pos`` that is not an undecodable byte (the
    surrogate escapes ``\udc80``-``\udcff`` the reader keeps them as)."""
    while pos < len(buf) and "\udc80" <= buf[pos] <= "\udcff":
        pos += 1
    return pos


def _json_array(text: _Text, name: str, on_error: ErrorSink | None) -> Iterator[Message]:
    """The elements of a top-level array, each judged on its own; a damaged element whose
    brackets balance is one error and the next is read, else the rest is skipped."""
    decoder = json.JSONDecoder()
    pos = text.skip_space(0) + 1  # past "["
    i = 0
    while True:
        if pos > CHUNK_BYTES:
            text.drop(pos)
            pos = 0
        pos = text.skip_space(pos)
        if text.buf.startswith("]", pos) and i == 0:
            _after_array(text, pos + 1, name, on_error)
            return
        if pos >= len(text.buf):
            ended = f"after element {i - 1}" if i else "before its first element"
            _report(
                on_error,
                InputError(f"truncated JSON array: it ends {ended}", f"{name}:{text.line_at(pos)}"),
            )
            return
        found = text.decode_at(decoder, pos)
        if isinstance(found, int):
            message = _judged(text, pos, found, f"{name}[{i}]", on_error)
            if message is not None:
                yield message
            pos = found
        else:
            end = text.bracket_end(pos) if text.buf[pos] in "[{" else None
            if end is None:
                _report(on_error, _broken_element(text, pos, found, i, name))
                return
            what = (
                too_deep(f"{name}[{i}]").what
                if found.msg == "nested too deeply"
                else f"malformed JSON: {found.msg}"
            )
            _report(on_error, InputError(what, f"{name}:{text.line_at(found.pos)} [{i}]"))
            pos = end
        i += 1
        pos = text.skip_space(pos)
        if text.buf.startswith(",", pos):
            pos += 1
        elif text.buf.startswith("]", pos):
            _after_array(text, pos + 1, name, on_error)
            return
        else:
            cut = "truncated" if pos >= len(text.buf) else "malformed"
            _report(
                on_error,
                InputError(
                    f"{cut} JSON array: expected ',' or ']' after element {i - 1} (the rest "
                    "of the array is skipped)",
                    f"{name}:{text.line_at(pos)}",
                ),
            )
            return


def _broken_element(
    text: _Text, pos: int, err: json.JSONDecodeError, i: int, name: str
) -> InputError:
    if text.ended and is_incomplete(text.buf[pos:]):
        what, line = f"truncated JSON array: element {i} never ends", text.line_at(pos)
    else:
        what, line = f"malformed JSON array: {err.msg}", text.line_at(err.pos)
    return InputError(
        f"{what} (element {i} and the rest of the array are skipped)", f"{name}:{line}"
    )


def _after_array(text: _Text, pos: int, name: str, on_error: ErrorSink | None) -> None:
    """Anything but white space after the array's closing bracket is reported."""
    pos = text.skip_space(pos)
    if pos < len(text.buf):
        _report(
            on_error,
            InputError(
                "malformed JSON: text after the array's closing bracket",
                f"{name}:{text.line_at(pos)}",
            ),
        )


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
        located = f"{where}: $.{what}"
        raw = stripped.encode("utf-8", "surrogatepass")
        check_depth(raw, located)
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as err:
            raise InputError(
                f"kcat {what} is not valid JSON: {json_problem(err)}", located
            ) from None
        return exact_numbers(raw, value, located)
    return text


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


#: Where SQL DDL is refused: a file in it is a table definition, not messages.
SQL_DDL_HINT: Final = (
    "this looks like SQL DDL; derive a contract with `cdc-contracts derive --from-ddl FILE`"
)
_SQL_HEAD: Final = re.compile(
    rb"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*"
    rb"(?:(?:CREATE|ALTER|DROP|COMMENT\s+ON)\s+\w|(?:SET|USE)\s+[^,\n]*;)",
    re.IGNORECASE | re.DOTALL,
)
#: How much of an input sniffing looks at.
SNIFF_BYTES: Final = 4096


def sniff_kind(path: str | Path) -> str:
    """Guess an input's kind from its first bytes (decompressed and decoded, see
    :func:`decoded`): avro, json or csv. kcat's ``%`` status lines are passed over; SQL DDL
    (or a ``.sql``/``.ddl`` file that is not JSON) is refused, naming the command that reads it."""
    p = Path(path)
    with open_input(path) as handle:
        head = handle.read(SNIFF_BYTES).removeprefix(BOM)
    if head.startswith(b"Obj\x01") or p.suffix in (".avro", ".bin"):
        return "avro"
    stripped = _past_status_lines(head)
    if not stripped and head.strip():  # status lines only: a kcat capture with no messages
        return "json"
    if stripped[:1] in (b"{", b"[") or stripped.startswith(b"null"):
        return "json"
    if _SQL_HEAD.match(head) or p.suffix.lower() in (".sql", ".ddl"):
        raise InputError(SQL_DDL_HINT, input_name(path))
    if p.suffix == ".csv" or b"," in head:
        return "csv"
    return "json"


def _past_status_lines(head: bytes) -> bytes:
    """``head`` from its first line that is neither blank nor a kcat ``%`` status line."""
    pos = 0
    while True:
        rest = head[pos:].lstrip()
        if not _is_status_line(rest):
            return rest
        cut = rest.find(b"\n")
        if cut < 0:
            return b""
        pos = len(head) - len(rest) + cut + 1
