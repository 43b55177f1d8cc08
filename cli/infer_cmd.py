"""``cdc-contracts infer | validate | normalize``: contracts from samples, and messages
checked against or normalized by them.

Exit codes: 0 fine; 1 some message violates the contract or could not be normalized;
2 unusable input (unreadable file, unknown or undetectable format, bad contract file).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Optional

import typer

from cli.common import OutputMode, print_json, progress, write_output

if TYPE_CHECKING:
    from contracts.formats.base import Inference, Message
    from contracts.pipeline import Report, Stream

Files = Annotated[
    list[Path],
    typer.Argument(help="input files: JSON lines/array/documents, kcat -J, CSV or DTS Avro"),
]
Output = Annotated[OutputMode, typer.Option("--output", help="text or json")]
MaxErrors = Annotated[
    Optional[int],  # noqa: UP045 - typer needs Optional here
    typer.Option("--max-errors", min=1, help="stop after this many bad messages"),
]


def register(app: typer.Typer) -> None:
    app.command("infer")(infer)
    app.command("validate")(validate)
    app.command("normalize")(normalize)


def _progress(messages: Iterator[Message]) -> Iterator[Message]:
    return progress(messages, "reading messages")


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")


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
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--out", "-o", help="write the contract YAML here (default: stdout)"),
    ] = None,
    output: Output = OutputMode.text,
) -> None:
    """Infer a contract from sample messages; report schema history and control records."""
    from contracts.contract import dump_contract
    from contracts.formats.base import InferOptions
    from contracts.pipeline import open_stream

    stream = open_stream(files, format, wrap=_progress)
    result = stream.format.infer(
        stream.messages(), InferOptions(name=name, infer_types=infer_types, topic=topic)
    )
    text = dump_contract(result.contract)
    if out is not None:
        write_output(text, out)
    if output is OutputMode.json:
        print_json(_inference_json(stream.format.name, result))
    elif out is None:
        write_output(text, None)
    _report_inference(stream.format.name, result, out)


def _inference_json(format_name: str, result: Inference) -> dict[str, Any]:
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
    }


def _report_inference(format_name: str, result: Inference, out: Path | None) -> None:
    target = f" -> {out}" if out else ""
    _err(f"inferred {result.contract.name} ({format_name}) from {result.messages} messages{target}")
    if len(result.history) > 1:
        _err(f"schema history: {len(result.history)} versions (the contract has the latest)")
        for v in result.history:
            _err(
                f"  v{v.version}: {len(v.columns)} columns, {v.messages} messages, "
                f"first at {v.first_seen}"
            )
    if result.controls:
        listed = ", ".join(f"{k} {n}" for k, n in result.controls.items())
        _err(f"control records (not row changes): {listed}")
    for warning in result.warnings:
        _err(f"warning: {warning}")


# --- validate ---------------------------------------------------------------------------------


def validate(
    contract: Annotated[Path, typer.Argument(help="the contract file (YAML)")],
    files: Files,
    max_errors: MaxErrors = None,
    output: Output = OutputMode.text,
) -> None:
    """Check messages against a contract: one line per violation; exit 1 if any."""
    from contracts.contract import load_contract
    from contracts.pipeline import Report, open_stream, validate_stream

    loaded = load_contract(contract)
    stream = open_stream(files, loaded.format, wrap=_progress)
    report = Report()
    for violation in validate_stream(stream, loaded, report=report, max_errors=max_errors):
        if output is OutputMode.text:
            sys.stdout.write(violation.one_line() + "\n")
    _report_unusable(report)
    if output is OutputMode.json:
        print_json({"contract": loaded.name, "valid": report.exit_code == 0, **report.to_json()})
    verdict = (
        f"{report.bad_messages} violate it ({len(report.problems)} violations)"
        if report.bad_messages
        else "all conform"
    )
    _err(f"{report.messages} messages checked against {loaded.name}: {verdict}{_stopped(report)}")
    raise typer.Exit(report.exit_code)


def _stopped(report: Report) -> str:
    return " (stopped early: --max-errors reached)" if report.stopped_early else ""


def _report_unusable(report: Report) -> None:
    for err in report.unusable:
        _err(f"error: {err.one_line()}")


# --- normalize --------------------------------------------------------------------------------


def normalize(
    files: Files,
    contract: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--contract", "-c", help="contract file: its format and column types"),
    ] = None,
    format: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--format", "-f", help="format name, or auto (without --contract)"),
    ] = None,
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--out", "-o", help="write events here as JSON lines (default: stdout)"),
    ] = None,
    max_errors: MaxErrors = None,
) -> None:
    """Write one canonical change event per line; control records are counted on stderr."""
    from contracts.contract import load_contract
    from contracts.errors import InputError
    from contracts.pipeline import Report, open_stream

    loaded = load_contract(contract) if contract is not None else None
    if loaded is not None and format not in (None, "auto", loaded.format):
        raise InputError(f"--format {format} contradicts the contract's format {loaded.format}")
    stream = open_stream(files, loaded.format if loaded else format, wrap=_progress)
    report = Report()
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("wb") as sink:
            _write_events(stream, loaded, report, max_errors, sink)
    else:
        _write_events(stream, loaded, report, max_errors, sys.stdout.buffer)
        sys.stdout.flush()
    _report_normalize(report)
    raise typer.Exit(report.exit_code)


def _write_events(
    stream: Stream, contract: Any, report: Report, max_errors: int | None, sink: IO[bytes]
) -> None:
    from contracts.pipeline import event_line, normalize_stream

    reported = 0
    write = sink.write
    for event in normalize_stream(stream, contract, report=report, max_errors=max_errors):
        write(event_line(event))
        while reported < len(report.problems):
            _err(f"error: {report.problems[reported].one_line()}")
            reported += 1
    for problem in report.problems[reported:]:
        _err(f"error: {problem.one_line()}")


def _report_normalize(report: Report) -> None:
    _report_unusable(report)
    controls = ", ".join(f"{k} {n}" for k, n in sorted(report.controls.items())) or "none"
    _err(
        f"normalized {report.messages} messages: {report.events} change events, "
        f"control records: {controls}, bad messages: {report.bad_messages}{_stopped(report)}"
    )
