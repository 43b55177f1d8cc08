"""``cdc-contracts diff`` and ``cdc-contracts check``: the CI gate for schema changes.

Exit codes: 0 = not breaking (per ``--fail-on``), 1 = breaking, 2 = unusable input or usage.
"""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.common import fail_with
from contracts.contract import CompatibilityLevel
from contracts.errors import ContractsError, InputError

if TYPE_CHECKING:
    from contracts.diff.report import Entry, Report


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
        Path,
        typer.Argument(
            help="The old side: contract, .avsc, Connect schema JSON or messages with an "
            "embedded schema (every message must carry the same schema)."
        ),
    ],
    new: Annotated[Path, typer.Argument(help="The new side (may be a different kind than OLD).")],
    level: LevelOpt = None,
    output: OutputOpt = Output.text,
    fail_on: FailOnOpt = FailOn.breaking,
) -> None:
    """Compare two schemas: the Schema Registry verdict plus CDC breaking-change rules."""
    try:
        from contracts.diff.engine import diff_sides
        from contracts.diff.inputs import load_side
        from contracts.diff.loading import LineIndex
        from contracts.diff.report import Entry, Report

        old_side, new_side = load_side(old), load_side(new)
        result = diff_sides(old_side, new_side, level)
        lines = None
        if new_side.kind == "contract" and new_side.path is not None:
            lines = LineIndex.of_text(new.read_text(encoding="utf-8")).line
        label = new_side.contract.name if new_side.contract is not None else str(new)
        entry = Entry(label, str(new), "changed", result, lines)
        report = Report([entry], fail_on=fail_on.value)
    except ContractsError as err:
        fail_with(_unusable(err))
    _emit(report, output)


def check(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Directory of contract files: every *.yaml/*.yml under it must be a contract."
        ),
    ] = Path("."),
    against: Annotated[
        str,
        typer.Option(
            "--against",
            help="Baseline: git:REF (e.g. git:origin/main) or 'registry' (with --url).",
        ),
    ] = "git:HEAD",
    staged: Annotated[
        bool,
        typer.Option(
            "--staged",
            help="Check the contracts as staged in the git index (what a commit records), not "
            "the working tree: for pre-commit hooks.",
        ),
    ] = False,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            envvar=["CDC_CONTRACTS_REGISTRY_URL", "SCHEMA_REGISTRY_URL"],
            help="Schema Registry URL, for --against registry (env CDC_CONTRACTS_REGISTRY_URL "
            "or SCHEMA_REGISTRY_URL).",
        ),
    ] = None,
    basic_auth: Annotated[
        str | None,
        typer.Option(
            "--basic-auth",
            envvar="SCHEMA_REGISTRY_BASIC_AUTH",
            help="USER:PASSWORD for the registry (env SCHEMA_REGISTRY_BASIC_AUTH).",
        ),
    ] = None,
    bearer_token: Annotated[
        str | None,
        typer.Option(
            "--bearer-token",
            envvar="SCHEMA_REGISTRY_BEARER_TOKEN",
            help="Bearer token for the registry (env SCHEMA_REGISTRY_BEARER_TOKEN).",
        ),
    ] = None,
    level: LevelOpt = None,
    output: OutputOpt = Output.text,
    fail_on: FailOnOpt = FailOn.breaking,
) -> None:
    """Compare every contract in DIR with a git ref or the registry; report breaking changes.

    Exit 0: nothing fails the gate; 1: a breaking change (per --fail-on); 2: unusable input
    (a file that is not a contract, an unknown ref, an unreachable registry, no contracts).
    """
    try:
        from contracts.diff.report import Report

        if against.startswith("git:") and len(against) > 4:
            entries, skipped = _check_git(directory, against[4:], level, staged)
        elif against == "registry":
            if not url:
                raise InputError(
                    "--against registry needs --url URL (or SCHEMA_REGISTRY_URL)", "--url"
                )
            auth = {"basic_auth": basic_auth, "bearer_token": bearer_token}
            entries, skipped = _check_registry(directory, url, auth, level, staged), []
        else:
            raise InputError(f"unknown baseline {against!r}: use git:REF or registry", "--against")
        report = Report(entries, fail_on=fail_on.value, against=against, skipped=skipped)
    except ContractsError as err:
        fail_with(_unusable(err))
    _emit(report, output)


def _unusable(err: ContractsError) -> ContractsError:
    """The error as unusable input (exit 2): exit 1 means a breaking change, and only that.

    Registry errors carry exit code 1 elsewhere (``registry push`` refused); here an
    unreachable registry or a bad URL means the gate could not run.
    """
    return err if err.exit_code == 2 else InputError(err.what, err.where)


def _no_contracts(directory: Path, baseline: str) -> InputError:
    return InputError(
        f"no contracts found under {directory} (no *.yaml or *.yml file here, nor at {baseline})",
        str(directory),
    )


def _check_git(
    directory: Path, ref: str, level: CompatibilityLevel | None, staged: bool
) -> tuple[list[Entry], list[str]]:
    from contracts.diff.catalog import compare_catalog, git_baseline, staged_texts, worktree_texts

    base = git_baseline(directory, ref)
    current = staged_texts(directory)[1] if staged else worktree_texts(directory, base.root)
    if not current and not base.texts:
        raise _no_contracts(directory, f"git:{ref}")
    found = compare_catalog(current, base.texts, level, f"git:{ref}", ref)
    return found.entries, found.skipped


def _check_registry(
    directory: Path,
    url: str,
    auth: dict[str, Any],
    level: CompatibilityLevel | None,
    staged: bool,
) -> list[Entry]:
    from contracts.diff.catalog import (
        compare_with_history,
        load_bytes,
        staged_texts,
        worktree_texts,
    )

    try:
        from registry_sync.baseline import RegistryBaseline
    except ImportError as err:
        raise InputError(f"the registry baseline is not available: {err}", "--against") from None
    if staged:
        repo, texts = staged_texts(directory)
        shown = {rel: os.path.relpath(repo.root / rel) for rel in texts}
    else:
        root = directory.resolve()
        texts = worktree_texts(directory, root)
        shown = {rel: os.path.relpath(root / rel) for rel in texts}
    if not texts:
        raise _no_contracts(directory, "the registry")
    items = [(shown[rel], load_bytes(data, shown[rel])) for rel, data in texts.items()]
    baseline = RegistryBaseline(url, **{k: v for k, v in auth.items() if v})
    try:
        return compare_with_history(items, baseline.previous_sides, level)
    finally:
        baseline.close()


def _emit(report: Report, output: Output) -> None:
    from contracts.diff.report import RENDERERS, step_summary

    sys.stdout.write(RENDERERS[output.value](report))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if output is Output.github and summary:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(step_summary(report))
        except OSError as err:
            sys.stderr.write(
                f"warning: GITHUB_STEP_SUMMARY {summary}: cannot write the step summary: "
                f"{err.strerror or err}\n"
            )
    raise typer.Exit(1 if report.failed else 0)
