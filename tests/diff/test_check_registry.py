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
from clirun import Run, run, run_process

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
    result = run(
        "check",
        str(contracts),
        "--against",
        "registry",
        "--url",
        registry_url,
        "--output-format",
        "json",
    )
    assert result.code == 1, result.output
    data = json.loads(result.output)
    by_name = {c["name"]: c for c in data["contracts"]}
    orders = by_name["pgserver1.public.orders"]
    assert orders["status"] == "changed" and orders["compatible"] is True
    assert [f["rule"] for f in orders["findings"]] == ["decimal-scale-changed"]
    assert by_name["shop.orders"]["status"] == "added"


def check(*args: str, env: dict[str, str] | None = None) -> Run:
    return run("check", *args, env=env)


def contracts_dir(tmp_path: Path, *fixtures: tuple[str, str]) -> Path:
    contracts = tmp_path / "contracts"
    contracts.mkdir(exist_ok=True)
    for rule, side in fixtures:
        shutil.copy(FIX / rule / f"{side}.yaml", contracts / f"{rule}.yaml")
    return contracts


def test_a_pushed_contract_is_unchanged_and_no_socket_is_left_open(
    registry_url: str, tmp_path: Path
) -> None:
    contracts = contracts_dir(tmp_path, ("decimal-scale-changed", "before"))
    push = run_process(
        "registry", "push", str(contracts), env={"SCHEMA_REGISTRY_URL": registry_url}
    )
    assert push.code == 0, push.err
    args = [
        "check",
        str(contracts),
        "--against",
        "registry",
        "--url",
        registry_url,
        "--output-format",
        "json",
    ]
    done = run_process(*args)
    assert done.code == 0, done.err
    (entry,) = json.loads(done.text)["contracts"]
    assert entry["status"] == "unchanged" and entry["findings"] == []
    assert "ResourceWarning" not in done.err, done.err
    # a changed contract is still judged against what is registered
    shutil.copy(
        FIX / "decimal-scale-changed" / "after.yaml", contracts / "decimal-scale-changed.yaml"
    )
    result = check(
        str(contracts), "--against", "registry", "--url", registry_url, "--output-format", "json"
    )
    code, out = result.code, result.output
    assert code == 1
    (entry,) = json.loads(out)["contracts"]
    assert entry["status"] == "changed"
    assert [f["rule"] for f in entry["findings"]] == ["decimal-scale-changed"]


def test_schema_registry_url_is_honoured(registry_url: str, tmp_path: Path) -> None:
    contracts = contracts_dir(tmp_path, ("column-added", "before"))
    result = check(
        str(contracts), "--against", "registry", env={"SCHEMA_REGISTRY_URL": registry_url}
    )
    code, out = result.code, result.output
    assert code == 0, out
    assert "against registry" in out


def test_a_version_registered_by_another_tool_is_compared_as_avro(
    registry_url: str, tmp_path: Path
) -> None:
    from contracts.render import contract_avro

    before = load_contract(FIX / "avro-field-no-default" / "before.yaml")
    subject = f"{before.topic}-value"
    schema = json.dumps(contract_avro(before, "value"))
    answer = httpx.post(
        f"{registry_url}/subjects/{subject}/versions",
        json={"schema": schema},
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    assert answer.status_code == 200, answer.text
    contracts = contracts_dir(tmp_path, ("avro-field-no-default", "after"))
    result = check(
        str(contracts), "--against", "registry", "--url", registry_url, "--output-format", "json"
    )
    code, out = result.code, result.output
    assert code == 1, out
    (entry,) = json.loads(out)["contracts"]
    assert entry["status"] == "changed" and entry["compatible"] is False
    assert "avro-field-no-default" in [f["rule"] for f in entry["findings"]]


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "notaurl"])
@pytest.mark.parametrize("fail_on", ["breaking", "never"])
def test_an_unusable_registry_exits_2(tmp_path: Path, url: str, fail_on: str) -> None:
    contracts = contracts_dir(tmp_path, ("column-added", "before"))
    result = check(str(contracts), "--against", "registry", "--url", url, "--fail-on", fail_on)
    code, out = result.code, result.output
    assert code == 2, out
    assert out.startswith(f"error: {url}: ")


def test_no_contracts_against_the_registry_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = check(str(empty), "--against", "registry", "--url", "http://127.0.0.1:1")
    code, out = result.code, result.output
    assert code == 2 and "no contracts found under" in out


def test_a_file_that_is_not_a_contract_is_an_error_against_the_registry(tmp_path: Path) -> None:
    contracts = contracts_dir(tmp_path, ("column-added", "before"))
    (contracts / "notes.yaml").write_text("foo: bar\n")
    result = check(str(contracts), "--against", "registry", "--url", "http://127.0.0.1:1")
    code, out = result.code, result.output
    assert code == 2 and "notes.yaml:1: " in out
