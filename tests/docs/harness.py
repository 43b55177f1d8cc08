"""Run the shell examples of README.md and docs/*.md as a reader would, and compare outputs.

**What runs.** On every page that shows a ``cdc-contracts ...`` command, every shell block:

- ``bash``/``sh``/``shell`` blocks: every command in them (comment lines left out; ``\\``
  continuations and here-documents kept whole);
- ``console``/``text`` and unlabelled blocks: the ``$ `` lines; the lines after a command, up to
  the next ``$``, are the output the page shows, and the real output must contain them in order
  (``…`` in a shown line matches anything). Such a block without any ``$`` whose lines start
  with ``cdc-contracts`` is read as a shell block.

The blocks of one page run in order as one shell session (the working directory and exported
variables carry over from block to block) in a temporary directory that holds a copy of
``examples/`` and ``tests/fixtures/``; ``/tmp/`` in a command is a directory of that temporary
directory. Each command must exit 0, or N when its trailing comment starts with ``exit N``
(``cdc-contracts diff a.yaml b.yaml   # exit 1: a breaking change``) or when the block says so.

**Services.** ``cdc-contracts serve`` and ``python -m api.registry`` are started in the background
on a free port (waiting until they answer) and stopped when the page is done; ``localhost:8081``
and ``127.0.0.1:8081`` in every command mean the first one started. A page that uses
``localhost:8081`` without starting a server gets a ``cdc-contracts serve`` started for it.

**Directives.** An HTML comment on the line(s) right before a fence, one per comment:

- ``<!-- doc-test: skip: REASON -->`` — the block is not run; the reason is required and shown;
- ``<!-- doc-test: exit: N -->`` — every command of the block exits N;
- ``<!-- doc-test: setup: SHELL -->`` — run first, hidden from the page (e.g. a file the page
  assumes exists); keep these rare: a page should create what it uses;
- ``<!-- doc-test: needs: spark -->`` — the block reads what a ``spark decode`` above wrote: it
  runs with Spark only.

A block marked ``<!-- runs: ... -->`` is run whole by the test that carries that exact marker
(e.g. tests/cli/test_ci_docs.py for docs/ci.md); such a test must exist.

Spark: in the quick run (``-m "not spark"``) ``spark decode`` commands are left out (said so in
the report); the Spark-marked test runs each page that has one in full.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import clirun

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
SHELL_LANGS = frozenset({"bash", "sh", "shell"})
CONSOLE_LANGS = frozenset({"console", "text", ""})
DIRECTIVE = re.compile(r"<!--\s*doc-test:\s*(\w+)\s*:?\s*(.*?)\s*-->")
RUNS_ELSEWHERE = re.compile(r"<!--\s*runs:.*?-->")
KEYS = frozenset({"skip", "exit", "setup", "needs"})
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
EXIT_COMMENT = re.compile(r"#\s*exit\s+(\d+)\b")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
LONG_RUNNING = re.compile(r"^(cdc-contracts\s+serve|python3?\s+-m\s+api\.registry|uvicorn)\b")
LOCAL_REGISTRY = re.compile(r"(?:localhost|127\.0\.0\.1):8081")
SPARK_COMMAND = re.compile(r"\bcdc-contracts\s+spark\s+decode\b")
MARK = "@@doc-test@@"
#: waits until a background server answers on its port (0), or its process is gone (1)
WAIT_SCRIPT = Path(__file__).with_name("wait_for_server.py")


class DocError(Exception):
    """A page's example is malformed (a directive without its reason, an unknown key)."""


@dataclass(frozen=True)
class Command:
    """One command of a block: its shell text, where it is, what it must exit with and print."""

    text: str
    line: int
    exit: int
    shown: tuple[str, ...] = ()

    @property
    def is_cdc(self) -> bool:
        return self.text.lstrip().startswith("cdc-contracts")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    commands: tuple[Command, ...]
    skip: str | None = None
    setup: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    needs: tuple[str, ...] = ()

    @property
    def needs_spark(self) -> bool:
        return "spark" in self.needs or any(SPARK_COMMAND.search(c.text) for c in self.commands)


# --- reading pages ---------------------------------------------------------------------------


def is_runnable(page: Path) -> bool:
    """Whether a page has a ``cdc-contracts`` command in a block that is not skipped."""
    return any(b.skip is None and any(c.is_cdc for c in b.commands) for b in blocks(page))


def blocks(page: Path) -> list[Block]:
    """The shell blocks of ``page`` (skipped ones included)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, lang = match.group(2), match.group(3).lower()
        end = next(
            (j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)), len(lines)
        )
        body = lines[i + 1 : end]
        if lang in SHELL_LANGS | CONSOLE_LANGS:
            block = _block(page, i + 1, lang, body, _directives(page, lines, i))
            if block is not None:
                found.append(block)
        i = end + 1
    return found


def _directives(page: Path, lines: list[str], fence: int) -> dict[str, list[str]]:
    """The ``doc-test`` comments right above line ``fence`` (0-based)."""
    found: dict[str, list[str]] = {}
    j = fence - 1
    while j >= 0 and lines[j].strip().startswith("<!--"):
        text = lines[j].strip()
        where = f"{page.relative_to(ROOT)}:{j + 1}"
        if RUNS_ELSEWHERE.fullmatch(text):
            found.setdefault("runs", []).append(text)
        else:
            match = DIRECTIVE.fullmatch(text)
            if match is None:
                raise DocError(f"{where}: not a doc-test directive: {text}")
            key, value = match.group(1), match.group(2)
            if key not in KEYS:
                raise DocError(f"{where}: unknown doc-test key {key!r} (known: {sorted(KEYS)})")
            if not value:
                raise DocError(f"{where}: doc-test {key} needs a value (skip: a reason)")
            found.setdefault(key, []).append(value)
        j -= 1
    return found


def _block(
    page: Path, line: int, lang: str, body: list[str], directives: dict[str, list[str]]
) -> Block | None:
    bare = not any(b.startswith("$ ") for b in body) and any(
        b.startswith("cdc-contracts ") for b in body
    )  # an unlabelled block of commands without prompts
    shell = lang in SHELL_LANGS or (lang in CONSOLE_LANGS and bare)
    commands = _shell_commands(body, line) if shell else _console_commands(body, line)
    if not commands:
        return None
    if "exit" in directives:
        code = int(directives["exit"][0])
        commands = [Command(c.text, c.line, code, c.shown) for c in commands]
    skip = directives.get("skip", [None])[0]
    if "runs" in directives:
        marker = directives["runs"][0]
        skip = f"run whole by the test that carries {marker!r}"
        if not _marker_is_tested(marker):
            raise DocError(f"{page.relative_to(ROOT)}:{line}: no test under tests/ has {marker}")
    needs = tuple(directives.get("needs", []))
    unknown = set(needs) - {"spark"}
    if unknown:
        raise DocError(
            f"{page.relative_to(ROOT)}:{line}: doc-test needs: {sorted(unknown)}? (spark)"
        )
    setup = tuple(directives.get("setup", []))
    return Block(page, line, lang, tuple(commands), skip, setup, needs)


def _marker_is_tested(marker: str) -> bool:
    return any(
        marker in path.read_text(encoding="utf-8", errors="replace")
        for path in (ROOT / "tests").rglob("*.py")
    )


def _take_command(body: list[str], i: int) -> tuple[str, int]:
    """The command starting at ``body[i]`` (continuations and here-documents), and the index
    after it."""
    parts = [body[i]]
    heredocs = [m.group(2) for m in HEREDOC.finditer(body[i])]
    i += 1
    while (parts[-1].rstrip().endswith("\\") or _open_quote("\n".join(parts))) and i < len(body):
        parts.append(body[i])
        heredocs += [m.group(2) for m in HEREDOC.finditer(body[i])]
        i += 1
    for word in heredocs:
        while i < len(body):
            parts.append(body[i])
            i += 1
            if body[i - 1].strip() == word:
                break
    return "\n".join(parts), i


def _open_quote(text: str) -> bool:
    """Whether ``text`` ends inside a quoted string (a command that goes on)."""
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return True
    return False


def strip_comment(line: str) -> str:
    """``line`` without its trailing shell comment (a ``#`` after a blank, outside quotes)."""
    quote = ""
    for k, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k].rstrip()
    return line


def _expected_exit(text: str) -> int:
    """N when the command's comment (on its last line) starts with ``exit N``, else 0."""
    last = text.splitlines()[-1]
    match = EXIT_COMMENT.match(last[last.find(" #") + 1 :]) if " #" in last else None
    return int(match.group(1)) if match else 0


def _shell_commands(body: list[str], first_line: int) -> list[Command]:
    commands: list[Command] = []
    i = 0
    while i < len(body):
        stripped = body[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i
        text, i = _take_command(body, i)
        commands.append(Command(text, first_line + 1 + start, _expected_exit(text)))
    return commands


def _console_commands(body: list[str], first_line: int) -> list[Command]:
    commands: list[Command] = []
    i = 0
    while i < len(body):
        if not body[i].startswith("$ "):
            i += 1
            continue
        start = i
        lines = [body[i][2:], *body[i + 1 :]]
        text, used = _take_command(lines, 0)
        i = start + used
        shown: list[str] = []
        while i < len(body) and not body[i].startswith("$ "):
            shown.append(body[i].rstrip())
            i += 1
        while shown and not shown[-1]:
            shown.pop()
        commands.append(Command(text, first_line + 1 + start, _expected_exit(text), tuple(shown)))
    return commands


# --- running pages ---------------------------------------------------------------------------


@dataclass
class Outcome:
    command: Command
    code: int
    output: str


@dataclass
class Session:
    """One page's shell session: a work directory, its state and the servers it started."""

    work: Path
    spark: bool
    port: int | None = None
    pids: list[int] = field(default_factory=list)
    pid_files: list[Path] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, tmp: Path, spark: bool) -> Session:
        work = tmp / "work"
        work.mkdir()
        shutil.copytree(ROOT / "examples", work / "examples", symlinks=False)
        shutil.copytree(ROOT / "tests" / "fixtures", work / "tests" / "fixtures")
        (work / "tmp").mkdir()
        state = tmp / "state"
        state.mkdir()
        (state / "cwd").write_text(str(work))
        (state / "env.sh").write_text("")
        (state / "home").mkdir()
        return cls(work, spark)

    @property
    def state(self) -> Path:
        return self.work.parent / "state"

    def run(self, block: Block) -> list[Outcome]:
        """Run a block; the outcome of each of its commands."""
        uses_registry = any(LOCAL_REGISTRY.search(c.text) for c in block.commands)
        starts_one = any(LONG_RUNNING.match(c.text.lstrip()) for c in block.commands)
        if uses_registry and self.port is None and not starts_one:
            self._start_default_server()
        script = self._script(block)
        done = subprocess.run(
            ["bash", "-c", script],
            stdin=subprocess.DEVNULL,
            cwd=self.work,
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        return self._outcomes(block, done.stdout + done.stderr)

    def close(self) -> None:
        for pid in self.pids:
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + 10
        for pid in self.pids:
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.1)
            if _alive(pid):
                os.kill(pid, 9)

    def _env(self) -> dict[str, str]:
        bin_dir = str(Path(sys.executable).parent)
        env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "docs",
            "GIT_AUTHOR_EMAIL": "docs@example.com",
            "GIT_COMMITTER_NAME": "docs",
            "GIT_COMMITTER_EMAIL": "docs@example.com",
            "COLUMNS": "100",
            "HOME": str(self.state / "home"),  # a page's ~/... never touches the real one
            "NO_COLOR": "1",
            "PYTHONWARNINGS": "ignore",
        }
        for name in ("CDC_CONTRACTS_CONFIG", "SCHEMA_REGISTRY_URL", "CDC_CONTRACTS_REGISTRY_URL"):
            env.pop(name, None)
        return env

    def _script(self, block: Block) -> str:
        state = shlex.quote(str(self.state))
        lines = [
            "exec 2>&1",
            f'cd "$(cat {state}/cwd)"',
            f"source {state}/env.sh",
            *block.setup,
        ]
        for index, command in enumerate(block.commands):
            lines.append(self._line(index, command))
        lines += [f"pwd > {state}/cwd", f"export -p > {state}/env.sh"]
        return "\n".join(lines) + "\n"

    def _line(self, index: int, command: Command) -> str:
        text = command.text.replace("/tmp/", f"{self.work}/tmp/")
        if not self.spark and SPARK_COMMAND.search(text):
            self.left_out.append(f"line {command.line}: {text.splitlines()[0]}")
            return f"printf '\\n{MARK} {index} skip\\n'"
        if LONG_RUNNING.match(text.lstrip()):
            return self._background(index, text)
        if self.port is not None:
            text = LOCAL_REGISTRY.sub(f"127.0.0.1:{self.port}", text)
        return f"{{\n{text}\n}}\nprintf '\\n{MARK} {index} %d\\n' $?"

    def _background(self, index: int, text: str) -> str:
        """A server command started in the background on a free port, waited for."""
        text = "\n".join([*text.splitlines()[:-1], strip_comment(text.splitlines()[-1])])
        port = _free_port()
        self.port = self.port or port
        if re.search(r"--port\s+\d+", text):
            text = re.sub(r"--port\s+\d+", f"--port {port}", text)
        else:
            text = text.rstrip() + f" --port {port}"
        pid_file = self.state / f"server-{port}.pid"
        log = self.state / f"server-{port}.log"
        body = (
            f"{text.rstrip()} > {log} 2>&1 &\n"
            f"pid=$!; echo $pid > {pid_file}\n"
            f"python {WAIT_SCRIPT} $pid {port}; rc=$?\n"
            f"if [ $rc -ne 0 ]; then cat {log}; wait $pid; rc=$?; fi\n(exit $rc)"
        )
        self.pid_files.append(pid_file)
        return f"{{\n{body}\n}}\nprintf '\\n{MARK} {index} %d\\n' $?"

    def collect_pids(self) -> None:
        for pid_file in self.pid_files:
            if pid_file.exists():
                self.pids.append(int(pid_file.read_text().split()[0]))
        self.pid_files.clear()

    def _start_default_server(self) -> None:
        port = _free_port()
        db = self.state / "registry.db"
        command = clirun.command("serve", "--port", str(port))
        command += ["--registry-db", str(db), "--log-level", "warning"]
        log = (self.state / "default-server.log").open("wb")
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        self.pids.append(process.pid)
        _wait_for(port, process)
        self.port = port

    def _outcomes(self, block: Block, output: str) -> list[Outcome]:
        self.collect_pids()
        pieces = re.split(rf"\n{re.escape(MARK)} (\d+) (\w+)\n", "\n" + output)
        outcomes: list[Outcome] = []
        for k in range(1, len(pieces) - 1, 3):
            index, code = int(pieces[k]), pieces[k + 1]
            if code == "skip":
                continue
            text = pieces[k - 1].replace(f"{self.work}/tmp/", "/tmp/").replace(f"{self.work}/", "")
            outcomes.append(Outcome(block.commands[index], int(code), text.strip("\n")))
        ran = {o.command for o in outcomes}
        missing = [
            c for c in block.commands if c not in ran and not self._left_out(c)
        ]  # the script stopped early
        for command in missing:
            outcomes.append(Outcome(command, -1, output[-2000:]))
        return outcomes

    def _left_out(self, command: Command) -> bool:
        return not self.spark and SPARK_COMMAND.search(command.text) is not None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(ChildProcessError):  # reap it when it is our child
        os.waitpid(pid, os.WNOHANG)
    return True


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not answer within 30 s")


# --- comparing -------------------------------------------------------------------------------


def shown_lines_missing(shown: tuple[str, ...], output: str) -> list[str]:
    """The shown lines the output lacks: each must match a later output line than the one
    before it (``…`` matches anything; trailing spaces are ignored)."""
    actual = [line.rstrip() for line in output.splitlines()]
    at = 0
    missing: list[str] = []
    for line in shown:
        if not line.strip():
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in line.split("…")))
        found = next((k for k in range(at, len(actual)) if pattern.fullmatch(actual[k])), None)
        if found is None:
            missing.append(line)
        else:
            at = found + 1
    return missing


def failures(outcomes: list[Outcome]) -> Iterator[str]:
    """One message per command that exited otherwise or did not print what the page shows."""
    for outcome in outcomes:
        command = outcome.command
        head = f"line {command.line}: {command.text.splitlines()[0]}"
        if outcome.code != command.exit:
            yield (
                f"{head}\n  exited {outcome.code}, the page expects {command.exit}\n"
                f"  output:\n{_indent(outcome.output)}"
            )
            continue
        missing = shown_lines_missing(command.shown, outcome.output)
        if missing:
            yield (
                f"{head}\n  the page shows lines the command did not print:\n"
                f"{_indent(chr(10).join(missing))}\n  output:\n{_indent(outcome.output)}"
            )
        if "Traceback (most recent call last)" in outcome.output:
            yield f"{head}\n  printed a traceback:\n{_indent(outcome.output)}"


def _indent(text: str, limit: int = 3000) -> str:
    text = text if len(text) <= limit else text[:limit] + "\n…"
    return "\n".join("    " + line for line in text.splitlines())
