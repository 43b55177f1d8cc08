"""``cdc-contracts infer | validate | normalize``: contracts from samples, and messages
checked against or normalized by them.

Exit codes: 0 fine; 1 some message violates the contract or could not be normalized;
2 unusable input (unreadable file, a damaged message, unknown or undetectable format, bad
contract file). A damaged message (a malformed, truncated or non-UTF-8 line) is reported where
it is and the next one is read: nothing after it is lost.
"""

from __future__ import annotations

import enum
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Final, Optional

import typer

from cli.common import (
    OutputMode,
    error_line,
    guard_output_file,
    is_stdout,
    open_output,
    plural,
    print_json,
    progress,
    write_output,
)

if TYPE_CHECKING:
    from contracts.errors import ContractsError
    from contracts.formats.base import Inference, Message, Violation
    from contracts.pipeline import Report, Stream

Files = Annotated[
    list[Path],
    typer.Argument(
        help="input files (- for standard input): JSON lines/array/documents, kcat -J, CSV or "
        "DTS Avro"
    ),
]
OutputFormat = Annotated[
    OutputMode, typer.Option("--output-format", help="what is written: text or json")
]
AllowEmpty = Annotated[
    bool,
    typer.Option(
        "--allow-empty",
        help="accept an input with no messages (exit 0) instead of refusing it (exit 2)",
    ),
]
MaxErrors = Annotated[
    Optional[int],  # noqa: UP045 - typer needs Optional here
    typer.Option(
        "--max-errors",
        min=1,
        metavar="N",
        help="stop after this many problems (violations and unusable messages)",
    ),
]


TableRegex = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--table",
        metavar="REGEX",
        help="keep only tables whose name the regular expression matches in full (as "
        "Flink's canal-json.table.include); the others are skipped and counted",
    ),
]
DatabaseRegex = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--database",
        metavar="REGEX",
        help="keep only databases whose name the regular expression matches in full (as "
        "Flink's canal-json.database.include)",
    ),
]


class UnmatchedMode(enum.StrEnum):
    error = "error"
    skip = "skip"


UnmatchedOpt = Annotated[
    Optional[UnmatchedMode],  # noqa: UP045
    typer.Option(
        "--unmatched",
        help="a message of a table no contract names: an error (the default) or skipped; "
        "counted in the summary either way",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("infer")(infer)
    app.command("validate")(validate)
    app.command("normalize")(normalize)


def _progress(messages: Iterator[Message]) -> Iterator[Message]:
    return progress(messages, "reading messages")


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")


#: How many errors with the same text (wherever they are) are printed before the rest are
#: only counted: a wrong ``--format`` must not print thousands of identical lines.
COLLAPSE_AFTER: Final = 10
_NUMBER: Final = re.compile(r"\d+")


class _ErrorLines:
    """Error lines written as they come, collapsing repeats: after :data:`COLLAPSE_AFTER`
    lines with the same text apart from their ``file:line``, the rest are counted, and
    :meth:`finish` says how many were not shown (the report keeps them all)."""

    def __init__(self, write: Any) -> None:
        self._write = write
        self._seen: dict[str, int] = {}
        self._first: dict[str, str] = {}

    def add(self, text: str, line: str) -> None:
        """Write ``line`` unless it is one more of a kind already shown enough: ``text`` is
        what it says without its ``file:line`` (numbers in it, often lines, are ignored)."""
        key = _NUMBER.sub("N", text)
        count = self._seen[key] = self._seen.get(key, 0) + 1
        self._first.setdefault(key, text)
        if count <= COLLAPSE_AFTER:
            self._write(line + "\n")

    def problem(self, problem: Violation) -> None:
        self.add(f"{problem.path}: {problem.message}", f"error: {problem.one_line()}")

    def unusable(self, err: ContractsError) -> None:
        from contracts.pipeline import split_location

        path, what = split_location(err.where)[1], " ".join(err.what.split())
        self.add(f"{path}: {what}" if path else what, error_line(err))

    def finish(self, stream: Stream, files: list[Path], explicit: bool) -> None:
        """One line per collapsed kind of error, naming the format the input looks like when
        the run's format was given (not detected) and detection finds another one."""
        hidden = [(key, n - COLLAPSE_AFTER) for key, n in self._seen.items() if n > COLLAPSE_AFTER]
        if not hidden:
            return
        hint = ""
        if explicit:
            from contracts.pipeline import looks_like

            found = looks_like(files)
            if found is not None and found != stream.format.name:
                hint = f"; the input looks like {found}, not {stream.format.name}"
        for key, count in hidden:
            self._write(f"… {count} more like this ({self._first[key]}){hint}\n")


def _new_report(lines: _ErrorLines) -> Report:
    """A report that prints each unusable input (a damaged message, a missing file) and each
    bad message at once, through ``lines``."""
    from contracts.pipeline import Report

    return Report(on_unusable=lines.unusable, on_problem=lines.problem)


def _unusable_note(report: Report) -> str:
    count = len(report.unusable)
    return f"{plural(count, 'unusable input')} (errors above)" if count else ""


def _stopped(report: Report) -> str:
    if not report.stopped_early:
        return ""
    return f" (stopped at --max-errors {report.max_errors}: the rest of the input was not checked)"


# --- infer ------------------------------------------------------------------------------------


def infer(
    files: Files,
    format: Annotated[
        str, typer.Option("--format", "-f", help="format name, or auto to detect it")
    ] = "auto",
    name: Annotated[Optional[str], typer.Option(help="contract name")] = None,  # noqa: UP045
    infer_types: Annotated[
        bool,
        typer.Option(
            "--infer-types", help="infer numbers and dates from string-only formats' values"
        ),
    ] = False,
    topic: Annotated[Optional[str], typer.Option(help="Kafka topic")] = None,  # noqa: UP045
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="write the contract YAML here (default: stdout); with --split-by-table, "
            "the directory to write one contract per table into",
        ),
    ] = None,
    output_format: OutputFormat = OutputMode.text,
    split_by_table: Annotated[
        bool,
        typer.Option(
            "--split-by-table",
            help="infer one contract per table of a multi-table topic, written to -o DIR as "
            "TABLE.yaml",
        ),
    ] = False,
    table: TableRegex = None,
    database: DatabaseRegex = None,
    overwrite: Annotated[
        bool,
        typer.Option("--overwrite", help="with --split-by-table, replace existing contract files"),
    ] = False,
) -> None:
    """Infer a contract from sample messages; report schema history and control records.

    A damaged message is reported and skipped: the contract is inferred from the others, and
    the exit code is 2. A topic holding several tables needs --table/--database (one table)
    or --split-by-table -o DIR (a contract per table).
    """
    from contracts.contract import dump_contract, validate_name
    from contracts.errors import ContractFileError, InputError
    from contracts.formats.base import InferOptions
    from contracts.pipeline import infer_stream, open_stream
    from contracts.routing import Routing, TableFilter

    if name is not None:
        try:
            validate_name(name)
        except ContractFileError as err:
            raise InputError(err.what, "--name") from None
    routing = Routing(TableFilter.of(database, table))
    options = InferOptions(name=name, infer_types=infer_types, topic=topic)
    if split_by_table:
        _infer_split(files, format, options, routing, output, output_format, overwrite)
        return
    guard_output_file(output, files, "--output")
    stream = open_stream(files, format, wrap=_progress)
    lines = _ErrorLines(sys.stderr.write)
    report = _new_report(lines)
    if routing.active:
        stream = _filtered(stream, routing, report)
    result = infer_stream(stream, options, report=report)
    named_after = None
    if name is None and result.contract.name == stream.format.name:
        result, named_after = _named_after_input(result, files)
    text = dump_contract(result.contract)
    if not is_stdout(output):
        write_output(text, output)
    if output_format is OutputMode.json:
        print_json(_inference_json(stream.format.name, result, report))
    elif is_stdout(output):
        write_output(text, None)
    _report_inference(stream.format.name, result, output, named_after)
    lines.finish(stream, files, format not in (None, "auto"))
    if routing.active:
        _err(
            f"{plural(report.skipped, 'message')} of other tables skipped "
            f"({routing.filter.describe()})"
        )
    if report.unusable or report.bad_messages:
        left_out = [_unusable_note(report), _bad_note(report)]
        _err(
            f"{'; '.join(n for n in left_out if n)}: the contract is inferred from the other "
            f"{plural(result.messages, 'message')}"
        )
    raise typer.Exit(report.exit_code)


def _filtered(stream: Stream, routing: Any, report: Report) -> Stream:
    """The stream with only the messages of the tables ``routing`` keeps (the others are
    counted in ``report`` as skipped)."""
    import dataclasses

    from contracts.routing import table_key

    fmt = stream.format

    def keep(messages: Iterator[Message]) -> Iterator[Message]:
        for message in messages:
            try:
                table = fmt.table_of(message)
            except Exception:
                yield message  # judged (and reported) by the run itself
                continue
            if routing.filter.keeps(table):
                yield message
            else:
                report.skipped += 1
                report.tally(table_key(table)).skipped += 1

    inner = stream.wrap
    return dataclasses.replace(
        stream, wrap=(lambda ms: keep(inner(ms))) if inner is not None else keep
    )


def _infer_split(
    files: list[Path],
    format: str,
    options: Any,
    routing: Any,
    output: Path | None,
    output_format: OutputMode,
    overwrite: bool,
) -> None:
    """``infer --split-by-table -o DIR``: one contract file per table."""
    from contracts.contract import dump_contract
    from contracts.errors import InputError
    from contracts.pipeline import error_json, infer_tables, open_stream
    from contracts.routing import table_key

    if output is None or is_stdout(output):
        raise InputError("--split-by-table writes one file per table: give -o DIR")
    if options.name is not None:
        raise InputError("--name names one contract; --split-by-table names each after its table")
    if output.exists() and not output.is_dir():
        raise InputError("is not a directory (--split-by-table writes into one)", f"-o {output}")
    stream = open_stream(files, format, wrap=_progress)
    lines = _ErrorLines(sys.stderr.write)
    report = _new_report(lines)
    results = infer_tables(stream, options, report=report, routing=routing)
    lines.finish(stream, files, format not in (None, "auto"))
    written: list[tuple[str, Path, Any]] = []
    failed = 0
    for part in results:
        key = table_key(part.table)
        if part.inference is None:
            failed += 1
            what = part.error.what if part.error is not None else "no contract"
            _err(f"error: table {key}: no contract inferred: {what}")
            continue
        target = output / f"{_file_stem(part.table)}.yaml"
        written.append((key, target, part.inference))
    existing = [t for _, t, _ in written if t.exists()]
    if existing and not overwrite:
        listed = ", ".join(str(t) for t in existing)
        raise InputError(
            f"already exist: {listed}; give --overwrite to replace them", f"-o {output}"
        )
    for _, target, inference in written:
        write_output(dump_contract(inference.contract), target)
    if output_format is OutputMode.json:
        print_json(
            {
                "format": stream.format.name,
                "messages": report.messages,
                "skipped": report.skipped,
                "bad_messages": report.bad_messages,
                "contracts": {
                    key: {"file": str(target), "name": inf.contract.name, "messages": inf.messages}
                    for key, target, inf in written
                },
                "tables": report.tables_json(),
                "unusable_input": [error_json(e) for e in report.unusable],
            }
        )
    for key, target, inference in written:
        _err(f"inferred {key} from {plural(inference.messages, 'message')} -> {target}")
    _err(_split_summary(report, len(written)))
    code = report.exit_code
    raise typer.Exit(code if code else (1 if failed else 0))


def _file_stem(table: Any) -> str:
    """A contract file's name from its table id: ``db.schema.table``, other characters as _."""
    import re

    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", table.qualified()).strip("_.-")[:200] or "table"


def _split_summary(report: Report, contracts: int) -> str:
    parts = [
        f"{plural(report.messages, 'message')} of {plural(len(report.tables), 'table')}",
        f"{plural(contracts, 'contract')} written",
    ]
    if report.skipped:
        parts.append(f"{report.skipped} skipped (filtered out)")
    if report.bad_messages:
        parts.append(_bad_note(report))
    if report.unusable:
        parts.append(_unusable_note(report))
    return "; ".join(parts)


def _bad_note(report: Report) -> str:
    count = report.bad_messages
    return f"{plural(count, 'bad message')} (errors above)" if count else ""


#: Input file extensions left out of a contract name taken from a file name.
_INPUT_SUFFIXES: Final = frozenset({".jsonl", ".ndjson", ".json", ".csv", ".avro", ".bin", ".txt"})


def _named_after_input(result: Inference, files: list[Path]) -> tuple[Inference, str]:
    """The inference with its contract (and table) named after the first input file.

    Used when the messages name no table (CSV rows): the format's name, which the contract
    would get otherwise, would be the same for every table.
    """
    import dataclasses
    import re

    from contracts.contract import Contract
    from contracts.errors import InputError
    from contracts.io import input_name, is_stdin

    first = files[0]
    stem = first.name
    while Path(stem).suffix.lower() in _INPUT_SUFFIXES:
        stem = Path(stem).stem
    derived = re.sub(r"[^A-Za-z0-9_.\-]+", "_", stem).strip("_.-")
    derived = re.sub(r"\.{2,}", ".", derived)[:200]
    if is_stdin(first) or not derived:
        raise InputError(
            "the messages name no table, so the contract needs a name: pass --name NAME",
            input_name(first),
        )
    data = result.contract.to_dict()
    data["name"] = derived
    if data["table"].get("name") == result.contract.name:
        data["table"] = {**data["table"], "name": derived}
    renamed = Contract.model_validate(data)
    return dataclasses.replace(result, contract=renamed), first.name


def _inference_json(format_name: str, result: Inference, report: Report) -> dict[str, Any]:
    from contracts.pipeline import error_json

    return {
        "format": format_name,
        "messages": result.messages,
        "contract": result.contract.to_dict(),
        "history": [
            {
                "version": v.version,
                "first_seen": v.first_seen,
                "messages": v.messages,
                "columns": list(v.columns),
            }
            for v in result.history
        ],
        "controls": result.controls,
        "warnings": list(result.warnings),
        "unusable_input": [error_json(e) for e in report.unusable],
        **report.routing_json(),
    }


def _report_inference(
    format_name: str, result: Inference, out: Path | None, named_after: str | None
) -> None:
    target = "" if is_stdout(out) else f" -> {out}"
    _err(
        f"inferred {result.contract.name} ({format_name}) from "
        f"{plural(result.messages, 'message')}{target}"
    )
    if named_after:
        _err(
            f"note: the messages name no table; the contract is named after {named_after} "
            "(pass --name to choose)"
        )
    if len(result.history) > 1:
        _err(f"schema history: {len(result.history)} versions (the contract has the latest)")
        for v in result.history:
            _err(
                f"  v{v.version}: {len(v.columns)} columns, {plural(v.messages, 'message')}, "
                f"first at {v.first_seen}"
            )
    if result.controls:
        listed = ", ".join(f"{k} {n}" for k, n in result.controls.items())
        _err(f"control records (not row changes): {listed}")
    for warning in result.warnings:
        _err(f"warning: {warning}")


# --- validate ---------------------------------------------------------------------------------


def validate(
    contract: Annotated[
        Path,
        typer.Argument(
            help="the contract file (YAML), or a directory of contracts (one per table); with "
            "-c, the first input file"
        ),
    ],
    files: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Argument(
            help="input files (- for standard input): JSON lines/array/documents, kcat -J, "
            "CSV or DTS Avro",
            show_default=False,
        ),
    ] = None,
    contracts: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--contract",
            "-c",
            metavar="FILE",
            help="a contract file or directory; repeat for several (each message is checked "
            "against its table's contract); then every argument is an input",
        ),
    ] = None,
    table: TableRegex = None,
    database: DatabaseRegex = None,
    unmatched: UnmatchedOpt = None,
    max_errors: MaxErrors = None,
    output_format: OutputFormat = OutputMode.text,
    allow_empty: AllowEmpty = False,
) -> None:
    """Check messages against a contract: one line per violation; exit 1 if any, 2 if an input
    (a file, or a damaged message in one) was unusable or held no messages.

    With several contracts (a directory, or -c repeated) each message is checked against the
    contract of its table; a table no contract names is an error, or skipped with
    --unmatched skip, and counted per table either way.
    """
    from contracts.pipeline import error_json, open_stream, validate_stream

    inputs = [contract, *(files or [])] if contracts else list(files or [])
    given = contracts or [contract]
    if not inputs:
        raise typer.BadParameter("give the input files to check", param_hint="FILES")
    loaded, routing = _contracts_and_routing(given, table, database, unmatched)
    fmt = loaded.format if loaded is not None else routing.routes.format
    stream = open_stream(inputs, fmt, wrap=_progress, empty_hint=_empty_hint(allow_empty))
    lines = _ErrorLines(sys.stderr.write)
    report = _new_report(lines)
    report.on_problem = None  # violations are the command's output, on stdout
    shown = _ErrorLines(sys.stdout.write)
    for violation in validate_stream(
        stream, loaded, report=report, max_errors=max_errors, routing=routing
    ):
        if output_format is OutputMode.text:
            shown.add(f"{violation.path}: {violation.message}", violation.one_line())
    sys.stdout.flush()
    shown.finish(stream, inputs, True)
    lines.finish(stream, inputs, True)
    label = loaded.name if loaded is not None else _contracts_label(routing)
    if output_format is OutputMode.json:
        print_json(
            {
                "contract": label,
                "valid": report.exit_code == 0,
                "messages": report.messages,
                "bad_messages": report.bad_messages,
                "problems": [p.to_json() for p in report.problems],
                "unusable_input": [error_json(e) for e in report.unusable],
                "stopped_early": report.stopped_early,
                **report.routing_json(),
            }
        )
    _err(f"{plural(report.messages, 'message')} checked against {label}: {_verdict(report)}")
    _report_tables(report)
    raise typer.Exit(report.exit_code)


def _contracts_and_routing(
    given: list[Path], table: str | None, database: str | None, unmatched: Any
) -> tuple[Any, Any]:
    """The run's one contract (None when it routes by table) and its routing.

    One contract file without --unmatched keeps today's single-contract run (filters aside);
    a directory, several contracts, or --unmatched route each message by its table."""
    from contracts.contract import load_contract
    from contracts.routing import Routes, Routing, TableFilter, Unmatched

    flt = TableFilter.of(database, table)
    mode: Unmatched = "skip" if unmatched is UnmatchedMode.skip else "error"
    if len(given) == 1 and not given[0].is_dir() and unmatched is None:
        return load_contract(given[0]), Routing(flt)
    return None, Routing(flt, Routes.load(given), mode)


def _contracts_label(routing: Any) -> str:
    count = len(routing.routes.by_table)
    return f"{plural(count, 'contract')} ({routing.routes.names()})"


def _report_tables(report: Report) -> None:
    """Per-table counts on stderr when the run filtered or routed by table."""
    if not report.tables:
        return
    for key in sorted(report.tables):
        t = report.tables[key]
        extra = [f"{t.bad_messages} bad"] if t.bad_messages else []
        if t.skipped:
            extra.append(f"{t.skipped} skipped")
        more = f" ({', '.join(extra)})" if extra else ""
        _err(f"  {key}: {plural(t.messages, 'message')}{more}")
    if report.skipped:
        _err(f"{plural(report.skipped, 'message')} skipped (counted above, not checked)")


def _verdict(report: Report) -> str:
    parts = []
    if report.bad_messages:
        verb = "violates" if report.bad_messages == 1 else "violate"
        parts.append(
            f"{report.bad_messages} {verb} it ({plural(len(report.problems), 'violation')})"
        )
    if report.unusable:
        parts.append(_unusable_note(report))
    return "; ".join(parts or ["all conform"]) + _stopped(report)


# --- normalize --------------------------------------------------------------------------------


def normalize(
    files: Files,
    contract: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--contract",
            "-c",
            metavar="FILE",
            help="contract file: its format and column types; a directory, or repeated, for "
            "several tables (each message is typed by its table's contract)",
        ),
    ] = None,
    format: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--format", "-f", help="format name, or auto (without --contract)"),
    ] = None,
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="write events here as JSON lines (default: stdout)",
        ),
    ] = None,
    max_errors: MaxErrors = None,
    allow_empty: AllowEmpty = False,
    table: TableRegex = None,
    database: DatabaseRegex = None,
    unmatched: UnmatchedOpt = None,
) -> None:
    """Write one canonical change event per line; control records are counted on stderr.

    A message that cannot be normalized, or a damaged one, is reported and skipped. With
    several contracts each message is typed by its table's contract.
    """
    from contracts.errors import InputError
    from contracts.pipeline import open_stream
    from contracts.routing import Routing, TableFilter

    given = contract or []
    guard_output_file(output, [*files, *given], "--output")
    if given:
        loaded, routing = _contracts_and_routing(given, table, database, unmatched)
        fmt_name = loaded.format if loaded is not None else routing.routes.format
        if format not in (None, "auto", fmt_name):
            raise InputError(f"--format {format} contradicts the contract's format {fmt_name}")
    else:
        if unmatched is not None:
            raise InputError("--unmatched needs contracts (-c) to match tables against")
        loaded, routing, fmt_name = None, Routing(TableFilter.of(database, table)), format
    stream = open_stream(files, fmt_name, wrap=_progress, empty_hint=_empty_hint(allow_empty))
    lines = _ErrorLines(sys.stderr.write)
    report = _new_report(lines)
    if output is not None and not is_stdout(output):
        with open_output(output) as sink:
            _write_events(stream, loaded, report, max_errors, sink, routing)
    else:
        _write_events(stream, loaded, report, max_errors, sys.stdout.buffer, routing)
        sys.stdout.flush()
    lines.finish(stream, files, loaded is not None or format not in (None, "auto"))
    _report_normalize(report)
    _report_tables(report)
    raise typer.Exit(report.exit_code)


def _write_events(
    stream: Stream,
    contract: Any,
    report: Report,
    max_errors: int | None,
    sink: IO[bytes],
    routing: Any = None,
) -> None:
    from contracts.pipeline import normalize_lines

    write = sink.write
    for line in normalize_lines(
        stream, contract, report=report, max_errors=max_errors, routing=routing
    ):
        write(line)


def _empty_hint(allow_empty: bool) -> str | None:
    from contracts.pipeline import ALLOW_EMPTY_HINT

    return None if allow_empty else ALLOW_EMPTY_HINT


def _report_normalize(report: Report) -> None:
    controls = ", ".join(f"{k} {n}" for k, n in sorted(report.controls.items())) or "none"
    unusable = f", {_unusable_note(report)}" if report.unusable else ""
    skipped = f", skipped: {report.skipped}" if report.tables else ""
    _err(
        f"normalized {plural(report.messages, 'message')}: "
        f"{plural(report.events, 'change event')}, control records: {controls}, "
        f"bad messages: {report.bad_messages}{skipped}{unusable}{_stopped(report)}"
    )
