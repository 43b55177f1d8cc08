"""Spark ``decode_changes`` of two commits, measured in one run (issue 24: "not worse than
before the change").

The one-definition change (355bd73 FormatSpec, 08e349b the Spark decoder built from it)
replaced spark_bindings/json_formats.py; f2389db is main just before it. This script decodes
the same generated files (benchmarks/spark_decode.py's generators: debezium-json with embedded
schemas, canal-json, arcion-s3-json; written once to a temporary directory) with the same
contracts (inferred once, by this tree, and loaded by each commit's own ``load_contract``) by
the OLD tree (``--old-ref``, extracted with ``git archive``, or ``--old-tree``) and the NEW one
(this tree, or ``--new-tree``).

Two versions of the same packages cannot share one interpreter, so each measurement is a
child process importing one tree (``PYTHONPATH``), with its own Spark session (the settings of
spark_decode.py's ``benchmark_session``: local[2], UTC, no UI, a 6 GB driver,
``spark.sql.codegen.hugeMethodLimit=8000``). Children alternate old/new/old/new... so a change
in the machine's load hits both. In each child, per format: the DataFrame is built once
(``decode_changes`` of ``spark.read.text``; the build is timed apart), one pass counts its rows
and ``_error`` rows (both trees must agree), ``--warmup`` passes to Spark's ``noop`` sink, then
``--iterations`` timed passes. Reported per version: the median msg/s and the median JVM CPU
µs/msg (the driver JVM's process CPU time, ``OperatingSystemMXBean.getProcessCpuTime`` over
py4j, divided by the messages) over every timed pass of every round, and new/old. On a loaded
machine CPU µs/msg is the figure to judge by: wall-clock time also counts the time the JVM
waits for a core. Run::

    .venv/bin/python -m benchmarks.spark_decode_commits                   # 200k msgs, 3 rounds
    .venv/bin/python -m benchmarks.spark_decode_commits --rounds 5 --formats canal-json

``--checks-off utf8,string-variants,absent,text-kinds`` adds a third version, ``lean``: the new tree with
those checks switched off (benchmarks/checks_off.py), to show what the checks f2389db lacked
cost and what the rest of the new decoder costs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
#: main just before the one-definition change (355bd73 + 08e349b).
OLD_REF: Final = "f2389db"
FORMATS: Final = ("debezium-json", "canal-json", "arcion-s3-json")
#: spark_decode.benchmark_session's settings (that module imports names the old tree lacks, so
#: the children cannot import it), plus the hugeMethodLimit spark_decode sets by default.
SESSION_CONF: Final = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "6g",
    "spark.sql.codegen.hugeMethodLimit": "8000",
}


# --- the child: one tree, one Spark session ---------------------------------------------------


def _own(name: str) -> Any:
    """``benchmarks/<name>.py`` of THIS tree, loaded by path (the old tree has none, and the
    ``benchmarks`` package on the path is the tree's under test)."""
    spec = importlib.util.spec_from_file_location(f"_{name}", ROOT / f"benchmarks/{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_tree(tree: Path) -> None:
    """Stop unless the packages under test come from ``tree`` (not this venv's install)."""
    import contracts
    import spark_bindings

    for module in (contracts, spark_bindings):
        where = Path(module.__file__ or "").resolve()
        if not where.is_relative_to(tree):
            sys.exit(f"{module.__name__} imported from {where}, not from {tree}")


def child(job: dict[str, Any]) -> dict[str, Any]:
    """Decode every format of ``job`` with the tree on the path; the timings, as a dict."""
    tree = Path(job["tree"]).resolve()
    _check_tree(tree)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from contracts.contract import load_contract
    from spark_bindings import decode_changes

    checks = _own("checks_off") if job.get("checks_off") else None
    builder = SparkSession.builder.master("local[2]")
    for key, value in SESSION_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    cpu = _own("jvm_clock").process_cpu_clock(spark.sparkContext._jvm)
    out: dict[str, Any] = {}
    for fmt, data in job["formats"].items():
        start = time.perf_counter()
        # the switches are on only while the decode is built: its plan is fixed then
        with checks.switched_off(job["checks_off"]) if checks else contextlib.nullcontext():
            decoded = decode_changes(spark.read.text(data["file"]), load_contract(data["contract"]))
        build = time.perf_counter() - start
        counted = decoded.agg(
            F.count(F.lit(1)).alias("rows"), F.count("_error").alias("errors")
        ).first()
        assert counted is not None
        for _ in range(job["warmup"]):
            decoded.write.format("noop").mode("overwrite").save()
        passes = []
        for _ in range(job["iterations"]):
            start, start_cpu = time.perf_counter(), cpu()
            decoded.write.format("noop").mode("overwrite").save()
            passes.append((time.perf_counter() - start, cpu() - start_cpu))
        out[fmt] = {
            "build_s": build,
            "rows": counted["rows"],
            "errors": counted["errors"],
            "passes": passes,
        }
    spark.stop()
    return out


# --- the parent: data, contracts, the alternating children, the table -------------------------


def extract(ref: str, into: Path) -> Path:
    """The tree of ``ref`` (this repository), written under ``into`` with ``git archive``."""
    tree = into / f"tree-{ref}"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def prepare(formats: list[str], n: int, workdir: Path) -> dict[str, dict[str, str]]:
    """Per format: the file of ``n`` generated messages and the contract inferred from its
    first 2,000 (by this tree, as spark_decode.py infers it), written to ``workdir``."""
    import itertools

    from benchmarks import spark_decode as sd
    from contracts.contract import dump_contract

    jobs = {}
    for fmt in formats:
        path = sd.data_file(workdir, fmt, n, sd.GENERATORS[fmt])
        with path.open("rb") as f:
            contract = sd.infer_contract(fmt, list(itertools.islice(f, 2000)))
        contract_path = workdir / f"{fmt}.contract.yaml"
        contract_path.write_text(dump_contract(contract), encoding="utf-8")
        jobs[fmt] = {"file": str(path), "contract": str(contract_path)}
    return jobs


def run_script(script: Path, tree: Path, job: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``script --child JOB`` on ``tree`` (its own process and JVM): the result its last
    output line holds, and its error output; the run stops with that output when it fails."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-P", str(script), "--child", json.dumps(job)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"child on {tree} failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1])), done.stderr


def run_child(tree: Path, job: dict[str, Any]) -> dict[str, Any]:
    """One child process of this script on ``tree``: its result."""
    return run_script(Path(__file__).resolve(), tree, job)[0]


def load_average() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def summary(fmt: str, n: int, results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians over every timed pass of every round, per version, for ``fmt``."""
    row: dict[str, Any] = {"format": fmt}
    for version, rounds in results.items():
        passes = [p for r in rounds for p in r[fmt]["passes"]]
        row[version] = {
            "msg_s": statistics.median(n / wall for wall, _ in passes),
            "cpu_us": statistics.median(cpu * 1e6 / n for _, cpu in passes),
            "msg_s_range": (min(n / w for w, _ in passes), max(n / w for w, _ in passes)),
            "cpu_range": (min(c * 1e6 / n for _, c in passes), max(c * 1e6 / n for _, c in passes)),
            "build_s": statistics.median(r[fmt]["build_s"] for r in rounds),
            "rows": {(r[fmt]["rows"], r[fmt]["errors"]) for r in rounds},
        }
    return row


def _cells(v: dict[str, Any]) -> tuple[str, str]:
    """msg/s and JVM CPU µs/msg of one version, each with its range."""
    (lo, hi), (clo, chi) = v["msg_s_range"], v["cpu_range"]
    return (
        f"{v['msg_s']:,.0f} [{lo:,.0f}-{hi:,.0f}]",
        f"{v['cpu_us']:.1f} [{clo:.1f}-{chi:.1f}]",
    )


def report(rows: list[dict[str, Any]], n: int, versions: list[str]) -> None:
    print(f"\n{n:,} messages per format; medians over every timed pass (min-max in brackets)")
    print("\n| format | version | msg/s | JVM CPU µs/msg | CPU /old | build s | rows (errors) |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        for version in versions:
            v = r[version]
            ((rows_, errors),) = v["rows"]
            msg_s, cpu = _cells(v)
            ratio = v["cpu_us"] / r["old"]["cpu_us"]
            print(
                f"| {r['format']} | {version} | {msg_s} | {cpu} | {ratio:.2f}x "
                f"| {v['build_s']:.1f} | {rows_:,} ({errors:,}) |"
            )
    print("\nCPU /old < 1 means the version uses less JVM CPU per message than the old tree.")
    if "lean" in versions:
        print(
            "lean: the new tree with these checks switched off (benchmarks/checks_off.py), for "
            "measurement only; still on: " + "; ".join(_own("checks_off").LEFT_ON)
        )


def check_rows(fmt: str, results: dict[str, list[dict[str, Any]]]) -> None:
    """Stop unless every child of both trees decoded the same rows and ``_error`` rows."""
    seen = {(r[fmt]["rows"], r[fmt]["errors"]) for rounds in results.values() for r in rounds}
    if len(seen) != 1:
        sys.exit(f"{fmt}: the trees disagree on (rows, _error rows): {sorted(seen)}")


def parent(args: argparse.Namespace) -> None:
    formats = args.formats.split(",")
    unknown = set(formats) - set(FORMATS)
    if unknown:
        sys.exit(f"unknown format(s) {', '.join(sorted(unknown))} (known: {', '.join(FORMATS)})")
    with tempfile.TemporaryDirectory(prefix="cdc-commits-") as tmp:
        workdir = Path(tmp)
        old = args.old_tree.resolve() if args.old_tree else extract(args.old_ref, workdir)
        new = args.new_tree.resolve()
        print(f"old tree: {old} ({args.old_ref if not args.old_tree else 'given'})")
        print(f"new tree: {new}")
        print(f"load average at the start: {load_average()}", flush=True)
        jobs = prepare(formats, args.messages, workdir)
        off = args.checks_off.split(",") if args.checks_off else []
        trees = {"old": (old, []), "new": (new, [])} | ({"lean": (new, off)} if off else {})
        results: dict[str, list[dict[str, Any]]] = {version: [] for version in trees}
        for turn in range(args.rounds):
            for version, (tree, checks_off) in trees.items():
                job = {
                    "tree": str(tree),
                    "formats": jobs,
                    "warmup": args.warmup,
                    "iterations": args.iterations,
                    "checks_off": checks_off,
                }
                start = time.perf_counter()
                result = run_child(tree, job)
                results[version].append(result)
                cpu = ", ".join(
                    f"{fmt} {statistics.median(c for _, c in r['passes']) * 1e6 / args.messages:.1f}"
                    for fmt, r in result.items()
                )
                print(
                    f"round {turn + 1} {version}: {time.perf_counter() - start:.0f} s, "
                    f"CPU µs/msg {cpu}; load average {load_average()}",
                    flush=True,
                )
        for fmt in formats:
            check_rows(fmt, results)
        rows = [summary(fmt, args.messages, results) for fmt in formats]
        report(rows, args.messages, list(trees))
        print(f"\nload average at the end: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument(
        "--messages", type=int, default=200_000, help="per format (default 200,000)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="children per tree (default 3)")
    parser.add_argument(
        "--iterations", type=int, default=3, help="timed passes per child and format (default 3)"
    )
    parser.add_argument(
        "--warmup", type=int, default=2, help="passes before timing, per child (default 2)"
    )
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated")
    parser.add_argument(
        "--old-ref", default=OLD_REF, help=f"the commit before the change (default {OLD_REF})"
    )
    parser.add_argument("--old-tree", type=Path, help="a checkout of the old commit instead")
    parser.add_argument(
        "--new-tree", type=Path, default=ROOT, help="the new checkout (default: this one)"
    )
    parser.add_argument(
        "--checks-off",
        metavar="CHECKS",
        help="also time the new tree with these checks switched off, comma-separated "
        "(benchmarks/checks_off.py: utf8, string-variants, absent, text-kinds), as version 'lean'",
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    parent(args)


if __name__ == "__main__":
    main()
