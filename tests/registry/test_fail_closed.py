"""Fail closed wherever a registry is read (#23 item 1), with the real command: a URL that is
not a registry (a plain web server, a typo'd path on a real registry) is exit 2 and one error
line naming the URL and what answered — never "added"/"create" for every contract."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from clirun import Run, run, run_process

from registry_sync import protocol
from registry_sync.client import AsyncRegistryClient, RegistryClient, RegistryConfig
from registry_sync.protocol import Call, NotARegistryError, Reply

from .conftest import RegistryServer, free_port
from .helpers import make_contract, write_contracts


def _serve_directory(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``python -m http.server`` over ``root``: a web server that is not a registry."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1.0)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    return proc, url


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("www")
    (root / "index.html").write_text("<html><body>hello</body></html>")
    proc, url = _serve_directory(root)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def contracts(tmp_path: Path, unique: str) -> Path:
    return write_contracts(tmp_path / "contracts", [make_contract(f"{unique}.orders")])


COMMANDS = {
    "check": lambda d, url: ("check", str(d), "--against", "registry", "--url", url),
    "plan": lambda d, url: ("registry", "plan", str(d), "--url", url),
    "push": lambda d, url: ("registry", "push", str(d), "--url", url),
    "pull": lambda d, url: ("registry", "pull", "--url", url, "-o", str(d / "pulled")),
    "subjects": lambda d, url: ("registry", "subjects", "--url", url),
}


def _assert_one_error_line(done: Run, url: str, what: str) -> None:
    assert done.code == 2, done.text + done.err
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert lines[0].startswith(f"error: {url}: ") and what in lines[0], lines[0]
    assert "Traceback" not in done.err
    assert "added" not in done.text and "create" not in done.text


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_plain_web_server_is_not_a_registry(
    web_server: str, contracts: Path, command: str
) -> None:
    done = run(*COMMANDS[command](contracts, web_server))
    what = "not a Schema Registry: GET /schemas/types answered HTTP 404 (text/html"
    _assert_one_error_line(done, web_server, what)
    assert not (contracts / "pulled").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_typo_in_the_registry_path_is_not_a_registry(
    registry: RegistryServer, contracts: Path, command: str
) -> None:
    url = f"{registry.url}/typo"
    done = run(*COMMANDS[command](contracts, url))
    _assert_one_error_line(done, url, "not a Schema Registry path")


def test_github_and_junit_get_one_run_level_error(web_server: str, tmp_path: Path) -> None:
    directory = write_contracts(tmp_path / "c", [make_contract(f"r{i}.orders") for i in range(3)])
    github = run(
        "check", str(directory), "--against", "registry", "--url", web_server, "--output", "github"
    )
    assert github.code == 2
    annotations = [line for line in github.text.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and annotations[0].startswith("::error title=")
    assert web_server in annotations[0]
    junit = run(
        "check", str(directory), "--against", "registry", "--url", web_server, "--output", "junit"
    )
    assert junit.code == 2
    assert junit.text.count("<error ") == 1 and 'errors="1"' in junit.text
    assert web_server in junit.text
    assert "<testcase" in junit.text and junit.text.count("<testcase") == 1


def test_an_unreachable_registry_is_one_line(contracts: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    for command in ("plan", "push", "check"):
        done = run(*COMMANDS[command](contracts, url))
        _assert_one_error_line(done, url, "registry unreachable")


def test_serve_refuses_an_external_url_that_is_not_a_registry(web_server: str) -> None:
    done = run_process("serve", "--port", str(free_port()), "--registry-url", web_server)
    _assert_one_error_line(done, web_server, "not a Schema Registry")


# --- what "absent" means ---------------------------------------------------------------------


def _reply(status: int, body: object, kind: str = "application/json") -> Reply:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Reply(status, kind, content)


@pytest.mark.parametrize("code", [40401, 40402, 40403])
def test_only_a_registry_not_found_means_absent(code: int) -> None:
    call = Call("GET", "/subjects/s/versions/latest", "read s", absent=frozenset({code}))
    assert (
        protocol.read_answer(call, "u", _reply(404, {"error_code": code, "message": "x"})) is None
    )


@pytest.mark.parametrize(
    "reply",
    [
        _reply(404, b"<html>Not Found</html>", "text/html"),
        _reply(404, {"detail": "Not Found"}),  # a JSON API, not a registry
        _reply(404, {"error_code": 404, "message": "HTTP 404 Not Found"}),  # no such path
        _reply(200, b"<html>ok</html>", "text/html"),
        _reply(302, b""),
    ],
)
def test_other_answers_are_not_a_registry(reply: Reply) -> None:
    call = Call("GET", "/subjects/s/versions/latest", "read s", absent=frozenset({40401, 40402}))
    with pytest.raises(NotARegistryError):
        protocol.read_answer(call, "u", reply)


def test_an_answer_of_the_wrong_shape_is_not_a_registry(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "types").write_text('{"types": ["AVRO"]}')  # JSON, the wrong shape
    proc, url = _serve_directory(tmp_path)
    try:
        client = RegistryClient(RegistryConfig(url=url, max_retries=0))
        with client, pytest.raises(NotARegistryError) as info:
            client.subjects()
    finally:
        proc.terminate()
        proc.wait(10)
    assert info.value.where == url and info.value.exit_code == 2
    assert "where the list of schema types (with AVRO) was expected" in info.value.what


# --- one client, two drivers -------------------------------------------------------------------


def test_the_sync_and_async_clients_are_built_from_the_same_operations() -> None:
    from registry_sync.client import OPERATIONS

    for name, op in OPERATIONS.items():
        assert getattr(RegistryClient, name).__wrapped__ is op, name
        assert getattr(AsyncRegistryClient, name).__wrapped__ is op, name
    generated = {
        n for n in dir(RegistryClient) if hasattr(getattr(RegistryClient, n), "__wrapped__")
    }
    assert generated == set(OPERATIONS)


def test_the_async_client_reads_a_registry_in_process(tmp_path: Path, unique: str) -> None:
    from api.registry.app import create_registry_app

    async def go() -> tuple[list[str], object]:
        transport = httpx.ASGITransport(app=create_registry_app(tmp_path / "r.db"))
        client = AsyncRegistryClient(RegistryConfig(url="http://registry"), transport=transport)
        try:
            schema = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'
            done = await client.register(f"{unique}-value", schema)
            return await client.subjects(), done
        finally:
            await client.aclose()

    subjects, done = asyncio.run(go())
    assert subjects == [f"{unique}-value"]
    assert getattr(done, "version", None) == 1


def test_several_urls_fail_over_to_the_next(registry: RegistryServer) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    config = RegistryConfig(url=f"{dead},{registry.url}", max_retries=1, retry_wait_ms=1)
    with RegistryClient(config) as client:
        assert isinstance(client.subjects(), list)
