"""The streaming glue the CLI and the API share: read inputs, assemble, detect, then infer,
validate or normalize.

Everything streams: messages are read lazily file by file, so memory stays bounded whatever the
number of messages (inference keeps only per-column aggregates). ``validate`` and ``normalize``
keep going past bad messages and record them in a :class:`Report` (``max_errors`` stops early);
a damaged message (a malformed, truncated or non-UTF-8 line) is recorded as unusable input and
the next message is read; so is a file that cannot be read at all, and the next file is read.

Typical use::

    stream = open_stream(paths, format_name=None)        # auto-detects the format
    inference = stream.format.infer(stream.messages(), InferOptions())

    report = Report()
    for event in normalize_stream(stream, contract=None, report=report):
        ...
    sys.exit(report.exit_code)

One judgement: :func:`judge` decides whether a message is usable (the format normalizes it and
its events serialize), and ``normalize``, ``validate`` and ``infer`` all ask it, so they accept
and refuse the same messages (``validate`` adds the contract's own checks). An input with no
messages at all is unusable (``no messages in FILE``) unless the run allows empty inputs.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import queue
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson

from contracts.contract import Contract
from contracts.errors import ContractsError, DetectionError, InputError, reason_of
from contracts.events import ChangeEvent, ControlRecord, Normalized, TableId
from contracts.formats import detect_format, formats_reading, get_format
from contracts.formats.base import Format, Inference, InferOptions, Message, Violation
from contracts.io import STDIN, ErrorSink, input_name, is_stdin, read_messages, sniff_kind
from contracts.jsonnumbers import JsonNumber
from contracts.routing import NO_TABLE, Decision, Routing, table_key

MessageWrapper = Callable[[Iterator[Message]], Iterator[Message]]


class ErrorLimitReached(Exception):
    """Raised into a run when ``max_errors`` problems have been recorded (not an error)."""


@dataclass
class Report:
    """What a validate or normalize run saw: counts, bad messages and unusable inputs.

    ``problems`` are violations (a message that does not follow the contract, or cannot be
    normalized); ``unusable`` are inputs that could not be read: a missing file, or a damaged
    message in a file (a malformed, truncated or non-UTF-8 line), the rest of which is read.
    ``on_unusable`` is told of each unusable input as it is found (e.g. to print it at once).
    """

    messages: int = 0
    events: int = 0
    controls: Counter[str] = field(default_factory=Counter)
    problems: list[Violation] = field(default_factory=list)
    bad_messages: int = 0
    unusable: list[ContractsError] = field(default_factory=list)
    stopped_early: bool = False
    max_errors: int | None = None
    #: messages left out on purpose (a table filter, ``--unmatched skip``): counted, not errors
    skipped: int = 0
    #: per-table counts, kept when the run filters or routes by table
    tables: dict[str, TableTally] = field(default_factory=dict)
    on_unusable: Callable[[ContractsError], None] | None = field(
        default=None, repr=False, compare=False
    )
    on_problem: Callable[[Violation], None] | None = field(default=None, repr=False, compare=False)

    @property
    def exit_code(self) -> int:
        """2 when some input was unusable, 1 when some message was bad, else 0."""
        if self.unusable:
            return 2
        return 1 if self.bad_messages else 0

    @property
    def errors(self) -> int:
        """Problems and unusable inputs: what ``max_errors`` counts."""
        return len(self.problems) + len(self.unusable)

    def tally(self, key: str) -> TableTally:
        """The counts of one table (created at its first message)."""
        found = self.tables.get(key)
        if found is None:
            found = self.tables[key] = TableTally()
        return found

    def tables_json(self) -> dict[str, dict[str, int]]:
        return {key: self.tables[key].to_json() for key in sorted(self.tables)}

    def add_unusable(self, err: ContractsError) -> None:
        """Record an input that could not be read; raises :class:`ErrorLimitReached` once
        ``max_errors`` problems are recorded."""
        self.unusable.append(err)
        if self.on_unusable is not None:
            self.on_unusable(err)
        self._check_limit()

    def add_problem(self, violation: Violation) -> None:
        """Record a violation; raises :class:`ErrorLimitReached` at ``max_errors``."""
        self.problems.append(violation)
        if self.on_problem is not None:
            self.on_problem(violation)
        self._check_limit()

    def _check_limit(self) -> None:
        if self.max_errors is not None and self.errors >= self.max_errors:
            self.stopped_early = True
            raise ErrorLimitReached

    def to_json(self) -> dict[str, object]:
        return {
            "messages": self.messages,
            "events": self.events,
            "controls": dict(sorted(self.controls.items())),
            "bad_messages": self.bad_messages,
            "problems": [p.to_json() for p in self.problems],
            "unusable_input": [error_json(e) for e in self.unusable],
            "stopped_early": self.stopped_early,
            **self.routing_json(),
        }

    def routing_json(self) -> dict[str, object]:
        """``skipped`` and the per-table counts, when the run filtered or routed by table."""
        if not self.tables:
            return {}
        return {"skipped": self.skipped, "tables": self.tables_json()}


@dataclass
class TableTally:
    """What a run saw of one table: ``messages`` = conforming + ``bad_messages`` + ``skipped``."""

    messages: int = 0
    events: int = 0
    bad_messages: int = 0
    skipped: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "messages": self.messages,
            "events": self.events,
            "bad_messages": self.bad_messages,
            "skipped": self.skipped,
        }


def split_location(where: str | None) -> tuple[str, str | None]:
    """An error's ``where`` as (location, JSON path): ``f.jsonl:3: $.payload`` and
    ``f.jsonl:3 $.payload`` are both ``("f.jsonl:3", "$.payload")``."""
    if not where:
        return "", None
    if where.startswith("$"):
        return "", where
    for separator in (": $", " $"):
        cut = where.find(separator)
        if cut >= 0:
            return where[:cut], where[cut + len(separator) - 1 :]
    return where, None


def error_text(err: ContractsError) -> str:
    """An error as one line, located the one way every command writes locations:
    ``file:line: $.path: what``."""
    location, path = split_location(err.where)
    what = " ".join(err.what.split())
    return ": ".join(part for part in (location, path, what) if part)


def error_json(err: ContractsError) -> dict[str, str | None]:
    """An unusable input as JSON: ``{where, path, message}`` (as a problem's fields)."""
    location, path = split_location(err.where)
    return {"where": location, "path": path, "message": " ".join(err.what.split())}


Source = Callable[[ErrorSink | None], Iterable[Message]]


@dataclass
class Stream:
    """Input messages bound to a format: raw sources that are assembled lazily.

    ``sources`` holds one function per input (a file, or an in-memory batch) giving its raw
    messages; :meth:`messages` assembles them with the format. With a ``report``, an input that
    fails to read, or a damaged message in it, is recorded there and reading goes on (with the
    next message, or the next input); without, the error propagates.
    """

    format: Format
    sources: list[Source]
    wrap: MessageWrapper | None = None
    #: the name of each source (a file), for ``no messages in FILE``; empty: not checked
    names: list[str] = field(default_factory=list)
    #: the hint appended to ``no messages in FILE`` (None: an empty input is accepted)
    empty_hint: str | None = ""

    def messages(self, report: Report | None = None) -> Iterator[Message]:
        stream = self._assembled(report)
        return self.wrap(stream) if self.wrap is not None else stream

    def _assembled(self, report: Report | None) -> Iterator[Message]:
        for i, source in enumerate(self.sources):
            seen = 0

            def on_error(err: InputError) -> None:
                nonlocal seen
                seen += 1
                if report is None:
                    raise err
                report.add_unusable(err)

            try:
                for message in self.format.assemble(source(on_error), on_error):
                    seen += 1
                    yield message
            except InputError as err:
                seen += 1
                if report is None:
                    raise
                report.add_unusable(err)
            if not seen and i < len(self.names) and self.empty_hint is not None:
                empty = InputError(f"no messages in {self.names[i]}{self.empty_hint}")
                if report is None:
                    raise empty
                report.add_unusable(empty)

    @classmethod
    def from_messages(cls, fmt: Format, raw: Iterable[Message]) -> Stream:
        """A stream over raw messages already in memory (e.g. an API request body)."""

        def source(on_error: ErrorSink | None) -> Iterable[Message]:
            return raw

        return cls(fmt, [source])


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


#: Appended to ``no messages in FILE`` by the commands that have ``--allow-empty``.
ALLOW_EMPTY_HINT: Final = " (pass --allow-empty to accept an empty input)"


def open_stream(
    paths: Sequence[str | Path],
    format_name: str | None = None,
    *,
    wrap: MessageWrapper | None = None,
    empty_hint: str | None = "",
) -> Stream:
    """A stream over input files (``-`` is standard input); ``format_name`` None or ``auto``
    detects the format from the first file's leading messages.

    A file with no messages (nor damaged ones) is unusable input, ``no messages in FILE``
    followed by ``empty_hint``; ``empty_hint`` None accepts empty files."""
    if not paths:
        raise InputError("no input files")
    if sum(1 for p in paths if is_stdin(p)) > 1:
        raise InputError("is given more than once: standard input can be read once", STDIN)
    if format_name and format_name != "auto":
        fmt = get_format(format_name)
    else:
        fmt = _detect(paths, input_kind(paths), empty_hint)
    sources: list[Source] = [_file_source(p, fmt.input_kind) for p in paths]
    return Stream(fmt, sources, wrap, [input_name(p) for p in paths], empty_hint)


def _detect(paths: Sequence[str | Path], kind: str, empty_hint: str | None) -> Format:
    """The format of the first file with messages, from its leading ones; damaged ones are
    left out (they are reported when the stream is read), unless nothing else is there to
    look at. Empty files are skipped when empty inputs are accepted (and when all are, any
    format of their kind reads them)."""
    for path in paths:
        damaged: list[InputError] = []
        try:
            return detect_format(
                read_messages([path], kind, damaged.append), kind, where=input_name(path)
            )
        except DetectionError as err:
            if damaged:
                raise damaged[0] from None
            if err.what != NO_MESSAGES:
                raise
            if empty_hint is not None:
                raise InputError(f"no messages in {input_name(path)}{empty_hint}") from None
    return formats_reading(kind)[0]


def looks_like(paths: Sequence[str | Path]) -> str | None:
    """What detection makes of the first input: a format name, ``SQL DDL``, or None when it
    finds nothing sure (an error message's hint, never a decision)."""
    from contracts.io import SQL_DDL_HINT

    try:
        return _detect(paths[:1], input_kind(paths[:1]), None).name
    except ContractsError as err:
        return "SQL DDL" if err.what == SQL_DDL_HINT else None


#: What :func:`contracts.formats.detect_format` says of an input without messages.
NO_MESSAGES: Final = "no messages to detect a format from"


def _file_source(path: str | Path, kind: str) -> Source:
    return lambda on_error: read_messages([path], kind, on_error)


# --- the judgement of one message, shared by normalize, validate and infer ---------------------


class Judgement(NamedTuple):
    """What one message makes: its events and control records and the events as JSON lines,
    or the violation that refuses it (a named tuple: built for every message)."""

    items: list[Normalized]
    lines: list[bytes]
    refused: Violation | None = None


def judge(fmt: Format, message: Message, contract: Contract | None = None) -> Judgement:
    """Whether ``message`` is usable, and what it makes: the format normalizes it (typed by
    ``contract`` when given) and every event serializes as a JSON line.

    A message that fails is refused with a violation. An unexpected exception (a bug) refuses
    the message too, saying so, and the run goes on with the next one.
    """
    try:
        items = fmt.normalize(message, contract)
        lines = [event_line(item) for item in items if type(item) is ChangeEvent]
    except ContractsError as err:
        return Judgement([], [], _violation_of(err, message))
    except Exception as err:
        return Judgement([], [], _bug(err, message))
    return Judgement(items, lines)


def _bug(err: Exception, message: Message) -> Violation:
    return Violation(
        message.where,
        "$",
        "undecodable",
        f"cannot be read: an internal error ({reason_of(err)}); this is a bug in "
        "cdc-contracts, please report it",
    )


def _judged(
    stream: Stream,
    contract: Contract | None,
    report: Report,
    max_errors: int | None,
    routing: Routing | None = None,
) -> Iterator[Judgement]:
    """Every message's judgement, counted in ``report`` (refused ones recorded there).

    With an active ``routing``, each message is first routed by its table: skipped (counted),
    refused (an unmatched table), or judged with its table's contract."""
    fmt = stream.format
    report.max_errors = max_errors
    routed = routing is not None and routing.active
    try:
        for message in stream.messages(report):
            report.messages += 1
            if not routed:
                verdict = judge(fmt, message, contract)
                tally = None
            else:
                assert routing is not None
                route = _route(fmt, message, routing, contract)
                tally = report.tally(route.key)
                tally.messages += 1
                if route.skip:
                    report.skipped += 1
                    tally.skipped += 1
                    continue
                verdict = _routed_judgement(fmt, message, route, routing)
                if verdict is _SKIP:
                    report.skipped += 1
                    tally.skipped += 1
                    continue
            if verdict.refused is not None:
                report.bad_messages += 1
                if tally is not None:
                    tally.bad_messages += 1
                report.add_problem(verdict.refused)
                continue
            for item in verdict.items:
                if type(item) is ControlRecord:
                    report.controls[item.kind] += 1
            report.events += len(verdict.lines)
            if tally is not None:
                tally.events += len(verdict.lines)
            yield verdict
    except ErrorLimitReached:
        return


@dataclass(frozen=True, slots=True)
class _Route:
    """Where one message goes: its table's key, the contract to judge it by, or skipped, or
    refused."""

    key: str
    contract: Contract | None = None
    table: TableId | None = None
    skip: bool = False
    refused: Violation | None = None
    #: routed without a contract because the message names no table (control records)
    untabled: bool = False


def _route(fmt: Format, message: Message, routing: Routing, contract: Contract | None) -> _Route:
    try:
        table = fmt.table_of(message)
    except ContractsError as err:
        return _Route(NO_TABLE, refused=_violation_of(err, message))
    except Exception as err:
        return _Route(NO_TABLE, refused=_bug(err, message))
    return _routed(routing.decide(table), table, message, contract)


def _routed(
    decision: Decision, table: TableId | None, message: Message, contract: Contract | None
) -> _Route:
    if decision.refused is not None:
        violation = Violation(message.where, "$", "unmatched-table", decision.refused)
        return _Route(decision.key, refused=violation)
    if decision.skip:
        return _Route(decision.key, table=table, skip=True)
    if decision.untabled:
        return _Route(decision.key, untabled=True)
    return _Route(decision.key, decision.contract or contract, table)


def _unmatched(table: TableId | None, message: Message, routing: Routing) -> _Route:
    """A message of a table no contract names: skipped, or refused (``routing.unmatched``)."""
    return _routed(routing.unmatched_decision(table), table, message, None)


#: A judgement standing for "skipped" (``--unmatched skip`` of a message without a table).
_SKIP: Final = Judgement([], [])


def _routed_judgement(fmt: Format, message: Message, route: _Route, routing: Routing) -> Judgement:
    """The judgement of a routed message. One that names no table is judged without a
    contract: control records pass, but row changes have no contract, so it is unmatched."""
    if route.refused is not None:
        return Judgement([], [], route.refused)
    verdict = judge(fmt, message, route.contract)
    if not route.untabled or verdict.refused is not None or not verdict.lines:
        return verdict
    unmatched = _unmatched(None, message, routing)
    return _SKIP if unmatched.skip else Judgement([], [], unmatched.refused)


# --- validate, normalize and infer ------------------------------------------------------------


def validate_stream(
    stream: Stream,
    contract: Contract | None,
    *,
    report: Report,
    max_errors: int | None = None,
    routing: Routing | None = None,
) -> Iterator[Violation]:
    """Every violation of ``contract`` in the stream, in order (bad messages included): the
    contract's checks, and for a message that passes them, :func:`judge` with the contract
    (what ``normalize --contract`` would refuse is a violation here too).

    With an active ``routing``, each message is checked against its table's contract (or
    skipped, or refused as unmatched; see :class:`~contracts.routing.Routing`), and counted
    per table in ``report.tables``.

    ``max_errors`` stops the run once that many problems (violations and unusable inputs) are
    recorded, mid-message if need be; ``report.stopped_early`` then says so.
    """
    fmt = stream.format
    report.max_errors = max_errors
    routed = routing is not None and routing.active
    try:
        for message in stream.messages(report):
            report.messages += 1
            if not routed:
                assert contract is not None
                found, _ = _checked(fmt, message, contract)
                tally = None
            else:
                assert routing is not None
                route = _route(fmt, message, routing, contract)
                tally = report.tally(route.key)
                tally.messages += 1
                if route.skip:
                    report.skipped += 1
                    tally.skipped += 1
                    continue
                if route.contract is not None and route.refused is None:
                    found, events = _checked(fmt, message, route.contract)
                    tally.events += events
                else:
                    verdict = _routed_judgement(fmt, message, route, routing)
                    if verdict is _SKIP:
                        report.skipped += 1
                        tally.skipped += 1
                        continue
                    found = [verdict.refused] if verdict.refused is not None else []
            if found:
                report.bad_messages += 1
                if tally is not None:
                    tally.bad_messages += 1
                for violation in found:
                    yield violation
                    report.add_problem(violation)
    except ErrorLimitReached:
        return


def _checked(fmt: Format, message: Message, contract: Contract) -> tuple[list[Violation], int]:
    """A message's violations of ``contract`` (its checks, then :func:`judge`), and the number
    of events it makes when it has none."""
    found = _violations(fmt, message, contract)
    if found:
        return found, 0
    verdict = judge(fmt, message, contract)
    if verdict.refused is not None:
        return [verdict.refused], 0
    return [], len(verdict.lines)


def _violations(fmt: Format, message: Message, contract: Contract) -> list[Violation]:
    try:
        return fmt.validate(message, contract)
    except ContractsError as err:
        return [_violation_of(err, message)]
    except Exception as err:
        return [_bug(err, message)]


def normalize_stream(
    stream: Stream,
    contract: Contract | None = None,
    *,
    report: Report,
    max_errors: int | None = None,
    routing: Routing | None = None,
) -> Iterator[ChangeEvent]:
    """Canonical change events; control records are counted, bad messages recorded and skipped
    (``max_errors`` and ``routing`` as for :func:`validate_stream`)."""
    for verdict in _judged(stream, contract, report, max_errors, routing):
        for item in verdict.items:
            if type(item) is ChangeEvent:
                yield item


def normalize_lines(
    stream: Stream,
    contract: Contract | None = None,
    *,
    report: Report,
    max_errors: int | None = None,
    routing: Routing | None = None,
) -> Iterator[bytes]:
    """:func:`normalize_stream`'s events as JSON lines (serialized once, by the judgement)."""
    for verdict in _judged(stream, contract, report, max_errors, routing):
        yield from verdict.lines


def infer_stream(stream: Stream, options: InferOptions, *, report: Report) -> Inference:
    """A contract from the stream's messages that :func:`judge` accepts (without a contract);
    the others are recorded in ``report`` as bad messages, and left out."""
    return stream.format.infer(_accepted(stream, report), options)


@dataclass(frozen=True)
class TableInference:
    """One table's part of :func:`infer_tables`: its inference, or why none was made."""

    table: TableId
    inference: Inference | None
    error: ContractsError | None = None


def infer_tables(
    stream: Stream, options: InferOptions, *, report: Report, routing: Routing
) -> list[TableInference]:
    """One inference per table of a multi-table stream, in one pass with bounded memory.

    Each message goes to its table's inference (``routing.filter`` leaves tables out, counted
    as skipped); messages :func:`judge` refuses are recorded in ``report`` and left out; a
    message that names no table feeds none (its control records are counted), and one that
    holds row changes without naming their table is refused. Sorted by table.
    """
    fmt = stream.format
    running: dict[TableId, _PushedInference] = {}
    try:
        for message in stream.messages(report):
            report.messages += 1
            route = _route(fmt, message, routing, None)
            tally = report.tally(route.key)
            tally.messages += 1
            if route.skip:
                report.skipped += 1
                tally.skipped += 1
                continue
            verdict = Judgement([], [], route.refused) if route.refused else judge(fmt, message)
            table = route.table
            if verdict.refused is None and table is None and verdict.lines:
                verdict = Judgement([], [], _untabled_rows(message))
            if verdict.refused is not None:
                report.bad_messages += 1
                tally.bad_messages += 1
                report.add_problem(verdict.refused)
                continue
            tally.events += len(verdict.lines)
            report.events += len(verdict.lines)
            if table is None:
                for item in verdict.items:
                    if type(item) is ControlRecord:
                        report.controls[item.kind] += 1
                continue
            feeder = running.get(table)
            if feeder is None:
                feeder = running[table] = _PushedInference(fmt, options)
            feeder.push(message)
    finally:
        results = [(table, feeder.finish()) for table, feeder in running.items()]
    return [
        TableInference(table, inference, error)
        for table, (inference, error) in sorted(results, key=lambda r: table_key(r[0]))
    ]


def _untabled_rows(message: Message) -> Violation:
    return Violation(
        message.where,
        "$",
        "unmatched-table",
        "the message holds row changes but names no table, so it cannot be split by table",
    )


_READY: Final = object()
_DONE: Final = object()
_END: Final = object()


class _PushedInference:
    """A format's ``infer`` fed one message at a time from the caller's loop.

    ``infer`` pulls from an iterator; a multi-table run pushes each message to its table's
    inference. Each inference runs in its own thread, but strictly in turn with the caller
    (every push waits until the inference asks for the next message), so no two ever run at
    once and memory stays one message per table.
    """

    def __init__(self, fmt: Format, options: InferOptions) -> None:
        self._inbox: queue.Queue[object] = queue.Queue(maxsize=1)
        self._outbox: queue.Queue[object] = queue.Queue(maxsize=1)
        self._result: Inference | None = None
        self._error: ContractsError | None = None
        self._crash: BaseException | None = None
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(fmt, options), daemon=True)
        self._thread.start()
        self._done = self._outbox.get() is _DONE

    def _messages(self) -> Iterator[Message]:
        while True:
            self._outbox.put(_READY)
            item = self._inbox.get()
            if item is _END:
                return
            assert isinstance(item, Message)
            yield item

    def _run(self, fmt: Format, options: InferOptions) -> None:
        try:
            self._result = fmt.infer(self._messages(), options)
        except ContractsError as err:
            self._error = err
        except BaseException as err:  # re-raised in the caller's thread by finish()
            self._crash = err
        finally:
            self._outbox.put(_DONE)

    def push(self, message: Message) -> None:
        if self._done:  # the inference stopped early (an error): the rest is not needed
            return
        self._inbox.put(message)
        self._done = self._outbox.get() is _DONE

    def finish(self) -> tuple[Inference | None, ContractsError | None]:
        """The inference (or its error) once every message is pushed."""
        if not self._done:
            self._inbox.put(_END)
            self._outbox.get()
            self._done = True
        self._thread.join()
        if self._crash is not None:
            raise self._crash
        return self._result, self._error


def _accepted(stream: Stream, report: Report) -> Iterator[Message]:
    fmt = stream.format
    for message in stream.messages(report):
        report.messages += 1
        refused = judge(fmt, message).refused
        if refused is not None:
            report.bad_messages += 1
            report.add_problem(refused)
            continue
        yield message


def _violation_of(err: ContractsError, message: Message) -> Violation:
    """A raised error as a violation: ``where`` is the message, ``path`` the JSON path."""
    _, path = split_location(err.where)
    return Violation(message.where, path or "$", "undecodable", err.what)


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
    if isinstance(value, float):  # a JsonNumber: the double it stands for, or the digits of
        return _json_number(value)  # an integer beyond 64 bits (no double holds them)
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


def _json_number(value: float) -> Any:
    if isinstance(value, JsonNumber) and value.wide_integer is not None:
        return orjson.Fragment(value.text)
    return float(value)


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
