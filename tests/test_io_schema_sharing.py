"""The JSON reader's shortcut for ``{"schema": …, "payload": …}`` lines: same documents as a
plain parse, one shared schema object per schema text, whole-document parsing otherwise."""

from __future__ import annotations

import io

import orjson
import pytest

from contracts.errors import InputError
from contracts.formats.base import SharedJson
from contracts.io import iter_json_stream, loads_document

SCHEMA_A = {"type": "struct", "fields": [{"field": "payload", "type": "string"}]}
SCHEMA_B = {"type": "struct", "fields": [{"field": "id", "type": "int64"}]}


def line(schema: object, payload: object, **extra: object) -> bytes:
    return orjson.dumps({"schema": schema, "payload": payload, **extra})


def test_repeated_schemas_are_shared_and_documents_equal_a_plain_parse() -> None:
    lines = [
        line(SCHEMA_A, {"payload": 'x,"payload":1'}),
        line(SCHEMA_A, {"payload": "y"}),
        line(SCHEMA_B, {"id": 1}),
        line(SCHEMA_A, {"payload": "z"}),
        line(SCHEMA_A, None),
    ]
    docs = [loads_document(raw) for raw in lines]
    assert docs == [orjson.loads(raw) for raw in lines]
    assert all(type(d["schema"]) is SharedJson for d in docs)
    assert docs[0]["schema"] is docs[1]["schema"] is docs[3]["schema"] is docs[4]["schema"]
    assert docs[2]["schema"] is not docs[0]["schema"]


@pytest.mark.parametrize(
    "raw",
    [
        line(SCHEMA_A, {"payload": "y"}, extra=1),
        b'{"schema":' + orjson.dumps(SCHEMA_A) + b',"payload":{"payload":"y"},"payload":2}',
        b'{"schema":' + orjson.dumps(SCHEMA_A) + b',"payload":[1,2]}',
    ],
)
def test_lines_that_do_not_split_cleanly_parse_whole(raw: bytes) -> None:
    loads_document(line(SCHEMA_A, {"payload": "warm"}))  # the previous head matches these
    assert loads_document(raw) == orjson.loads(raw)


def test_a_broken_payload_after_a_known_schema_is_reported_with_its_line() -> None:
    good = line(SCHEMA_A, {"payload": "y"})
    broken = good[:-3] + b"}"
    with pytest.raises(InputError) as info:
        list(iter_json_stream(io.BytesIO(good + b"\n" + broken + b"\n"), "in.jsonl"))
    assert info.value.where is not None and info.value.where.startswith("in.jsonl:2")
