"""Run every benchmark, one after the other (``make bench``).

Each script measures its own targets against a baseline in the same run and prints its table;
copy the figures into benchmarks/RESULTS.md with the machine and the date. The API benchmark
needs `wrk` (Debian package ``wrk``); it is skipped with a note when wrk is missing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (module, arguments, what it needs on PATH)
BENCHMARKS = (
    ("benchmarks.formats_bench", [], None),
    ("benchmarks.diff_bench", [], None),
    ("benchmarks.derive_bench", [], None),
    ("benchmarks.registry_bench", [], None),
    ("benchmarks.api_bench", [], "wrk"),
    ("benchmarks.spark_decode", [], "java"),
    ("benchmarks.spark_decode_checks", [], "java"),
    ("benchmarks.spark_avro", [], "java"),
)


def main() -> int:
    failed = []
    for module, args, needs in BENCHMARKS:
        print(f"\n=== {module} ===", flush=True)
        if needs and shutil.which(needs) is None:
            print(f"skipped: `{needs}` is not installed")
            continue
        done = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, check=False)
        if done.returncode != 0:
            failed.append(module)
    if failed:
        print(f"\nbelow target or failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
