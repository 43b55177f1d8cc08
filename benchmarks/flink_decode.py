"""Apache Flink's own CDC formats over a JSON-lines file, for benchmarks/spark_decode.py.

Run in its own process by spark_decode.py (PyFlink and PySpark each start a JVM over py4j, and
PyFlink pins its own py4j, pyarrow and pandas, so it may live in another virtualenv): a bounded
``filesystem`` source with Flink's ``debezium-json``, ``canal-json``, ``maxwell-json`` or ``ogg-json`` format, read in
STREAMING mode (Flink's batch mode refuses CDC formats) at parallelism 2, into a ``blackhole``
sink. ``--warmup`` jobs, then ``--repeat`` timed jobs; prints one JSON line: the best
messages/s and the gateway JVM's process CPU µs per message for that job (the local mini
cluster runs inside that JVM). ``--show`` instead prints every decoded row of the file as JSON
lines (Flink's view of a damaged sample). Only the standard library and PyFlink are imported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from pyflink.java_gateway import get_gateway  # type: ignore[import-not-found, import-untyped, unused-ignore]
from pyflink.table import EnvironmentSettings, TableEnvironment  # type: ignore[import-not-found, import-untyped, unused-ignore]

from benchmarks.jvm_clock import process_cpu_clock


def source_ddl(name: str, args: argparse.Namespace, lenient: bool) -> str:
    options = {"connector": "filesystem", "path": args.file, "format": args.format}
    if args.format == "debezium-json":
        options["debezium-json.schema-include"] = "true"
    if lenient:
        options[f"{args.format}.ignore-parse-errors"] = "true"
    said = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return f"CREATE TEMPORARY TABLE {name} ({args.columns}) WITH ({said})"


def environment(parallelism: int) -> Any:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(parallelism))
    return t_env


def run_once(t_env: Any, args: argparse.Namespace, i: int) -> None:
    t_env.execute_sql(source_ddl(f"src{i}", args, lenient=False))
    t_env.execute_sql(
        f"CREATE TEMPORARY TABLE sink{i} WITH ('connector' = 'blackhole') LIKE src{i} (EXCLUDING ALL)"
    )
    t_env.execute_sql(f"INSERT INTO sink{i} SELECT * FROM src{i}").wait()


def show(t_env: Any, args: argparse.Namespace) -> None:
    t_env.execute_sql(source_ddl("src", args, lenient=True))
    # every value as Flink's own text (a year-10000 date has no Python datetime)
    names = t_env.from_path("src").get_schema().get_field_names()
    said = ", ".join(f"CAST(`{n}` AS STRING) AS `{n}`" for n in names)
    result = t_env.execute_sql(f"SELECT {said} FROM src")
    with result.collect() as rows:
        for row in rows:
            values = dict(zip(names, row, strict=True))
            print(json.dumps({"kind": str(row.get_row_kind()), **values}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--format",
        required=True,
        choices=("debezium-json", "canal-json", "maxwell-json", "ogg-json"),
    )
    parser.add_argument("--file", required=True)
    parser.add_argument("--columns", required=True, help="the table's columns, as Flink SQL")
    parser.add_argument("--messages", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--show", action="store_true", help="print the decoded rows instead")
    args = parser.parse_args()
    t_env = environment(args.parallelism)
    if args.show:
        show(t_env, args)
        return
    for i in range(args.warmup):
        run_once(t_env, args, i)
    cpu = process_cpu_clock(get_gateway().jvm)
    best, best_cpu = float("inf"), float("inf")
    for i in range(args.warmup, args.warmup + args.repeat):
        start, start_cpu = time.perf_counter(), cpu()
        run_once(t_env, args, i)
        best, best_cpu = min(best, time.perf_counter() - start), min(best_cpu, cpu() - start_cpu)
    print(json.dumps({"msg_s": args.messages / best, "cpu_us": best_cpu * 1e6 / args.messages}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
