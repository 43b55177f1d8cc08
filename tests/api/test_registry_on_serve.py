"""The embedded registry as ``cdc-contracts serve`` mounts it, over real HTTP: the API key guards
its writes (X-API-Key, or the key as basic-auth password / bearer token, which is what Confluent
clients and ``registry push`` send), its HTTP-level refusals are Confluent-shaped, and subjects
with an encoded '/' reach the right route."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from api_server import API_KEY, Server
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from test_api import fresh_name, orders

KEY = {"X-API-Key": API_KEY}
STRING = {"schema": '"string"'}


def assert_unauthorized(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"] == "application/vnd.schemaregistry.v1+json"
    body = response.json()
    assert body["error_code"] == 40101 and "API key" in body["message"]
    assert response.headers["www-authenticate"].startswith("Basic")


def unique_subject() -> str:
    return f"{fresh_name()}-value"


# --- review item 2: the API key guards registry writes ------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/subjects/{s}/versions", STRING),
        ("PUT", "/config/{s}", {"compatibility": "NONE"}),
        ("PUT", "/config", {"compatibility": "BACKWARD"}),
        ("DELETE", "/config/{s}", None),
        ("PUT", "/mode/{s}", {"mode": "READONLY"}),
        ("DELETE", "/mode/{s}", None),
        ("DELETE", "/subjects/{s}/versions/1", None),
        ("DELETE", "/subjects/{s}", None),
        ("DELETE", "/subjects/{s}?permanent=true", None),
    ],
)
def test_registry_writes_need_the_key(
    client: httpx.Client, method: str, path: str, body: Any
) -> None:
    subject = unique_subject()
    assert client.post(f"/subjects/{subject}/versions", json=STRING, headers=KEY).is_success
    url = path.format(s=subject)
    assert_unauthorized(client.request(method, url, json=body))
    assert_unauthorized(client.request(method, url, json=body, headers={"X-API-Key": "wrong"}))
    assert client.get(f"/subjects/{subject}/versions").json() == [1]  # nothing changed


def test_registry_reads_stay_open_when_reads_do(client: httpx.Client) -> None:
    subject = unique_subject()
    assert client.post(f"/subjects/{subject}/versions", json=STRING, headers=KEY).is_success
    assert client.get(f"/subjects/{subject}/versions/latest").status_code == 200
    assert client.get("/subjects").status_code == 200
    assert client.post(f"/subjects/{subject}", json=STRING).status_code == 200  # lookup
    compat = client.post(f"/compatibility/subjects/{subject}/versions/latest", json=STRING)
    assert compat.json() == {"is_compatible": True}


def test_confluent_clients_send_the_key_as_basic_auth_or_bearer(server: Server) -> None:
    subject = unique_subject()
    schema = Schema('"string"', "AVRO")
    anonymous = SchemaRegistryClient({"url": server.url})
    with pytest.raises(SchemaRegistryError) as info:
        anonymous.register_schema(subject, schema)
    assert (info.value.http_status_code, info.value.error_code) == (401, 40101)

    basic = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": f"cdc:{API_KEY}"})
    schema_id = basic.register_schema(subject, schema)
    assert anonymous.get_latest_version(subject).schema_id == schema_id  # reads are open
    wrong = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": "cdc:nope"})
    with pytest.raises(SchemaRegistryError):
        wrong.set_compatibility(subject, "NONE")
    bearer = SchemaRegistryClient(
        {
            "url": server.url,
            "bearer.auth.credentials.source": "STATIC_TOKEN",
            "bearer.auth.token": API_KEY,
            "bearer.auth.logical.cluster": "",
            "bearer.auth.identity.pool.id": "",
        }
    )
    assert bearer.set_compatibility(subject, "NONE")["compatibility"] == "NONE"


def test_registry_push_sends_the_key_as_basic_auth(server: Server) -> None:
    from contracts.contract import Contract
    from registry_sync.client import RegistryClient, RegistryConfig
    from registry_sync.desired import desired_subjects
    from registry_sync.sync import Outcome, push

    name = fresh_name()
    desired = desired_subjects([Contract.model_validate(orders(name))])
    config = RegistryConfig(url=server.url, max_retries=0)
    with RegistryClient(config) as anonymous:
        refused = push(anonymous, desired)
    assert {r.outcome for r in refused} == {Outcome.FAILED}
    assert all("HTTP 401, error_code 40101" in (r.error or "") for r in refused)
    keyed = RegistryConfig(url=server.url, basic_auth=f"ci:{API_KEY}", max_retries=0)
    with RegistryClient(keyed) as client:
        assert {r.outcome for r in push(client, desired)} == {Outcome.CREATED}
    with server.client() as http:
        assert http.get(f"/contracts/{name}").json()["version"] == 1


# --- review item 5: HTTP-level refusals on registry paths are Confluent-shaped ------------------


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/schemas", 404),
        ("GET", "/exporters", 404),
        ("DELETE", "/schemas/types", 405),
        ("PATCH", "/subjects/x/versions", 405),
    ],
)
def test_registry_http_errors_are_confluent_shaped(
    client: httpx.Client, method: str, path: str, status: int
) -> None:
    response = client.request(method, path, headers=KEY)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/vnd.schemaregistry.v1+json"
    body = response.json()
    assert body["error_code"] == status and body["message"].startswith(f"HTTP {status} ")


def test_too_large_registry_body_is_confluent_shaped(client: httpx.Client) -> None:
    huge = json.dumps({"schema": json.dumps("x" * (5 * 1024 * 1024))})
    response = client.post("/subjects/big-value/versions", content=huge, headers=KEY)
    assert response.status_code == 413
    assert response.json() == {"error_code": 413, "message": "HTTP 413 Request Entity Too Large"}
    # the contract API keeps its problem details
    elsewhere = client.put("/contracts/x.big", content=huge, headers=KEY)
    assert elsewhere.status_code == 413
    assert elsewhere.headers["content-type"] == "application/problem+json"
    assert client.get("/nowhere").headers["content-type"] == "application/problem+json"


def test_latest_with_metadata_through_serve(server: Server) -> None:
    name = fresh_name()
    with server.client() as http:
        assert http.put(
            f"/contracts/{name}",
            content=json.dumps(orders(name)),
            headers={**KEY, "Content-Type": "application/json"},
        ).is_success
    client = SchemaRegistryClient({"url": server.url})
    found = client.get_latest_with_metadata(f"t.{name}-value", {"cdc.contract.name": name})
    assert found.version == 1


# --- review item 6: an encoded '/' is part of the subject ----------------------------------------


def test_subject_with_a_slash_through_serve(server: Server) -> None:
    base = fresh_name()
    subject = f"{base}/versions"
    client = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": f"u:{API_KEY}"})
    with server.client() as http:
        # a lookup of "<base>/versions" (no such subject), not a registration under "<base>"
        lookup = http.post(f"/subjects/{base}%2Fversions", json=STRING, headers=KEY)
        assert (lookup.status_code, lookup.json()["error_code"]) == (404, 40401)
        assert base not in http.get("/subjects").json()
    schema_id = client.register_schema(subject, Schema('"string"', "AVRO"))
    assert client.get_versions(subject) == [1]
    assert client.get_latest_version(subject).schema_id == schema_id
    assert base not in client.get_subjects()
