"""The embedded registry through the official Confluent client, over real HTTP."""

from __future__ import annotations

import json

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from registry_sync.wire import parse_frame

V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "amount", "type": "double"}],
}
V2 = {
    **V1,
    "fields": [*V1["fields"], {"name": "note", "type": ["null", "string"], "default": None}],
}
V3_BREAKING = {**V1, "fields": [*V1["fields"], {"name": "sku", "type": "string"}]}


def avro(schema: dict) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


def sr_error(call) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as info:
        call()
    return info.value


@pytest.fixture
def client(registry) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


def test_register_get_lookup_and_dedup(client: SchemaRegistryClient, unique: str) -> None:
    subject = f"{unique}-value"
    first = client.register_schema(subject, avro(V1))
    # identical schema (other spacing, other key order) -> same id, no new version
    spaced = json.dumps(dict(reversed(list(V1.items()))), indent=4)
    assert client.register_schema_full_response(subject, Schema(spaced, "AVRO")).schema_id == first
    assert client.get_versions(subject) == [1]
    # same schema under another subject -> the same global id
    assert client.register_schema(f"{unique}-other", avro(V1)) == first
    second = client.register_schema(subject, avro(V2))
    assert second != first and client.get_versions(subject) == [1, 2]

    latest = client.get_latest_version(subject)
    assert (latest.version, latest.schema_id) == (2, second)
    assert json.loads(latest.schema.schema_str)["fields"][2]["name"] == "note"
    assert json.loads(client.get_schema(first).schema_str)["name"] == "Order"
    found = client.lookup_schema(subject, avro(V1))
    assert (found.version, found.schema_id) == (1, first)
    assert sorted(client.get_subjects_by_schema_id(first)) == sorted([subject, f"{unique}-other"])
    assert client.get_schema_types() == ["AVRO"]

    assert sr_error(lambda: client.lookup_schema(subject, avro(V3_BREAKING))).error_code == 40403
    assert sr_error(lambda: client.get_latest_version(f"{unique}-nope")).error_code == 40401
    assert sr_error(lambda: client.get_version(subject, 9)).error_code == 40402
    assert sr_error(lambda: client.get_schema(10**9)).error_code == 40403


def test_compatibility_and_config(client: SchemaRegistryClient, unique: str) -> None:
    subject = f"{unique}-value"
    client.register_schema(subject, avro(V1))
    assert client.test_compatibility(subject, avro(V2)) is True
    assert client.test_compatibility(subject, avro(V3_BREAKING)) is False
    err = sr_error(lambda: client.register_schema(subject, avro(V3_BREAKING)))
    assert (err.http_status_code, err.error_code) == (409, 409)
    assert "sku" in err.error_message  # the message names what broke

    assert client.get_compatibility() == "BACKWARD"
    assert sr_error(lambda: client.get_compatibility(subject)).error_code == 40408
    client.set_compatibility(subject, "NONE")
    assert client.get_compatibility(subject) == "NONE"
    assert client.register_schema(subject, avro(V3_BREAKING)) > 0
    assert sr_error(lambda: client.set_compatibility(subject, "SIDEWAYS")).error_code == 42203

    verbose = httpx.post(
        f"{client._rest_client.base_urls[0]}/compatibility/subjects/{subject}/versions/1",
        params={"verbose": "true"},
        json={"schema": json.dumps({**V1, "fields": [{"name": "id", "type": "string"}]})},
    ).json()
    assert verbose["is_compatible"] is True  # level NONE now
    client.set_compatibility(subject, "FULL_TRANSITIVE")
    verbose = httpx.post(
        f"{client._rest_client.base_urls[0]}/compatibility/subjects/{subject}/versions",
        params={"verbose": "true"},
        json={"schema": json.dumps({**V1, "fields": [{"name": "id", "type": "string"}]})},
    ).json()
    assert verbose["is_compatible"] is False and any("id" in m for m in verbose["messages"])
    default = httpx.get(
        f"{client._rest_client.base_urls[0]}/config/{unique}-unset",
        params={"defaultToGlobal": "true"},
    ).json()
    assert default == {"compatibilityLevel": "BACKWARD"}


def test_soft_and_permanent_delete(client: SchemaRegistryClient, unique: str) -> None:
    subject = f"{unique}-value"
    first = client.register_schema(subject, avro(V1))
    client.register_schema(subject, avro(V2))
    assert sr_error(lambda: client.delete_version(subject, 1, permanent=True)).error_code == 40407
    assert client.delete_version(subject, 1) == 1
    assert client.get_versions(subject) == [2]
    assert sr_error(lambda: client.delete_version(subject, 1)).error_code == 40406
    assert client.delete_version(subject, 1, permanent=True) == 1

    assert sr_error(lambda: client.delete_subject(subject, permanent=True)).error_code == 40405
    assert client.delete_subject(subject) == [2]
    assert subject not in client.get_subjects()
    assert subject in client.get_subjects(deleted=True)
    assert sr_error(lambda: client.delete_subject(subject)).error_code == 40404
    assert client.delete_subject(subject, permanent=True) == [2]
    assert subject not in client.get_subjects(deleted=True)
    # ids are never reused: registering the old schema again answers its old id
    assert client.register_schema(subject, avro(V1)) == first


def test_mode_readonly(client: SchemaRegistryClient, unique: str) -> None:
    subject = f"{unique}-value"
    client.register_schema(subject, avro(V1))
    assert client.update_mode(subject, "READONLY") == "READONLY"
    assert client.get_mode(subject) == "READONLY"
    assert sr_error(lambda: client.register_schema(subject, avro(V2))).error_code == 42205
    client.delete_mode(subject)
    assert client.register_schema(subject, avro(V2)) > 0
    assert client.get_global_mode() == "READWRITE"


def test_invalid_and_unsupported_schemas(registry, unique: str) -> None:
    url = f"{registry.url}/subjects/{unique}-value/versions"
    bad = httpx.post(url, json={"schema": '{"type": "record", "name": "R"}'})
    assert (bad.status_code, bad.json()["error_code"]) == (422, 42201)
    proto = httpx.post(url, json={"schema": "syntax = 'proto3';", "schemaType": "PROTOBUF"})
    assert proto.json()["error_code"] == 42201 and "not supported" in proto.json()["message"]
    version = httpx.get(f"{registry.url}/subjects/{unique}-value/versions/zero")
    assert (version.status_code, version.json()["error_code"]) == (422, 42202)


def test_metadata_properties_round_trip(registry, unique: str) -> None:
    subject = f"{unique}-value"
    body = {"schema": json.dumps(V1), "metadata": {"properties": {"owner": "team-a"}}}
    first = httpx.post(f"{registry.url}/subjects/{subject}/versions", json=body).json()
    got = httpx.get(f"{registry.url}/subjects/{subject}/versions/latest").json()
    assert got["metadata"] == {"properties": {"owner": "team-a"}}
    # a metadata change is a new version with a new id; the same schema without metadata is not
    body["metadata"]["properties"]["owner"] = "team-b"
    second = httpx.post(f"{registry.url}/subjects/{subject}/versions", json=body).json()
    assert (second["version"], second["id"] != first["id"]) == (2, True)
    plain = httpx.post(
        f"{registry.url}/subjects/{subject}/versions", json={"schema": json.dumps(V1)}
    ).json()
    assert plain["version"] == 2


def test_avro_serializer_round_trip(client: SchemaRegistryClient, unique: str) -> None:
    topic = f"{unique}-orders"
    serializer = AvroSerializer(client, json.dumps(V2))
    deserializer = AvroDeserializer(client)
    record = {"id": 7, "amount": 12.5, "note": "gift"}
    ctx = SerializationContext(topic, MessageField.VALUE)
    data = serializer(record, ctx)
    schema_id, _payload = parse_frame(data)
    assert schema_id == client.get_latest_version(f"{topic}-value").schema_id
    fresh = SchemaRegistryClient({"url": client._rest_client.base_urls[0]})  # no cache
    assert AvroDeserializer(fresh)(data, ctx) == record
    assert deserializer(data, ctx) == record


def test_schema_by_guid(registry, unique: str) -> None:
    url = f"{registry.url}/subjects/{unique}-value/versions"
    made = httpx.post(url, json={"schema": json.dumps(V1)}).json()
    found = httpx.get(f"{registry.url}/schemas/guids/{made['guid']}")
    assert found.status_code == 200 and json.loads(found.json()["schema"])["name"] == "Order"
    missing = httpx.get(f"{registry.url}/schemas/guids/no-such-guid")
    assert (missing.status_code, missing.json()["error_code"]) == (404, 40403)
