"""How the service is run, over real HTTP: cached renderings with ETags, several workers sharing
one SQLite registry, an external registry (``--registry-url``) and ``--read-requires-key``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clirun
import httpx
import pytest
import yaml
from api_server import (
    API_KEY,
    API_KEY_ENV,
    ORDERS,
    Server,
    contracts_dir,
    register_directly,
    start_registry,
    start_server,
    stop_server,
)
from test_api import assert_problem, fresh_name, orders, put

KEY = {"X-API-Key": API_KEY}


def render_url(name: str, version: int | None = None, render: str = "avro") -> str:
    path = f"/contracts/{name}" + (f"/versions/{version}" if version else "")
    return f"{path}?render={render}&part=value"


def widened(name: str) -> dict[str, Any]:
    data = orders(name)
    data["columns"].append({"field": "coupon", "type": "string", "optional": True})
    return data


# --- ETags and the cached answer ----------------------------------------------------------------


def test_cached_rendering_is_the_same_answer_with_an_etag(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    first = client.get(render_url(name))  # rendered by the route
    second = client.get(render_url(name))  # answered from the cache
    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    for header in ("etag", "content-type", "content-length"):
        assert first.headers[header] == second.headers[header], header
    etag = first.headers["etag"]
    assert etag.startswith('"') and first.headers["content-type"] == "application/json"

    for condition in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = client.get(render_url(name), headers={"If-None-Match": condition})
        assert again.status_code == 304 and again.content == b"", condition
        assert again.headers["etag"] == etag
    assert client.get(render_url(name), headers={"If-None-Match": '"other"'}).status_code == 200
    # a version URL names the same rendering as "latest" while it is the latest
    assert client.get(render_url(name, 1)).headers["etag"] == etag

    assert put(client, widened(name)).status_code == 201
    newer = client.get(render_url(name), headers={"If-None-Match": etag})
    assert newer.status_code == 200 and newer.json()["version"] == 2
    assert newer.headers["etag"] != etag
    assert client.get(render_url(name, 1), headers={"If-None-Match": etag}).status_code == 304


def test_contract_answers_have_an_etag_too(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    etag = client.get(f"/contracts/{name}").headers["etag"]
    assert client.get(f"/contracts/{name}", headers={"If-None-Match": etag}).status_code == 304
    assert put(client, widened(name)).status_code == 201
    assert client.get(f"/contracts/{name}", headers={"If-None-Match": etag}).status_code == 200


def test_unusual_render_requests_still_get_the_routes_answer(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    assert client.get(render_url(name)).status_code == 200  # now cached
    assert_problem(client.get(f"/contracts/{name}?render=avro&part="), 422)
    assert_problem(client.get(f"/contracts/{name}/versions/0?render=avro"), 422)
    assert_problem(client.get(f"/contracts/{name}/versions/7?render=avro"), 404)
    # the last of repeated parameters counts, as in the route
    last = client.get(f"/contracts/{name}?render=xml&render=avro").json()
    assert last["render"] == "avro"


# --- several workers, one SQLite registry -------------------------------------------------------


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("workers")
    srv = start_server(
        tmp, "--registry-db", str(tmp / "registry.db"), "--api-key-env", API_KEY_ENV,
        "--workers", "2",
    )  # fmt: skip
    yield srv
    stop_server(srv)


def clients_on_two_workers(server: Server) -> tuple[httpx.Client, httpx.Client]:
    """Two keep-alive clients whose connections were accepted by different workers."""
    opened: list[httpx.Client] = []
    by_process: dict[int, httpx.Client] = {}
    for _ in range(60):
        client = server.client()
        opened.append(client)
        by_process.setdefault(client.get("/health").json()["process"], client)
        if len(by_process) == 2:
            break
    for client in opened:
        if client not in by_process.values():
            client.close()
    assert len(by_process) == 2, "every connection went to the same worker"
    first, second = by_process.values()
    return first, second


def test_a_write_through_one_worker_is_read_through_the_other(two_workers: Server) -> None:
    a, b = clients_on_two_workers(two_workers)
    try:
        writes_through_one_are_read_through_the_other(a, b)
    finally:
        a.close()
        b.close()


def writes_through_one_are_read_through_the_other(a: httpx.Client, b: httpx.Client) -> None:
    name = fresh_name()
    assert put(a, orders(name)).status_code == 201
    for client in (a, b):  # both workers render and cache version 1
        for _ in range(2):
            assert client.get(render_url(name)).json()["version"] == 1
        assert client.get("/contracts", params={"prefix": name}).json()["total"] == 1
    assert put(a, widened(name)).status_code == 201
    assert b.get(render_url(name)).json()["version"] == 2
    listed = b.get("/contracts", params={"prefix": name}).json()["items"]
    assert listed[0]["versions"] == [1, 2]
    assert b.get(f"/contracts/{name}").json()["version"] == 2
    # and back: a write through b is seen by a
    other = fresh_name()
    assert put(b, orders(other)).status_code == 201
    assert a.get(render_url(other)).json()["name"] == other


# --- an external registry -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def external(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    """The registry alone as one process, and the service pointed at it as another."""
    tmp = tmp_path_factory.mktemp("external")
    registry = start_registry(tmp, tmp / "registry.db")
    try:
        service = start_server(
            tmp, "--registry-url", registry.url, "--api-key-env", API_KEY_ENV,
            env={"CDC_CONTRACTS_CATALOG_TTL_SECONDS": "0.2"},
        )  # fmt: skip
    except BaseException:
        stop_server(registry)
        raise
    yield registry, service
    stop_server(service)
    stop_server(registry)


def test_external_registry_is_used_over_http(external: tuple[Server, Server]) -> None:
    registry_server, service = external
    with registry_server.client() as registry, service.client() as api:
        assert api.get("/health").json()["registry"] == registry_server.url
        # no embedded registry in this mode
        assert_problem(api.get("/subjects"), 404)
        assert_problem(api.get("/schemas/types"), 404)

        name = fresh_name()
        created = put(api, orders(name))
        assert created.status_code == 201, created.text
        value = registry.get(f"/subjects/t.{name}-value/versions/latest").json()
        assert value["metadata"]["properties"]["cdc.contract.name"] == name
        assert f"t.{name}-key" in registry.get("/subjects").json()

        listing = api.get("/contracts", params={"prefix": name}).json()
        assert [i["name"] for i in listing["items"]] == [name]
        rendered = api.get(render_url(name)).json()
        assert rendered["version"] == 1 and rendered["schema"]["type"] == "record"
        verdict = api.post(f"/contracts/{name}/check", json={"candidate": widened(name)}).json()
        assert verdict["compatible"] is True and verdict["against_versions"] == [1]

        # another writer registers version 2 in the registry: seen after the listing's TTL
        register_directly(registry, widened(name))
        deadline = time.monotonic() + 10
        while api.get(render_url(name)).json()["version"] != 2:
            assert time.monotonic() < deadline, "version 2 never showed"
            time.sleep(0.1)
        assert api.get(f"/contracts/{name}/versions").json()["versions"] == [1, 2]


def test_external_registry_down_is_a_502(tmp_path: Path) -> None:
    from api_server import free_port, start_process

    port, nowhere = free_port(), f"http://127.0.0.1:{free_port()}"
    command = clirun.command("serve", "--port", str(port), "--registry-url", nowhere)
    service = start_process(tmp_path, command, port, "/formats")  # /health needs the registry
    try:
        with service.client() as api:
            assert_problem(api.get("/contracts"), 502)
            assert_problem(api.get("/health"), 502)
    finally:
        stop_server(service)


# --- reads that need the key --------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("keyed")
    srv = start_server(
        tmp, "--registry-db", str(tmp / "registry.db"), "--contracts", str(contracts_dir(tmp)),
        "--api-key-env", API_KEY_ENV, "--read-requires-key", ready_headers=KEY,
    )  # fmt: skip
    yield srv
    stop_server(srv)


@pytest.mark.parametrize(
    "path",
    [
        "/health",
        "/contracts",
        "/contracts/pgserver1.public.orders",
        "/contracts/pgserver1.public.orders/versions",
        render_url("pgserver1.public.orders"),
        render_url("pgserver1.public.orders", 1),
        "/",
    ],
)
def test_reads_need_the_key_when_configured(keyed: Server, path: str) -> None:
    with keyed.client() as client:
        assert client.get(path, headers=KEY).status_code == 200  # (and now cached)
        assert client.get(path, headers=KEY).status_code == 200
        assert_problem(client.get(path), 401)
        assert_problem(client.get(path, headers={"X-API-Key": "wrong"}), 401)


def test_check_needs_the_key_when_reads_do(keyed: Server) -> None:
    candidate = {"candidate": yaml.safe_load(ORDERS.read_text())}
    with keyed.client() as client:
        url = "/contracts/pgserver1.public.orders/check"
        assert_problem(client.post(url, json=candidate), 401)
        assert client.post(url, json=candidate, headers=KEY).json()["compatible"] is True


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/subjects"),
        ("GET", "/subjects/any-value/versions/latest"),
        ("GET", "/schemas/ids/1"),
        ("GET", "/config"),
        ("POST", "/subjects/any-value"),
        ("POST", "/compatibility/subjects/any-value/versions"),
        ("POST", "/subjects/any-value/versions"),
        ("DELETE", "/subjects/any-value"),
    ],
)
def test_registry_needs_the_key_when_reads_do(keyed: Server, method: str, path: str) -> None:
    body = {"schema": '"string"'} if method == "POST" else None
    with keyed.client() as client:
        refused = client.request(method, path, json=body)
        assert refused.status_code == 401
        assert refused.json()["error_code"] == 40101
        allowed = client.request(method, path, json=body, headers=KEY)
        assert allowed.status_code != 401, allowed.text


def test_confluent_client_reads_with_the_key_when_reads_need_it(keyed: Server) -> None:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    subject = f"{fresh_name()}-value"
    client = SchemaRegistryClient({"url": keyed.url, "basic.auth.user.info": f"any:{API_KEY}"})
    schema_id = client.register_schema(subject, Schema('"string"', "AVRO"))
    assert client.get_latest_version(subject).schema_id == schema_id
    anonymous = SchemaRegistryClient({"url": keyed.url})
    with pytest.raises(SchemaRegistryError) as info:
        anonymous.get_latest_version(subject)
    assert info.value.error_code == 40101
    # the contract API's own registry requests carry the key: a PUT still registers
    name = fresh_name()
    with keyed.client() as http:
        assert put(http, orders(name)).status_code == 201
        assert http.get(f"/contracts/{name}", headers=KEY).json()["version"] == 1


def test_the_contract_api_takes_the_key_as_basic_auth_or_bearer_too(keyed: Server) -> None:
    """As docs/api.md says, and as the registry routes on the same port take it."""
    import base64

    basic = base64.b64encode(f"anyone:{API_KEY}".encode()).decode()
    wrong = base64.b64encode(b"anyone:wrong").decode()
    url = render_url("pgserver1.public.orders")
    with keyed.client() as client:
        for path in ("/contracts", url):
            assert client.get(path, headers={"Authorization": f"Basic {basic}"}).status_code == 200
            assert (
                client.get(path, headers={"Authorization": f"Bearer {API_KEY}"}).status_code == 200
            )
            assert_problem(client.get(path, headers={"Authorization": f"Basic {wrong}"}), 401)
        name = fresh_name()
        written = client.put(
            f"/contracts/{name}",
            json=orders(name),
            headers={"Authorization": f"Bearer {API_KEY}"},
        )
        assert written.status_code == 201, written.text


def test_an_api_key_variable_that_is_not_set_refuses_to_start() -> None:
    """The registry would otherwise be open for writes although a key was asked for."""
    done = clirun.run_process(
        "serve", "--api-key-env", "CDC_UNSET_KEY_VAR", env={"CDC_UNSET_KEY_VAR": None}, timeout=60
    )
    assert done.code == 2
    assert done.err.startswith("error: serve: --api-key-env CDC_UNSET_KEY_VAR")
    assert "Traceback" not in done.err


def test_read_requires_key_without_a_key_refuses_to_start() -> None:
    done = clirun.run_process("serve", "--read-requires-key", "--port", "0", timeout=60)
    assert done.code != 0
    assert "--read-requires-key needs --api-key-env" in done.err + done.text
    assert "Traceback" not in done.err
