"""`check --against registry` against a real embedded registry process."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from cli.main import app
from contracts.contract import load_contract

FIX = Path(__file__).parent.parent / "fixtures" / "diff"
ROOT = Path(__file__).parent.parent.parent


@pytest.fixture()
def registry_url(tmp_path: Path) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "api.registry", "--port", str(port)]
    cmd += ["--db", str(tmp_path / "registry.db"), "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/config", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the embedded registry did not start")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def test_check_against_registered_versions(registry_url: str, tmp_path: Path) -> None:
    from registry_sync.client import RegistryClient, RegistryConfig
    from registry_sync.desired import desired_subjects
    from registry_sync.sync import push

    registered = load_contract(FIX / "decimal-scale-changed" / "before.yaml")
    with RegistryClient(RegistryConfig(url=registry_url)) as client:
        results = push(client, desired_subjects([registered], "topic"))
    assert all(r.version for r in results)

    contracts = tmp_path / "contracts"
    contracts.mkdir()
    shutil.copy(FIX / "decimal-scale-changed" / "after.yaml", contracts / "orders.yaml")
    shutil.copy(FIX / "format-changed" / "before.yaml", contracts / "shop.yaml")
    result = CliRunner().invoke(
        app,
        ["check", str(contracts), "--against", "registry", "--url", registry_url, "-o", "json"],
    )
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    by_name = {c["name"]: c for c in data["contracts"]}
    orders = by_name["pgserver1.public.orders"]
    assert orders["status"] == "changed" and orders["compatible"] is True
    assert [f["rule"] for f in orders["findings"]] == ["decimal-scale-changed"]
    assert by_name["shop.orders"]["status"] == "added"
