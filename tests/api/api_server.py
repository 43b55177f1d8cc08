"""Helpers: a real ``cdc-contracts serve`` process (uvicorn) on a free port, with a temp SQLite registry."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import clirun
import httpx

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

API_KEY_ENV = "CDC_CONTRACTS_TEST_API_KEY"
API_KEY = "test-key-5f1d0c"
ORDERS = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"
ORDERS_MESSAGES = FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl"


@dataclass(frozen=True)
class Server:
    url: str
    contracts_dir: Path
    process: subprocess.Popen[bytes]

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30.0, **kwargs)  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    tmp: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    port: int | None = None,
    ready_headers: dict[str, str] | None = None,
) -> Server:
    """Start ``cdc-contracts serve`` on ``port`` (default: a free one); wait for ``/health``
    (sent with ``ready_headers``, e.g. the key when reads need it)."""
    port = port or free_port()
    command = clirun.command("serve", "--port", str(port), "--log-level", "warning", *extra)
    return start_process(tmp, command, port, "/health", env=env, ready_headers=ready_headers)


def start_keyed_server(tmp: Path, directory: Path) -> Server:
    """``serve`` with a registry database in ``tmp``, the contracts in ``directory`` and the
    test API key required for writes."""
    return start_server(
        tmp,
        "--registry-db",
        str(tmp / "registry.db"),
        "--contracts",
        str(directory),
        "--api-key-env",
        API_KEY_ENV,
    )


def start_registry(tmp: Path, db: Path) -> Server:
    """The embedded Schema Registry alone (``python -m api.registry``), as its own process."""
    port = free_port()
    command = [sys.executable, "-m", "api.registry", "--port", str(port), "--db", str(db)]
    return start_process(tmp, command, port, "/schemas/types")


def start_process(
    tmp: Path,
    command: list[str],
    port: int,
    ready_path: str,
    *,
    env: dict[str, str] | None = None,
    ready_headers: dict[str, str] | None = None,
) -> Server:
    """Run ``command`` (logging to a file in ``tmp``); wait until ``ready_path`` is 200."""
    log_path = tmp / f"server-{port}.log"
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, API_KEY_ENV: API_KEY, **(env or {})},
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {log_path.read_text()}")
        try:
            answer = httpx.get(f"{url}{ready_path}", headers=ready_headers, timeout=1)
            if answer.status_code == 200:
                return Server(url, tmp / "contracts", process)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"server did not start within 30 s: {log_path.read_text()}")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


def contracts_dir(tmp: Path) -> Path:
    """A contracts directory with the orders contract and one broken file."""
    directory = tmp / "contracts"
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(ORDERS, directory / "orders.yaml")
    (directory / "broken.yaml").write_text("name: broken\nformat: debezium-json\ntopix: x\n")
    return directory


def register_directly(
    registry: httpx.Client, data: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    """Register a contract's subjects in the registry the way ``registry_sync`` pushes them
    (past the gate)."""
    from contracts.contract import Contract
    from registry_sync.desired import desired_subjects

    for item in desired_subjects([Contract.model_validate(data)]):
        body = {"schema": item.schema, "metadata": {"properties": dict(item.properties)}}
        answer = registry.post(f"/subjects/{item.subject}/versions", json=body, headers=headers)
        assert answer.status_code == 200, answer.text
