"""Where the JVM's time goes in ``decode_changes`` and in the hand-written ``from_json``.

Both variants of benchmarks/spark_decode.py run in one Spark session, taking turns, while Java
Flight Recorder samples the executor threads (JDK 17's ``jcmd <pid> JFR.start
settings=default``, low overhead). Each sample is given to the pass it fell in and to a category (the
innermost frame that names one: the JSON parse, regular expressions, row writes...). The
table shows, per variant, the share of its samples and the µs of JVM CPU per message that
share stands for (JFR samples some threads more often than others per CPU-second, so only
shares within a variant, scaled by that variant's CPU time, compare across variants). Run::

    .venv/bin/python -m benchmarks.spark_profile --format canal-json --n 100000

Needs ``jcmd`` and ``jfr`` (both in the JDK) on the PATH.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import spark_decode as sd
from spark_bindings.session import HUGE_METHOD_CONF

#: Categories by substrings of a frame's class and method, tried from the innermost frame out
#: until generated code (whose own time is "generated code").
CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("parser set-up", ("StreamDecoder", "HeapByteBuffer", "ByteBuffer.allocate")),
    ("JSON parse", ("jackson", "JacksonParser", "JacksonUtils")),
    ("trim", ("UTF8String.trim", "StringTrim")),
    ("regex", ("java/util/regex", "RLike", "StringUTF16", "String.<init>")),
    ("date/time casts", ("stringToTimestamp", "stringToDate", "DateTimeUtils")),
    ("number casts", ("toLong", "toInt", "Decimal", "parseDouble", "FloatingDecimal")),
    ("substring search", ("rfind", "indexOf", "subStringIndex")),
    ("maps and arrays", ("ArrayData", "MapData", "ArrayContains", "GetMapValue")),
    ("row writes", ("UnsafeWriter", "UnsafeRowWriter", "UnsafeArrayWriter", "setNullAt")),
    ("row reads", ("UnsafeRow.get", "UnsafeRow.isNullAt", "GenericInternalRow")),
    ("other strings", ("UTF8String", "String")),
)


JVM_FLAGS = (
    "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints "
    "-XX:FlightRecorderOptions:stackdepth=256"
)


def category(frames: list[str]) -> str:
    """The category of one sample's stack (innermost frame first)."""
    for frame in frames:
        if "GeneratedClass" in frame:
            return "generated code"
        for name, patterns in CATEGORIES:
            if any(p in frame for p in patterns):
                return name
    return "other"


def samples(recording: Path) -> list[tuple[int, list[str]]]:
    """(time in ns, frames) of each executor-thread sample of a JFR recording."""
    command = ["jfr", "print", "--json", "--stack-depth", "200"]
    printed = subprocess.run(
        [*command, "--events", "jdk.ExecutionSample", str(recording)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    out = []
    for event in json.loads(printed)["recording"]["events"]:
        values = event["values"]
        if "Executor task" not in (values["sampledThread"]["javaName"] or ""):
            continue
        frames = [
            f["method"]["type"]["name"] + "." + f["method"]["name"]
            for f in values["stackTrace"]["frames"]
        ]
        when = dt.datetime.fromisoformat(values["startTime"].replace("Z", "+00:00"))
        out.append((int(when.timestamp() * 1e9), frames))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="canal-json", choices=sorted(sd.GENERATORS))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--passes", type=int, default=4)
    args = parser.parse_args()
    for tool in ("jcmd", "jfr"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not on the PATH (it comes with the JDK)")
    # samples attributed to the exact frame (not the nearest safepoint), whole stacks kept
    spark = sd.benchmark_session(
        {HUGE_METHOD_CONF: "8000", "spark.driver.extraJavaOptions": JVM_FLAGS}
    )
    values = list(sd.GENERATORS[args.format](args.n))
    contract = sd.infer_contract(args.format, values[:2000])
    df = spark.createDataFrame([(v,) for v in values], "value binary").repartition(2).cache()
    df.count()
    variants = {"decode_changes": sd.bindings, "from_json": sd.handwritten}
    built = {name: variant(df, contract) for name, variant in variants.items()}
    for _ in range(args.warmup):
        for out in built.values():
            out.write.format("noop").mode("overwrite").save()
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    cpu = sd.jvm_cpu_seconds(spark)
    recording = Path(tempfile.mkdtemp()) / "decode.jfr"
    jcmd = ["jcmd", str(pid), "JFR.start", "name=decode", "settings=default"]
    subprocess.run([*jcmd, f"filename={recording}"], check=True, capture_output=True)
    windows: list[tuple[str, int, int]] = []
    cpu_s: dict[str, float] = {}
    for _ in range(args.passes):
        for name, out in built.items():
            start, start_cpu = time.time_ns(), cpu()
            out.write.format("noop").mode("overwrite").save()
            cpu_s[name] = min(cpu_s.get(name, float("inf")), cpu() - start_cpu)
            windows.append((name, start, time.time_ns()))
    subprocess.run(["jcmd", str(pid), "JFR.stop", "name=decode"], check=True, capture_output=True)
    spark.stop()
    report(samples(recording), windows, cpu_s, args.n, args.format)


def report(
    found: list[tuple[int, list[str]]],
    windows: list[tuple[str, int, int]],
    cpu_s: dict[str, float],
    messages: int,
    fmt: str,
) -> None:
    """Print the category table: share of each variant's samples, and µs per message."""
    by = {name: collections.Counter[str]() for name in cpu_s}
    for when, frames in found:
        name = next((w[0] for w in windows if w[1] <= when <= w[2]), None)
        if name is not None:
            by[name][category(frames)] += 1
    names = list(cpu_s)
    us = {name: cpu_s[name] * 1e6 / messages for name in names}
    print(f"{fmt}: JVM CPU µs per message under the profiler (best pass): ", end="")
    print(", ".join(f"{n} {us[n]:.1f}" for n in names))
    print("| category | " + " | ".join(f"{n} share | {n} µs" for n in names) + " |")
    print("|---|" + "---:|---:|" * len(names))
    order = sorted({c for n in names for c in by[n]}, key=lambda c: -by[names[0]][c])
    for cat in order:
        cells = []
        for n in names:
            share = by[n][cat] / max(1, sum(by[n].values()))
            cells += [f"{share:.1%}", f"{share * us[n]:.1f}"]
        print(f"| {cat} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
