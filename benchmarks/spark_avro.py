"""Spark decode of Confluent-framed Debezium Avro: ``decode_changes`` vs a Python UDF.

The issue sets no target for Avro topics; this measures what users of that path get. The
generated Debezium MySQL changes of benchmarks/datagen.py (the ``shop.orders`` table: 12
columns incl. a Decimal(12,2) and a MicroTimestamp) are serialized with Confluent's own
``AvroSerializer`` against the embedded Schema Registry (``python -m api.registry``, a real
process over HTTP), in two schema versions mixed in one topic: every fifth message is written
with an older value schema that lacks the ``note`` column. The Kafka-shaped rows (binary key and
value, topic, partition, offset, timestamp) are cached in memory, then decoded two ways into the
same columns (``op``, ``table``, ``key``, ``before``, ``after``, ``ts_ms``, ``source_ts_ms``,
``position``) and written to Spark's ``noop`` sink:

- ``decode_changes`` — the bindings with ``encoding="avro"``: without the spark-avro jar (not
  installable here), fastavro inside ``mapInArrow`` over Arrow batches, one reader per writer
  schema id, with ``_error`` and the contract's checks;
- ``udf`` — what teams write by hand: a Python UDF (PySpark's default) that strips the
  five-byte frame, fetches the writer schema by id once per worker and reads the record with
  fastavro, then converts the logical types; no error reporting.

The rows of both are compared on the first 3,000 messages before timing. Each DataFrame is
executed ``--warmup`` times, then ``--repeat`` times taking turns; the best wall-clock time
counts (both variants run Python workers, so JVM CPU time would not compare). Run::

    .venv/bin/python -m benchmarks.spark_avro --n 200000
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import decimal
import io
import json
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks import datagen
from benchmarks.spark_decode import (
    MYSQL_POSITION,
    benchmark_session,
    best_passes,
    check_agreement,
    infer_contract,
    udf_output_type,
)
from contracts.contract import Contract
from contracts.logical import decimal_scale, lookup
from contracts.render import contract_avro
from spark_bindings import decode_changes, spark_schema
from spark_bindings.inputs import KAFKA_SCHEMA
from spark_bindings.session import HUGE_METHOD_CONF

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "api"))

from api_server import start_registry, stop_server  # noqa: E402

TOPIC = "dbserver1.shop.orders"
#: Every OLD_EVERY-th message is written with the value schema that lacks ``note``.
OLD_EVERY = 5


# --- the topic ---------------------------------------------------------------------------------


def changed(c: Contract, **update: Any) -> Contract:
    """A validated copy of ``c`` with some top-level fields replaced."""
    return Contract.model_validate({**c.model_dump(by_alias=True), **update})


def without_note(c: Contract) -> Contract:
    """The contract's earlier version: the same table before ``note`` was added."""
    return changed(c, columns=[col for col in c.columns if col["field"] != "note"])


def avro_datum(payload: dict[str, Any], c: Contract, drop: frozenset[str]) -> dict[str, Any]:
    """A Debezium JSON payload as the Avro serializer takes it: Decimals from their base64
    bytes, ``drop``ped columns left out of both images."""
    scales = {
        f.field: decimal_scale(f)
        for f in c.row_schema.fields or ()
        if (logical := lookup(f)) is not None and logical.kind == "decimal"
    }

    def image(values: dict[str, Any] | None) -> dict[str, Any] | None:
        if values is None:
            return None
        out = {k: v for k, v in values.items() if k not in drop}
        for name, scale in scales.items():
            if out.get(name) is not None:
                unscaled = int.from_bytes(base64.b64decode(out[name]), "big", signed=True)
                out[name] = decimal.Decimal(unscaled).scaleb(-scale)
        return out

    return {**payload, "before": image(payload["before"]), "after": image(payload["after"])}


def serialized_topic(url: str, n: int) -> tuple[Contract, list[tuple[bytes, bytes]]]:
    """``n`` (key, value) pairs of ``TOPIC`` in Confluent's wire format, and the contract
    (the newer version) jobs decode them with."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    messages = list(datagen.debezium_messages(n))
    # the messages carry no Kafka key to infer it from: the table's primary key
    c = changed(infer_contract("debezium-json", messages[:2000]), key=["id"])
    old = without_note(c)
    client = SchemaRegistryClient({"url": url})
    value_ctx = SerializationContext(TOPIC, MessageField.VALUE)
    key_ctx = SerializationContext(TOPIC, MessageField.KEY)
    old_value = AvroSerializer(client, json.dumps(contract_avro(old, "value")))
    new_value = AvroSerializer(client, json.dumps(contract_avro(c, "value")))
    key = AvroSerializer(client, json.dumps(contract_avro(c, "key")))
    pairs = []
    for i, message in enumerate(messages):
        payload = json.loads(message)["payload"]
        older = i % OLD_EVERY == 0
        datum = avro_datum(payload, c, frozenset({"note"}) if older else frozenset())
        image = payload["after"] or payload["before"]
        pairs.append(
            (
                key({k: image[k] for k in c.key}, key_ctx),
                (old_value if older else new_value)(datum, value_ctx),
            )
        )
    return c, pairs


def kafka_frame(spark: SparkSession, pairs: list[tuple[bytes, bytes]]) -> DataFrame:
    epoch = dt.datetime(2026, 11, 23, tzinfo=dt.UTC)
    rows = [(k, v, TOPIC, 0, i, epoch) for i, (k, v) in enumerate(pairs)]
    return spark.createDataFrame(rows, KAFKA_SCHEMA)


# --- the two decoders --------------------------------------------------------------------------


def bindings(url: str) -> Callable[[DataFrame, Contract], DataFrame]:
    def run(df: DataFrame, c: Contract) -> DataFrame:
        return decode_changes(df, c, registry=url, encoding="avro", use_spark_avro=False)

    return run


def _leaf(schema: Any) -> Callable[[Any], Any]:
    """fastavro gives Decimals already; Debezium's time types are plain longs and ints."""
    logical = lookup(schema)
    kind = logical.kind if logical else None
    if kind == "timestamp":
        return lambda v: (
            None if v is None else dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=v)
        )
    if kind == "date":
        return lambda v: None if v is None else dt.date(1970, 1, 1) + dt.timedelta(days=v)
    return lambda v: v


def python_udf(url: str) -> Callable[[DataFrame, Contract], DataFrame]:
    """The hand-written UDF: frame stripped, writer schema fetched by id, fastavro, logical
    types converted in Python."""

    def run(df: DataFrame, c: Contract) -> DataFrame:
        row = spark_schema(c, "row", "decoded")
        names = row.fieldNames()
        leaves = [_leaf(f) for f in c.row_schema.fields or ()]
        out = udf_output_type(row, c)
        keys = list(c.key)
        writers: dict[int, Any] = {}

        def writer(schema_id: int) -> Any:
            if schema_id not in writers:
                import fastavro
                from confluent_kafka.schema_registry import SchemaRegistryClient

                text = SchemaRegistryClient({"url": url}).get_schema(schema_id).schema_str
                writers[schema_id] = fastavro.parse_schema(json.loads(text))
            return writers[schema_id]

        def image(values: dict[str, Any] | None) -> Any:
            if values is None:
                return None
            return tuple(fn(values.get(n)) for n, fn in zip(names, leaves, strict=True))

        def decode(value: bytes) -> Any:
            import fastavro

            p = fastavro.schemaless_reader(
                io.BytesIO(value[5:]), writer(int.from_bytes(value[1:5], "big")), None
            )
            before, after = image(p["before"]), image(p["after"])
            source = p["source"]
            either = p["after"] or p["before"]
            return (
                p["op"],
                (source.get("db"), None, source.get("table")),
                tuple(either[k] for k in keys) if either else None,
                before,
                after,
                p.get("ts_ms"),
                source.get("ts_ms"),
                {k: str(source[k]) for k in MYSQL_POSITION if source.get(k) is not None},
            )

        return df.select(F.udf(decode, out)("value").alias("r")).select("r.*")

    return run


# --- the run -----------------------------------------------------------------------------------


def measure(spark: SparkSession, url: str, n: int, warmup: int, repeat: int) -> dict[str, Any]:
    c, pairs = serialized_topic(url, n)
    variants = {"decode_changes": bindings(url), "udf": python_udf(url)}
    check_agreement(kafka_frame(spark, pairs[:3000]), c, variants)
    df = kafka_frame(spark, pairs).repartition(2).cache()
    df.count()
    built = {name: variant(df, c) for name, variant in variants.items()}
    best, _ = best_passes(built, warmup, repeat)
    df.unpersist()
    return {
        "messages": n,
        "mb": sum(len(v) for _, v in pairs) / 1e6,
        **{name: n / seconds for name, seconds in best.items()},
    }


def registry_url() -> Iterator[str]:
    """The embedded registry over a scratch SQLite file, for the length of the run."""
    with tempfile.TemporaryDirectory(prefix="spark-avro-bench-") as tmp:
        server = start_registry(Path(tmp), Path(tmp) / "registry.db")
        try:
            yield server.url
        finally:
            stop_server(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    # the UDF's Python type hints are not meant for PySpark's eval-type inference
    warnings.filterwarnings("ignore", "Cannot infer the eval type")
    spark = benchmark_session()
    spark.conf.set(HUGE_METHOD_CONF, "8000")
    for url in registry_url():
        r = measure(spark, url, args.n, args.warmup, args.repeat)
        print("| messages | MB | decode_changes msg/s | UDF msg/s | vs UDF |")
        print("|---|---|---|---|---|")
        print(
            f"| {r['messages']} | {r['mb']:.0f} | {r['decode_changes']:,.0f} | {r['udf']:,.0f} "
            f"| {r['decode_changes'] / r['udf']:.2f}x |",
            flush=True,
        )
    spark.stop()


if __name__ == "__main__":
    main()
