"""Registry sync benchmark: push 500 new contracts, then plan them against the registry.

Targets (issue 5): ``plan`` for 500 contracts already registered makes at most one request per
subject and takes < 10 s against the embedded registry; ``push`` of 500 new contracts with
bounded concurrency, reported in subjects/s. The baseline measured in the same run is a plain
sequential loop of lookups over one HTTP connection (the floor a plan cannot beat by much).

Run: ``.venv/bin/python benchmarks/registry_bench.py [--contracts 500] [--concurrency 8]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "registry"))

import httpx  # noqa: E402
from conftest import RegistryServer  # noqa: E402
from helpers import count_requests, make_contract  # noqa: E402

from registry_sync.client import RegistryClient, RegistryConfig  # noqa: E402
from registry_sync.desired import desired_subjects  # noqa: E402
from registry_sync.sync import Action, Outcome, plan, push  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contracts", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="registry-bench-"))
    server = RegistryServer(work / "registry.db", work / "server.log").start()
    try:
        run(server.url, args.contracts, args.concurrency)
    finally:
        server.stop()


def run(url: str, n: int, concurrency: int) -> None:
    contracts = [make_contract(f"bench.c{i:04d}") for i in range(n)]
    t0 = time.perf_counter()
    desired = desired_subjects(contracts)
    render_s = time.perf_counter() - t0
    subjects = len(desired)

    # warm-up: a few subjects of their own, not counted
    with RegistryClient(RegistryConfig(url=url)) as client:
        push(client, desired_subjects([make_contract(f"warm.c{i}") for i in range(5)]))

    with RegistryClient(RegistryConfig(url=url)) as client:
        t0 = time.perf_counter()
        pushed = push(client, desired, concurrency)
        push_s = time.perf_counter() - t0
    assert all(r.outcome is Outcome.CREATED for r in pushed), "push did not create everything"

    with RegistryClient(RegistryConfig(url=url)) as client:
        seen = count_requests(client)
        t0 = time.perf_counter()
        planned = plan(client, desired, concurrency)
        plan_s = time.perf_counter() - t0
    assert all(p.action is Action.UNCHANGED for p in planned)

    with httpx.Client(base_url=url) as http:  # baseline: sequential raw lookups
        t0 = time.perf_counter()
        for d in desired:
            body = {"schema": d.schema, "metadata": {"properties": d.properties}}
            assert http.post(f"/subjects/{d.subject}", json=body).status_code == 200
        raw_s = time.perf_counter() - t0

    lines = [
        "## Schema Registry sync (registry_sync + embedded registry)",
        "",
        f"Machine: 2 cores; date 2026-11-27; {n} debezium-json contracts = {subjects} subjects "
        f"(key + value); concurrency {concurrency}; embedded registry in its own process "
        "(uvicorn, SQLite WAL, synchronous=FULL).",
        "",
        "| measurement | result | target |",
        "|---|---|---|",
        f"| render contracts to Avro subjects | {render_s:.2f} s | - |",
        f"| push {n} new contracts ({subjects} subjects, config + register each) | "
        f"{push_s:.2f} s = **{subjects / push_s:.0f} subjects/s** | reported |",
        f"| plan {n} registered contracts | **{plan_s:.2f} s**, {len(seen)} requests "
        f"({(len(seen) - 1) / subjects:.2f} per subject, plus the run's one probe) | < 10 s, "
        "<= 1 request/subject |",
        f"| baseline: sequential raw lookups over one connection | {raw_s:.2f} s "
        f"(plan/baseline = {plan_s / raw_s:.2f}) | - |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    out = ROOT / "benchmarks" / "results" / "registry.md"
    out.write_text(text, encoding="utf-8")
    # one lookup per subject, plus the probe every run makes first (GET /schemas/types)
    assert len(seen) <= subjects + 1 and plan_s < 10, "plan target missed"


if __name__ == "__main__":
    main()
