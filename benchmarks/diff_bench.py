"""Diff benchmarks: two 1,000-column contracts (< 100 ms) and `check` over 500 contracts (< 10 s),
reading the working tree and (``--staged``, the pre-commit hook) the git index.

Run: ``.venv/bin/python benchmarks/diff_bench.py``. Baselines measured in the same run, after
warm-up: for the diff, parsing the two contracts from YAML (work every diff needs anyway); for
``check``, ``git cat-file --batch`` alone reading the 500 baseline files.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contracts.contract import Contract, dump_contract, load_contract
from contracts.diff import diff_contracts
from contracts.logical import DEBEZIUM_TIMESTAMP_NAME, DECIMAL_NAME, MICRO_TIMESTAMP_NAME

DECIMAL = DECIMAL_NAME
SOURCE = load_contract(
    Path(__file__).resolve().parent.parent
    / "tests/fixtures/debezium-json/postgres-orders.expected.yaml"
)


def wide_contract(columns: int, variant: int, name: str = "bench.wide") -> Contract:
    """A debezium-json contract with ``columns`` columns of mixed types; ``variant`` edits some."""
    cols = []
    for i in range(columns):
        kind = i % 5
        if kind == 0:
            cols.append({"field": f"c{i}", "type": "int64", "optional": i > 0})
        elif kind == 1:
            cols.append({"field": f"c{i}", "type": "string", "optional": True})
        elif kind == 2:
            scale = "3" if variant and i % 50 == 2 else "2"
            cols.append(
                {
                    "field": f"c{i}",
                    "type": "bytes",
                    "optional": True,
                    "name": DECIMAL,
                    "version": 1,
                    "parameters": {"scale": scale, "connect.decimal.precision": "12"},
                }
            )
        elif kind == 3:
            ts = DEBEZIUM_TIMESTAMP_NAME if variant and i % 50 == 3 else MICRO_TIMESTAMP_NAME
            cols.append(
                {"field": f"c{i}", "type": "int64", "optional": True, "name": ts, "version": 1}
            )
        else:
            cols.append({"field": f"c{i}", "type": "int32", "optional": True})
    if variant:
        cols.append({"field": "added_col", "type": "string", "optional": True})
    data = SOURCE.to_dict()
    data.update(name=name, key=["c0"], columns=cols)
    return Contract.model_validate(data)


def timed(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_wide_diff() -> tuple[float, float, int]:
    old, new = wide_contract(1000, 0), wide_contract(1000, 1)
    old_text, new_text = dump_contract(old), dump_contract(new)
    from contracts.diff.catalog import read_contract

    base = timed(lambda: (read_contract(old_text, "a"), read_contract(new_text, "b")), 5)
    result = diff_contracts(old, new)
    # fresh contracts every round so no per-object cache helps
    from contracts.diff.compat import _parse_cached

    pairs = [(wide_contract(1000, 0), wide_contract(1000, 1)) for _ in range(6)]
    it = iter(pairs)

    def one() -> None:
        _parse_cached.cache_clear()  # a CLI run parses each schema once: no warm cache
        diff_contracts(*next(it))

    took = timed(one, 5)
    return took, base, len(result.findings)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def bench_check(
    n: int = 500, changed: int = 500, staged: bool = False, exceptions: bool = False
) -> tuple[float, float, int]:
    """``check`` over ``n`` contracts, ``changed`` of them changed; ``exceptions``: with a
    cdc-contracts.yaml excepting each contract's decimal-scale changes (n exceptions)."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.email", "bench@example.com")
        git(repo, "config", "user.name", "bench")
        d = repo / "contracts"
        d.mkdir()
        for i in range(n):
            (d / f"t{i:03}.yaml").write_text(dump_contract(wide_contract(20, 0, f"bench.t{i:03}")))
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "base")
        for i in range(changed):  # changed == n: every contract changed, the worst case
            (d / f"t{i:03}.yaml").write_text(dump_contract(wide_contract(60, 1, f"bench.t{i:03}")))
        if staged:
            git(repo, "add", "contracts")
        paths = "".join(f"HEAD:contracts/t{i:03}.yaml\n" for i in range(n)).encode()

        def cat() -> None:
            subprocess.run(
                ["git", "cat-file", "--batch"],
                cwd=repo,
                input=paths,
                capture_output=True,
                check=True,
            )

        base = timed(cat, 3)
        cmd = [
            sys.executable,
            "-m",
            "cli.main",
            "check",
            str(d),
            "--against",
            "git:HEAD",
            "--output-format",
            "json",
            *(["--staged"] if staged else []),
        ]
        if exceptions:
            config = repo / "cdc-contracts.yaml"
            config.write_text(
                "exceptions:\n"
                + "".join(
                    f"  - {{contract: bench.t{i:03}, rule: decimal-scale-changed, "
                    f"reason: bench {i}}}\n"
                    for i in range(n)
                )
            )
            cmd += ["--config", str(config)]
        root = Path(__file__).resolve().parent.parent

        def run() -> int:
            return subprocess.run(cmd, cwd=root, capture_output=True).returncode

        code = run()
        took = timed(run, 3)
        return took, base, code


def main() -> None:
    took, base, findings = bench_wide_diff()
    print(
        f"diff of two 1,000-column contracts: {took * 1000:.1f} ms (target < 100 ms); "
        f"baseline parse of both YAML files {base * 1000:.1f} ms; {findings} findings"
    )
    for changed, staged, excepted in (
        (500, False, False),
        (500, False, True),
        (50, False, False),
        (500, True, False),
    ):
        took, base, code = bench_check(500, changed, staged, excepted)
        what = "check --staged" if staged else "check"
        what += " with 500 exceptions" if excepted else ""
        print(
            f"{what} over 500 contracts ({changed} changed) vs git:HEAD (CLI process, end to "
            f"end): {took:.2f} s (target < 10 s); baseline git cat-file --batch "
            f"{base * 1000:.0f} ms; exit {code}"
        )


if __name__ == "__main__":
    main()
