"""The one way tests run ``cdc-contracts``.

:func:`run` calls the real entry point, ``cli.main.main(argv)``, in this process: the error
mapping to exit codes and the conventions layer (``cli/conventions.py``: old flag spellings,
help shape) are exercised exactly as the installed script runs them, without a new interpreter
per call. Standard output and error are strict UTF-8 text streams over bytes (as a process has
them, never a terminal), standard input is the given bytes (empty by default), and the exit
code is the ``SystemExit`` the entry point ends with.

:func:`run_process` runs the installed script in a fresh interpreter for what needs a process:
real pipes and file descriptors, signals, a module that must not be imported yet.
:func:`command` is that command line, for tests that start a long-running process themselves
(``serve``, ``demo --keep-running``).

``tests/test_one_cli_runner.py`` fails when a test module runs the CLI any other way.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROG = "cdc-contracts"

#: Environment overrides: a value of ``None`` removes the variable for the run.
Env = Mapping[str, str | None]


@dataclass(frozen=True)
class Run:
    """One run of the CLI: its exit code, standard output (bytes) and standard error."""

    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        """Standard output as UTF-8 text."""
        return self.out.decode("utf-8")

    @property
    def output(self) -> str:
        """Standard output followed by standard error (what a terminal would show)."""
        return self.text + self.err

    def lines(self) -> list[str]:
        """The non-blank lines of standard output."""
        return [line for line in self.text.splitlines() if line.strip()]

    def errors(self) -> list[str]:
        """The ``error: …`` lines of standard error."""
        return [line for line in self.err.splitlines() if line.startswith("error: ")]


class _Kept(io.BytesIO):
    """A byte buffer whose contents survive ``close()`` (the CLI may close its stdout)."""

    def close(self) -> None:
        self.flush()


def _exit_code(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    return stop.code if isinstance(stop.code, int) else 1  # sys.exit("text") exits 1


@contextlib.contextmanager
def _environment(env: Env | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in env or {}}
    try:
        for name, value in (env or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _directory(cwd: str | Path | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    before = Path.cwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


def _as_bytes(data: str | bytes | None) -> bytes:
    if data is None:
        return b""
    return data.encode("utf-8") if isinstance(data, str) else data


def run(
    *args: str | Path,
    env: Env | None = None,
    stdin: str | bytes | None = None,
    cwd: str | Path | None = None,
) -> Run:
    """``cdc-contracts ARGS`` in this process through ``cli.main.main``."""
    from cli.main import main

    argv = [str(a) for a in args]
    out, err = _Kept(), _Kept()
    saved = sys.stdin, sys.stdout, sys.stderr, sys.argv
    sys.stdin = io.TextIOWrapper(io.BytesIO(_as_bytes(stdin)), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    sys.argv = [PROG, *argv]
    code = 0
    try:
        with _environment(env), _directory(cwd):
            main(argv)
    except SystemExit as stop:
        code = _exit_code(stop)
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError):  # closed by the CLI
                stream.flush()
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
    return Run(code, out.getvalue(), err.getvalue().decode("utf-8"))


def command(*args: str | Path) -> list[str]:
    """The command line of ``cdc-contracts ARGS`` in a fresh interpreter: the installed
    script beside this interpreter, else ``python -m cli.main``."""
    script = Path(sys.executable).parent / PROG
    head = [str(script)] if script.exists() else [sys.executable, "-m", "cli.main"]
    return [*head, *map(str, args)]


def process_env(env: Env | None = None) -> dict[str, str]:
    """This process's environment with ``env`` applied (``None`` removes a variable)."""
    merged = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return merged


def run_process(
    *args: str | Path,
    env: Env | None = None,
    stdin: str | bytes | None = None,
    cwd: str | Path | None = ROOT,
    timeout: float = 120,
    python: Sequence[str] | None = None,
    venv: str | Path | None = None,
) -> Run:
    """``cdc-contracts ARGS`` as a new process (real pipes, signals, a fresh interpreter).

    ``python``: run ``python -c CODE`` with these lines before the entry point is called
    (e.g. to hide a module) instead of the installed script. ``venv``: run the
    ``cdc-contracts`` of another installation (a virtualenv directory) instead.
    """
    if venv is not None:
        argv = [str(Path(venv) / "bin" / PROG), *map(str, args)]
    elif python is None:
        argv = command(*args)
    else:
        code = "; ".join([*python, "from cli.main import main", "main()"])
        argv = [sys.executable, "-c", code, *map(str, args)]
    done = subprocess.run(
        argv,
        input=_as_bytes(stdin),
        capture_output=True,
        cwd=cwd,
        env=process_env(env),
        timeout=timeout,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))
