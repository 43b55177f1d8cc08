"""A real embedded registry: ``python -m api.registry`` in a subprocess, on a free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RegistryServer:
    """One registry process over one SQLite file; can be killed and restarted on the same file."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db = db
        self.log = log
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> RegistryServer:
        command = [sys.executable, "-m", "api.registry", "--port", str(self.port)]
        command += ["--db", str(self.db), "--log-level", "warning"]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ)
            )
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=1.0) as http:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"registry exited: {self.log.read_text()[-2000:]}")
                try:
                    if http.get(f"{self.url}/config").status_code == 200:
                        return self
                except httpx.TransportError:
                    pass
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"registry did not answer within {timeout}s")

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers, no flush."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    """The shared registry of this test session (tests use their own subject names)."""
    base = tmp_path_factory.mktemp("registry")
    server = RegistryServer(base / "registry.db", base / "server.log").start()
    yield server
    server.stop()


@pytest.fixture
def fresh_registry(tmp_path: Path) -> Iterator[RegistryServer]:
    """A registry of its own (for tests that count, kill or change global settings)."""
    server = RegistryServer(tmp_path / "registry.db", tmp_path / "server.log").start()
    yield server
    server.stop()


@pytest.fixture
def unique() -> str:
    """A prefix that keeps this test's subjects apart from the others'."""
    return f"t{uuid.uuid4().hex[:10]}"
