"""``cdc-contracts diff`` and ``cdc-contracts check``: the CI gate for schema changes.

Exit codes: 0 = not breaking (per ``--fail-on``), 1 = breaking, 2 = unusable input or usage.
Settings come from the flags, their environment variables, then ``cdc-contracts.yaml``
(:mod:`cli.project_config`).
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from cli.common import error_line, fail_with, guard_output_file, is_stdout
from cli.project_config import ConfigOpt
from contracts.contract import CompatibilityLevel
from contracts.errors import ContractsError, InputError

if TYPE_CHECKING:
    from cli.project_config import RegistryOptions
    from contracts.config import ProjectConfig
    from contracts.diff.report import Entry, Report


class OutputFormat(enum.StrEnum):
    """What check and diff write (``contracts.diff.report.RENDERERS``; a test holds them equal)."""

    text = "text"
    json = "json"
    github = "github"
    junit = "junit"
    markdown = "markdown"
    sarif = "sarif"
    gitlab = "gitlab"


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
        help="Compatibility level to judge at [default: the contract's, else the "
        "configuration's compatibility, else BACKWARD].",
    ),
]
OutputFormatOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "--output-format",
        metavar="FORMAT",
        help="What to write: text, json, github (annotations), junit, markdown, sarif "
        "(GitHub code scanning) or gitlab (Code Quality) [default: the configuration's "
        "output_format, else text].",
    ),
]
OutputFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report to this file (the text summary still goes to stdout) "
        "[default: stdout].",
    ),
]
FailOnOpt = Annotated[
    FailOn | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 on breaking changes, also on warnings, or never [default: the "
        "configuration's fail_on, else breaking].",
    ),
]


@dataclass(frozen=True, slots=True)
class _Gate:
    """The settings of one check or diff run, flags first, then the configuration."""

    config: ProjectConfig
    output_format: OutputFormat
    output: Path | None
    fail_on: FailOn

    @classmethod
    def bare(cls, output_format: OutputFormat | None, output: Path | None) -> _Gate | None:
        """The flags alone, for reporting an error met before the configuration was read
        (a bad cdc-contracts.yaml still gets one error in the format the flags ask for)."""
        from contracts.config import ProjectConfig

        if output_format is None:
            return None
        return cls(ProjectConfig(), output_format, output, FailOn.breaking)

    @classmethod
    def of(
        cls,
        config_path: Path | None,
        output_format: OutputFormat | None,
        output: Path | None,
        fail_on: FailOn | None,
        inputs: list[Path],
    ) -> _Gate:
        from cli.project_config import first_set, project_config

        guard_output_file(output, inputs, "--output")
        config = project_config(config_path)
        return cls(
            config,
            OutputFormat(first_set(output_format, config.output_format, default="text")),
            output,
            FailOn(first_set(fail_on, config.fail_on, default="breaking")),
        )

    def judging(self) -> dict[str, Any]:
        """How each contract is judged: ``fail_on``, the exceptions, the default level."""
        return {
            "fail_on": self.fail_on.value,
            "exceptions": self.config.exception_set(),
            "default_level": self.config.compatibility,
        }


def register(app: typer.Typer) -> None:
    app.command("diff")(diff)
    app.command("check")(check)


def diff(
    old: Annotated[
        Path,
        typer.Argument(
            help="The old side: contract, .avsc, Connect schema JSON or messages with an "
            "embedded schema (every message must carry the same schema); - for standard "
            "input, or a pipe: <(git show HEAD:FILE)."
        ),
    ],
    new: Annotated[Path, typer.Argument(help="The new side (may be a different kind than OLD).")],
    level: LevelOpt = None,
    output_format: OutputFormatOpt = None,
    output: OutputFileOpt = None,
    fail_on: FailOnOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Compare two schemas: the Schema Registry verdict plus CDC breaking-change rules.

    The configuration's exceptions for the NEW contract apply. Exit 0: nothing fails the
    gate; 1: a breaking change (per --fail-on); 2: unusable input or settings.
    """
    gate: _Gate | None = None
    try:
        gate = _Gate.of(config, output_format, output, fail_on, [old, new])
        from contracts.diff.engine import diff_sides
        from contracts.diff.exceptions import unmatched_notices
        from contracts.diff.inputs import load_side, read_text
        from contracts.diff.loading import LineIndex
        from contracts.diff.report import Entry, Report
        from contracts.diff.verdict import contract_verdict

        settings = gate.config
        old_side, new_side = load_side(old), load_side(new)
        if new_side.contract is not None:  # judged as check judges it, with the exceptions
            verdict = contract_verdict(
                new_side.contract,
                [old_side],
                level=level,
                fail_on=gate.fail_on.value,
                exceptions=settings.exception_set(),
                source=str(new),
                default_level=settings.compatibility,
            )
            lines = None
            if new_side.path is not None:
                lines = LineIndex.of_text(read_text(new)).line
            entry = Entry(verdict.name, str(new), "changed", verdict.result, lines, verdict)
        else:
            result = diff_sides(old_side, new_side, level, default_level=settings.compatibility)
            entry = Entry(str(new), str(new), "changed", result)
        notices = unmatched_notices([entry], settings.exceptions, contracts=[entry.label])
        report = Report([entry], fail_on=gate.fail_on.value, notices=notices)
    except ContractsError as err:
        _fail(_unusable(err), gate or _Gate.bare(output_format, output), ".")
    _emit(report, gate)


def check(
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="Directory of contract files: every *.yaml/*.yml under it must be a contract "
            "[default: the configuration's contracts directory, else .].",
            show_default=False,
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="BASELINE",
            help="Baseline: git:REF (e.g. git:origin/main) or 'registry' (with --url) "
            "[default: the configuration's against, else git:HEAD].",
        ),
    ] = None,
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
            help="Schema Registry URL, for --against registry [default: the configuration's "
            "registry.url].",
        ),
    ] = None,
    basic_auth: Annotated[
        str | None,
        typer.Option(
            "--basic-auth",
            envvar="SCHEMA_REGISTRY_BASIC_AUTH",
            metavar="USER:PASSWORD",
            help="Credentials for the registry [default: the variable the configuration's "
            "registry.basic_auth_env names].",
        ),
    ] = None,
    bearer_token: Annotated[
        str | None,
        typer.Option(
            "--bearer-token",
            envvar="SCHEMA_REGISTRY_BEARER_TOKEN",
            metavar="TOKEN",
            help="Bearer token for the registry [default: the variable the configuration's "
            "registry.bearer_token_env names].",
        ),
    ] = None,
    level: LevelOpt = None,
    output_format: OutputFormatOpt = None,
    output: OutputFileOpt = None,
    fail_on: FailOnOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Compare every contract in DIR with a git ref or the registry; report breaking changes.

    The configuration's exceptions excuse deliberate changes (shown in every report); an
    expired exception fails again; one that matches nothing is a warning. Exit 0: nothing
    fails the gate; 1: a breaking change (per --fail-on); 2: unusable input or settings (a
    file that is not a contract, an unknown ref, an unreachable registry, no contracts).
    """
    gate: _Gate | None = None
    shown_dir = str(directory or ".")
    try:
        gate = _Gate.of(config, output_format, output, fail_on, [])
        from contracts.diff.exceptions import unmatched_notices
        from contracts.diff.report import Report

        settings = gate.config
        folder = directory or settings.contracts_dir or Path(".")
        shown_dir = str(folder)
        baseline = against or settings.against or "git:HEAD"
        if baseline.startswith("git:") and len(baseline) > 4:
            entries, skipped = _check_git(folder, baseline[4:], level, staged, gate)
        elif baseline == "registry":
            from cli.project_config import registry_options

            registry = registry_options(
                settings, url, basic_auth, bearer_token, needed_by="--against registry"
            )
            entries = _check_registry(folder, registry, level, staged, gate)
            skipped = []
        else:
            raise InputError(f"unknown baseline {baseline!r}: use git:REF or registry", "--against")
        notices = unmatched_notices(entries, settings.exceptions)
        report = Report(
            entries, fail_on=gate.fail_on.value, against=baseline, skipped=skipped, notices=notices
        )
    except ContractsError as err:
        _fail(_unusable(err), gate or _Gate.bare(output_format, output), shown_dir)
    _emit(report, gate)


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
    directory: Path,
    ref: str,
    level: CompatibilityLevel | None,
    staged: bool,
    gate: _Gate,
) -> tuple[list[Entry], list[str]]:
    from contracts.diff.catalog import compare_catalog, git_baseline, staged_texts, worktree_texts

    base = git_baseline(directory, ref)
    current: dict[str, bytes | str | Path] = dict(
        staged_texts(directory)[1] if staged else worktree_texts(directory, base.root)
    )
    baseline: dict[str, bytes | str] = dict(base.texts)
    derive = gate.config.derive
    notes: list[str] = []
    if derive is not None:  # contracts derived from the repository's DDL, at both sides
        from collections import Counter

        from contracts.derive.gate import INDEX, WORKTREE, derived_texts, skipped_note

        passed: Counter[str] = Counter()
        side = INDEX if staged else WORKTREE
        current.update(derived_texts(derive, gate.config.base_dir, side, passed))
        baseline.update(derived_texts(derive, gate.config.base_dir, ref))
        if passed:
            notes.append(skipped_note(passed, f"derive.from_ddl {derive.from_ddl}"))
    if not current and not baseline:
        raise _no_contracts(directory, f"git:{ref}")
    found = compare_catalog(
        current,
        baseline,
        level,
        f"git:{ref}",
        ref,
        baseline_default_level=_baseline_default_level(gate, directory, ref),
        **gate.judging(),
    )
    return found.entries, found.skipped + notes


def _baseline_default_level(gate: _Gate, directory: Path, ref: str) -> CompatibilityLevel:
    """The default level of the configuration as it was at ``ref`` (a change of the default
    changes the level of every contract that sets none, and is judged as such)."""
    from contracts.config import ProjectConfig
    from contracts.contract import Contract, parse_yaml_model
    from contracts.diff.catalog import git_baseline, git_repo
    from contracts.errors import ConfigError

    unset = CompatibilityLevel(Contract.model_fields["compatibility"].default)
    path = gate.config.path
    if path is None:
        return unset
    try:
        rel = path.resolve().relative_to(git_repo(directory).root).as_posix()
    except ValueError:
        return gate.config.compatibility or unset  # the file is not in the repository
    text = git_baseline(directory, ref, want=lambda r: r == rel).texts.get(rel)
    if text is None:
        return unset
    where = f"{ref}:{rel}"
    then, _ = parse_yaml_model(
        text.decode("utf-8", errors="replace"),
        where,
        ProjectConfig,
        ConfigError,
        "configuration file",
    )
    return then.compatibility or unset


def _check_registry(
    directory: Path,
    registry: RegistryOptions,
    level: CompatibilityLevel | None,
    staged: bool,
    gate: _Gate,
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
    baseline = RegistryBaseline(registry.url, registry.strategy, **registry.auth())
    try:
        return compare_with_history(
            items,
            baseline.previous_sides,
            level,
            registered_level=baseline.level,
            **gate.judging(),
        )
    finally:
        baseline.close()


def _fail(err: ContractsError, gate: _Gate | None, fallback_path: str) -> NoReturn:
    """Stop a run that could not judge: the error line on stderr (exit 2), and in a machine
    format one annotation/notification/issue saying so, where the report would have gone."""
    from cli.common import write_output
    from contracts.diff.report import render_error

    if gate is not None and gate.output_format is not OutputFormat.text:
        text = render_error(gate.output_format.value, err, fallback_path)
        try:
            write_output(text, gate.output)
        except ContractsError as write_err:
            sys.stderr.write(error_line(write_err) + "\n")
        _step_summary(gate, lambda: render_error("markdown", err))
    fail_with(err)


def _emit(report: Report, gate: _Gate) -> None:
    """Write the report (stdout or ``-o FILE``; with a file, the text summary on stdout) and
    exit 0, or 1 when the report fails the gate."""
    from cli.common import write_output
    from contracts.diff.report import RENDERERS, render_text, step_summary

    text = RENDERERS[gate.output_format.value](report)
    write_output(text, gate.output)
    if gate.output is not None and not is_stdout(gate.output):
        if gate.output_format is not OutputFormat.text:
            sys.stdout.write(render_text(report))
        sys.stderr.write(f"wrote {gate.output}\n")
    _step_summary(gate, lambda: step_summary(report))
    raise typer.Exit(1 if report.failed else 0)


def _step_summary(gate: _Gate, markdown: Callable[[], str]) -> None:
    """Append the Markdown summary to ``$GITHUB_STEP_SUMMARY`` (github output only)."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if gate.output_format is not OutputFormat.github or not summary:
        return
    try:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(markdown())
    except OSError as err:
        sys.stderr.write(
            f"warning: GITHUB_STEP_SUMMARY {summary}: cannot write the step summary: "
            f"{err.strerror or err}\n"
        )
