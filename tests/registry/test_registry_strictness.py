"""What the embedded registry refuses or routes as Confluent does, over real HTTP: invalid Avro,
schemas nested too deeply, impossible ids, subjects with an encoded '/' or bytes that are not
UTF-8, and compatibility messages that name the real version numbers."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def record(fields: list[dict[str, Any]], name: str = "R", **extra: Any) -> str:
    return json.dumps({"type": "record", "name": name, "fields": fields, **extra})


def nested_arrays(depth: int) -> str:
    return '{"type":"array","items":' * depth + '"string"' + "}" * depth


def error_of(response: httpx.Response) -> tuple[int, int, str]:
    body = response.json()
    return response.status_code, body["error_code"], body["message"]


# --- #10: invalid Avro ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        (record([{"name": "a-b", "type": "long"}]), "a-b"),
        (record([], aliases=5), "aliases"),
        (record([{"name": "a", "type": "long", "aliases": "x"}]), "aliases"),
        (record([{"name": "a", "type": "int", "default": "x"}]), "'a'"),
        (record([{"name": "a", "type": ["string", "null"], "default": None}]), "'a'"),
        (record([{"name": "a", "type": "long", "default": 1.5}]), "'a'"),
        (record([{"name": "a", "type": "int", "default": 2**31}]), "'a'"),
        (
            record([{"name": "a", "type": {"type": "array", "items": "int"}, "default": ["x"]}]),
            "'a'",
        ),
        (
            record(
                [
                    {
                        "name": "e",
                        "type": {"type": "enum", "name": "E", "symbols": ["A"]},
                        "default": "B",
                    }
                ]
            ),
            "'e'",
        ),
    ],
)
def test_invalid_avro_is_refused_as_confluent_does(
    registry, unique: str, schema: str, named: str
) -> None:
    url = f"{registry.url}/subjects/{unique}-value/versions"
    status, code, message = error_of(httpx.post(url, json={"schema": schema}, headers=CT))
    assert (status, code) == (422, 42201), message
    assert named in message
    # a compatibility test and a lookup of it (in a subject that exists) are refused the same way
    httpx.post(url, json={"schema": '"string"'}).raise_for_status()
    lookup = httpx.post(f"{registry.url}/subjects/{unique}-value", json={"schema": schema})
    assert lookup.json()["error_code"] == 42201


def test_valid_defaults_names_and_recursion_are_accepted(registry, unique: str) -> None:
    schema = record(
        [
            {"name": "next", "type": ["null", "R"], "default": None},
            {"name": "_n1", "type": "double", "default": 1},
            {"name": "tags", "type": {"type": "map", "values": "long"}, "default": {"a": 1}},
            {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A"]}, "default": "A"},
            {"name": "inner", "type": json.loads(record([{"name": "x", "type": "int", "default": 0}], "In")),
             "default": {}},
            {"name": "bytes", "type": "bytes", "default": "\u00ff"},
        ],
        aliases=["Old", "a.b.Older"],
    )  # fmt: skip
    answer = httpx.post(f"{registry.url}/subjects/{unique}-value/versions", json={"schema": schema})
    assert answer.status_code == 200, answer.text


# --- #4: nesting ---------------------------------------------------------------------------------


def test_deeply_nested_schema_is_422_not_500(registry, unique: str) -> None:
    url = f"{registry.url}/subjects/{unique}-value/versions"
    with httpx.Client() as http:
        for depth in (400, 5000):
            status, code, message = error_of(http.post(url, json={"schema": nested_arrays(depth)}))
            assert (status, code) == (422, 42201) and "nested too deeply" in message
        compat = http.post(
            f"{registry.url}/compatibility/subjects/{unique}-value/versions",
            json={"schema": nested_arrays(400)},
        )
        assert compat.json()["error_code"] == 42201
        assert http.post(url, json={"schema": nested_arrays(150)}).status_code == 200


# --- #3: ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema_id", "code"),
    [("2147483648", 404), ("99999999999999999999", 404), ("1_0", 404), ("-5", 40403), ("0", 40403)],
)
def test_impossible_schema_ids_are_not_found_and_the_connection_survives(
    registry, schema_id: str, code: int
) -> None:
    """Text that is no 32-bit integer is HTTP 404 (as Confluent's integer path parameter
    answers); an integer that names no schema is 40403."""
    with httpx.Client(base_url=registry.url) as http:
        for suffix in ("", "/schema", "/subjects", "/versions"):
            answer = http.get(f"/schemas/ids/{schema_id}{suffix}")
            assert error_of(answer)[:2] == (404, code), suffix
        assert http.get("/schemas/types").json() == ["AVRO"]  # same keep-alive connection


@pytest.mark.parametrize("version", ["%201", "1%20", "1_0", "+1"])
def test_versions_are_plain_numbers(registry, unique: str, version: str) -> None:
    subject = f"{unique}-value"
    httpx.post(f"{registry.url}/subjects/{subject}/versions", json={"schema": '"string"'})
    answer = httpx.get(f"{registry.url}/subjects/{subject}/versions/{version}")
    assert error_of(answer)[:2] == (422, 42202)


# --- #6 and #17: subject names in the path -------------------------------------------------------


def test_encoded_slash_is_part_of_the_subject(registry, unique: str) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    subject = f"{unique}/versions"
    with httpx.Client(base_url=registry.url) as http:
        # a lookup of the subject "<unique>/versions", never a registration under "<unique>"
        lookup = http.post(f"/subjects/{unique}%2Fversions", json={"schema": '"string"'})
        assert error_of(lookup)[:2] == (404, 40401)
        assert unique not in http.get("/subjects").json()

        schema_id = client.register_schema(subject, Schema('"string"', "AVRO"))
        assert client.get_versions(subject) == [1]
        assert client.lookup_schema(subject, Schema('"string"', "AVRO")).schema_id == schema_id
        assert client.get_latest_version(subject).subject == subject
        assert http.get(f"/subjects/{unique}%2Fversions/versions").json() == [1]
        assert http.get(f"/subjects/{unique}%2fversions/versions/1").json()["subject"] == subject
        assert error_of(http.get(f"/subjects/{unique}/versions"))[:2] == (404, 40401)
        assert subject in client.get_subjects() and unique not in client.get_subjects()
        client.set_compatibility(subject, "NONE")
        assert client.get_compatibility(subject) == "NONE"
        assert client.delete_subject(subject) == [1]


def test_subject_bytes_that_are_not_utf8_name_nothing(registry) -> None:
    with httpx.Client(base_url=registry.url) as http:
        for raw in ("%FF", "%ED%A0%80", "a%C3"):
            created = http.post(f"/subjects/{raw}/versions", json={"schema": '"string"'})
            status, code, message = error_of(created)
            assert (status, code) == (422, 42208) and raw in message
            assert error_of(http.get(f"/subjects/{raw}/versions"))[:2] == (404, 40401)
            assert error_of(http.put(f"/config/{raw}", json={"compatibility": "NONE"}))[1] == 42208
        assert not [s for s in http.get("/subjects").json() if "\ufffd" in s]
        # UTF-8 is fine
        ok = http.post("/subjects/caf%C3%A9-value/versions", json={"schema": '"string"'})
        assert ok.status_code == 200 and "café-value" in http.get("/subjects").json()


# --- #11: compatibility messages ------------------------------------------------------------------


def test_compatibility_messages_name_the_real_versions(registry, unique: str) -> None:
    subject = f"{unique}-value"
    with httpx.Client(base_url=registry.url) as http:
        http.put(f"/config/{subject}", json={"compatibility": "NONE"})
        for fields in (
            [{"name": "a", "type": "string"}],
            [{"name": "a", "type": "int"}],
            [{"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 1}],
            [{"name": "a", "type": "int"}, {"name": "c", "type": "int", "default": 1}],
        ):
            assert http.post(
                f"/subjects/{subject}/versions", json={"schema": record(fields)}
            ).is_success
        http.delete(f"/subjects/{subject}/versions/1")
        http.delete(f"/subjects/{subject}/versions/2")
        http.put(f"/config/{subject}", json={"compatibility": "FULL_TRANSITIVE"})
        new = {"schema": record([{"name": "a", "type": "string"}])}

        verbose = http.post(f"/compatibility/subjects/{subject}/versions?verbose=true", json=new)
        messages = verbose.json()["messages"]
        assert verbose.json()["is_compatible"] is False
        assert any("version 3" in m for m in messages) and any("version 4" in m for m in messages)
        assert not any("version 1" in m or "version 2" in m for m in messages)

        one = http.post(f"/compatibility/subjects/{subject}/versions/3?verbose=true", json=new)
        assert all("version 3" in m for m in one.json()["messages"][:-1])
        assert not any("latest" in m for m in one.json()["messages"])

        refused = http.post(f"/subjects/{subject}/versions", json=new)
        assert refused.status_code == 409 and "version 3" in refused.json()["message"]


# --- #5 and #21: Confluent's own endpoints and HTTP-level answers ---------------------------------


def test_latest_with_metadata_through_the_official_client(registry, unique: str) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    subject = f"{unique}-value"
    for owner, fields in (("a", []), ("b", [{"name": "x", "type": "int", "default": 0}])):
        body = {"schema": record(fields), "metadata": {"properties": {"owner": owner, "k": "v"}}}
        assert httpx.post(f"{registry.url}/subjects/{subject}/versions", json=body).is_success
    assert client.get_latest_with_metadata(subject, {"owner": "a"}).version == 1
    assert client.get_latest_with_metadata(subject, {"k": "v"}).version == 2
    with pytest.raises(SchemaRegistryError) as info:
        client.get_latest_with_metadata(subject, {"owner": "c"})
    assert info.value.error_code == 40403
    with pytest.raises(SchemaRegistryError) as info:
        client.get_latest_with_metadata(f"{unique}-nope", {"owner": "a"})
    assert info.value.error_code == 40401


def test_head_and_unknown_paths(registry) -> None:
    with httpx.Client(base_url=registry.url) as http:
        head = http.head("/subjects")
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-type"].startswith("application/vnd.schemaregistry")
        assert http.get("/contexts").json() == ["."]
        assert http.get("/nowhere").json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
        assert http.delete("/schemas/types").json() == {
            "error_code": 405,
            "message": "HTTP 405 Method Not Allowed",
        }


# --- #23.4: nothing that is not JSON is stored ------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "double", '
         '"default": NaN}]}', "NaN"),
        ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "double", '
         '"default": 1e400}]}', "1e400"),
        ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "float", '
         '"default": -Infinity}]}', "-Infinity"),
        ('{"type": "string", "x": Infinity}', "Infinity"),
    ],
)  # fmt: skip
def test_numbers_json_cannot_hold_are_refused(
    registry, unique: str, schema: str, named: str
) -> None:
    with httpx.Client(base_url=registry.url) as http:
        url = f"/subjects/{unique}-value/versions"
        status, code, message = error_of(http.post(url, json={"schema": schema}))
        assert (status, code) == (422, 42201) and named in message, message
        compat = http.post(
            f"/compatibility/subjects/{unique}-value/versions", json={"schema": schema}
        )
        assert error_of(compat)[:2] == (422, 42201)
        assert error_of(http.get(f"/subjects/{unique}-value/versions"))[:2] == (404, 40401)


def test_the_stored_text_is_avro_javas(registry, unique: str) -> None:
    """Confluent answers Avro Java's Schema.toString(): type, name, namespace, doc, fields (name,
    type, doc, default), properties, aliases; doubles as Java writes them."""
    given = (
        '{"fields": [{"default": 1e-7, "type": "double", "doc": "d", "name": "x"}], '
        '"doc": "R doc", "namespace": "a.b", "name": "R", "type": "record", "aliases": ["Old"], '
        '"p": 1}'
    )
    expected = (
        '{"type":"record","name":"R","namespace":"a.b","doc":"R doc","fields":[{"name":"x",'
        '"type":"double","doc":"d","default":1.0E-7}],"p":1,"aliases":["Old"]}'
    )
    with httpx.Client(base_url=registry.url) as http:
        answer = http.post(f"/subjects/{unique}-value/versions", json={"schema": given}).json()
        assert http.get(f"/schemas/ids/{answer['id']}").json()["schema"] == expected
        assert http.get(f"/subjects/{unique}-value/versions/1/schema").text == expected
