"""Confluent's and Karapace's own registry tests, transcribed as data, run on the embedded registry.

``registry_scenarios.json`` holds one scenario per test of Confluent Schema Registry's REST API
suites (``AbstractRestApiTest``, ``AbstractRestApiModeTest``), Karapace's
``tests/integration/test_schema*.py`` and the official Python client's calls the project relies
on, each naming its repository, commit, file and test. Every scenario runs against a fresh
registry (``api.registry.app.create_registry_app`` on its own SQLite file) served by uvicorn
over real HTTP: ``http`` steps are plain requests, ``client`` steps go through confluent-kafka's
``SchemaRegistryClient``, ``serde`` steps through its ``AvroSerializer``/``AvroDeserializer``.
A scenario with ``deviation`` is a documented difference (docs/registry.md): it runs and must
still fail, so the documentation cannot go stale.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from confluent_kafka.schema_registry import (
    Metadata,
    MetadataProperties,
    RegisteredSchema,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SchemaRegistryError,
)

from api.registry.app import create_registry_app

HERE = Path(__file__).parent
SCENARIOS: list[dict[str, Any]] = json.loads((HERE / "registry_scenarios.json").read_text())


#: every expectation a step may state (a misspelt one would otherwise check nothing)
EXPECTATIONS = frozenset(
    {
        "status", "status_in", "error_code", "message", "message_has", "content_type",
        "headers", "text", "json", "json_has", "json_keys", "json_lacks", "json_not",
        "json_greater", "json_set", "json_contains", "json_lacks_item", "json_len",
        "schema_json", "messages_has", "result", "result_set", "result_has", "schema_id",
        "round_trip",
    }
)  # fmt: skip


def test_corpus_counts() -> None:
    """The counts docs/registry.md states (held, documented deviations)."""
    deviations = [s for s in SCENARIOS if "deviation" in s]
    assert (len(SCENARIOS) - len(deviations), len(deviations)) == (142, 24)
    assert all(s["source"].count("@") == 1 and s["steps"] for s in SCENARIOS)
    for s in SCENARIOS:
        for step in s["steps"]:
            assert set(step["expect"]) <= EXPECTATIONS, (s["name"], step["expect"])


class Served:
    """One registry app on a free port, served by uvicorn in a thread of this process."""

    def __init__(self, db: Path) -> None:
        config = uvicorn.Config(
            create_registry_app(db), host="127.0.0.1", port=0, log_level="error", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the registry did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *_exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture
def registry_url(tmp_path: Path) -> Iterator[str]:
    with Served(tmp_path / "registry.db") as url:
        yield url


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_registry_scenario(scenario: dict[str, Any], registry_url: str) -> None:
    if "deviation" not in scenario:
        run(scenario, registry_url)
        return
    with pytest.raises(AssertionError):  # still different: docs/registry.md says why
        run(scenario, registry_url)


def run(scenario: dict[str, Any], url: str) -> None:
    names: dict[str, Any] = {}
    client = SchemaRegistryClient({"url": url})
    with httpx.Client(base_url=url, timeout=30) as http:
        if "config" in scenario.get("setup", {}):
            level = scenario["setup"]["config"]
            http.put("/config", json={"compatibility": level}).raise_for_status()
        for i, step in enumerate(scenario["steps"]):
            where = f"step {i}: {step.get('http') or step.get('client') or 'serde'}"
            if "http" in step:
                http_step(http, fill(step, names), names, where)
            elif "client" in step:
                client_step(client, fill(step, names), where)
            else:
                serde_step(client, fill(step, names), where)


# --- http steps ---------------------------------------------------------------------------------


def http_step(http: httpx.Client, step: dict[str, Any], names: dict[str, Any], where: str) -> None:
    method, _, path = step["http"].partition(" ")
    headers = dict(step.get("headers", {}))
    if "raw_utf16" in step:
        content: bytes | None = step["raw_utf16"].encode("utf-16")
    elif "raw" in step:
        content = step["raw"].encode()
    elif "body" in step:
        content = json.dumps(step["body"]).encode()
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/vnd.schemaregistry.v1+json"
    else:
        content = None
    answer = http.request(method, path, content=content, headers=headers)
    check_http(answer, step["expect"], where)
    for name, path_in_json in step.get("save", {}).items():
        names[name] = at(answer.json(), path_in_json)


def check_http(answer: httpx.Response, expect: dict[str, Any], where: str) -> None:
    body: Any = None
    if answer.content:
        try:
            body = answer.json()
        except ValueError:
            body = None
    show = f"{where}: HTTP {answer.status_code} {answer.text[:300]}"
    if "status" in expect:
        assert answer.status_code == expect["status"], show
    if "status_in" in expect:
        assert answer.status_code in expect["status_in"], show
    if "error_code" in expect:
        assert isinstance(body, dict) and body.get("error_code") == expect["error_code"], show
    if "message" in expect:
        assert isinstance(body, dict) and body.get("message") == expect["message"], show
    for part in as_list(expect.get("message_has")):
        assert isinstance(body, dict) and part in str(body.get("message")), show
    if "content_type" in expect:
        assert answer.headers.get("content-type") == expect["content_type"], show
    for name, value in expect.get("headers", {}).items():
        assert answer.headers.get(name) == value, show
    if "text" in expect:
        assert answer.text == expect["text"], show
    check_json(body, expect, show)


def check_json(body: Any, expect: dict[str, Any], show: str) -> None:
    if "json" in expect:
        assert body == expect["json"], show
    if expect.get("json_has") is not None:
        assert isinstance(body, dict), show
        for key, value in expect["json_has"].items():
            assert body.get(key) == value, f"{show} [{key}]"
    for key in expect.get("json_keys", []):
        assert isinstance(body, dict) and key in body, show
    for key in expect.get("json_lacks", []):
        assert isinstance(body, dict) and key not in body, show
    for key, value in expect.get("json_not", {}).items():
        assert isinstance(body, dict) and body.get(key) != value, show
    for key, value in expect.get("json_greater", {}).items():
        assert isinstance(body, dict) and body.get(key) > value, show
    if "json_set" in expect:
        assert isinstance(body, list) and len(body) == len(expect["json_set"]), show
        assert all(item in body for item in expect["json_set"]), show
    if "json_contains" in expect:
        assert isinstance(body, list) and expect["json_contains"] in body, show
    if "json_lacks_item" in expect:
        assert isinstance(body, list) and expect["json_lacks_item"] not in body, show
    if "json_len" in expect:
        assert isinstance(body, list) and len(body) == expect["json_len"], show
    if "schema_json" in expect:
        assert isinstance(body, dict) and json.loads(body["schema"]) == expect["schema_json"], show
    if "messages_has" in expect:
        assert isinstance(body, dict) and any(
            expect["messages_has"] in m for m in body["messages"]
        ), show


# --- client steps -------------------------------------------------------------------------------


def client_step(client: SchemaRegistryClient, step: dict[str, Any], where: str) -> None:
    client.clear_caches()  # each call asks the registry, as Java's RestService does
    method = getattr(client, step["client"])
    args = [argument(a) for a in step["args"]]
    kwargs = {k: argument(v) for k, v in step.get("kwargs", {}).items()}
    expect = step["expect"]
    try:
        result = plain(method(*args, **kwargs))
    except SchemaRegistryError as err:
        show = f"{where}: {err.http_status_code} {err.error_code} {err.error_message}"
        assert "error_code" in expect or "status" in expect, show
        assert expect.get("error_code", err.error_code) == err.error_code, show
        assert expect.get("status", err.http_status_code) == err.http_status_code, show
        return
    show = f"{where}: {result!r}"
    assert "error_code" not in expect and "status" not in expect, show
    if "result" in expect:
        assert result == expect["result"], show
    if "result_set" in expect:
        assert sorted(result) == sorted(expect["result_set"]), show
    for key, value in expect.get("result_has", {}).items():
        assert result.get(key) == value, f"{show} [{key}]"


def argument(value: Any) -> Any:
    """A confluent_kafka ``Schema`` from ``{"$schema": {...}}``; other values as they are."""
    if not (isinstance(value, dict) and "$schema" in value):
        return value
    spec = value["$schema"]
    references = [
        SchemaReference(r["name"], r["subject"], r["version"]) for r in spec.get("references", [])
    ]
    metadata = None
    if "metadata" in spec:
        properties = MetadataProperties(spec["metadata"].get("properties", {}))
        metadata = Metadata(tags=None, properties=properties, sensitive=None)
    return Schema(spec["schema"], spec.get("schemaType", "AVRO"), references, metadata)


def plain(value: Any) -> Any:
    """The client's objects as JSON-like values the scenarios compare."""
    if isinstance(value, RegisteredSchema):
        return {
            "schema_id": value.schema_id,
            "version": value.version,
            "subject": value.subject,
            **plain(value.schema),
        }
    if isinstance(value, Schema):
        out: dict[str, Any] = {"schema": value.schema_str}
        out["references"] = [
            {"name": r.name, "subject": r.subject, "version": r.version}
            for r in value.references or []
        ]
        if value.metadata is not None and value.metadata.properties is not None:
            out["metadata"] = {"properties": value.metadata.properties.properties}
        return out
    if isinstance(value, list):
        return [plain(v) for v in value]
    if hasattr(value, "subject") and hasattr(value, "version") and not isinstance(value, dict):
        return {"subject": value.subject, "version": value.version}
    return value


# --- serializer steps ---------------------------------------------------------------------------


def serde_step(client: SchemaRegistryClient, step: dict[str, Any], where: str) -> None:
    """Confluent's AvroSerializer with ``use.latest.version`` (the registered schema, its
    references resolved by the client) and the AvroDeserializer reading the frame back."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    context = SerializationContext(step["topic"], MessageField.VALUE)
    serializer = AvroSerializer(
        client, conf={"auto.register.schemas": False, "use.latest.version": step["use_latest"]}
    )
    framed = serializer(step["record"], context)
    assert framed is not None and framed[0] == 0, where
    assert int.from_bytes(framed[1:5], "big") == step["expect"]["schema_id"], where
    assert AvroDeserializer(client)(framed, context) == step["expect"]["round_trip"], where


# --- data helpers -------------------------------------------------------------------------------


def fill(value: Any, names: dict[str, Any]) -> Any:
    """``${name}`` replaced by a saved value (a whole string keeps the value's type)."""
    if isinstance(value, str):
        whole = re.fullmatch(r"\$\{(\w+)\}", value)
        if whole:
            return names[whole.group(1)]
        return re.sub(r"\$\{(\w+)\}", lambda m: str(names[m.group(1)]), value)
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


def at(value: Any, path: str) -> Any:
    for key in path.removeprefix("$.").split("."):
        value = value[key]
    return value


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
