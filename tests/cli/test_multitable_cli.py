"""Multi-table topics (#25): infer --split-by-table, --table/--database filters, and validate /
normalize routing each message to its table's contract, on real published multi-table data.

Canal: Apache Flink's ``canal-data-filter-table.txt`` (tables mydb.product and mydb.orders in
one file). Flink's ``CanalJsonSerDeSchemaTest#testFilteringTables`` keeps ``database.include``
``mydb`` / ``table.include`` ``product`` (later versions: ``^my.*`` / ``^prod.*``) and states
the changelog below. Debezium: Paimon's ``mergeshards/debezium-data-1.txt`` (table t1 of two
databases in one topic). Provenance in the fixtures' PROVENANCE.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clirun import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CANAL = FIXTURES / "canal-json" / "flink-filter-table.jsonl"
SHARDS = FIXTURES / "debezium-json" / "paimon-mergeshards.jsonl"

#: CanalJsonSerDeSchemaTest#runTest's expected rows (id, name, description, weight).
FLINK_EXPECTED = [
    "+I(101,scooter,Small 2-wheel scooter,3.14)",
    "+I(102,car battery,12V car battery,8.1)",
    "+I(103,12-pack drill bits,12-pack of drill bits with sizes ranging from #40 to #3,0.8)",
    "+I(104,hammer,12oz carpenter's hammer,0.75)",
    "+I(105,hammer,14oz carpenter's hammer,0.875)",
    "+I(106,hammer,16oz carpenter's hammer,1.0)",
    "+I(107,rocks,box of assorted rocks,5.3)",
    "+I(108,jacket,water resistent black wind breaker,0.1)",
    "+I(109,spare tire,24 inch spare tire,22.2)",
    "-U(106,hammer,16oz carpenter's hammer,1.0)",
    "+U(106,hammer,18oz carpenter hammer,1.0)",
    "-U(107,rocks,box of assorted rocks,5.3)",
    "+U(107,rocks,box of assorted rocks,5.1)",
    "+I(110,jacket,water resistent white wind breaker,0.2)",
    "+I(111,scooter,Big 2-wheel scooter ,5.18)",
    "-U(110,jacket,water resistent white wind breaker,0.2)",
    "+U(110,jacket,new water resistent white wind breaker,0.5)",
    "-U(111,scooter,Big 2-wheel scooter ,5.18)",
    "+U(111,scooter,Big 2-wheel scooter ,5.17)",
    "-D(111,scooter,Big 2-wheel scooter ,5.17)",
    "-U(101,scooter,Small 2-wheel scooter,3.14)",
    "+U(101,scooter,Small 2-wheel scooter,5.17)",
    "-U(102,car battery,12V car battery,8.1)",
    "+U(102,car battery,12V car battery,5.17)",
    "-D(102,car battery,12V car battery,5.17)",
    "-D(103,12-pack drill bits,12-pack of drill bits with sizes ranging from #40 to #3,0.8)",
]


def _row(kind: str, image: dict[str, Any]) -> str:
    cells = [image[c] for c in ("id", "name", "description", "weight")]
    return f"{kind}({','.join(str(c) for c in cells)})"


def flink_changelog(lines: bytes) -> list[str]:
    """Canonical events as Flink's RowData changelog (+I, -U/+U, -D)."""
    out: list[str] = []
    for line in lines.splitlines():
        event = json.loads(line)
        if event["op"] == "c":
            out.append(_row("+I", event["after"]))
        elif event["op"] == "u":
            out += [_row("-U", event["before"]), _row("+U", event["after"])]
        elif event["op"] == "d":
            out.append(_row("-D", event["before"]))
    return out


@pytest.fixture
def split(tmp_path: Path) -> Path:
    out = tmp_path / "contracts"
    done = run("infer", CANAL, "--split-by-table", "-o", out)
    assert done.code == 0, done.err
    return out


def test_infer_refuses_two_tables_and_names_the_ways_out() -> None:
    done = run("infer", CANAL)
    assert done.code == 2
    assert "infer one table at a time (--table REGEX)" in done.err
    assert "--split-by-table -o DIR" in done.err


def test_split_by_table_writes_one_contract_per_table(split: Path) -> None:
    assert sorted(p.name for p in split.iterdir()) == ["mydb.orders.yaml", "mydb.product.yaml"]
    product = (split / "mydb.product.yaml").read_text()
    assert "name: product" in product and "database: mydb" in product
    orders = (split / "mydb.orders.yaml").read_text()
    assert "order_number" in orders and "weight" not in orders


def test_split_by_table_refuses_existing_files_without_overwrite(split: Path) -> None:
    before = (split / "mydb.product.yaml").read_text()
    (split / "mydb.product.yaml").write_text(before + "# edited\n")
    done = run("infer", CANAL, "--split-by-table", "-o", split)
    assert done.code == 2
    assert "already exist" in done.err and "--overwrite" in done.err
    assert (split / "mydb.product.yaml").read_text().endswith("# edited\n")
    again = run("infer", CANAL, "--split-by-table", "-o", split, "--overwrite")
    assert again.code == 0, again.err
    assert (split / "mydb.product.yaml").read_text() == before


def test_split_by_table_json_counts_per_table(tmp_path: Path) -> None:
    done = run("infer", CANAL, "--split-by-table", "-o", tmp_path / "c", "--output-format", "json")
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert report["messages"] == 14
    assert report["tables"]["mydb.product"]["messages"] == 10
    assert report["tables"]["mydb.orders"]["messages"] == 4  # the CREATE TABLE DDL and 3 rows
    assert set(report["contracts"]) == {"mydb.orders", "mydb.product"}


@pytest.mark.parametrize(
    ("database", "table"),
    [("mydb", "product"), ("^my.*", "^prod.*"), ("my.*", "prod.*")],
)
def test_filter_keeps_the_rows_flink_keeps(split: Path, database: str, table: str) -> None:
    """Flink's testFilteringTables: database.include/table.include keep the product rows."""
    done = run(
        "normalize", "-c", split / "mydb.product.yaml", CANAL,
        "--database", database, "--table", table,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert flink_changelog(done.out) == FLINK_EXPECTED
    assert "skipped: 4" in done.err  # the orders DDL and its 3 row messages, counted


def test_filter_is_a_full_match(split: Path) -> None:
    """`prod` does not match `product` (Flink's patterns match the whole name)."""
    done = run("normalize", CANAL, "--table", "prod")
    assert done.code == 0, done.err
    assert done.out == b""
    assert "skipped: 14" in done.err


def test_infer_with_a_table_filter_infers_that_table(tmp_path: Path, split: Path) -> None:
    out = tmp_path / "product.yaml"
    done = run("infer", CANAL, "--table", "product", "-o", out)
    assert done.code == 0, done.err
    assert out.read_text() == (split / "mydb.product.yaml").read_text()
    assert "4 messages of other tables skipped" in done.err


def test_normalize_routes_each_table_to_its_contract(split: Path) -> None:
    done = run("normalize", "-c", split, CANAL)
    assert done.code == 0, done.err
    events = [json.loads(line) for line in done.out.splitlines()]
    orders = [e for e in events if e["table"]["name"] == "orders"]
    # 4 inserts, an update, a delete; typed by the orders contract (INTEGER, DATE)
    assert [e["op"] for e in orders] == ["c", "c", "c", "c", "u", "d"]
    assert orders[4]["before"]["quantity"] == 1 and orders[4]["after"]["quantity"] == 3
    assert orders[0]["after"]["order_date"] == "2016-01-16"
    product = [e for e in events if e["table"]["name"] == "product"]
    assert flink_changelog(b"\n".join(orjson_lines(product))) == FLINK_EXPECTED


def orjson_lines(events: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(e).encode() for e in events]


def test_validate_a_directory_routes_and_counts_per_table(split: Path) -> None:
    done = run("validate", split, CANAL, "--output-format", "json")
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert report["valid"] is True
    assert report["messages"] == 14 and report["skipped"] == 0
    assert report["tables"] == {
        "mydb.orders": {"messages": 4, "events": 6, "bad_messages": 0, "skipped": 0},
        "mydb.product": {"messages": 10, "events": 20, "bad_messages": 0, "skipped": 0},
    }


def test_unmatched_table_is_an_error_by_default_and_counted(split: Path) -> None:
    done = run(
        "validate", "-c", split / "mydb.product.yaml", "--unmatched", "error", CANAL,
        "--output-format", "json",
    )  # fmt: skip
    assert done.code == 1
    report = json.loads(done.out)
    assert report["bad_messages"] == 4
    kinds = {p["kind"] for p in report["problems"]}
    assert kinds == {"unmatched-table"}
    assert "no contract names the table mydb.orders" in report["problems"][0]["message"]
    assert report["tables"]["mydb.orders"]["bad_messages"] == 4
    # rows in = rows out + errors + skipped
    tables = report["tables"].values()
    assert report["messages"] == sum(t["messages"] for t in tables) == 14


def test_unmatched_skip_skips_and_counts(split: Path) -> None:
    done = run(
        "validate", "-c", split / "mydb.product.yaml", CANAL, "--unmatched", "skip",
        "--output-format", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert report["skipped"] == 4 and report["bad_messages"] == 0
    assert report["tables"]["mydb.orders"] == {
        "messages": 4,
        "events": 0,
        "bad_messages": 0,
        "skipped": 4,
    }
    assert "4 messages skipped" in done.err


def test_normalize_unmatched_error_drops_nothing_silently(split: Path) -> None:
    done = run("normalize", "-c", split / "mydb.product.yaml", "--unmatched", "error", CANAL)
    assert done.code == 1
    assert len(done.out.splitlines()) == 20  # the product events
    assert done.err.count("no contract names the table mydb.orders") == 4
    assert "bad messages: 4" in done.err


def test_two_contracts_of_one_table_are_refused(split: Path, tmp_path: Path) -> None:
    copy = tmp_path / "again.yaml"
    copy.write_text((split / "mydb.product.yaml").read_text())
    done = run("validate", "-c", split, "-c", copy, CANAL)
    assert done.code == 2
    assert "one contract per table" in done.err


def test_a_bad_regex_is_a_located_error() -> None:
    done = run("normalize", CANAL, "--table", "prod(")
    assert done.code == 2
    assert "--table prod(" in done.err and "not a regular expression" in done.err


# --- Debezium: one table of two databases in one topic (Paimon's merge-shards sample) -------


def test_debezium_split_by_table_and_routing(tmp_path: Path) -> None:
    out = tmp_path / "c"
    done = run("infer", SHARDS, "--split-by-table", "-o", out)
    assert done.code == 0, done.err
    assert sorted(p.name for p in out.iterdir()) == [
        "paimon_sync_database_merge_shard_1.t1.yaml",
        "paimon_sync_database_merge_shard_2.t1.yaml",
    ]
    checked = run("validate", out, SHARDS, "--output-format", "json")
    assert checked.code == 0, checked.err
    report = json.loads(checked.out)
    assert report["tables"] == {
        "paimon_sync_database_merge_shard_1.t1": {
            "messages": 1,
            "events": 1,
            "bad_messages": 0,
            "skipped": 0,
        },
        "paimon_sync_database_merge_shard_2.t1": {
            "messages": 1,
            "events": 1,
            "bad_messages": 0,
            "skipped": 0,
        },
    }
    events = run("normalize", "-c", out, SHARDS, "--database", ".*_shard_2")
    assert events.code == 0, events.err
    (only,) = [json.loads(line) for line in events.out.splitlines()]
    # Paimon's sample: shard 2 holds row 102 "car battery", weight 8.1
    assert only["after"] == {
        "id": 102,
        "name": "car battery",
        "description": "12V car battery",
        "weight": 8.1,
    }
    assert only["table"]["database"] == "paimon_sync_database_merge_shard_2"
