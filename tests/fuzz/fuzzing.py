"""A bounded fuzz campaign over the real CLI: mutants of every format's fixtures run through
``normalize``, ``validate`` and ``infer``, each in its own process.

Mutants are made from ``tests/fixtures/<format>/`` inputs. Document-level operators work on the
parsed documents (lines, pretty-printed documents, array elements, CSV rows; an arcion-json key
and value pair is one unit): an envelope field swapped for another JSON type, a value nested
deeper than the readers allow (or just inside it), a lone surrogate, an integer beyond 64 bits,
NaN or Infinity, a unit duplicated or dropped, an arcion value document dropped. Byte-level
operators work on the file: bit flips, truncation, inserted bytes.

Each run calls ``cli.main.main`` in this process (which has imported the CLI once) with
``sys.argv`` set and stdout/stderr captured as strict UTF-8 text streams, as a fresh process
has them; a fork per run cost ~45 ms against ~2-5 ms, most of the campaign. One mutant in
:data:`FORK_SAMPLE` is also run in a fork with real file descriptors, and the two must agree
(same exit status, stdout and stderr), so state left behind by one run cannot change the next
unnoticed; a mutant that fails in-process is re-run in a fork, whose result is reported.
What is asserted, for every mutant:

- no exit 3 (or a signal), no ``Traceback``, no ``internal error`` and no "bug in cdc-contracts"
  line on stderr;
- ``normalize`` wrote as many event lines as its summary counts;
- for document-level mutants, nothing is hidden: every untouched unit yields the events and
  control records it yields in the clean fixture, and the touched unit yields its own or one
  error (a dropped unit yields nothing; a duplicated one twice) — events + errors account for
  the messages in;
- ``validate`` and ``normalize --contract`` judge alike: validate exits 0 only when normalize
  refused nothing.

A failing mutant is shrunk (units, then bytes, removed while it still fails) and written under
``tests/fixtures/fuzz/`` with what it caught (``manifest.json``).

    python tests/fuzz/fuzzing.py [--mutants 5000] [--seconds 900] [--seed 1] [--jobs 2]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import io
import json
import os
import random
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FIXTURES: Final = ROOT / "tests" / "fixtures"
REGRESSIONS: Final = FIXTURES / "fuzz"
#: Seconds one CLI run may take before it counts as a hang.
RUN_TIMEOUT: Final = 60
#: One mutant in this many is also run in forks, which must give the in-process results.
FORK_SAMPLE: Final = 10
_SUMMARY: Final = re.compile(
    r"normalized (\d+) messages?: (\d+) change events?, control records: (.*?), "
    r"bad messages: (\d+)(?:, (\d+) unusable inputs?)?"
)
_FORBIDDEN: Final = ("Traceback", "internal error", "bug in cdc-contracts")


# --- seeds: the fixtures, parsed into units ---------------------------------------------------


@dataclass
class Seed:
    """One fixture input: its format, layout, units and (when there is one) contract."""

    fmt: str
    path: Path
    layout: str  # lines | pretty | array | csv | binary
    units: list[list[Any]]  # each unit: its documents (or one CSV row)
    contract: Path | None
    fixed: int = 0  # leading units never mutated (a CSV header)
    counts: list[int] = field(default_factory=list)  # events + controls per unit, clean
    total: int = 0

    @property
    def name(self) -> str:
        return f"{self.fmt}/{self.path.name}"

    def render(self, units: list[list[Any]]) -> bytes:
        return _deepened(self._render(units))

    def _render(self, units: list[list[Any]]) -> bytes:
        docs = [doc for unit in units for doc in unit]
        if self.layout == "lines":
            return "".join(json.dumps(d) + "\n" for d in docs).encode("utf-8", "surrogatepass")
        if self.layout == "pretty":
            return "".join(json.dumps(d, indent=2) + "\n" for d in docs).encode(
                "utf-8", "surrogatepass"
            )
        if self.layout == "array":
            inner = ",\n".join(json.dumps(d, indent=1) for d in docs)
            return f"[\n{inner}\n]\n".encode("utf-8", "surrogatepass")
        if self.layout == "csv":
            out = io.StringIO()
            csv.writer(out, lineterminator="\r\n").writerows(docs)
            return out.getvalue().encode("utf-8", "surrogatepass")
        raise ValueError(self.layout)


def _documents(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    docs, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return docs
        doc, pos = decoder.raw_decode(text, pos)
        docs.append(doc)


def _layout(data: bytes) -> str:
    head = data.lstrip()[:1]
    if head == b"[":
        return "array"
    first = data.split(b"\n", 1)[0].strip()
    return "pretty" if first == b"{" else "lines"


def _is_key_document(doc: Any) -> bool:
    schema = doc.get("schema") if isinstance(doc, dict) else None
    return isinstance(schema, dict) and str(schema.get("name", "")).endswith(".Key")


def load_seeds() -> list[Seed]:
    """Every fixture input of every registered format (expected outputs left out)."""
    from contracts.formats import format_names

    seeds: list[Seed] = []
    for fmt in format_names():
        folder = FIXTURES / fmt
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if not path.is_file() or path.suffix in (".md", ".yaml", ".py", ".avsc"):
                continue
            if ".events." in path.name or path.name.endswith(".connect.json"):
                continue
            seeds.append(_seed(fmt, path))
    return seeds


def _seed(fmt: str, path: Path) -> Seed:
    stem = path.name.split(".")[0]
    contract = path.with_name(f"{stem}.expected.yaml")
    found = contract if contract.exists() else None
    data = path.read_bytes()
    if path.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
        header = (
            1 if (rows and "opType" in rows[0]) or (rows and "_NEW_VAL" in ",".join(rows[0])) else 0
        )
        return Seed(fmt, path, "csv", [[r] for r in rows], found, fixed=header)
    if path.suffix in (".bin", ".avro"):
        return Seed(fmt, path, "binary", [], found)
    layout = _layout(data)
    text = data.decode("utf-8")
    if layout == "lines":
        docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        parsed = _documents(text)
        docs = parsed[0] if layout == "array" and len(parsed) == 1 else parsed
    units: list[list[Any]] = []
    i = 0
    while i < len(docs):
        if fmt == "arcion-json" and _is_key_document(docs[i]) and i + 1 < len(docs):
            units.append([docs[i], docs[i + 1]])
            i += 2
        else:
            units.append([docs[i]])
            i += 1
    return Seed(fmt, path, layout, units, found)


# --- mutation operators -----------------------------------------------------------------------


@dataclass
class Mutant:
    seed: Seed
    op: str
    data: bytes
    unit: int | None = None  # the unit touched (document-level operators)
    effect: str = "replace"  # replace | dup | drop | drop-value | bytes
    docs_in_unit: int = 1


_SWAPS: Final[list[Any]] = [[], {}, ["x"], {"a": [1]}, 7, -1.5, "x", "", None, True]


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    """Paths to every value down to three levels (the envelope and its blocks)."""
    if depth >= 4:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i), depth + 1)


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


_DEEP: Final = re.compile(rb'"@@deep(\d+)([LM])@@"')


def _nested(depth: int, rng: random.Random) -> Any:
    """A marker that rendering replaces by a value nested ``depth`` levels (json.dumps would
    recurse too deeply to write it)."""
    return f"@@deep{depth}{rng.choice('LM')}@@"


def _deepened(data: bytes) -> bytes:
    def expand(match: re.Match[bytes]) -> bytes:
        depth = int(match.group(1))
        if match.group(2) == b"L":
            return b"[" * depth + b"1" + b"]" * depth
        return b'{"a":' * depth + b"1" + b"}" * depth

    return _DEEP.sub(expand, data)


def _json_value_op(rng: random.Random) -> tuple[str, Callable[[Any, random.Random], Any] | None]:
    ops: list[tuple[str, Callable[[Any, random.Random], Any] | None]] = [
        ("swap", lambda old, r: r.choice([s for s in _SWAPS if type(s) is not type(old)])),
        ("deep", lambda old, r: _nested(r.choice([40, 62, 66, 300, 1100]), r)),
        ("surrogate", lambda old, r: "\ud800" if r.random() < 0.5 else "a\udfffb"),
        ("hugeint", lambda old, r: r.choice([2**64, -(2**63) - 1, 10**30])),
        ("nan", lambda old, r: r.choice([float("nan"), float("inf"), float("-inf")])),
    ]
    return rng.choice(ops)


def _csv_cell(rng: random.Random) -> tuple[str, str]:
    return rng.choice(
        [
            ("swap", "{]"),
            ("swap", ""),
            ("hugeint", str(2**64)),
            ("nan", "NaN"),
            ("surrogate", "\ud800"),
            ("swap", "I" if rng.random() < 0.5 else "Q"),
            ("deep", "[" * 70 + "]" * 70),
        ]
    )


def mutate(seed: Seed, rng: random.Random) -> Mutant:
    """One mutant of ``seed`` (a document-level operator two times in three)."""
    mutable = list(range(seed.fixed, len(seed.units)))
    if seed.layout == "binary" or not mutable or rng.random() < 1 / 3:
        return _byte_mutant(seed, rng)
    i = rng.choice(mutable)
    units = copy.deepcopy(seed.units)
    roll = rng.random()
    size = len(units[i])
    if roll < 0.1:
        units.insert(i + 1, copy.deepcopy(units[i]))
        return Mutant(seed, "dup", seed.render(units), i, "dup", size)
    if roll < 0.2:
        del units[i]
        return Mutant(seed, "drop", seed.render(units), i, "drop", size)
    if roll < 0.27 and size == 2:
        units[i] = units[i][:1]
        return Mutant(seed, "drop-value", seed.render(units), i, "drop-value", size)
    if seed.layout == "csv":
        row = units[i][0]
        op, cell = _csv_cell(rng)
        row[rng.randrange(len(row))] = cell
        return Mutant(seed, op, seed.render(units), i, "replace", size)
    j = rng.randrange(size)
    doc = units[i][j]
    paths = list(_paths(doc))
    op, make = _json_value_op(rng)
    if not paths:
        units[i][j] = _SWAPS[rng.randrange(len(_SWAPS))]
    else:
        path = rng.choice(paths)
        assert make is not None
        _set(doc, path, make(_get(doc, path), rng))
    return Mutant(seed, op, seed.render(units), i, "replace", size)


def _byte_mutant(seed: Seed, rng: random.Random) -> Mutant:
    data = bytearray(seed.path.read_bytes())
    roll = rng.random()
    if roll < 0.4 and data:
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data))
            data[pos] ^= 1 << rng.randrange(8)
        return Mutant(seed, "flip", bytes(data), effect="bytes")
    if roll < 0.7 and data:
        return Mutant(seed, "truncate", bytes(data[: rng.randrange(len(data))]), effect="bytes")
    pos = rng.randrange(len(data) + 1)
    junk = rng.choice([b"\x00", b"{", b"]", b'"', b"\xff\xfe", b"\n", b"%kcat\n", b"NaN", b"\\"])
    return Mutant(seed, "insert", bytes(data[:pos] + junk + data[pos:]), effect="bytes")


# --- running the CLI --------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    code: int
    out: bytes
    err: str


def run_cli(args: list[str]) -> Run:
    """``cdc-contracts ARGS`` in a forked child with real file descriptors."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run the CLI, never return
            code = 99
            try:
                signal.alarm(RUN_TIMEOUT)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                # the parent's sys.stdout may not be fd 1 (pytest captures it): write to fds
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                sys.argv = ["cdc-contracts", *args]
                from cli.main import main

                try:
                    main()
                    code = 0
                except SystemExit as ex:
                    code = ex.code if isinstance(ex.code, int) else (0 if ex.code is None else 2)
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:
                import traceback

                traceback.print_exc()
                sys.stderr.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(code, out.read(), err.read().decode("utf-8", "replace"))


class _Hang(BaseException):
    """Raised by the alarm in an in-process run (a BaseException: the CLI's handlers pass it)."""


class _Kept(io.BytesIO):
    def close(self) -> None:  # the CLI may close its stdout; keep what it wrote readable
        self.flush()


def run_in_process(args: list[str]) -> Run:
    """``cdc-contracts ARGS`` called in this process, stdio captured (see the module docs)."""
    from cli.main import main

    out, err = _Kept(), _Kept()
    saved = sys.stdout, sys.stderr, sys.argv
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8")
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8")
    sys.argv = ["cdc-contracts", *args]

    def hang(signum: int, frame: Any) -> None:
        raise _Hang

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(RUN_TIMEOUT)
    code = 0
    try:
        main()
    except SystemExit as ex:
        code = ex.code if isinstance(ex.code, int) else (0 if ex.code is None else 2)
    except _Hang:
        code = -signal.SIGALRM
    except BaseException:
        import traceback

        traceback.print_exc(file=sys.stderr)
        code = 99
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError):  # closed by the CLI
                stream.flush()
        sys.stdout, sys.stderr, sys.argv = saved
    return Run(code, out.getvalue(), err.getvalue().decode("utf-8", "replace"))


Runner = Callable[[list[str]], Run]


def _summary(err: str) -> tuple[int, int, int] | None:
    """(events + controls, errors, events) from normalize's summary line."""
    found = _SUMMARY.search(err)
    if found is None:
        return None
    events = int(found.group(2))
    controls = sum(int(n) for n in re.findall(r"\w+ (\d+)", found.group(3)))
    errors = int(found.group(4)) + int(found.group(5) or 0)
    return events + controls, errors, events


def _normalize_args(seed: Seed, path: str) -> list[str]:
    if seed.contract is not None:
        return ["normalize", path, "--contract", str(seed.contract)]
    return ["normalize", path, "--format", seed.fmt]


def prepare(seed: Seed) -> Seed:
    """The clean counts of each unit (from runs without it); a seed whose clean run is not
    clean keeps no counts (only the crash checks apply to its mutants)."""
    with tempfile.TemporaryDirectory() as tmp:
        if seed.layout == "binary":
            return seed
        path = str(Path(tmp) / seed.path.name)
        Path(path).write_bytes(seed.render(seed.units))
        clean = _summary(run_in_process(_normalize_args(seed, path)).err)
        if clean is None or clean[1]:
            return seed
        seed.total = clean[0]
        counts = []
        for i in range(len(seed.units)):
            if i < seed.fixed:
                counts.append(0)
                continue
            Path(path).write_bytes(seed.render(seed.units[:i] + seed.units[i + 1 :]))
            without = _summary(run_in_process(_normalize_args(seed, path)).err)
            if without is None or without[1]:
                return seed
            counts.append(seed.total - without[0])
        seed.counts = counts
    return seed


def check(mutant: Mutant, workdir: Path, forked: bool = False) -> list[str]:
    """Every broken promise for one mutant (empty: it held): run in-process, and also in
    forks when ``forked`` (the runs must agree) or when the in-process runs broke one."""
    problems = _check(mutant, workdir, run_in_process)
    if not forked and not problems:
        return []
    in_process = _LAST_RUNS.copy()
    problems = _check(mutant, workdir, run_cli)
    for command, run in _LAST_RUNS.items():
        mine = in_process.get(command)
        if mine is not None and mine != run:
            problems.append(
                f"{command} in-process differs from a fork: exit {mine.code} vs {run.code}; "
                + _difference(mine, run)
            )
    return problems


_LAST_RUNS: dict[str, Run] = {}


def _check(mutant: Mutant, workdir: Path, run: Runner) -> list[str]:
    seed = mutant.seed
    suffix = "".join(seed.path.suffixes[-1:]) or ".json"
    path = workdir / f"mutant{suffix}"
    path.write_bytes(mutant.data)
    problems: list[str] = []
    runs = {"normalize": run(_normalize_args(seed, str(path)))}
    if seed.contract is not None:
        runs["validate"] = run(["validate", str(seed.contract), str(path)])
    runs["infer"] = run(["infer", str(path), "--name", "fuzz", "-o", str(workdir / "c.yaml")])
    _LAST_RUNS.clear()
    _LAST_RUNS.update(runs)
    for command, done in runs.items():
        if done.code not in (0, 1, 2):
            problems.append(f"{command} exit {done.code}")
        for word in _FORBIDDEN:
            if word in done.err:
                problems.append(f"{command} printed {word!r}: {_first(done.err, word)}")
    normalized = _summary(runs["normalize"].err)
    if runs["normalize"].code in (0, 1, 2) and normalized is not None:
        lines = runs["normalize"].out.count(b"\n")
        if lines != normalized[2]:
            problems.append(f"normalize wrote {lines} events, its summary says {normalized[2]}")
        problems.extend(_accounting(mutant, normalized))
        validate = runs.get("validate")
        if validate is not None and validate.code == 0 and normalized[1]:
            problems.append("validate says all conform where normalize refused a message")
    return problems


def _difference(mine: Run, forked: Run) -> str:
    """The first line where two runs' stderr (else stdout) differ."""
    for name, a, b in (
        ("stderr", mine.err, forked.err),
        ("stdout", mine.out.decode("utf-8", "replace"), forked.out.decode("utf-8", "replace")),
    ):
        for i, (x, y) in enumerate(zip([*a.splitlines(), ""], [*b.splitlines(), ""], strict=False)):
            if x != y:
                return f"{name} line {i + 1}: {x[:120]!r} vs {y[:120]!r}"
    return "same text"


def _first(text: str, word: str) -> str:
    line = next((ln for ln in text.splitlines() if word in ln), "")
    return line[:160]


def _accounting(mutant: Mutant, normalized: tuple[int, int, int]) -> list[str]:
    seed = mutant.seed
    if not seed.counts or mutant.unit is None:
        return []
    out, errors, _ = normalized
    mine = seed.counts[mutant.unit]
    others = seed.total - mine
    expected: dict[str, Callable[[], bool]] = {
        "dup": lambda: out == seed.total + mine and errors == 0,
        "drop": lambda: out == others and errors == 0,
        "drop-value": lambda: out == others and errors == 1,
        "replace": lambda: (
            out >= others and errors <= mutant.docs_in_unit and (errors == 0 or out <= seed.total)
        ),
    }
    if expected[mutant.effect]():
        return []
    return [
        f"accounting: {mutant.effect} of unit {mutant.unit} gave {out} events/controls and "
        f"{errors} errors (clean: {seed.total}, this unit {mine})"
    ]


# --- the campaign -----------------------------------------------------------------------------


@dataclass
class Failure:
    seed: str
    op: str
    problems: list[str]
    data: bytes


def _work(task: tuple[int, int, int, float]) -> tuple[int, list[Failure], dict[str, int]]:
    """Run mutants ``start`` to ``stop`` (seeded by ``seed``); stop at ``deadline``."""
    start, stop, seed_value, deadline = task
    seeds = _SEEDS
    failures: list[Failure] = []
    ops: dict[str, int] = {}
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(start, stop):
            if time.time() > deadline:
                break
            rng = random.Random(seed_value * 1_000_003 + n)
            mutant = mutate(rng.choice(seeds), rng)
            ops[mutant.op] = ops.get(mutant.op, 0) + 1
            problems = check(mutant, Path(tmp), forked=n % FORK_SAMPLE == 0)
            done += 1
            if problems:
                failures.append(Failure(mutant.seed.name, mutant.op, problems, mutant.data))
    return done, failures, ops


_SEEDS: list[Seed] = []


def warm_up() -> None:
    """Import the CLI and every format once, before the forks, and build typer's click command
    once: typer rebuilds it from the signatures on every call (a quarter of a second), the same
    command each time."""
    import cli.main
    import contracts.formats

    contracts.formats.all_formats()
    if not getattr(cli.main, "_fuzz_cached", False):
        built = cli.main.command()
        cli.main.command = lambda: built
        cli.main._fuzz_cached = True  # type: ignore[attr-defined]


def _load_prepared() -> None:
    warm_up()
    _SEEDS[:] = [prepare(s) for s in load_seeds()]


@dataclass
class Outcome:
    mutants: int
    failures: list[Failure]
    ops: dict[str, int]
    seconds: float
    seeds: int

    def counts(self) -> dict[str, int]:
        kinds = {"exit 3": 0, "traceback": 0, "count mismatch": 0, "other": 0}
        for failure in self.failures:
            text = " ".join(failure.problems)
            if "exit 3" in text or "exit -" in text or "internal error" in text:
                kinds["exit 3"] += 1
            elif "Traceback" in text or "bug in" in text:
                kinds["traceback"] += 1
            elif "accounting" in text or "wrote" in text or "validate says" in text:
                kinds["count mismatch"] += 1
            else:
                kinds["other"] += 1
        return kinds


def campaign(mutants: int, seconds: float, seed: int, jobs: int) -> Outcome:
    """Run up to ``mutants`` mutants within ``seconds`` on ``jobs`` processes."""
    began = time.time()
    if not _SEEDS:
        _load_prepared()
    deadline = time.time() + seconds  # preparing the seeds is not part of the budget
    per = -(-mutants // jobs)
    tasks = [(i * per, min(mutants, (i + 1) * per), seed, deadline) for i in range(jobs)]
    done, failures, ops = 0, [], {}
    if jobs == 1:
        results = [_work(t) for t in tasks]
    else:
        import multiprocessing

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(_work, tasks))
    for n, found, counted in results:
        done += n
        failures.extend(found)
        for k, v in counted.items():
            ops[k] = ops.get(k, 0) + v
    return Outcome(done, failures, ops, time.time() - began, len(_SEEDS))


def shrink(failure: Failure) -> bytes:
    """A smaller input that still fails the same way (lines, then bytes, removed)."""
    seed = next(s for s in _SEEDS if s.name == failure.seed)
    data = failure.data
    want = {p.split(":")[0] for p in failure.problems}

    def still_fails(candidate: bytes) -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            trial = Mutant(seed, failure.op, candidate, effect="bytes")
            got = {p.split(":")[0] for p in check(trial, Path(tmp))}
            return bool(got & want)

    for unit in (b"\n", None):
        chunk = max(1, len(data) // 4)
        while chunk >= 1:
            pieces = data.split(b"\n") if unit else None
            if pieces is not None:
                if len(pieces) <= 1:
                    break
                for i in range(len(pieces)):
                    candidate = b"\n".join(pieces[:i] + pieces[i + 1 :])
                    if still_fails(candidate):
                        data = candidate
                        break
                else:
                    break
            else:
                for i in range(0, len(data), chunk):
                    candidate = data[:i] + data[i + chunk :]
                    if candidate and still_fails(candidate):
                        data = candidate
                        break
                else:
                    chunk //= 2
    return data


def record(failure: Failure, data: bytes) -> Path:
    """Write a shrunk failure as a regression fixture, with what it caught."""
    REGRESSIONS.mkdir(exist_ok=True)
    seed = next(s for s in _SEEDS if s.name == failure.seed)
    manifest_path = REGRESSIONS / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else []
    name = f"{seed.fmt}-{failure.op}-{len(manifest) + 1}{seed.path.suffix}"
    (REGRESSIONS / name).write_bytes(data)
    manifest.append(
        {
            "file": name,
            "format": seed.fmt,
            "contract": str(seed.contract.relative_to(ROOT)) if seed.contract else None,
            "caught": failure.problems[0],
        }
    )
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return REGRESSIONS / name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=900)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--record", action="store_true", help="shrink failures into fixtures")
    args = parser.parse_args()
    outcome = campaign(args.mutants, args.seconds, args.seed, args.jobs)
    counts = outcome.counts()
    print(
        f"{outcome.mutants} mutants of {outcome.seeds} fixtures in {outcome.seconds:.0f} s "
        f"(seed {args.seed}, {args.jobs} jobs): {len(outcome.failures)} failing; "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
    )
    print("operators: " + ", ".join(f"{k} {v}" for k, v in sorted(outcome.ops.items())))
    for failure in outcome.failures[:20]:
        print(f"  {failure.seed} [{failure.op}]: {'; '.join(failure.problems)[:300]}")
    if args.record:
        for failure in outcome.failures[:10]:
            print(f"recorded {record(failure, shrink(failure))}")
    return 1 if outcome.failures else 0


if __name__ == "__main__":
    sys.exit(main())
