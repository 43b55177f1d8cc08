"""Peak memory of ``normalize`` and ``infer`` on one large JSON array (issue #27: < 150 MB RSS
on a 1 GB array; JSON arrays and concatenated documents are read in chunks).

The array holds generated Debezium MySQL messages with embedded schemas (benchmarks/datagen.py),
one element per line, repeated up to the size asked. Each command runs as a child process of
the real CLI; its peak RSS is the child's ``ru_maxrss`` from ``os.wait4``. The baseline in the
same run is the same command on the first 5,000 elements as JSON lines: memory that does not
grow with the input.

    .venv/bin/python -m benchmarks.memory_bench [--megabytes 64] [--keep DIR]

``--megabytes 1024`` gives the figure recorded in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

from benchmarks.datagen import debezium_messages

TARGET_MB: Final = 150.0
CLI: Final = Path(sys.executable).with_name("cdc-contracts")
SAMPLE: Final = 5_000


def write_array(path: Path, megabytes: int) -> int:
    """A JSON array of about ``megabytes`` MB; returns its element count."""
    lines = list(debezium_messages(SAMPLE, with_schema=True, seed=0))
    target = megabytes << 20
    written = count = 0
    with path.open("wb") as out:
        out.write(b"[\n")
        while written < target:
            for line in lines:
                out.write((b",\n" if count else b"") + line)
                written += len(line) + 2
                count += 1
                if written >= target:
                    break
        out.write(b"\n]\n")
    return count


def write_lines(path: Path) -> None:
    with path.open("wb") as out:
        for message in debezium_messages(SAMPLE, with_schema=True, seed=0):
            out.write(message + b"\n")


def peak_rss(args: list[str]) -> tuple[float, float, int]:
    """(peak RSS in MB, wall seconds, exit status) of ``cdc-contracts ARGS``."""
    began = time.perf_counter()
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen([str(CLI), *args], stdout=null, stderr=subprocess.PIPE)
        assert child.stderr is not None
        child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.perf_counter() - began, child.returncode


def commands(path: Path) -> dict[str, list[str]]:
    return {
        "normalize": ["normalize", str(path), "--format", "debezium-json"],
        "infer": ["infer", str(path), "--format", "debezium-json", "--name", "t", "-o", "-"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=64, help="size of the array")
    parser.add_argument("--keep", type=Path, help="generate the files here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        array = where / f"array-{args.megabytes}mb.json"
        lines = where / "sample.jsonl"
        count = write_array(array, args.megabytes) if not array.exists() else -1
        write_lines(lines)
        size = array.stat().st_size / 1e6
        print(f"{platform.node()} {os.cpu_count()} CPUs; array {size:.0f} MB, {count} elements")
        failed = False
        for name in ("normalize", "infer"):
            base, _, _ = peak_rss(commands(lines)[name])
            rss, wall, code = peak_rss(commands(array)[name])
            ok = code == 0 and rss < TARGET_MB
            failed |= not ok
            print(
                f"{name:9} peak RSS {rss:6.1f} MB (JSON lines, {SAMPLE} messages: {base:.1f} MB)"
                f"  {size / wall:5.1f} MB/s wall  exit {code}  "
                f"{'ok' if ok else 'MISSED'} (< {TARGET_MB:.0f} MB)"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
