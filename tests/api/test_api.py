"""The contract API over real HTTP: every endpoint, its errors, limits and security defaults."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from api_server import API_KEY, ORDERS, ORDERS_MESSAGES, Server
from clirun import run

PROBLEM = "application/problem+json"
_names = itertools.count(1)


def orders(name: str | None = None, **changes: Any) -> dict[str, Any]:
    """The orders contract as data, renamed (own topic: own subjects) and changed."""
    data: dict[str, Any] = yaml.safe_load(ORDERS.read_text())
    if name is not None:
        data["name"] = name
        data["topic"] = f"t.{name}"
    data.update(changes)
    return data


def fresh_name() -> str:
    return f"api.test{next(_names)}"


def put(client: httpx.Client, data: dict[str, Any], key: str | None = API_KEY) -> httpx.Response:
    headers = {"Content-Type": "application/yaml"}
    if key is not None:
        headers["X-API-Key"] = key
    return client.put(f"/contracts/{data['name']}", content=yaml.safe_dump(data), headers=headers)


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["title"]
    return body


# --- service ----------------------------------------------------------------------------------


def test_health_reports_sources_and_unreadable_files(client: httpx.Client, server: Server) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok" and body["registry"] == "embedded"
    assert body["contracts_dir"] == str(server.contracts_dir)
    assert any("broken.yaml" in p for p in body["problems"])


def test_formats_lists_the_registered_formats(client: httpx.Client) -> None:
    names = [f["name"] for f in client.get("/formats").json()]
    assert "debezium-json" in names and "canal-json" in names


def test_openapi_and_docs_are_served(client: httpx.Client) -> None:
    schema = client.get("/openapi.json").json()
    assert "/contracts/{name}" in schema["paths"] and "/diff" in schema["paths"]
    assert client.get("/docs").status_code == 200


def test_embedded_registry_answers_at_the_root(client: httpx.Client) -> None:
    assert client.get("/schemas/types").json() == ["AVRO"]
    missing = client.get("/subjects/nope-value/versions")
    assert missing.status_code == 404 and missing.json()["error_code"] == 40401


# --- reading ----------------------------------------------------------------------------------


def test_directory_contract_is_listed_and_readable(client: httpx.Client) -> None:
    listing = client.get("/contracts", params={"prefix": "pgserver1."}).json()
    assert listing["total"] == 1
    item = listing["items"][0]
    assert item["name"] == "pgserver1.public.orders" and item["source"] == "directory"
    latest = client.get("/contracts/pgserver1.public.orders").json()
    assert latest["version"] == 1 and latest["contract"]["key"] == ["id"]
    assert client.get("/contracts/pgserver1.public.orders/versions").json()["versions"] == [1]
    one = client.get("/contracts/pgserver1.public.orders/versions/1").json()
    assert one["contract"] == latest["contract"]


def test_list_filters_and_paging(client: httpx.Client) -> None:
    for _ in range(3):
        assert put(client, orders(fresh_name())).status_code == 201
    everything = client.get("/contracts").json()
    assert everything["total"] >= 4
    names = [i["name"] for i in everything["items"]]
    assert names == sorted(names)
    page = client.get("/contracts", params={"limit": 2, "offset": 1}).json()
    assert [i["name"] for i in page["items"]] == names[1:3]
    assert client.get("/contracts", params={"format": "canal-json"}).json()["total"] == 0
    by_topic = client.get("/contracts", params={"topic": "pgserver1.public.orders"}).json()
    assert [i["name"] for i in by_topic["items"]] == ["pgserver1.public.orders"]
    assert_problem(client.get("/contracts", params={"limit": 0}), 422)


@pytest.mark.parametrize(
    ("render", "part", "check"),
    [
        ("avro", "value", lambda s: s["type"] == "record"),
        ("avro", "key", lambda s: [f["name"] for f in s["fields"]] == ["id"]),
        ("connect", "row", lambda s: s["type"] == "struct"),
        ("spark-json", "row", lambda s: s["type"] == "struct"),
        ("spark-ddl", "row", lambda s: isinstance(s, str) and "customer" in s),
    ],
)
def test_renderings(client: httpx.Client, render: str, part: str, check: Any) -> None:
    response = client.get(
        "/contracts/pgserver1.public.orders", params={"render": render, "part": part}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["render"], body["part"], body["version"]) == (render, part, 1)
    assert check(body["schema"])


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/contracts/no.such.contract", 404),
        ("/contracts/pgserver1.public.orders/versions/9", 404),
        ("/contracts/pgserver1.public.orders/versions/0", 422),
        ("/contracts/pgserver1.public.orders/versions/x", 422),
        ("/contracts/pgserver1.public.orders?render=xml", 422),
        ("/contracts/pgserver1.public.orders?part=both", 422),
        ("/contracts/a..b", 422),
        ("/contracts/..%2F..%2Fetc%2Fpasswd", 404),
        ("/contracts/%2E%2E", 422),
    ],
)
def test_read_errors_are_problems(client: httpx.Client, path: str, status: int) -> None:
    assert_problem(client.get(path), status)


# --- registering ------------------------------------------------------------------------------


def test_put_needs_the_api_key(client: httpx.Client) -> None:
    data = orders(fresh_name())
    assert_problem(put(client, data, key=None), 401)
    assert_problem(put(client, data, key="wrong"), 401)
    assert_problem(client.get(f"/contracts/{data['name']}"), 404)


def test_put_registers_versions_and_refuses_breaking_changes(client: httpx.Client) -> None:
    name = fresh_name()
    first = put(client, orders(name))
    assert first.status_code == 201, first.text
    created = first.json()
    assert created["version"] == 1 and created["subjects"] == {
        "key": f"t.{name}-key",
        "value": f"t.{name}-value",
    }
    # the registry holds both subjects, with the contract metadata
    value = client.get(f"/subjects/t.{name}-value/versions/latest").json()
    assert value["metadata"]["properties"]["cdc.contract.name"] == name

    again = put(client, orders(name))
    assert again.status_code == 200 and again.json()["changed"] is False

    data = orders(name)
    data["columns"].append({"field": "coupon", "type": "string", "optional": True})
    second = put(client, data)
    assert second.status_code == 201 and second.json()["version"] == 2
    detail = client.get(f"/contracts/{name}").json()
    assert detail["version"] == 2 and detail["versions"] == [1, 2]
    assert detail["source"] == "registry"
    v1 = client.get(f"/contracts/{name}/versions/1").json()["contract"]
    assert [c["field"] for c in v1["columns"]][-1] == "note"

    breaking = orders(name)
    breaking["columns"][1] = {"field": "customer", "type": "int64", "optional": False}
    refused = put(client, breaking)
    body = assert_problem(refused, 409)
    assert body["verdict"]["compatible"] is False and body["verdict"]["against_versions"] == [2]
    assert any(f["severity"] == "breaking" for f in body["verdict"]["findings"])
    assert client.get(f"/contracts/{name}/versions").json()["versions"] == [1, 2]


def test_put_accepts_json(client: httpx.Client) -> None:
    data = orders(fresh_name())
    response = client.put(
        f"/contracts/{data['name']}",
        content=json.dumps(data),
        headers={"Content-Type": "application/json", "X-API-Key": API_KEY},
    )
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("", "request body"),
        ("name: [unclosed", "request body"),
        ("- a list\n", "request body"),
        (yaml.safe_dump(orders("other.name")), "$.name"),
        (yaml.safe_dump({**orders("x.bad"), "columns": []}), "request body"),
    ],
)
def test_put_bad_bodies_are_422(client: httpx.Client, body: str, where: str) -> None:
    response = client.put(
        "/contracts/x.bad",
        content=body,
        headers={"Content-Type": "application/yaml", "X-API-Key": API_KEY},
    )
    problem = assert_problem(response, 422)
    assert where in (problem.get("where") or "")


def test_put_non_json_default_is_422_at_its_line(client: httpx.Client) -> None:
    """A `.nan` default cannot be written as JSON (Avro's Java parser refuses it): 422, located."""
    data = orders(fresh_name())
    data["columns"].append(
        {"field": "ratio", "type": "double", "optional": True, "default": float("nan")}
    )
    body = yaml.safe_dump(data)
    assert ".nan" in body
    problem = assert_problem(put(client, data), 422)
    assert "default nan is not a JSON number" in problem["detail"]
    line = body.splitlines().index("- default: .nan") + 1
    assert problem["where"] == f"request body:{line}"
    assert client.get(f"/contracts/{data['name']}").status_code == 404


def test_body_size_limit(client: httpx.Client) -> None:
    huge = "x" * (5 * 1024 * 1024)
    response = client.put("/contracts/x.big", content=huge, headers={"X-API-Key": API_KEY})
    assert_problem(response, 413)


# --- check, diff, infer -----------------------------------------------------------------------


def test_check_against_registered_versions(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    widened = orders(name)
    widened["columns"].append({"field": "coupon", "type": "string", "optional": True})
    ok = client.post(f"/contracts/{name}/check", json={"candidate": widened}).json()
    assert ok["compatible"] is True and ok["against_versions"] == [1]

    narrowed = orders(name)
    narrowed["columns"] = [c for c in narrowed["columns"] if c["field"] != "customer"]
    bad = client.post(
        f"/contracts/{name}/check",
        json={"candidate": yaml.safe_dump(narrowed), "level": "FORWARD_TRANSITIVE"},
    ).json()
    assert bad["level"] == "FORWARD_TRANSITIVE" and bad["compatible"] is False

    assert_problem(client.post(f"/contracts/{name}/check", json={"candidate": 3}), 422)
    assert_problem(client.post(f"/contracts/{name}/check", json={}), 422)
    assert_problem(
        client.post("/contracts/no.such/check", json={"candidate": orders("no.such")}), 404
    )


def test_diff_matches_the_cli_json(client: httpx.Client) -> None:
    from contracts.contract import Contract
    from contracts.diff import diff_contracts

    old = orders("d.x")
    new = orders("d.x")
    new["columns"][2] = {
        **new["columns"][2],
        "parameters": {"scale": "3", "connect.decimal.precision": "10"},
    }
    response = client.post("/diff", json={"old": old, "new": new, "level": "BACKWARD"})
    assert response.status_code == 200, response.text
    expected = diff_contracts(
        Contract.model_validate(old), Contract.model_validate(new), "BACKWARD"
    ).to_json()
    assert response.json() == expected
    assert response.json()["breaking"] is True


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"old": {}, "new": {}},
        {"old": 1, "new": 2},
        {"old": {"type": "nonsense"}, "new": {"type": "record"}},
    ],
)
def test_diff_bad_input_is_422(client: httpx.Client, body: dict[str, Any]) -> None:
    assert_problem(client.post("/diff", json=body), 422)


def test_infer_from_messages(client: httpx.Client) -> None:
    messages = [
        json.loads(line) for line in ORDERS_MESSAGES.read_text().splitlines() if line.strip()
    ]
    response = client.post("/infer", json={"messages": messages, "name": "pgserver1.public.orders"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["format"] == "debezium-json" and body["messages"] == len(messages)
    assert body["contract"]["key"] == ["id"]
    assert body["yaml"].startswith("name: pgserver1.public.orders\n")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"messages": []}, 422),
        ({"messages": [{"hello": "world"}]}, 422),
        ({"messages": [{"a": 1}], "format": "debezium-jsn"}, 404),
        ({"messages": [{"a": 1}] * 10_001}, 413),
    ],
)
def test_infer_errors(client: httpx.Client, body: dict[str, Any], status: int) -> None:
    assert_problem(client.post("/infer", json=body), status)


def test_infer_judges_messages_as_the_cli_does(client: httpx.Client) -> None:
    """Issue #23: these answered 500; issue #27: the hint named a CLI flag."""
    row = {"before": None, "after": {"id": 1}, "op": "c", "ts_ms": 1}
    listed = {**row, "source": {"db": ["shop"], "table": "t", "connector": "mysql"}}
    response = client.post("/infer", json={"messages": [listed], "format": "debezium-json"})
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["where"] == "message 1 $.payload.source.db"
    assert problem["detail"] == "expected a string or null, got an array"
    lone = (
        '{"messages": [{"op": "c", "source": {"db": "s", "table": "t"}, "after": {"\\ud800": 1}}]}'
    )
    response = client.post("/infer", content=lone, headers={"content-type": "application/json"})
    assert response.status_code == 422 and "surrogate" in response.text, response.text
    response = client.post("/infer", json={"messages": [{"hello": "world"}]})
    assert response.status_code == 422 and "--format" not in response.text
    assert 'set \\"format\\" in the request' in response.text, response.text


def test_infer_reads_a_wide_integer_as_the_cli_does(client: httpx.Client, tmp_path: Path) -> None:
    """An integer beyond 64 bits is kept exactly and typed by the column (a Decimal), on the
    API as in `cdc-contracts infer` (the API refused the request before)."""
    huge = Path(__file__).resolve().parent.parent / "fixtures" / "fuzz" / "hugeint-array.json"
    messages = json.loads(huge.read_text())
    body = {"messages": messages, "format": "debezium-json", "name": "t"}
    response = client.post("/infer", json=body)
    assert response.status_code == 200, response.text
    contract = tmp_path / "c.yaml"
    done = run("infer", huge, "--format", "debezium-json", "--name", "t", "-o", contract)
    assert done.code == 0, done.err
    assert response.json()["yaml"] == contract.read_text()
    assert "org.apache.kafka.connect.data.Decimal" in contract.read_text()


def test_cors_is_off_by_default(client: httpx.Client) -> None:
    response = client.get("/health", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in response.headers
    preflight = client.options(
        "/contracts",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in preflight.headers


# --- registering: ownership, versions, levels (review items 1, 7, 8, 9, 12) ---------------------


def widened(name: str, column: str = "coupon") -> dict[str, Any]:
    data = orders(name)
    data["columns"].append({"field": column, "type": "string", "optional": True})
    return data


def test_put_cannot_take_over_another_contracts_subjects(client: httpx.Client) -> None:
    owner = fresh_name()
    assert put(client, orders(owner)).status_code == 201
    intruder = orders(fresh_name())
    intruder["topic"] = f"t.{owner}"  # the owner's subjects
    body = assert_problem(put(client, intruder), 409)
    assert f"belongs to contract {owner!r}" in body["detail"]
    assert body["where"] == f"t.{owner}-value"
    assert client.get(f"/contracts/{owner}").json()["versions"] == [1]
    assert_problem(client.get(f"/contracts/{intruder['name']}"), 404)


def test_unchanged_put_reports_the_latest_version_after_a_delete(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    assert put(client, widened(name)).json()["version"] == 2
    deleted = client.delete(f"/subjects/t.{name}-value/versions/1", headers={"X-API-Key": API_KEY})
    assert deleted.status_code == 200
    again = put(client, widened(name))
    assert again.status_code == 200
    assert again.json() == {"name": name, "changed": False, "version": 2}


def test_concurrent_puts_report_the_versions_they_created(server: Server) -> None:
    from concurrent.futures import ThreadPoolExecutor

    name = fresh_name()
    with server.client() as first:
        assert put(first, orders(name)).status_code == 201

    def one(i: int) -> httpx.Response:
        with server.client() as c:
            return put(c, widened(name, f"extra{i}"))

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(one, range(6)))
    assert [a.status_code for a in answers] == [201] * 6, [a.text for a in answers]
    created = [a.json() for a in answers]
    assert sorted(c["version"] for c in created) == [2, 3, 4, 5, 6, 7]
    with server.client() as c:
        for item in created:  # each answer names its own version and that version's schema id
            held = c.get(f"/subjects/t.{name}-value/versions/{item['version']}").json()
            assert held["id"] == item["schema_ids"]["value"]


def test_put_that_lowers_the_level_is_judged_at_the_registered_level(
    client: httpx.Client,
) -> None:
    """REVIEW-1 F10: lowering the level in the same PUT as an incompatible change is a 409
    with ``compatibility-level-lowered``, judged at the level the registry holds (BACKWARD)."""
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    loosened = orders(name, compatibility="NONE")
    loosened["columns"][1] = {"field": "customer", "type": "int32", "optional": False}
    body = assert_problem(put(client, loosened), 409)
    found = {f["rule"] for f in body["findings"]}
    assert {"compatibility-level-lowered", "avro-type-mismatch"} <= found, body["findings"]
    assert body["verdict"]["level"] == "BACKWARD"
    assert client.get(f"/config/t.{name}-value").json() == {"compatibilityLevel": "BACKWARD"}
    assert client.get(f"/subjects/t.{name}-value/versions").json() == [1]
    # a raise is judged at the new level, as the registry will once it is set
    raised = orders(name, compatibility="FULL")
    assert put(client, raised).status_code == 201
    assert client.get(f"/config/t.{name}-value").json() == {"compatibilityLevel": "FULL"}


def test_a_foreign_version_refuses_through_the_gate_or_the_registry(
    client: httpx.Client,
) -> None:
    name = fresh_name()
    foreign = {"type": "record", "name": "Foreign", "fields": [{"name": "z", "type": "string"}]}
    for subject in (f"t.{name}-value", f"t.{name}x-key"):
        registered = client.post(
            f"/subjects/{subject}/versions",
            json={"schema": json.dumps(foreign)},
            headers={"X-API-Key": API_KEY},
        )
        assert registered.status_code == 200, registered.text
    # the value subject holds another tool's schema: the contract's verdict refuses it
    body = assert_problem(put(client, orders(name)), 409)
    assert body["verdict"]["compatible"] is False and body["verdict"]["against_versions"] == [1]
    assert body["findings"] and all(f["rule"].startswith("avro-") for f in body["findings"])
    assert body["detail"] == f"contract {name!r} is not BACKWARD compatible with version 1: " + (
        f"{len(body['findings'])} finding(s) fail the gate: "
    ) + ", ".join(dict.fromkeys(f"{f['rule']} at {f['path']}" for f in body["findings"]))
    assert client.get(f"/subjects/t.{name}-value/versions").json() == [1]
    # the key subject does: the registry verdict of the key schema refuses it
    keyed = orders(f"{name}x")
    body = assert_problem(put(client, keyed), 409)
    assert body["registry"]["subject"] == f"t.{name}x-key" and body["registry"]["messages"]
    assert client.get(f"/subjects/t.{name}x-value/versions").status_code == 404


def test_get_names_the_key_subject_and_schema_id(client: httpx.Client) -> None:
    name = fresh_name()
    created = put(client, orders(name)).json()
    assert set(created["schema_ids"]) == {"key", "value"}
    latest = client.get(f"/contracts/{name}").json()
    assert latest["subjects"] == created["subjects"]
    assert latest["schema_ids"] == created["schema_ids"]
    second = put(client, widened(name)).json()
    first = client.get(f"/contracts/{name}/versions/1").json()
    assert first["schema_ids"] == created["schema_ids"]
    assert client.get(f"/contracts/{name}").json()["schema_ids"] == second["schema_ids"]
    assert second["schema_ids"]["key"] == created["schema_ids"]["key"]  # the key did not change


# --- check, diff, infer: review items 4, 13, 14, 22 ----------------------------------------------


def test_check_refuses_an_unknown_format_like_put(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    candidate = orders(name, format="nope")
    checked = client.post(f"/contracts/{name}/check", json={"candidate": candidate})
    refused = put(client, candidate)
    assert checked.status_code == refused.status_code and checked.status_code in (404, 422)
    body = assert_problem(checked, checked.status_code)
    assert body["type"] == assert_problem(refused, refused.status_code)["type"]
    assert "unknown format 'nope'" in body["detail"]


def test_infer_refuses_a_name_put_would_refuse(client: httpx.Client) -> None:
    messages = [json.loads(line) for line in ORDERS_MESSAGES.read_text().splitlines() if line]
    body = assert_problem(
        client.post("/infer", json={"messages": messages, "name": "bad..name"}), 422
    )
    assert body["where"] == "$.name"


def test_levels_are_accepted_in_any_case(client: httpx.Client) -> None:
    name = fresh_name()
    assert put(client, orders(name)).status_code == 201
    checked = client.post(
        f"/contracts/{name}/check", json={"candidate": widened(name), "level": "backward"}
    )
    assert checked.status_code == 200 and checked.json()["level"] == "BACKWARD"
    old = {"type": "record", "name": "Row", "fields": [{"name": "id", "type": "int"}]}
    diffed = client.post("/diff", json={"old": old, "new": old, "level": "full_transitive"})
    assert diffed.status_code == 200 and diffed.json()["level"] == "FULL_TRANSITIVE"


def test_deeply_nested_input_is_422_not_500(client: httpx.Client) -> None:
    deep: Any = "string"
    for _ in range(400):
        deep = {"type": "array", "items": deep}
    body = assert_problem(client.post("/diff", json={"old": deep, "new": deep}), 422)
    assert "nested too deeply" in body["detail"]
    registry = client.post(
        "/subjects/deep.test-value/versions",
        json={"schema": json.dumps(deep)},
        headers={"X-API-Key": API_KEY},
    )
    assert registry.status_code == 422 and registry.json()["error_code"] == 42201
    assert client.get("/health").status_code == 200


def test_head_is_answered_like_get(client: httpx.Client) -> None:
    for path in ("/contracts/pgserver1.public.orders", "/subjects", "/health"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code == 200, path
        assert head.content == b"" and head.headers["content-type"] == got.headers["content-type"]
