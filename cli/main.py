"""The ``cdc-contracts`` command: the composition root.

Each command lives in its own module with a ``register(app)`` function; heavy parts (pyspark,
uvicorn, the registry client) are imported inside the commands that need them, so that
``cdc-contracts diff`` never starts a JVM.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from typing import Any, NoReturn

import typer
import typer.main

from cli import conventions
from cli.common import fail_with, missing_extra
from contracts.errors import ContractsError

PROG = "cdc-contracts"

#: Modules under ``cli/`` that contribute commands, in help order.
COMMAND_MODULES = (
    "render",
    "formats_cmd",
    "infer_cmd",
    "derive_cmd",
    "diff_cmd",
    "init_cmd",
    "registry_cmd",
    "serve_cmd",
    "catalog_cmd",
    "spark_cmd",
    "demo_cmd",
)

app = typer.Typer(
    name="cdc-contracts",
    help="Schema contracts for change-data-capture streams: infer, render, diff, register, "
    "serve and apply them.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"cli.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"cli.{name}":
                continue  # a command module not built yet
            raise
        module.register(app)


_register_all()


def command() -> Any:
    """The click command tree of :data:`app`, shaped by :mod:`cli.conventions` (plain help at
    80 columns for every command, whoever added it)."""
    return conventions.build(typer.main.get_command(app))


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning project errors into one line and an exit code."""
    warnings.simplefilter("default")
    try:
        root = command()
        args = conventions.rewrite_argv(root, sys.argv[1:] if argv is None else argv)
        stdout = sys.stdout
        try:
            code = root.main(args=args, prog_name=PROG, standalone_mode=False)
        except SystemExit:
            if sys.stdout is not stdout and _pipe_was_closed():
                _closed_pipe(stdout)
            raise
        if isinstance(code, int) and code:  # a typer.Exit(code) raised inside a command
            sys.exit(code)
    except ContractsError as err:
        fail_with(err)
    except typer.Exit as ex:
        sys.exit(ex.exit_code)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        sys.exit(130)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        _closed_pipe(sys.stdout)
    except ModuleNotFoundError as err:
        line = missing_extra(err)
        if line is None:
            _internal_error(err)
        sys.stderr.write(line + "\n")
        sys.exit(2)
    except OSError as err:  # a file the user named cannot be read or written
        what = err.strerror or str(err)
        sys.stderr.write(f"error: {err.filename}: {what}\n" if err.filename else f"error: {what}\n")
        sys.exit(2)
    except Exception as err:  # click usage errors (typer bundles its own click) and bugs
        if callable(getattr(err, "format_message", None)) and isinstance(
            getattr(err, "exit_code", None), int
        ):
            _usage_error(err)
        _internal_error(err)
    sys.exit(0)


#: The exit status of a run whose reader closed the pipe (``normalize big.jsonl | head -1``):
#: 128 + SIGPIPE, what a shell reports for a program the signal ended, as ``yes | head`` does.
CLOSED_PIPE_EXIT = 141


def _pipe_was_closed() -> bool:
    """Whether click ended the run because standard output is a closed pipe (it then wraps
    stdout in its PacifyFlushWrapper and exits 1, the status of a failed run)."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def _closed_pipe(stdout: object) -> NoReturn:
    """Exit quietly when the program reading standard output has closed it: no error
    message, no Python complaint when the interpreter flushes stdout at exit."""
    if stdout is sys.__stdout__:  # the process's own stdout (not one a test put in its place)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
        finally:
            os.close(devnull)
    sys.stdout = stdout
    sys.exit(CLOSED_PIPE_EXIT)


def _internal_error(err: Exception) -> NoReturn:
    """A bug: one line and exit 3 (the traceback with ``CDC_CONTRACTS_DEBUG=1``)."""
    if os.environ.get("CDC_CONTRACTS_DEBUG"):
        raise err
    sys.stderr.write(
        f"internal error: {type(err).__name__}: {err} (set CDC_CONTRACTS_DEBUG=1 for a traceback)\n"
    )
    sys.exit(3)


def _usage_error(err: Exception) -> None:
    """A usage error (unknown option, bad value) as one line naming the command's help."""
    ctx = getattr(err, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    message = " ".join(err.format_message().split())  # type: ignore[attr-defined]
    sys.stderr.write(f"error: {message}{hint}\n")
    sys.exit(2)


def _version(value: bool) -> None:
    if value:
        from contracts import __version__

        typer.echo(f"cdc-contracts {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """Schema contracts for change-data-capture streams: infer, render, diff, register, serve
    and apply them."""


if __name__ == "__main__":
    main()
