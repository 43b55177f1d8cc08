"""The first ``decode_changes`` in a fresh Spark session, for two commits in one run.

A decode's cost before its first row is the plan: building the expressions over Py4J, Spark's
analysis and optimisation, then compiling the generated code (Janino) and warming it up. A
large plan is slow at each step, and a generated method past 64 KB fails to compile (Spark
logs the error and falls back to interpreted evaluation). This script decodes a small sample
(default: the 8 debezium-mongodb-json grammar cases, 12 columns of every extended-JSON kind)
in a child process per measurement, each with its own JVM, importing one tree: the OLD one
(``--old-ref``, extracted with ``git archive``) or this one. Children alternate old/new so a
change in the machine's load hits both. Per child: the first decode (build, optimise,
physical plan, collect), then ``--repeats`` rebuilds in the same session; the generated
methods' sizes and how often Janino said "Code grows beyond 64 KB". Run::

    .venv/bin/python -m benchmarks.spark_first_decode --old-ref 12832e0 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from benchmarks.spark_decode_commits import SESSION_CONF, _check_tree, extract, load_average

ROOT: Final = Path(__file__).resolve().parent.parent
TOO_BIG: Final = "Code grows beyond 64 KB"
STEPS: Final = ("build", "optimize", "physical", "run")


def _decode_once(
    spark: Any, fmt: str, sample: str, contract_file: str
) -> tuple[Any, dict[str, float]]:
    """One decode built from scratch and collected; seconds per step."""
    from spark_bindings import decode
    from spark_bindings.inputs import frame_from_messages
    from tests.spark.parity import contract, messages

    decode._STEPS.clear()  # no reuse of an earlier build: each decode is a first one
    frame = frame_from_messages(spark, messages(fmt, sample))
    c = contract(fmt, contract_file)
    marks = [time.perf_counter()]
    df = decode.decode_changes(frame, c)
    marks.append(time.perf_counter())
    qe = df._jdf.queryExecution()
    qe.optimizedPlan()
    marks.append(time.perf_counter())
    qe.executedPlan()
    marks.append(time.perf_counter())
    rows = df.collect()
    marks.append(time.perf_counter())
    assert rows, "no rows decoded"
    return df, {s: b - a for s, a, b in zip(STEPS, marks[:-1], marks[1:], strict=True)}


def _method_sizes(df: Any) -> list[int]:
    """Each fused stage's largest generated method in bytes (-1: it did not compile)."""
    debug = df.sparkSession._jvm.org.apache.spark.sql.execution.debug.package
    stages = debug.codegenStringSeq(df._jdf.queryExecution().executedPlan())
    return [stages.apply(i)._3().maxMethodCodeSize() for i in range(stages.size())]


def child(job: dict[str, Any]) -> dict[str, Any]:
    """The first decode and the repeats in this process's own Spark session."""
    _check_tree(Path(job["tree"]).resolve())
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]")
    for key, value in SESSION_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    where = (job["format"], job["sample"], job["contract"])
    df, first = _decode_once(spark, *where)
    repeats = [_decode_once(spark, *where)[1] for _ in range(job["repeats"])]
    sizes = _method_sizes(df)
    spark.stop()
    return {"first": first, "repeats": repeats, "methods": sizes}


def run_child(tree: Path, job: dict[str, Any]) -> dict[str, Any]:
    """One child on ``tree``: its result, with the count of Janino's 64 KB failures."""
    # imported here: a child imports this module from the tree under test, which may lack it
    from benchmarks.spark_decode_commits import run_script

    result, errors = run_script(Path(__file__).resolve(), tree, job)
    result["too_big"] = errors.count(TOO_BIG)
    return result


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(label: str, results: list[dict[str, Any]]) -> dict[str, float]:
    """Print the medians of ``results`` (one per child); the first decode's total."""
    first = {s: _median([r["first"][s] for r in results]) for s in STEPS}
    warm = [sum(rep.values()) for r in results for rep in r["repeats"]]
    total = sum(first.values())
    steps = ", ".join(f"{s} {first[s]:.2f}" for s in STEPS)
    print(
        f"{label}: first decode {total:.2f} s ({steps}); warm rebuild + run {_median(warm):.2f} s;"
        f" largest methods {results[-1]['methods']}; '{TOO_BIG}' logged"
        f" {sum(r['too_big'] for r in results)} times over {len(results)} sessions"
    )
    return {"first": total, "warm": _median(warm)}


def parent(args: argparse.Namespace) -> None:
    job = {
        "format": args.format,
        "sample": args.sample,
        "contract": args.contract,
        "repeats": args.repeats,
    }
    with tempfile.TemporaryDirectory() as workdir:
        trees = {"old": extract(args.old_ref, Path(workdir)), "new": ROOT}
        results: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
        for i in range(args.rounds):
            for name, tree in trees.items():
                print(f"round {i + 1} {name} (load average {load_average()})", flush=True)
                results[name].append(run_child(tree, {**job, "tree": str(tree)}))
    old = report(f"old {args.old_ref}", results["old"])
    new = report("new (this tree)", results["new"])
    print(
        f"old/new: first decode {old['first'] / new['first']:.2f}x, warm {old['warm'] / new['warm']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--old-ref", default="HEAD~1", help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="children per tree")
    parser.add_argument("--repeats", type=int, default=2, help="rebuilds after the first")
    parser.add_argument("--format", default="debezium-mongodb-json")
    parser.add_argument("--sample", default="grammar_cases.kcat.jsonl")
    parser.add_argument("--contract", default="grammar_cases.expected.yaml")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
    else:
        parent(args)


if __name__ == "__main__":
    main()
