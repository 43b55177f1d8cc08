"""``cdc-contracts diff`` and ``cdc-contracts check``: the CI gate for schema changes.

Exit codes: 0 = not breaking (per ``--fail-on``), 1 = breaking, 2 = unusable input or usage.
"""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.common import fail_with
from contracts.contract import CompatibilityLevel
from contracts.errors import ContractsError, InputError


class Output(enum.StrEnum):
    text = "text"
    json = "json"
    github = "github"
    junit = "junit"
    markdown = "markdown"


class FailOn(enum.StrEnum):
    breaking = "breaking"
    warning = "warning"
    never = "never"


LevelOpt = Annotated[
    CompatibilityLevel | None,
    typer.Option(
        "--level",
        "-l",
        case_sensitive=False,
        help="Compatibility level to judge at (default: the new contract's, else BACKWARD).",
    ),
]
OutputOpt = Annotated[
    Output, typer.Option("--output", "-o", help="text, json, github, junit or markdown.")
]
FailOnOpt = Annotated[
    FailOn,
    typer.Option("--fail-on", help="Exit 1 on breaking changes, also on warnings, or never."),
]


def register(app: typer.Typer) -> None:
    app.command("diff")(diff)
    app.command("check")(check)


def diff(
    old: Annotated[
        Path, typer.Argument(help="The old side: contract, .avsc, Connect schema JSON or messages.")
    ],
    new: Annotated[Path, typer.Argument(help="The new side (may be a different kind than OLD).")],
    level: LevelOpt = None,
    output: OutputOpt = Output.text,
    fail_on: FailOnOpt = FailOn.breaking,
) -> None:
    """Compare two schemas: the Schema Registry verdict plus CDC breaking-change rules."""
    try:
        from contracts.diff.catalog import LineIndex
        from contracts.diff.engine import diff_sides
        from contracts.diff.inputs import load_side
        from contracts.diff.report import Entry, Report

        old_side, new_side = load_side(old), load_side(new)
        result = diff_sides(old_side, new_side, level)
        lines = LineIndex.of_file(new).line if new_side.kind == "contract" else None
        label = new_side.contract.name if new_side.contract is not None else str(new)
        entry = Entry(label, str(new), "changed", result, lines)
        report = Report([entry], fail_on=fail_on.value)
    except ContractsError as err:
        fail_with(err)
    _emit(report, output)


def check(
    directory: Annotated[
        Path, typer.Argument(help="Directory holding contract files (*.yaml, *.yml).")
    ] = Path("."),
    against: Annotated[
        str,
        typer.Option(
            "--against",
            help="Baseline: git:REF (e.g. git:origin/main) or 'registry' (with --url).",
        ),
    ] = "git:HEAD",
    url: Annotated[
        str | None,
        typer.Option("--url", envvar="CDC_CONTRACTS_REGISTRY_URL", help="Schema Registry URL."),
    ] = None,
    level: LevelOpt = None,
    output: OutputOpt = Output.text,
    fail_on: FailOnOpt = FailOn.breaking,
) -> None:
    """Compare every contract in DIR with a git ref or the registry; report breaking changes."""
    try:
        from contracts.diff.report import Report

        if against.startswith("git:") and len(against) > 4:
            entries, skipped = _check_git(directory, against[4:], level)
        elif against == "registry":
            if not url:
                raise InputError("--against registry needs --url URL", "--url")
            entries, skipped = _check_registry(directory, url, level), []
        else:
            raise InputError(f"unknown baseline {against!r}: use git:REF or registry", "--against")
        report = Report(entries, fail_on=fail_on.value, against=against, skipped=skipped)
    except ContractsError as err:
        fail_with(err)
    _emit(report, output)


def _check_git(
    directory: Path, ref: str, level: CompatibilityLevel | None
) -> tuple[list, list[str]]:  # type: ignore[type-arg]
    from contracts.diff.catalog import compare_catalog, current_files, git_baseline

    base = git_baseline(directory, ref)
    found = compare_catalog(current_files(directory, base.root), base.texts, level)
    return found.entries, found.skipped


def _check_registry(directory: Path, url: str, level: CompatibilityLevel | None) -> list:  # type: ignore[type-arg]
    from contracts.diff.catalog import compare_with_history, current_files, read_contract

    try:
        from registry_sync.baseline import RegistryBaseline
    except ImportError as err:
        raise InputError(f"the registry baseline is not available: {err}", "--against") from None
    root = Path(directory).resolve()
    items = []
    for path in current_files(directory, root).values():
        shown = os.path.relpath(path)
        text = path.read_text(encoding="utf-8")
        contract = read_contract(text, shown)
        if contract is not None:
            items.append((shown, contract, text))
    baseline = RegistryBaseline(url)
    return compare_with_history(items, baseline.previous, level)


def _emit(report: object, output: Output) -> None:
    from contracts.diff.report import RENDERERS, Report, step_summary

    assert isinstance(report, Report)
    sys.stdout.write(RENDERERS[output.value](report))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if output is Output.github and summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))
    raise typer.Exit(1 if report.failed else 0)
