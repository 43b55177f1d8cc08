"""Multi-table topics in Spark (#25): ``decode_changes`` / ``decode_changes_by_table`` route each
message to its table's contract as the core's ``normalize -c DIR`` does, on the two published
multi-table fixtures the CLI tests use (Flink's canal-data-filter-table.txt, Paimon's merge-shards
Debezium sample; provenance in the fixtures' PROVENANCE.md): the same events per table, the same
unmatched counts and error texts, and nothing dropped (rows in = rows out + skipped rows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clirun import run

from contracts.errors import ContractFileError, SchemaError
from spark_bindings import decode_changes
from spark_bindings.routing import decode_changes_by_table, load_contracts
from spark_bindings.storage import feed_counts

from .parity import FIXTURES

pytestmark = pytest.mark.spark

CANAL = FIXTURES / "canal-json" / "flink-filter-table.jsonl"
SHARDS = FIXTURES / "debezium-json" / "paimon-mergeshards.jsonl"


def cli(*args: str | Path) -> tuple[int, bytes, str]:
    """``cdc-contracts ARGS`` (tests/clirun.py): exit status, stdout, stderr."""
    done = run(*args)
    return done.code, done.out, done.err


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The contracts ``infer --split-by-table`` writes for each fixture."""
    root = tmp_path_factory.mktemp("contracts")
    out = {}
    for name, source in (("canal", CANAL), ("shards", SHARDS)):
        code, _, err = cli("infer", source, "--split-by-table", "-o", root / name)
        assert code == 0, err
        out[name] = root / name
    return out


def frame(spark: Any, path: Path) -> Any:
    lines = path.read_text().splitlines()
    return spark.createDataFrame([(None, line) for line in lines], "key string, value string")


def python_events(*args: str | Path) -> tuple[int, list[dict[str, Any]], str]:
    code, out, err = cli("normalize", *args)
    return code, [json.loads(line) for line in out.splitlines()], err


def spark_events(feed: Any) -> list[dict[str, Any]]:
    """A feed's change rows as JSON objects of op, table, before, after (nulls written)."""
    from pyspark.sql import functions as F

    row = F.struct("op", "table", "before", "after")
    texts = feed.where("op is not null").select(F.to_json(row, {"ignoreNullFields": "false"}))
    return [json.loads(r[0]) for r in texts.collect()]


def comparable(events: list[dict[str, Any]]) -> list[str]:
    """Events as sorted texts (the table with all three parts, images without nulls; Spark
    orders rows freely)."""
    out = []
    for e in events:
        t = e["table"]
        table = {p: t.get(p) for p in ("database", "schema", "name")}
        images = {part: _set(e[part]) for part in ("before", "after")}
        event = {"op": e["op"], "table": table, **images}
        out.append(json.dumps(event, sort_keys=True))
    return sorted(out)


def _set(image: dict[str, Any] | None) -> dict[str, Any] | None:
    """An image's columns that hold a value: one feed of several contracts has every
    contract's columns, null where the row's table has none."""
    return None if image is None else {k: v for k, v in image.items() if v is not None}


def by_table(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        t = e["table"]
        key = ".".join(p for p in (t.get("database"), t.get("schema"), t.get("name")) if p)
        out.setdefault(key, []).append(e)
    return out


@pytest.mark.parametrize("fixture", ["canal", "shards"])
def test_same_events_per_table_as_python(spark: Any, split: dict[str, Path], fixture: str) -> None:
    source = CANAL if fixture == "canal" else SHARDS
    code, events, err = python_events("-c", split[fixture], source)
    assert code == 0, err
    feeds = decode_changes_by_table(frame(spark, source), [split[fixture]])
    expected = by_table(events)
    assert set(feeds.tables) == set(expected)
    for key, feed in feeds.tables.items():
        assert comparable(spark_events(feed)) == comparable(expected[key]), key
        assert feed.where("_error is not null").count() == 0
    assert feeds.rest.count() == 0


def test_canal_counts_match_the_core(spark: Any, split: dict[str, Path]) -> None:
    """validate's per-table events (orders 6, product 20) and the orders DDL."""
    code, out, err = cli("validate", split["canal"], CANAL, "--output-format", "json")
    assert code == 0, err
    tables = json.loads(out)["tables"]
    feeds = decode_changes_by_table(frame(spark, CANAL), [split["canal"]])
    for key, feed in feeds.tables.items():
        counts = feed_counts(feed)
        changes = sum(n for k, n in counts.items() if k in ("c", "u", "d", "r", "t"))
        assert changes == tables[key]["events"], key
    assert feed_counts(feeds.tables["mydb.orders"])["control:ddl"] == 1


def test_unmatched_table_is_the_cores_error_one_row_per_message(
    spark: Any, split: dict[str, Path]
) -> None:
    product = split["canal"] / "mydb.product.yaml"
    code, out, _ = cli(
        "validate", "-c", product, "--unmatched", "error", CANAL, "--output-format", "json"
    )
    assert code == 1
    report = json.loads(out)
    texts = {f"{p['path']}: {p['message']}" for p in report["problems"]}
    feeds = decode_changes_by_table(frame(spark, CANAL), [product], unmatched="error")
    errors = [r["_error"] for r in feeds.rest.select("_error").collect()]
    assert len(errors) == report["tables"]["mydb.orders"]["bad_messages"] == 4
    assert set(errors) == texts
    assert texts == {"$: no contract names the table mydb.orders (contracts for: mydb.product)"}
    # rows in = rows out: the product feed is whole, the orders messages are one error row each
    assert sum(feed_counts(feeds.tables["mydb.product"]).values()) == 20


def test_unmatched_skip_keeps_the_rows_as_skipped(spark: Any, split: dict[str, Path]) -> None:
    product = split["canal"] / "mydb.product.yaml"
    code, out, _ = cli(
        "validate", "-c", product, "--unmatched", "skip", CANAL, "--output-format", "json"
    )
    assert code == 0
    skipped = json.loads(out)["skipped"]
    feeds = decode_changes_by_table(frame(spark, CANAL), [product], unmatched="skip")
    assert feed_counts(feeds.rest) == {"control:skipped": skipped} == {"control:skipped": 4}
    dropped = decode_changes_by_table(
        frame(spark, CANAL), [product], unmatched="skip", drop_control_records=True
    )
    assert dropped.rest.count() == 0  # only when asked for


@pytest.mark.parametrize(
    ("database", "table"), [("mydb", "product"), ("^my.*", "^prod.*"), ("my.*", "prod.*")]
)
def test_filters_keep_what_flink_keeps(
    spark: Any, split: dict[str, Path], database: str, table: str
) -> None:
    code, events, err = python_events(
        "-c", split["canal"], CANAL, "--database", database, "--table", table
    )
    assert code == 0, err
    feed = decode_changes(
        frame(spark, CANAL), split["canal"], database_include=database, table_include=table
    )
    assert comparable(spark_events(feed)) == comparable(events)
    assert feed_counts(feed) == {"c": 11, "u": 6, "d": 3, "control:skipped": 4}


def test_filter_is_a_full_match(spark: Any, split: dict[str, Path]) -> None:
    feed = decode_changes(frame(spark, CANAL), split["canal"], table_include="prod")
    assert feed_counts(feed) == {"control:skipped": 14}


def test_shards_filter_by_database(spark: Any, split: dict[str, Path]) -> None:
    code, events, err = python_events("-c", split["shards"], SHARDS, "--database", ".*_shard_2")
    assert code == 0, err
    feed = decode_changes(frame(spark, SHARDS), split["shards"], database_include=".*_shard_2")
    (only,) = spark_events(feed)
    assert comparable([only]) == comparable(events)
    assert only["after"]["name"] == "car battery"


def test_one_feed_holds_every_contracts_columns(spark: Any, split: dict[str, Path]) -> None:
    feed = decode_changes(frame(spark, CANAL), load_contracts(split["canal"]))
    after = feed.schema["after"].dataType.fieldNames()
    assert {"order_number", "quantity", "id", "weight"} <= set(after)
    assert feed_counts(feed) == {"c": 15, "u": 7, "d": 4, "control:ddl": 1}
    orders = feed.where("table.name = 'orders' and op = 'c'").select("after.*").first()
    assert orders is not None and orders["weight"] is None and orders["order_number"] == 10001


def test_contracts_of_two_formats_or_one_table_twice_are_refused(
    spark: Any, split: dict[str, Path], tmp_path: Path
) -> None:
    df = frame(spark, CANAL)
    with pytest.raises(ContractFileError, match="read one format"):
        decode_changes(df, [split["canal"], split["shards"]])
    copy = tmp_path / "again.yaml"
    copy.write_text((split["canal"] / "mydb.product.yaml").read_text())
    with pytest.raises(ContractFileError, match="one contract per table"):
        decode_changes(df, [split["canal"], copy])


def test_one_feed_refuses_a_column_typed_two_ways(
    spark: Any, split: dict[str, Path], tmp_path: Path
) -> None:
    text = (split["canal"] / "mydb.orders.yaml").read_text()
    other = tmp_path / "other.yaml"
    other.write_text(text.replace("name: orders", "name: orders2").replace("int32", "string"))
    with pytest.raises(SchemaError, match="decode_changes_by_table"):
        decode_changes(frame(spark, CANAL), [split["canal"] / "mydb.orders.yaml", other])


def test_spark_decode_cli_writes_one_directory_per_table(
    split: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "feed"
    code, stdout, err = cli(
        "spark", "decode", "-c", split["canal"], "-i", CANAL, "-o", out,
        "--master", "local[2]", "--output-format", "json",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(stdout)
    assert sorted(p.name for p in out.iterdir()) == ["_rest", "mydb.orders", "mydb.product"]
    assert summary["tables"]["mydb.product"]["counts"] == {"c": 11, "u": 6, "d": 3}
    assert summary["tables"]["mydb.orders"]["counts"] == {"c": 4, "u": 1, "d": 1, "control:ddl": 1}
    assert summary["rows"] == 27 and summary["errors"] == 0 and summary["skipped"] == 0


def test_filters_are_the_cores_python_regular_expressions(
    spark: Any, split: dict[str, Path]
) -> None:
    """A named group in Python's spelling (Java's regex has no ``(?P<..>)``): the routing rule
    is the core's, so Spark keeps what ``normalize --table`` keeps."""
    pattern = r"(?P<t>prod)uct"
    code, events, err = python_events("-c", split["canal"], CANAL, "--table", pattern)
    assert code == 0, err
    feed = decode_changes(frame(spark, CANAL), split["canal"], table_include=pattern)
    assert comparable(spark_events(feed)) == comparable(events)
    assert len(events) == 20


def test_one_contract_with_a_filter_is_a_single_contract_run(
    spark: Any, split: dict[str, Path]
) -> None:
    """As ``normalize -c ONE.yaml --database mydb``: every kept message is decoded with the
    one contract (no unmatched check); with ``unmatched`` it is routed."""
    product = split["canal"] / "mydb.product.yaml"
    _, events, _ = python_events("-c", product, CANAL, "--database", "mydb")
    feed = decode_changes(frame(spark, CANAL), product, database_include="mydb")
    assert comparable(spark_events(feed)) == comparable(events)
    routed = decode_changes(frame(spark, CANAL), product, database_include="mydb", unmatched="skip")
    assert feed_counts(routed) == {"c": 11, "u": 6, "d": 3, "control:skipped": 4}


def test_spark_decode_cli_unmatched_skip_text(split: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "feed"
    product = split["canal"] / "mydb.product.yaml"
    code, stdout, err = cli(
        "spark", "decode", "-c", product, "-i", CANAL, "-o", out,
        "--master", "local[2]", "--unmatched", "skip",
    )  # fmt: skip
    assert code == 0, err
    text = stdout.decode()
    assert sorted(p.name for p in out.iterdir()) == ["_rest", "mydb.product"]
    assert "errors: 0, skipped: 4" in text
    assert text.splitlines()[0] == f"24 rows → {out}"
