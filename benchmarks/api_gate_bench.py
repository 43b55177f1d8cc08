"""Benchmark: registry reads stay fast while large checks are posted (#23 item 3).

Starts ``cdc-contracts serve`` (embedded registry in a temp SQLite file), registers the orders
contract, warms up, then measures the latency of ``GET /schemas/types`` — what producers and
consumers ask the registry — twice in the same run:

- baseline: nothing else running;
- under load: while 4 clients each post, one after the other, ``POST /contracts/{name}/check``
  with a candidate of about 1 MB (the orders contract with thousands of extra columns), the
  work that used to run on the event loop.

Reads are sent by one client at a fixed pace (every 10 ms, each on its own timer), so a
stalled loop shows up as latency, not as fewer samples. Target: p99 < 50 ms under load. The
script prints both readings and the checks' own figures (answered, 503 busy, seconds each);
it is not a test.

    .venv/bin/python -m benchmarks.api_gate_bench [--seconds 20] [--clients 4] [--size-mb 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "api"))

import httpx  # noqa: E402
from api_server import ORDERS, start_server, stop_server  # noqa: E402

KEY_ENV = "CDC_CONTRACTS_BENCH_KEY"
NAME = "bench.orders"
TARGET_P99_MS = 50.0


def contract(columns: int = 0) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ORDERS.read_text())
    data.update(name=NAME, topic=NAME)
    data["columns"] += [
        {"field": f"extra_column_{i:06d}", "type": "string", "optional": True, "doc": "x" * 40}
        for i in range(columns)
    ]
    return data


def candidate_of_size(megabytes: float) -> str:
    """YAML text of the contract grown to about ``megabytes``."""
    per_column = len(yaml.safe_dump(contract(100))) - len(yaml.safe_dump(contract(0)))
    columns = int(megabytes * 1024 * 1024 / (per_column / 100))
    return yaml.safe_dump(contract(columns), sort_keys=False)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def read_latencies(url: str, seconds: float, stop: threading.Event | None = None) -> list[float]:
    """``GET /schemas/types`` every 10 ms for ``seconds``; latencies in ms."""
    latencies: list[float] = []
    with httpx.Client(base_url=url, timeout=30.0) as client:
        deadline = time.monotonic() + seconds
        next_at = time.monotonic()
        while time.monotonic() < deadline and not (stop and stop.is_set()):
            started = time.perf_counter()
            answer = client.get("/schemas/types")
            latencies.append((time.perf_counter() - started) * 1000)
            assert answer.status_code == 200
            next_at += 0.01
            time.sleep(max(0.0, next_at - time.monotonic()))
    return latencies


def poster(
    url: str, body: dict[str, Any], stop: threading.Event, out: list[tuple[int, float]]
) -> None:
    with httpx.Client(base_url=url, timeout=120.0) as client:
        while not stop.is_set():
            started = time.perf_counter()
            answer = client.post(f"/contracts/{NAME}/check", json=body)
            out.append((answer.status_code, time.perf_counter() - started))
            if answer.status_code == 503:
                time.sleep(float(answer.headers.get("retry-after", "1")))


def summary(latencies: list[float]) -> str:
    return (
        f"{len(latencies)} reads, p50 {percentile(latencies, 50):.1f} ms, "
        f"p99 {percentile(latencies, 99):.1f} ms, max {max(latencies):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--size-mb", type=float, default=1.0)
    args = parser.parse_args()
    candidate = candidate_of_size(args.size_mb)
    body = {"candidate": candidate}
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(
            Path(tmp),
            "--registry-db",
            str(Path(tmp) / "registry.db"),
            "--api-key-env",
            KEY_ENV,
            env={KEY_ENV: "bench"},
        )
        try:
            with httpx.Client(base_url=server.url, timeout=60.0) as client:
                created = client.put(
                    f"/contracts/{NAME}",
                    content=yaml.safe_dump(contract()),
                    headers={"X-API-Key": "bench", "Content-Type": "application/yaml"},
                )
                assert created.status_code == 201, created.text
                warm = client.post(f"/contracts/{NAME}/check", json=body)
                assert warm.status_code == 200, warm.text[:300]
            read_latencies(server.url, 2.0)  # warm-up
            baseline = read_latencies(server.url, args.seconds)
            stop = threading.Event()
            checks: list[tuple[int, float]] = []
            threads = [
                threading.Thread(target=poster, args=(server.url, body, stop, checks))
                for _ in range(args.clients)
            ]
            for t in threads:
                t.start()
            time.sleep(1.0)  # every client has a check in flight
            loaded = read_latencies(server.url, args.seconds)
            stop.set()
            for t in threads:
                t.join()
        finally:
            stop_server(server)
    answered = [s for code, s in checks if code == 200]
    busy = sum(1 for code, _ in checks if code == 503)
    print(f"candidate: {len(candidate) / 1024 / 1024:.2f} MB of YAML, {args.clients} clients")
    print(f"GET /schemas/types, idle:        {summary(baseline)}")
    print(f"GET /schemas/types, under load:  {summary(loaded)}")
    if answered:
        print(
            f"checks: {len(answered)} answered 200 (median {statistics.median(answered):.2f} s "
            f"each), {busy} answered 503 busy, {len(checks) - len(answered) - busy} other"
        )
    p99 = percentile(loaded, 99)
    ratio = p99 / percentile(baseline, 99)
    verdict = "met" if p99 < TARGET_P99_MS else "NOT met"
    print(
        f"p99 under load {p99:.1f} ms ({ratio:.1f}x idle): target < {TARGET_P99_MS:g} ms {verdict}"
    )


if __name__ == "__main__":
    main()
