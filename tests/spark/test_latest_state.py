"""latest_state: primary-key changes, the newest change with deletes, the default order, and
the streaming upsert of docs/spark.md."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Final

import pytest

from contracts.errors import InputError
from spark_bindings import decode_changes, latest_state
from spark_bindings.inputs import KAFKA_SCHEMA

from .parity import FIXTURES

pytestmark = pytest.mark.spark

PRODUCTS = FIXTURES / "canal-json" / "flink-products.typed.expected.yaml"  # key id
ORDERS = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"  # key id


def _canal(
    type_: str,
    rows: list[tuple[int, str]],
    old: list[dict[str, str]] | None = None,
    ts: int = 1,
) -> str:
    data = [{"id": str(i), "name": n, "description": None, "weight": "1.5"} for i, n in rows]
    return json.dumps(
        {
            "data": data,
            "database": "inventory",
            "es": ts,
            "id": 1,
            "isDdl": False,
            "mysqlType": {"id": "INTEGER", "name": "VARCHAR(255)", "weight": "FLOAT"},
            "old": old,
            "pkNames": ["id"],
            "sql": "",
            "sqlType": {},
            "table": "products2",
            "ts": ts,
            "type": type_,
        }
    )


def _debezium(
    op: str, after: dict[str, Any] | None, before: dict[str, Any] | None, ts: int = 1
) -> str:
    source = {"connector": "postgresql", "db": "shop", "schema": "public", "table": "orders"}
    payload = {"before": before, "after": after, "source": {**source, "ts_ms": ts, "lsn": ts}}
    envelope = {"schema": {}, "payload": {**payload, "op": op, "ts_ms": ts}}
    return json.dumps(envelope)


def _order(i: int, customer: str) -> dict[str, Any]:
    return {
        "id": i,
        "customer": customer,
        "amount": "AQ==",
        "created_at": 0,
        "order_date": 0,
        "updated_at": "2024-02-04T10:00:00Z",
        "note": None,
    }


#: The Kafka key's embedded schema, as Debezium's Postgres connector writes it for the orders
#: table (tests/fixtures/debezium-json/postgres-orders.kcat.jsonl): it must state the
#: contract's key columns, else the message is bad.
ORDER_KEY_SCHEMA: Final = {
    "type": "struct",
    "fields": [{"type": "int32", "optional": False, "field": "id"}],
    "optional": False,
    "name": "pgserver1.public.orders.Key",
}


def _order_key(i: int) -> str:
    return json.dumps({"schema": ORDER_KEY_SCHEMA, "payload": {"id": i}})


def _kafka(spark: Any, messages: list[tuple[int, int, str | None, str]]) -> Any:
    """A Kafka DataFrame of (partition, offset, key, value) messages on one topic."""
    rows = [
        (None if k is None else k.encode(), v.encode(), "shop", p, o, None)
        for p, o, k, v in messages
    ]
    return spark.createDataFrame(rows, KAFKA_SCHEMA)


def _names(state: Any) -> dict[int, str]:
    return {r["id"]: r["name"] for r in state.collect()}


# --- a primary-key change sent as one UPDATE -----------------------------------------------


def test_an_update_of_the_key_removes_the_old_key(spark: Any) -> None:
    values = [
        _canal("INSERT", [(1, "a"), (5, "e")]),
        _canal("UPDATE", [(2, "a")], old=[{"id": "1"}]),
        _canal("UPDATE", [(6, "e2")], old=[{"id": "5", "name": "e"}]),
        _canal("UPDATE", [(7, "e2")], old=[{"id": "6"}]),  # a chain: 5 -> 6 -> 7
    ]
    feed = decode_changes(_kafka(spark, [(0, i, None, v) for i, v in enumerate(values)]), PRODUCTS)
    assert _names(latest_state(feed)) == {2: "a", 7: "e2"}
    assert _names(latest_state(feed, keys=["id"])) == {2: "a", 7: "e2"}


def test_a_later_change_of_the_old_key_wins_and_an_earlier_one_loses(spark: Any) -> None:
    values = [
        _canal("INSERT", [(1, "a")]),
        _canal("UPDATE", [(1, "a2")], old=[{"name": "a"}]),  # earlier than the move: loses
        _canal("UPDATE", [(2, "a2")], old=[{"id": "1"}]),
        _canal("INSERT", [(1, "new")]),  # the old key used again after the move: wins
        _canal("UPDATE", [(3, "b")], old=[{"id": "4"}]),  # the old key was never seen
    ]
    feed = decode_changes(_kafka(spark, [(0, i, None, v) for i, v in enumerate(values)]), PRODUCTS)
    assert _names(latest_state(feed)) == {1: "new", 2: "a2", 3: "b"}
    ops = {r["id"]: r["op"] for r in latest_state(feed, include_deletes=True).collect()}
    assert ops == {1: "c", 2: "u", 3: "u", 4: "d"}


def test_rows_of_one_message_apply_in_their_order(spark: Any) -> None:
    """Canal sends a multi-row UPDATE as one message: ``position.row`` orders its rows, so a
    row that takes a key another row of the message left keeps it."""
    values = [
        _canal("INSERT", [(1, "a"), (2, "b")]),
        _canal("UPDATE", [(3, "b"), (2, "a")], old=[{"id": "2"}, {"id": "1"}]),
    ]
    feed = decode_changes(_kafka(spark, [(0, i, None, v) for i, v in enumerate(values)]), PRODUCTS)
    assert _names(latest_state(feed)) == {2: "a", 3: "b"}


def test_a_key_change_is_applied_for_debezium_too(spark: Any) -> None:
    """Debezium itself sends a delete and a create, but nothing in latest_state is Canal's:
    the Kafka key (the new key) and the before image decide."""
    messages = [
        (0, 0, _order_key(1), _debezium("c", _order(1, "x"), None, ts=1)),
        (0, 1, _order_key(2), _debezium("u", _order(2, "x"), _order(1, "x"), ts=2)),
        (0, 2, _order_key(3), _debezium("u", _order(3, "y"), None, ts=3)),  # no before image
    ]
    feed = decode_changes(_kafka(spark, messages), ORDERS)
    assert feed.where("_error is not null").count() == 0
    state = {r["id"]: r["customer"] for r in latest_state(feed).collect()}
    assert state == {2: "x", 3: "y"}
    # an update without a before image leaves no key: no delete of a null key is invented
    changes = latest_state(feed, include_deletes=True).collect()
    assert sorted((r["op"], r["id"]) for r in changes) == [("d", 1), ("u", 2), ("u", 3)]


# --- include_deletes --------------------------------------------------------------------------


def test_include_deletes_gives_each_key_its_newest_change(spark: Any) -> None:
    values = [
        _canal("INSERT", [(1, "a"), (2, "b"), (3, "c")]),
        _canal("UPDATE", [(1, "a2")], old=[{"name": "a"}]),
        _canal("DELETE", [(2, "b")]),
        _canal("UPDATE", [(4, "c")], old=[{"id": "3"}]),
        _canal("INSERT", [(5, "e")]),
        _canal("DELETE", [(5, "e")]),
        _canal("INSERT", [(5, "e2")]),
    ]
    feed = decode_changes(_kafka(spark, [(0, i, None, v) for i, v in enumerate(values)]), PRODUCTS)
    changes = latest_state(feed, include_deletes=True)
    assert changes.columns == ["op", "id", "name", "description", "weight"]
    got = {r["id"]: (r["op"], r["name"]) for r in changes.collect()}
    # a delete's row is its before image: the row it removes
    assert got == {1: ("u", "a2"), 2: ("d", "b"), 3: ("d", "c"), 4: ("u", "c"), 5: ("c", "e2")}
    assert _names(latest_state(feed)) == {1: "a2", 4: "c", 5: "e2"}


def test_a_delete_without_its_row_still_names_its_key(spark: Any) -> None:
    """A Debezium delete whose before image is null (a connector that sends only the Kafka
    key) is kept under that key, so a MERGE still finds the row."""
    messages = [
        (0, 0, _order_key(1), _debezium("c", _order(1, "x"), None)),
        (0, 1, _order_key(1), _debezium("d", None, None)),
    ]
    feed = decode_changes(_kafka(spark, messages), ORDERS)
    assert feed.where("_error is null and op = 'd'").count() == 1
    rows = latest_state(feed, include_deletes=True).collect()
    assert [(r["op"], r["id"], r["customer"]) for r in rows] == [("d", 1, None)]
    assert latest_state(feed).count() == 0


def test_include_deletes_refuses_a_row_column_named_op(spark: Any) -> None:
    feed = spark.sql(
        "select 'c' as op, named_struct('id', 1) as key, cast(null as struct<id:int,op:int>)"
        " as before, named_struct('id', 1, 'op', 2) as after, map('row', '0') as position,"
        " cast(null as string) as _error"
    )
    assert latest_state(feed).collect()[0].asDict() == {"id": 1, "op": 2}
    with pytest.raises(InputError, match="a column named op"):
        latest_state(feed, include_deletes=True)


# --- the default order --------------------------------------------------------------------------


def test_kafka_order_decides_within_a_partition(spark: Any) -> None:
    """A connector clock that went back (a failover, a resumed snapshot) does not reorder one
    partition: the offset is the log's order."""
    messages = [
        (0, 10, None, _canal("INSERT", [(1, "first")], ts=5_000)),
        (0, 11, None, _canal("UPDATE", [(1, "second")], old=[{"name": "first"}], ts=4_000)),
    ]
    feed = decode_changes(_kafka(spark, messages), PRODUCTS)
    assert _names(latest_state(feed)) == {1: "second"}
    assert _names(latest_state(feed, order_by=["ts_ms"])) == {1: "first"}  # the override


def test_a_key_spread_over_partitions_is_ordered_by_time(spark: Any) -> None:
    """Offsets of two partitions do not compare: a key seen in several (a repartitioned topic,
    a key change hashed to the new key's partition) takes each partition's newest change in
    offset order, then the newest of those by ts_ms."""
    messages = [
        (0, 900, None, _canal("INSERT", [(1, "a"), (5, "e")], ts=1_000)),
        (1, 3, None, _canal("UPDATE", [(2, "a")], old=[{"id": "1"}], ts=2_000)),
        (1, 4, None, _canal("UPDATE", [(5, "e2")], old=[{"name": "e"}], ts=2_000)),
        (0, 901, None, _canal("INSERT", [(6, "f")], ts=3_000)),  # one partition: offsets
        (0, 902, None, _canal("UPDATE", [(6, "f2")], old=[{"name": "f"}], ts=2_500)),
        (0, 903, None, _canal("INSERT", [(8, "g")], ts=3_000)),
        (0, 904, None, _canal("UPDATE", [(8, "g2")], old=[{"name": "g"}], ts=1_000)),
        (1, 5, None, _canal("UPDATE", [(8, "g3")], old=[{"name": "g2"}], ts=2_000)),
    ]
    feed = decode_changes(_kafka(spark, messages), PRODUCTS)
    assert _names(latest_state(feed)) == {2: "a", 5: "e2", 6: "f2", 8: "g3"}


def test_without_offsets_the_producer_time_orders(spark: Any) -> None:
    values = [
        _canal("UPDATE", [(1, "late")], old=[{"name": "early"}], ts=2_000),
        _canal("INSERT", [(1, "early")], ts=1_000),
    ]
    feed = decode_changes(_kafka(spark, [(0, i, None, v) for i, v in enumerate(values)]), PRODUCTS)
    assert _names(latest_state(feed.drop("offset"))) == {1: "late"}


# --- the streaming upsert of docs/spark.md ------------------------------------------------------


def test_the_streaming_upsert_applies_deletes_and_key_changes(spark: Any, tmp_path: Path) -> None:
    """foreachBatch over three micro-batches, applying each batch's ``include_deletes`` rows
    as the docs' MERGE does (a delete deletes, anything else upserts by key)."""
    source = tmp_path / "in"
    source.mkdir()
    batches = [
        [_canal("INSERT", [(1, "a"), (2, "b"), (3, "c")], ts=1)],
        [
            _canal("UPDATE", [(1, "a2")], old=[{"name": "a"}], ts=2),
            _canal("DELETE", [(2, "b")], ts=3),
            _canal("UPDATE", [(4, "c")], old=[{"id": "3"}], ts=4),
        ],
        [_canal("INSERT", [(2, "b2")], ts=5), _canal("DELETE", [(1, "a2")], ts=6)],
    ]
    for i, lines in enumerate(batches):  # one file per micro-batch, in modification order
        path = source / f"part-{i}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    table: dict[int, str] = {}
    seen: list[list[tuple[str, int]]] = []

    def upsert(batch: Any, batch_id: int) -> None:
        rows = latest_state(batch, include_deletes=True).collect()
        seen.append(sorted((r["op"], r["id"]) for r in rows))
        for r in rows:  # MERGE ... WHEN MATCHED AND s.op = 'd' THEN DELETE ...
            if r["op"] == "d":
                table.pop(r["id"], None)
            else:
                table[r["id"]] = r["name"]

    stream = spark.readStream.option("maxFilesPerTrigger", 1).schema("value string")
    feed = decode_changes(stream.text(str(source)), PRODUCTS)
    query = feed.writeStream.foreachBatch(upsert).trigger(availableNow=True).start()
    query.awaitTermination(180)
    assert query.exception() is None
    assert seen == [
        [("c", 1), ("c", 2), ("c", 3)],
        [("d", 2), ("d", 3), ("u", 1), ("u", 4)],
        [("c", 2), ("d", 1)],
    ]
    assert table == {2: "b2", 4: "c"}


def test_the_docs_merge_deletes_by_op(spark: Any) -> None:
    """The MERGE of docs/spark.md parses (no table format here runs it: Spark's own Parquet
    tables refuse MERGE) and deletes on ``s.op = 'd'``."""
    text = (Path(__file__).parents[2] / "docs" / "spark.md").read_text()
    upsert = re.search(r'def upsert\(batch, batch_id\):\n(.*?)"""(.*?)"""', text, re.S)
    assert upsert is not None
    assert "latest_state(batch, include_deletes=True)" in upsert.group(1)
    plan = spark._jsparkSession.sessionState().sqlParser().parsePlan(upsert.group(2))
    assert "deleteaction(Some(('s.op = d)))" in plan.toString()
