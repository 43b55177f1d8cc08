"""What each check of the Spark decoder costs: ``decode_changes`` with every check, then with
one check switched off at a time, then with all of them off (benchmarks/checks_off.py), in one
Spark session on the same files (issue 24: the checks added since f2389db against the cost of
the one-definition decoder itself).

The files and contracts are spark_decode.py's (its generators, the contract inferred from the
first 2,000 messages), in its ``benchmark_session``. Each variant's DataFrame is built once
(with its switches on; the decoder caches are emptied between builds), checked to give the
same rows and ``_error`` count as the full decoder (the generated messages are clean, so no
check fires), written ``--warmup`` times to Spark's ``noop`` sink, then the variants take turns
for ``--rounds`` timed passes each. Reported: the median JVM CPU µs/msg per variant, its ratio
to the full decoder, and what switching the check off saves (full less variant, of full).
Run::

    .venv/bin/python -m benchmarks.spark_decode_checks
    .venv/bin/python -m benchmarks.spark_decode_checks --formats debezium-json --rounds 7
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
from pathlib import Path
from typing import Any, Final

from benchmarks import spark_decode as sd
from benchmarks.checks_off import LEFT_ON, SWITCHES, switched_off

FORMATS: Final = ("debezium-json", "canal-json", "arcion-s3-json")


def variants() -> dict[str, list[str]]:
    """Every check on; each one off alone; all off ('lean')."""
    return {"full": [], **{f"-{name}": [name] for name in SWITCHES}, "lean": list(SWITCHES)}


def build(src: Any, contract: Any, off: list[str]) -> Any:
    """The decode with ``off`` switched off, built from empty decoder caches."""
    from spark_bindings import build as spec_build
    from spark_bindings import decode

    decode._STEPS.clear()
    spec_build._DECODERS.clear()
    with switched_off(off):
        return decode.decode_changes(src, contract)


def measure(spark: Any, fmt: str, workdir: Path, args: argparse.Namespace) -> dict[str, float]:
    """Median JVM CPU µs/msg per variant for ``fmt``."""
    from pyspark.sql import functions as F

    path = sd.data_file(workdir, fmt, args.messages, sd.GENERATORS[fmt])
    with path.open("rb") as f:
        contract = sd.infer_contract(fmt, list(itertools.islice(f, 2000)))
    src = spark.read.text(str(path)).cache()
    n = src.count()
    frames = {name: build(src, contract, off) for name, off in variants().items()}
    counts = {
        name: tuple(df.agg(F.count(F.lit(1)), F.count("_error")).first())
        for name, df in frames.items()
    }
    if len(set(counts.values())) != 1:
        raise SystemExit(f"{fmt}: the variants disagree on (rows, _error rows): {counts}")
    for df in frames.values():
        for _ in range(args.warmup):
            df.write.format("noop").mode("overwrite").save()
    cpu = sd.jvm_cpu_seconds(spark)
    passes: dict[str, list[float]] = {name: [] for name in frames}
    for _ in range(args.rounds):
        for name, df in frames.items():
            start = cpu()
            df.write.format("noop").mode("overwrite").save()
            passes[name].append((cpu() - start) * 1e6 / n)
    src.unpersist()
    return {name: statistics.median(values) for name, values in passes.items()}


def report(results: dict[str, dict[str, float]], n: int) -> None:
    print(f"\n{n:,} messages per format; JVM CPU µs/msg, median of the timed passes")
    print("\n| format | variant | µs/msg | /full | switching it off saves |")
    print("|---|---|---:|---:|---:|")
    for fmt, by_variant in results.items():
        full = by_variant["full"]
        for name, value in by_variant.items():
            cost = "" if name == "full" else f"{(full - value) / full:+.0%}"
            print(f"| {fmt} | {name} | {value:.1f} | {value / full:.2f}x | {cost} |")
    print("\n'-x': check x switched off; 'lean': all of them off. Still on in 'lean': ")
    print("; ".join(LEFT_ON))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=60_000, help="per format (60,000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed passes per variant (5)")
    parser.add_argument("--warmup", type=int, default=2, help="passes before timing (2)")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated")
    args = parser.parse_args()
    spark = sd.benchmark_session({"spark.sql.codegen.hugeMethodLimit": "8000"})
    results = {}
    with tempfile.TemporaryDirectory(prefix="cdc-checks-") as tmp:
        for fmt in args.formats.split(","):
            results[fmt] = measure(spark, fmt, Path(tmp), args)
            print(f"{fmt}: " + ", ".join(f"{k} {v:.1f}" for k, v in results[fmt].items()))
    report(results, args.messages)


if __name__ == "__main__":
    main()
