"""The streaming glue the CLI and the API share: read inputs, assemble, detect, then infer,
validate or normalize.

Everything streams: messages are read lazily file by file, so memory stays bounded whatever the
number of messages (inference keeps only per-column aggregates). ``validate`` and ``normalize``
keep going past bad messages and record them in a :class:`Report` (``max_errors`` stops early);
a file that cannot be read at all is recorded as unusable input and the next file is read.

Typical use::

    stream = open_stream(paths, format_name=None)        # auto-detects the format
    inference = stream.format.infer(stream.messages(), InferOptions())

    report = Report()
    for event in normalize_stream(stream, contract=None, report=report):
        ...
    sys.exit(report.exit_code)
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from contracts.contract import Contract
from contracts.errors import ContractsError, InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats import detect_format, get_format
from contracts.formats.base import Format, Message, Violation
from contracts.io import read_messages, sniff_kind

MessageWrapper = Callable[[Iterator[Message]], Iterator[Message]]


@dataclass
class Report:
    """What a validate or normalize run saw: counts, bad messages and unusable inputs."""

    messages: int = 0
    events: int = 0
    controls: Counter[str] = field(default_factory=Counter)
    problems: list[Violation] = field(default_factory=list)
    bad_messages: int = 0
    unusable: list[ContractsError] = field(default_factory=list)
    stopped_early: bool = False

    @property
    def exit_code(self) -> int:
        """2 when some input was unusable, 1 when some message was bad, else 0."""
        if self.unusable:
            return 2
        return 1 if self.bad_messages else 0

    def to_json(self) -> dict[str, object]:
        return {
            "messages": self.messages,
            "events": self.events,
            "controls": dict(sorted(self.controls.items())),
            "bad_messages": self.bad_messages,
            "problems": [p.to_json() for p in self.problems],
            "unusable_input": [e.one_line() for e in self.unusable],
            "stopped_early": self.stopped_early,
        }


@dataclass
class Stream:
    """Input messages bound to a format: raw sources that are assembled lazily.

    ``sources`` holds one iterable of raw messages per input (a file, or an in-memory batch);
    :meth:`messages` assembles them with the format. With a ``report``, an input that fails
    to read is recorded there and the next one is read; without, the error propagates.
    """

    format: Format
    sources: list[Callable[[], Iterable[Message]]]
    wrap: MessageWrapper | None = None

    def messages(self, report: Report | None = None) -> Iterator[Message]:
        stream = self._assembled(report)
        return self.wrap(stream) if self.wrap is not None else stream

    def _assembled(self, report: Report | None) -> Iterator[Message]:
        for source in self.sources:
            try:
                yield from self.format.assemble(source())
            except InputError as err:
                if report is None:
                    raise
                report.unusable.append(err)

    @classmethod
    def from_messages(cls, fmt: Format, raw: Iterable[Message]) -> Stream:
        """A stream over raw messages already in memory (e.g. an API request body)."""
        return cls(fmt, [lambda: raw])


# --- opening inputs ---------------------------------------------------------------------------


def input_kind(paths: Sequence[str | Path]) -> str:
    """The one input kind (json, csv, avro) of all ``paths``; mixed kinds are an error."""
    kinds = {str(p): sniff_kind(p) for p in paths}
    distinct = sorted(set(kinds.values()))
    if len(distinct) > 1:
        listed = ", ".join(f"{p} ({k})" for p, k in kinds.items())
        raise InputError(f"inputs mix kinds {', '.join(distinct)}: {listed}; pass --format")
    if not distinct:
        raise InputError("no input files")
    return distinct[0]


def open_stream(
    paths: Sequence[str | Path],
    format_name: str | None = None,
    *,
    wrap: MessageWrapper | None = None,
) -> Stream:
    """A stream over input files; ``format_name`` None or ``auto`` detects the format."""
    if not paths:
        raise InputError("no input files")
    if format_name and format_name != "auto":
        fmt = get_format(format_name)
    else:
        kind = input_kind(paths)
        fmt = detect_format(read_messages([paths[0]], kind), kind, where=str(paths[0]))
    sources: list[Callable[[], Iterable[Message]]] = [
        _file_source(p, fmt.input_kind) for p in paths
    ]
    return Stream(fmt, sources, wrap)


def _file_source(path: str | Path, kind: str) -> Callable[[], Iterable[Message]]:
    return lambda: read_messages([path], kind)


# --- validate and normalize -------------------------------------------------------------------


def validate_stream(
    stream: Stream, contract: Contract, *, report: Report, max_errors: int | None = None
) -> Iterator[Violation]:
    """Every violation of ``contract`` in the stream, in order (bad messages included)."""
    fmt = stream.format
    for message in stream.messages(report):
        report.messages += 1
        try:
            found = fmt.validate(message, contract)
        except ContractsError as err:
            found = [_violation_of(err, message)]
        if found:
            report.bad_messages += 1
            for violation in found:
                report.problems.append(violation)
                yield violation
            if max_errors is not None and len(report.problems) >= max_errors:
                report.stopped_early = True
                return


def normalize_stream(
    stream: Stream,
    contract: Contract | None = None,
    *,
    report: Report,
    max_errors: int | None = None,
) -> Iterator[ChangeEvent]:
    """Canonical change events; control records are counted, bad messages recorded and skipped."""
    fmt = stream.format
    for message in stream.messages(report):
        report.messages += 1
        try:
            normalized = fmt.normalize(message, contract)
        except ContractsError as err:
            report.bad_messages += 1
            report.problems.append(_violation_of(err, message))
            if max_errors is not None and report.bad_messages >= max_errors:
                report.stopped_early = True
                return
            continue
        for item in normalized:
            if isinstance(item, ControlRecord):
                report.controls[item.kind] += 1
            else:
                report.events += 1
                yield item


def _violation_of(err: ContractsError, message: Message) -> Violation:
    """A raised error as a violation: ``where`` is the message, ``path`` the JSON path."""
    where = err.where or ""
    if where.startswith(message.where):
        where = where[len(message.where) :].strip()
    path = where if where.startswith("$") else "$"
    return Violation(message.where, path, "undecodable", err.what)


# --- writing events ---------------------------------------------------------------------------

_LINE_OPTIONS: Final = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
)


def _iso_microseconds(value: dt.datetime | dt.time) -> str:
    # isoformat() writes microseconds whenever they are not zero (and is cheaper to call).
    return value.isoformat() if value.microsecond else value.isoformat(timespec="microseconds")


def _base64_text(value: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


#: orjson's fallback by exact type (the decoders produce exactly these types).
_JSON_CONVERTERS: Final[Mapping[type, Callable[[Any], Any]]] = {
    decimal.Decimal: lambda value: format(value, "f"),
    dt.datetime: _iso_microseconds,
    dt.date: dt.date.isoformat,
    dt.time: _iso_microseconds,
    bytes: _base64_text,
}


def _jsonable(value: Any) -> Any:
    """orjson's fallback for typed values, matching :func:`contracts.values.to_jsonable`."""
    convert = _JSON_CONVERTERS.get(type(value))
    if convert is not None:
        return convert(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return _iso_microseconds(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return _iso_microseconds(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return _base64_text(value)
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    return str(value)


def event_line(event: ChangeEvent) -> bytes:
    """``ChangeEvent.to_json()`` as one JSON line, serialized in one orjson pass.

    Byte-identical to ``orjson.dumps(event.to_json()) + b"\\n"``, but typed values
    (decimals, timestamps, bytes) are converted by orjson's fallback instead of a Python walk
    over every value.
    """
    return orjson.dumps(
        {
            "op": event.op,
            "table": event.table.to_json(),
            "key": event.key,
            "before": event.before,
            "after": event.after,
            "ts_ms": event.ts_ms,
            "source_ts_ms": event.source_ts_ms,
            "position": event.position,
        },
        default=_jsonable,
        option=_LINE_OPTIONS,
    )
