"""Shared CLI helpers: one-line errors, output modes, progress bars, tables."""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final, NoReturn, TypeVar

from contracts.errors import ContractsError, InputError

T = TypeVar("T")


class OutputMode(enum.StrEnum):
    text = "text"
    json = "json"


def error_line(err: ContractsError) -> str:
    """``error: where: what``, located as everywhere else: ``file:line: $.path: what``."""
    from contracts.pipeline import error_text

    return f"error: {error_text(err)}"


def fail_with(err: ContractsError) -> NoReturn:
    """Print ``error: where: what`` on stderr and exit with the error's exit code."""
    sys.stderr.write(error_line(err) + "\n")
    sys.exit(err.exit_code)


#: The top-level modules of each extra's packages (pyproject.toml's optional dependencies).
EXTRA_OF_MODULE: Final[dict[str, str]] = {
    "pyspark": "spark",
    "pyarrow": "spark",
    "pandas": "spark",
    "py4j": "spark",
    "fastapi": "api",
    "starlette": "api",
    "uvicorn": "api",
    "jinja2": "api",
    "multipart": "api",
    "pydantic_settings": "api",
    "fastapi_offline": "api",
}


def missing_extra(err: ModuleNotFoundError) -> str | None:
    """The one-line error for a command that needs a part of an extra that is not installed
    (None when the missing module belongs to no extra: a bug, not a setup problem)."""
    root = (err.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(root)
    if extra is None:
        return None
    return (
        f"error: this command needs the [{extra}] extra ({root} is not installed): "
        f"pip install 'cdc-contracts[{extra}]'"
    )


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 message``, ``2 messages``."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def is_stdout(output: Path | None) -> bool:
    """Whether an output option means standard output (not given, or ``-``)."""
    return output is None or str(output) == "-"


def refuse_under_a_file(path: Path, where: str) -> None:
    """Refuse ``path`` when the nearest of its parents that exists is not a directory."""
    for parent in path.resolve().parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{parent} is not a directory", where)
            return


def guard_output_file(output: Path | None, inputs: Iterable[Path], flag: str) -> None:
    """Refuse an output file before anything is read or written: one of the ``inputs`` (the
    same file, however named: ``./a``, symlinks and hard links count), a directory, or a path
    under something that is not a directory."""
    if is_stdout(output):
        return
    assert output is not None
    where = f"{flag} {output}"
    if output.is_dir():
        raise InputError("is a directory: give a file name", where)
    target = output.resolve()
    refuse_under_a_file(output, where)
    for given in inputs:
        if str(given) == "-":
            continue
        if given.resolve() == target or _same_file(given, output):
            raise InputError(
                f"is {given}, which this run reads: writing there would destroy it; "
                "choose another output file",
                where,
            )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def guard_output_dir(
    output: Path, inputs: Iterable[Path], overwrite: bool, flag: str = "--output"
) -> None:
    """Refuse an output directory that a writer would replace wholesale, before it runs.

    ``output`` may not be, hold, or lie inside any of ``inputs`` (compared resolved, so
    ``./a``, ``a/../a`` and symlinks count as the same path), not even with ``overwrite``.
    Without ``overwrite`` it must not exist, or be an empty directory.
    """
    target = output.resolve()
    for given in inputs:
        source = given.resolve()
        if target == source:
            relation = "is"
        elif source in target.parents:
            relation = "is inside"
        elif target in source.parents:
            relation = "contains"
        else:
            continue
        raise InputError(
            f"{relation} {given}, which this run reads; writing the output there would "
            "delete it: choose another output directory",
            f"{flag} {output}",
        )
    refuse_under_a_file(output, f"{flag} {output}")
    if overwrite or not output.exists():
        return
    if not output.is_dir():
        raise InputError(
            "is an existing file, which the output directory would replace: give --overwrite "
            "to replace it",
            f"{flag} {output}",
        )
    try:
        occupied = any(output.iterdir())
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", f"{flag} {output}") from None
    if occupied:
        raise InputError(
            "is a directory that is not empty, and its contents would be deleted: give "
            "--overwrite to replace them",
            f"{flag} {output}",
        )


def print_json(value: Any) -> None:
    """Write ``value`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def write_output(text: str, output: Path | None) -> None:
    """Write text to ``output`` (missing directories are created) or stdout (None or ``-``)."""
    text = text if text.endswith("\n") else text + "\n"
    if is_stdout(output):
        sys.stdout.write(text)
        return
    assert output is not None
    with open_output(output, "w") as sink:
        sink.write(text)


def open_output(output: Path, mode: str = "wb") -> IO[Any]:
    """Open an output file for writing, creating missing directories; an OS error (no
    permission, a full disk, a path under a file) is an :class:`InputError` naming it."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        if "b" in mode:
            return output.open(mode)
        return output.open(mode, encoding="utf-8")
    except OSError as err:
        raise InputError(f"cannot be written: {err.strerror or err}", str(output)) from None


#: Off a terminal (a log file, a pipe, CI) output is never wrapped or cut to fit a width:
#: lines are as long as they need to be, up to this.
LOG_WIDTH: Final = 1000


def console(stderr: bool = False) -> Any:
    """A rich console for stdout or stderr: fitted to a terminal, unwrapped and uncoloured
    otherwise (a URL or a name in a log is never split or cut with "…")."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=LOG_WIDTH, soft_wrap=True, highlight=False)


def stderr_console() -> Any:
    return console(stderr=True)


def stdout_console() -> Any:
    return console()


def progress(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate with a progress bar on stderr when it is a terminal; plain iteration otherwise."""
    if not sys.stderr.isatty():
        yield from items
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=stderr_console(), transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)


def table(title: str | None, headers: list[str], rows: list[list[Any]]) -> None:
    """Print a readable table on stdout."""
    from rich.table import Table

    t = Table(title=title, header_style="bold")
    for h in headers:
        t.add_column(h)
    for row in rows:
        t.add_row(*("" if v is None else str(v) for v in row))
    stdout_console().print(t)
