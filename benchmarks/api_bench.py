"""Benchmark: ``GET /contracts/{name}?render=avro`` (warm) against a real uvicorn process, with wrk.

Starts ``cdc-contracts serve`` (embedded registry in a temp SQLite file), registers the orders
contract, warms the rendering cache, then runs wrk at 50 connections and reports requests/s
and latency percentiles. The baseline measured in the same run is ``GET /health``-free:
``GET /schemas/types`` (the cheapest route of the same process), so the ratio shows what the
contract path costs over a trivial answer.

Targets (issue 7): >= 1,500 requests/s on 2 cores and p99 < 20 ms at 50 connections.

    .venv/bin/python benchmarks/api_bench.py [--duration 10] [--connections 50] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "api"))

import httpx  # noqa: E402
from api_server import Server, start_server, stop_server  # noqa: E402

CONTRACT = ROOT / "tests" / "fixtures" / "debezium-json" / "postgres-orders.expected.yaml"
KEY_ENV = "CDC_CONTRACTS_BENCH_KEY"
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def start(tmp: Path, port: int) -> Server:
    """The service with the embedded registry (temp SQLite file) and the bench API key."""
    return start_server(
        tmp,
        "--registry-db",
        str(tmp / "registry.db"),
        "--api-key-env",
        KEY_ENV,
        env={KEY_ENV: "bench"},
        port=port,
    )


def wrk(url: str, duration: int, connections: int, threads: int) -> dict[str, float]:
    out = subprocess.run(
        ["wrk", "--latency", f"-t{threads}", f"-c{connections}", f"-d{duration}s", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    result = {"rps": rps}
    for pct in ("50", "90", "99"):
        m = re.search(rf"^\s+{pct}(?:\.000)?%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        result[f"p{pct}_ms"] = float(m.group(1)) * UNITS[m.group(2)] if m else float("nan")
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result["non_2xx"] = float(errors.group(1)) if errors else 0.0
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--port", type=int, default=18931)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install -y wrk)")
    with tempfile.TemporaryDirectory() as tmp:
        server = start(Path(tmp), args.port)
        try:
            base = server.url
            name = "pgserver1.public.orders"
            put = httpx.put(
                f"{base}/contracts/{name}",
                content=CONTRACT.read_bytes(),
                headers={"X-API-Key": "bench", "Content-Type": "application/yaml"},
            )
            put.raise_for_status()
            target = f"{base}/contracts/{name}?render=avro"
            assert httpx.get(target).json()["schema"]["type"] == "record"
            wrk(target, 2, args.connections, args.threads)  # warm-up
            baseline = wrk(f"{base}/schemas/types", args.duration, args.connections, args.threads)
            measured = wrk(target, args.duration, args.connections, args.threads)
        finally:
            stop_server(server)
    print(f"cores: {os.cpu_count()}  connections: {args.connections}  duration: {args.duration}s")
    for label, r in (
        ("GET /schemas/types (baseline)", baseline),
        ("GET /contracts/{name}?render=avro", measured),
    ):
        print(
            f"{label:38s} {r['rps']:9.0f} req/s  p50 {r['p50_ms']:.2f} ms  "
            f"p90 {r['p90_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  non-2xx {r['non_2xx']:.0f}"
        )
    print(f"ratio render/baseline: {measured['rps'] / baseline['rps']:.2f}")
    ok = measured["rps"] >= 1500 and measured["p99_ms"] < 20 and measured["non_2xx"] == 0
    print("target (>= 1500 req/s, p99 < 20 ms):", "met" if ok else "NOT met")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
