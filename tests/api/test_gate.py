"""One gate in the API (#23 items 2 and 3) over real HTTP: ``PUT`` applies what ``check``
applies, writes to a subject are serialized, ``changed`` means a version was created, a
rollback is refused unless asked for; and the server stays answering (413, ``Allow``, no 500,
keep-alive after an error)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from api_server import API_KEY, API_KEY_ENV, Server, start_server, stop_server
from clirun import run
from test_api import assert_problem, fresh_name, orders, put


def scaled(name: str, scale: str) -> dict[str, Any]:
    data = orders(name)
    amount = next(c for c in data["columns"] if c["field"] == "amount")
    amount["parameters"] = {**amount["parameters"], "scale": scale}
    return data


def widened(name: str, column: str = "coupon") -> dict[str, Any]:
    data = orders(name)
    data["columns"].append({"field": column, "type": "string", "optional": True})
    return data


def test_a_decimal_scale_change_is_refused_with_the_finding(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, scaled(name, "2")).status_code == 201
    refused = put(client, scaled(name, "3"))
    body = assert_problem(refused, 409)
    assert [f["rule"] for f in body["findings"]] == ["decimal-scale-changed"]
    assert body["findings"][0]["path"] == "value.after.amount"
    assert body["verdict"]["failed"] is True and body["verdict"]["against_versions"] == [1]
    assert client.get(f"/contracts/{name}/versions").json()["versions"] == [1]


def test_put_and_check_give_the_same_verdict_as_the_cli(
    client: httpx.Client, tmp_path: Path
) -> None:
    """The 409's verdict is the CLI's JSON for the same contract against the same registry."""
    name = fresh_name()
    assert put(client, scaled(name, "2")).status_code == 201
    body = assert_problem(put(client, scaled(name, "3")), 409)
    checked = client.post(f"/contracts/{name}/check", json={"candidate": scaled(name, "3")})
    assert checked.status_code == 200 and checked.json() == body["verdict"]
    directory = tmp_path / "contracts"
    directory.mkdir()
    (directory / "c.yaml").write_text(yaml.safe_dump(scaled(name, "3")))
    base = str(client.base_url).rstrip("/")
    command = ["check", str(directory), "--against", "registry", "--url", base]
    done = run(*command, "--output", "json")
    assert done.code == 1, done.err
    (entry,) = json.loads(done.text)["contracts"]
    entry.pop("file")
    assert entry == body["verdict"]


def test_an_older_versions_text_is_a_rollback(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    assert put(client, widened(name, "c1")).json()["version"] == 2
    assert put(client, widened(name, "c2")).json()["version"] == 3
    refused = assert_problem(put(client, orders(name)), 409)
    assert refused["type"].endswith("/rollback") and "equals version 1" in refused["detail"]
    assert client.get(f"/contracts/{name}/versions").json()["versions"] == [1, 2, 3]
    rolled = client.put(
        f"/contracts/{name}?rollback=true",
        content=yaml.safe_dump(orders(name)),
        headers={"X-API-Key": API_KEY, "Content-Type": "application/yaml"},
    )
    assert rolled.status_code == 201, rolled.text
    assert rolled.json()["changed"] is True and rolled.json()["version"] == 4
    latest = client.get(f"/contracts/{name}").json()
    first = client.get(f"/contracts/{name}/versions/1").json()
    assert latest["version"] == 4 and latest["contract"] == first["contract"]
    again = put(client, orders(name))  # now the latest: unchanged
    assert again.status_code == 200 and again.json()["changed"] is False


def test_fifty_identical_puts_create_one_version(server: Server) -> None:
    name = fresh_name()
    body = yaml.safe_dump(orders(name))
    headers = {"X-API-Key": API_KEY, "Content-Type": "application/yaml"}

    def one(_: int) -> httpx.Response:
        with server.client() as c:
            return c.put(f"/contracts/{name}", content=body, headers=headers)

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(one, range(50)))
    assert {a.status_code for a in answers} <= {200, 201}, [a.text for a in answers]
    changed = [a.json()["changed"] for a in answers]
    assert changed.count(True) == 1
    assert [a.status_code for a in answers].count(201) == 1
    with server.client() as c:
        assert c.get(f"/subjects/t.{name}-value/versions").json() == [1]


def _race(server: Server, rounds: int) -> None:
    """Two different contracts with the same topic, PUT in parallel: never both accepted."""
    headers = {"X-API-Key": API_KEY, "Content-Type": "application/yaml"}
    for _ in range(rounds):
        topic = f"t.race.{fresh_name()}"
        bodies = []
        for who in ("a", "b"):
            data = orders(f"{topic}.{who}")
            data["topic"] = topic
            bodies.append((data["name"], yaml.safe_dump(data)))

        def one(item: tuple[str, str]) -> httpx.Response:
            with server.client() as c:
                return c.put(f"/contracts/{item[0]}", content=item[1], headers=headers)

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(one, bodies))
        codes = sorted(a.status_code for a in answers)
        assert codes == [201, 409], [a.text for a in answers]
        with server.client() as c:
            owners = {
                c.get(f"/subjects/{topic}-{part}/versions/{v}").json()["metadata"]["properties"][
                    "cdc.contract.name"
                ]
                for part in ("value", "key")
                for v in c.get(f"/subjects/{topic}-{part}/versions").json()
            }
        assert len(owners) == 1


def test_two_contracts_never_share_a_subject(server: Server) -> None:
    _race(server, 20)


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("workers")
    srv = start_server(
        tmp,
        "--registry-db",
        str(tmp / "registry.db"),
        "--api-key-env",
        API_KEY_ENV,
        "--workers",
        "2",
    )
    yield srv
    stop_server(srv)


def test_two_worker_processes_never_let_two_contracts_share_a_subject(two_workers: Server) -> None:
    _race(two_workers, 10)


# --- the server stays answering --------------------------------------------------------------


def test_a_chunked_body_over_the_limit_is_413(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(6):
            yield b"x" * (1024 * 1024)

    response = client.put("/contracts/x.big", content=chunks(), headers={"X-API-Key": API_KEY})
    assert "content-length" not in response.request.headers
    assert_problem(response, 413)
    check = client.post("/contracts/x.big/check", content=chunks())
    assert_problem(check, 413)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/contracts/x.y", {"GET", "HEAD", "PUT"}),
        ("PUT", "/health", {"GET", "HEAD"}),
        ("GET", "/diff", {"POST"}),
    ],
)
def test_405_says_what_is_allowed(
    client: httpx.Client, method: str, path: str, allowed: set[str]
) -> None:
    response = client.request(method, path)
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == allowed


LONE_SURROGATE = '"\\ud800"'


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        (
            "PUT",
            "/contracts/x.s",
            "name: x.s\nformat: debezium-json\ndescription: " + LONE_SURROGATE,
        ),
        (
            "PUT",
            "/contracts/x.s",
            json.dumps({**orders("x.s"), "owner": "\ud800"}),
        ),
        (
            "POST",
            "/infer",
            '{"messages": [{"payload": {"op": "c", "after": {"' + "\\ud800" + '": 1}}}]}',
        ),
        ("POST", "/infer", '{"messages": [{"payload": {"op": "c", "after": {"": 1}}}]}'),
        (
            "POST",
            "/infer",
            '{"messages": [{"payload": {"op": "c", "source": {"db": ["shop"], "table": "t"}, '
            '"after": {"id": 1}}}]}',
        ),
    ],
)
def test_bad_bodies_are_4xx_and_the_connection_stays_usable(
    client: httpx.Client, method: str, path: str, body: str
) -> None:
    headers = {"X-API-Key": API_KEY, "Content-Type": "application/json"}
    bad = client.request(
        method, path, content=body.encode("utf-8", "surrogatepass"), headers=headers
    )
    assert 400 <= bad.status_code < 500, bad.text
    assert bad.headers["content-type"] == "application/problem+json"
    after = client.get("/health")  # the same keep-alive connection answers the next request
    assert after.status_code == 200


def big_contract(name: str, columns: int) -> dict[str, Any]:
    """The orders contract with many more columns (a large body, seconds of work)."""
    data = orders(name)
    extra = [{"field": f"c{i:05d}", "type": "string", "optional": True} for i in range(columns)]
    data["columns"] = data["columns"] + extra
    return data


@pytest.fixture(scope="module")
def tiny_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One worker, no queue, a 2 s budget: easy to saturate."""
    tmp = tmp_path_factory.mktemp("tiny")
    env = {
        "CDC_CONTRACTS_OFFLOAD_WORKERS": "1",
        "CDC_CONTRACTS_OFFLOAD_QUEUE": "0",
        "CDC_CONTRACTS_REQUEST_BUDGET_SECONDS": "2",
    }
    srv = start_server(
        tmp, "--registry-db", str(tmp / "registry.db"), "--api-key-env", API_KEY_ENV, env=env
    )
    yield srv
    stop_server(srv)


def test_a_saturated_service_answers_503_with_retry_after(tiny_service: Server) -> None:
    name = fresh_name()
    with tiny_service.client() as c:
        # The one worker process starts on first use; on a loaded machine that start alone
        # can outlast the 2 s budget, so the small PUT may be refused busy until it is warm.
        deadline = time.monotonic() + 60
        first = put(c, orders(name))
        while first.status_code == 503 and time.monotonic() < deadline:
            time.sleep(float(first.headers["retry-after"]))
            first = put(c, orders(name))
        assert first.status_code == 201, first.text
    candidate = yaml.safe_dump(big_contract(name, 6000))

    def one(_: int) -> httpx.Response:
        with tiny_service.client() as c:
            return c.post(f"/contracts/{name}/check", json={"candidate": candidate})

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(one, range(4)))
    busy = [a for a in answers if a.status_code == 503]
    assert busy, [a.status_code for a in answers]
    for answer in busy:
        assert answer.headers["retry-after"].isdigit()
        assert answer.headers["content-type"] == "application/problem+json"
    with tiny_service.client() as c:  # and it still answers the registry at once
        assert c.get("/schemas/types").status_code == 200


def _lowering_is_excepted_in_its_own_step(c: httpx.Client, name: str) -> None:
    """REVIEW-1 F10: an excepted lowering passes alone (reported as waived); with an
    incompatible change in the same PUT it is still judged at the registered level."""
    assert put(c, orders(name)).status_code == 201
    retyped = orders(name, compatibility="NONE")
    retyped["columns"][1] = {"field": "customer", "type": "int32", "optional": False}
    body = assert_problem(put(c, retyped), 409)
    assert [f["rule"] for f in body["findings"]] == ["avro-type-mismatch"]
    lowered = put(c, orders(name, compatibility="NONE"))
    assert lowered.status_code == 201, lowered.text
    assert [w["rule"] for w in lowered.json()["waived"]] == ["compatibility-level-lowered"]
    assert c.get(f"/config/t.{name}-value").json() == {"compatibilityLevel": "NONE"}
    assert put(c, retyped).status_code == 201  # now judged at NONE


def test_a_configured_exception_lets_the_change_pass_and_is_reported(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tmp = tmp_path_factory.mktemp("excepted")
    name = "api.excepted.orders"
    config = tmp / "cdc-contracts.yaml"
    config.write_text(
        "version: 1\n"
        "exceptions:\n"
        f"  - contract: {name}\n"
        "    rule: decimal-scale-changed\n"
        "    path: amount\n"
        "    reason: amounts carry tenths of a cent from release 42 on\n"
        "  - contract: api.lowered.orders\n"
        "    rule: compatibility-level-lowered\n"
        "    reason: the topic is replayed from scratch on every release\n"
    )
    srv = start_server(
        tmp,
        "--registry-db",
        str(tmp / "registry.db"),
        "--api-key-env",
        API_KEY_ENV,
        "--config",
        str(config),
    )
    try:
        with srv.client() as c:
            assert put(c, scaled(name, "2")).status_code == 201
            checked = c.post(f"/contracts/{name}/check", json={"candidate": scaled(name, "3")})
            assert checked.json()["failed"] is False
            assert [w["rule"] for w in checked.json()["waived"]] == ["decimal-scale-changed"]
            accepted = put(c, scaled(name, "3"))
            assert accepted.status_code == 201, accepted.text
            (waived,) = accepted.json()["waived"]
            assert waived["rule"] == "decimal-scale-changed"
            assert waived["reason"] == "amounts carry tenths of a cent from release 42 on"
            other = fresh_name()  # the exception names one contract only
            assert put(c, scaled(other, "2")).status_code == 201
            assert_problem(put(c, scaled(other, "3")), 409)
            _lowering_is_excepted_in_its_own_step(c, "api.lowered.orders")
    finally:
        stop_server(srv)
