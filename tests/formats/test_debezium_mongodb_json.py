"""debezium-mongodb-json: detection, inference, normalization on published messages, and the
MongoDB Extended JSON v2 grammar (canonical, relaxed, legacy)."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import orjson
import pytest

from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats import detect_format, get_format
from contracts.formats.base import InferOptions, Message
from contracts.formats.ejson import parse_document, plain

FIXTURES = Path(__file__).parent.parent / "fixtures" / "debezium-mongodb-json"
FMT = get_format("debezium-mongodb-json")
ROOT = Path(__file__).resolve().parents[2]
#: The shared real-world corpus: beside the checkout or beside the worktrees' parent (as
#: tests/derive/helpers.py looks for it).
REALWORLD = (
    next(
        (p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.is_dir()),
        ROOT.parent / "shared",
    )
    / "realworld"
)


def realworld(*parts: str) -> Path:
    path = REALWORLD.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared reference corpus is not on this machine)")
    return path


def messages(path: Path) -> list[Message]:
    return [
        Message(orjson.loads(line), where=f"{path.name}:{i}")
        for i, line in enumerate(path.read_text().splitlines(), 1)
    ]


def envelope(op: str, **fields: object) -> dict[str, object]:
    source = {"connector": "mongodb", "name": "m", "ts_ms": 1, "db": "shop", "collection": "orders"}
    return {"op": op, "source": source, "ts_ms": 2, **fields}


def test_risingwave_snapshot_rows_as_their_test_states() -> None:
    sample = messages(FIXTURES / "risingwave_customers.jsonl")
    assert detect_format(iter(sample)).name == "debezium-mongodb-json"
    contract = FMT.infer(iter(sample), InferOptions()).contract
    assert contract.table_id.database == "inventory" and contract.table_id.name == "customers"
    assert contract.key == ("_id",)
    types = {f.field: f.type for f in contract.row_schema.fields or ()}
    assert types == {
        "_id": "int64",
        "first_name": "string",
        "last_name": "string",
        "email": "string",
    }
    events = [e for m in sample for e in FMT.normalize(m, contract)]
    assert all(isinstance(e, ChangeEvent) and e.op == "r" for e in events)
    # RisingWave's e2e expectation: ids 1001-1004 with these names
    assert [(e.after["_id"], e.after["first_name"]) for e in events] == [  # type: ignore[index,union-attr]
        (1001, "Sally"),
        (1002, "George"),
        (1003, "Edward"),
        (1004, "Anne"),
    ]
    assert events[3].position["snapshot"] == "last"  # type: ignore[union-attr]


def test_paimon_bson_events_as_their_test_states() -> None:
    """Paimon's DebeziumBsonRecordParserTest: insert, update and delete of one document of
    bigdata_test.sync_test_table, key ``_id``, with these values."""
    from contracts.contract import load_contract
    from contracts.io import read_messages

    path = FIXTURES / "paimon_bson_events.kcat.jsonl"
    sample = list(FMT.assemble(read_messages([path], FMT.input_kind)))
    contract = load_contract(FIXTURES / "paimon_bson_events.expected.yaml")
    assert FMT.infer(iter(sample), InferOptions()).contract.key == ("_id",)
    events = [e for m in sample for e in FMT.normalize(m, contract)]
    assert [e.op for e in events] == ["c", "u", "u", "d", "d"]  # type: ignore[union-attr]
    assert {(e.table.database, e.table.name) for e in events} == {  # type: ignore[union-attr]
        ("bigdata_test", "sync_test_table")
    }
    before = {
        "_id": "67ab25755c0d5ac87eb8c632",
        "created_at": 1736207571013,
        "created_by": "peter",
        "tags": ["pending"],
        "updated_at": dt.datetime.fromtimestamp(1739455297.970, dt.UTC),
    }
    after = {
        **before,
        "tags": ["succeed"],
        "updated_at": dt.datetime.fromtimestamp(1739455397.970, dt.UTC),
    }
    assert events[0].after == before and events[1].after == after  # type: ignore[union-attr]
    assert events[2].before == before and events[2].after == after  # type: ignore[union-attr]
    assert events[3].before is None and events[4].before == before  # type: ignore[union-attr]
    # the key of every event, the delete without a before image included
    assert {e.key["_id"] for e in events} == {"67ab25755c0d5ac87eb8c632"}  # type: ignore[union-attr,index]


@pytest.mark.parametrize(
    "name", ["debezium_mongo_json_customers.1", "debezium_mongo_json_customers_no_schema_field.1"]
)
def test_shared_realworld_is_detected_not_as_debezium_json(name: str) -> None:
    path = realworld("real_world", "risingwave", name)
    sample = messages(path)
    assert detect_format(iter(sample)).name == "debezium-mongodb-json"
    assert not get_format("debezium-json").detect(sample[0])
    assert len(FMT.infer(iter(sample), InferOptions()).contract.row_schema.fields or ()) == 4


def test_extended_json_canonical_and_relaxed_forms() -> None:
    doc = parse_document(
        '{"_id": {"$oid": "5d505646cf6d4fe581014ab2"}, "i": {"$numberInt": "7"},'
        ' "l": {"$numberLong": "-9223372036854775808"}, "d": {"$numberDouble": "-1.5e3"},'
        ' "inf": {"$numberDouble": "Infinity"}, "dec": {"$numberDecimal": "12.30"},'
        ' "c": {"$date": {"$numberLong": "1746034410610"}}, "r": {"$date": "2025-04-30T17:33:30.61Z"},'
        ' "b": {"$binary": {"base64": "AQID", "subType": "00"}}, "legacy": {"$binary": "AQID", "$type": "00"},'
        ' "ts": {"$timestamp": {"t": 1565545664, "i": 1}}, "n": {"a": [1, 2.5, null, true]}, "$x": 1}',
        "$.after",
    )
    got = {k: plain(v) for k, v in doc.items()}
    when = dt.datetime(2025, 4, 30, 17, 33, 30, 610000, tzinfo=dt.UTC)
    assert got["_id"] == "5d505646cf6d4fe581014ab2" and doc["_id"].kind == "objectId"
    assert (got["i"], doc["i"].kind, got["l"], doc["l"].kind) == (7, "int32", -(2**63), "int64")
    assert got["d"] == -1500.0 and got["inf"] == float("inf")
    assert got["dec"] == decimal.Decimal("12.30")
    assert got["c"] == when and got["r"] == when
    assert got["b"] == got["legacy"] == b"\x01\x02\x03"
    assert got["ts"] == {"t": 1565545664, "i": 1}
    assert got["n"] == {"a": [1, 2.5, None, True]}
    assert got["$x"] == 1  # a plain field whose name starts with $


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"a": {"$numberLong": "12x"}}', "is not an int64"),
        ('{"a": {"$numberInt": "2147483648"}}', "out of range"),
        ('{"a": {"$regularExpression": {"pattern": "x", "options": ""}}}', "not read by this tool"),
        ('{"a": {"$binary": "not base64!"}}', "not valid base64"),
        ('{"a": {"$date": "yesterday"}}', "not an ISO-8601 date"),
        ("[1]", "expected a document"),
    ],
)
def test_bad_extended_json_is_located(text: str, said: str) -> None:
    with pytest.raises(DecodeError, match=said) as err:
        parse_document(text, "$.after")
    assert (err.value.where or "").startswith("$.after")


def test_union_of_fields_optional_where_absent_and_updates_and_key() -> None:
    a = envelope(
        "c",
        after='{"_id": {"$oid": "68122a1c92da88b53346576c"}, "qty": 3, "at": {"$date": 1746034410610}}',
    )
    b = envelope(
        "c",
        after='{"_id": {"$oid": "68122a1c92da88b53346576d"}, "qty": {"$numberLong": "5000000000"}, "tags": ["x"]}',
    )
    u2 = envelope(
        "u",
        updateDescription={
            "updatedFields": '{"qty": 4}',
            "removedFields": ["tags"],
            "truncatedArrays": None,
        },
    )
    u1 = envelope("u", patch='{"$v": 1, "$set": {"qty": 9}, "$unset": {"tags": true}}')
    key = {"id": '{"$oid": "68122a1c92da88b53346576c"}'}
    sample = [
        Message(a, where="m:1"),
        Message(b, where="m:2"),
        Message(u2, key=key, where="m:3"),
        Message(u1, key=key, where="m:4"),
        Message(None, key=key, where="m:5"),
    ]
    inference = FMT.infer(iter(sample), InferOptions())
    fields = {f.field: f for f in inference.contract.row_schema.fields or ()}
    assert fields["qty"].type == "int64" and not fields["qty"].optional
    assert fields["at"].optional and fields["tags"].optional and fields["tags"].type == "array"
    assert any("int32 and int64" in w and "m:1" in w and "m:2" in w for w in inference.warnings)
    assert inference.controls == {"tombstone": 1}
    contract = inference.contract
    upd = FMT.normalize(sample[2], contract)[0]
    assert isinstance(upd, ChangeEvent) and upd.key == {"_id": "68122a1c92da88b53346576c"}
    assert upd.after == {"qty": 4, "tags": None}  # removed fields are null in the after image
    nested = envelope("u", updateDescription={"updatedFields": '{"meta.n": 1}'})
    with pytest.raises(DecodeError, match="field 'meta' is not in the contract"):
        FMT.normalize(Message(nested, where="m:6"), contract)
    patched = FMT.normalize(sample[3], contract)[0]
    assert isinstance(patched, ChangeEvent) and patched.after == {"qty": 9, "tags": None}
    tomb = FMT.normalize(sample[4], contract)[0]
    assert isinstance(tomb, ControlRecord) and tomb.kind == "tombstone"


def test_type_conflict_is_one_located_error() -> None:
    a = envelope("c", after='{"_id": 1, "v": "text"}')
    b = envelope("c", after='{"_id": 2, "v": {"$date": 5}}')
    with pytest.raises(InputError, match=r"\$\.v: type conflict: string at m:1, date here") as err:
        FMT.infer(iter([Message(a, where="m:1"), Message(b, where="m:2")]), InferOptions())
    assert err.value.where == "m:2"


def test_validate_reports_wrong_type_and_extra_field() -> None:
    ok = envelope("c", after='{"_id": 1, "v": {"$numberDecimal": "1.5"}}')
    contract = FMT.infer(iter([Message(ok)]), InferOptions()).contract
    assert FMT.validate(Message(ok), contract) == []
    bad = envelope("c", after='{"_id": 1, "v": "1.5", "w": 1}')
    found = {(v.path, v.kind) for v in FMT.validate(Message(bad), contract)}
    assert found == {("$.after.v", "wrong-type"), ("$.after.w", "extra-column")}
