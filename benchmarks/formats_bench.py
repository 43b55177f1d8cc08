"""Format throughput on one core: ``infer`` MB/s and ``normalize`` messages/s.

Input: generated Debezium MySQL messages with embedded schemas (benchmarks/datagen.py), one per
line. Baselines measured in the same run over the same file: a plain ``json.loads`` loop and an
``orjson.loads`` loop (reading lines included in both). Each measurement runs after a warm-up
on the first 5 000 messages; the process is pinned to one CPU and throughput is
per CPU-second of this process (time.process_time), so other load does not distort it.

    .venv/bin/python -m benchmarks.formats_bench [--messages 100000] [--write]

``--write`` records the table in benchmarks/results/formats.md. Targets: infer >= 50 MB/s,
normalize >= 20 000 messages/s.
"""

from __future__ import annotations

import argparse
import base64
import decimal
import json
import os
import platform
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import orjson

from benchmarks.datagen import debezium_messages, write_jsonl
from contracts.formats import get_format
from contracts.formats.base import InferOptions
from contracts.pipeline import Report, Stream, normalize_lines, open_stream

INFER_TARGET_MB_S: Final = 50.0
NORMALIZE_TARGET_MSG_S: Final = 20_000.0
WARMUP: Final = 5_000
RESULTS: Final = Path(__file__).parent / "results" / "formats.md"


def pin_one_core() -> str:
    """Pin this process to one CPU (Linux); returns a description."""
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity)"


def dataset(n: int, directory: Path) -> Path:
    path = directory / f"debezium-{n}.jsonl"
    if not path.exists():
        write_jsonl(path, debezium_messages(n, with_schema=True, seed=0))
    return path


def numeric_dataset(n: int, directory: Path) -> Path:
    """The same messages with Decimals written as JSON numbers (JsonConverter's
    ``decimal.format=NUMERIC``, as Paimon's and Flink CDC's Debezium output); one message in
    ten holds a number with more digits than a double keeps (read again keeping its text)."""
    path = directory / f"debezium-numeric-{n}.jsonl"
    if path.exists():
        return path
    lines = []
    for i, line in enumerate(debezium_messages(n, with_schema=True, seed=0)):
        doc = json.loads(line)
        for side in ("before", "after"):
            image = doc["payload"].get(side)
            if image and isinstance(image.get("amount"), str):
                cents = int.from_bytes(base64.b64decode(image["amount"]), "big", signed=True)
                text = format(decimal.Decimal(cents).scaleb(-2), "f")
                if i % 10 == 0:  # 16+ digits: 1234567890.12 -> 12345678901234.5600000000000
                    text += "0" * 13
                image["amount"] = f"__NUMBER_{text}__"
        out = json.dumps(doc, separators=(",", ":"))
        lines.append(re.sub(r'"__NUMBER_(-?[0-9.]+)__"', r"\1", out).encode())
    write_jsonl(path, lines)
    return path


def timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    """(CPU seconds of this process, wall seconds, count)."""
    wall, cpu = time.perf_counter(), time.process_time()
    count = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, count


def json_loop(path: Path) -> int:
    n = 0
    with path.open("rb") as f:
        for line in f:
            json.loads(line)
            n += 1
    return n


def orjson_loop(path: Path) -> int:
    n = 0
    with path.open("rb") as f:
        for line in f:
            orjson.loads(line)
            n += 1
    return n


def infer_run(path: Path) -> int:
    stream = open_stream([path], "debezium-json")
    return stream.format.infer(stream.messages(), InferOptions()).messages


def normalize_run(path: Path) -> int:
    """What ``cdc-contracts normalize`` does: events serialized as JSON lines (to /dev/null),
    each once, by the judgement (``normalize_lines``, as the CLI)."""
    stream: Stream = open_stream([path], "debezium-json")
    report = Report()
    with open(os.devnull, "wb") as sink:
        for line in normalize_lines(stream, None, report=report):
            sink.write(line)
    if report.bad_messages or report.unusable:
        raise SystemExit(f"normalize reported problems: {report.to_json()}")
    return report.messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "cdc-bench")
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/formats.md")
    args = parser.parse_args()
    pinned = pin_one_core()
    args.dir.mkdir(parents=True, exist_ok=True)
    get_format("debezium-json")
    datasets = {
        "": (dataset(args.messages, args.dir), dataset(WARMUP, args.dir)),
        ", NUMERIC": (
            numeric_dataset(args.messages, args.dir),
            numeric_dataset(WARMUP, args.dir),
        ),
    }
    runs: dict[str, Callable[[Path], int]] = {
        "json.loads loop": json_loop,
        "orjson.loads loop": orjson_loop,
        "infer (debezium-json{})": infer_run,
        "normalize (debezium-json{}, JSON lines out)": normalize_run,
    }
    rows = []
    for suffix, (path, warm) in datasets.items():
        size_mb = path.stat().st_size / 1e6
        for template, fn in runs.items():
            label = template.format(suffix) if "{}" in template else template + suffix
            fn(warm)
            cpu, wall, count = timed(lambda fn=fn, path=path: fn(path))
            rows.append((label, cpu, wall, size_mb / cpu, count / cpu))
            print(
                f"{label:54s} cpu {cpu:7.2f} s  wall {wall:7.2f} s "
                f"{size_mb / cpu:8.1f} MB/s {count / cpu:10.0f} msg/s"
            )

    by = {r[0]: r for r in rows}  # label -> (label, cpu, wall, MB/s, msg/s)
    infer_mb = min(by["infer (debezium-json)"][3], by["infer (debezium-json, NUMERIC)"][3])
    norm_msg = min(
        by["normalize (debezium-json, JSON lines out)"][4],
        by["normalize (debezium-json, NUMERIC, JSON lines out)"][4],
    )
    verdict = (
        f"slowest of both datasets: infer {infer_mb:.1f} MB/s (target >= {INFER_TARGET_MB_S:.0f}: "
        f"{'met' if infer_mb >= INFER_TARGET_MB_S else 'MISSED'}); "
        f"normalize {norm_msg:,.0f} msg/s (target >= {NORMALIZE_TARGET_MSG_S:,.0f}: "
        f"{'met' if norm_msg >= NORMALIZE_TARGET_MSG_S else 'MISSED'})"
    )
    print(verdict)
    if args.write:
        write_results(rows, args.messages, size_mb, pinned, verdict)


def write_results(
    rows: list[tuple[str, float, float, float, float]],
    n: int,
    size_mb: float,
    pinned: str,
    verdict: str,
) -> None:
    lines = [
        "## Formats: infer and normalize throughput (one core)",
        "",
        f"Input: {n:,} generated Debezium MySQL change events with embedded schemas "
        f"(`benchmarks/datagen.py`, seed 0), {size_mb:.0f} MB as JSON lines "
        f"({size_mb * 1e6 / n / 1000:.1f} KB per message). Measured by "
        "`python -m benchmarks.formats_bench` in one process, "
        f"{pinned}, each run after a warm-up on 5,000 messages. Python "
        f"{platform.python_version()}, 2-core machine, 2026-11-22.",
        "",
        "Throughput is per CPU-second of the benchmark process (`time.process_time`), i.e. on",
        "one core; wall-clock seconds are shown too (other work shared the 2 cores; load",
        f"average {os.getloadavg()[0]:.1f} at the end of the run).",
        "",
        "| run | CPU s | wall s | MB/s | messages/s | vs json.loads |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    base = rows[0][4]
    for label, cpu, wall, mb_s, msg_s in rows:
        lines.append(
            f"| {label} | {cpu:.2f} | {wall:.2f} | {mb_s:.1f} | {msg_s:,.0f} | {msg_s / base:.2f}x |"
        )
    lines += ["", f"Result: {verdict}.", ""]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    existing = RESULTS.read_text() if RESULTS.exists() else ""
    notes = existing.split("<!-- notes -->", 1)[1] if "<!-- notes -->" in existing else "\n"
    RESULTS.write_text("\n".join(lines) + "<!-- notes -->" + notes)


if __name__ == "__main__":
    main()
