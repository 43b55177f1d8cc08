"""Kafka-shaped DataFrames from files: binary ``key``/``value`` plus topic, partition, offset,
timestamp — the columns ``spark.read.format("kafka")`` gives, so jobs and tests look alike.

- ``values``: JSON lines, one message value per line (read by Spark, scales to any size);
- ``kcat``: ``kcat -C -J`` records ``{topic, partition, offset, ts, key, payload}`` (read by Spark);
- ``json``: arrays or concatenated pretty-printed documents, as in vendor docs (read on the
  driver with the core's reader, for samples);
- ``csv``: one CSV line per message (Arcion S3 CSV);
- ``avro``: DTS Avro records (a container file, or records written one after another);
- ``parquet``: Kafka-shaped Parquet (``key``/``value`` columns and any others, as a job writes
  ``spark.read.format("kafka")`` out), binary-safe, so the way to bring Confluent-framed Avro
  messages to the decoder from files.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from contracts.errors import InputError
from contracts.formats.base import Message

InputFormat = Literal["auto", "kcat", "values", "json", "csv", "avro", "parquet"]

PARQUET_MAGIC: Final = b"PAR1"

#: The columns of Spark's Kafka source that these readers reproduce.
KAFKA_SCHEMA: Final = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
    ]
)

_KCAT_SCHEMA: Final = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("ts", LongType()),
        StructField("key", StringType()),
        StructField("payload", StringType()),
    ]
)


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return orjson.dumps(value)


def kafka_rows(messages: Iterable[Message], topic: str | None = None) -> list[tuple[Any, ...]]:
    """Rows of :data:`KAFKA_SCHEMA` for core messages (values re-serialized as compact JSON)."""
    rows = []
    for i, m in enumerate(messages):
        ts = m.meta.get("ts")
        rows.append(
            (
                _bytes(m.key),
                _bytes(m.value),
                m.meta.get("topic", topic),
                m.meta.get("partition", 0),
                m.meta.get("offset", i),
                dt.datetime.fromtimestamp(ts / 1000, dt.UTC) if isinstance(ts, int) else None,
            )
        )
    return rows


def frame_from_messages(
    spark: SparkSession, messages: Iterable[Message], topic: str | None = None
) -> DataFrame:
    """A Kafka-shaped DataFrame from core :class:`Message` values (driver side, for samples)."""
    return spark.createDataFrame(kafka_rows(messages, topic), KAFKA_SCHEMA)


def frame_from_values(
    spark: SparkSession, values: Sequence[bytes | str | None], topic: str | None = None
) -> DataFrame:
    """A Kafka-shaped DataFrame whose values are the given raw messages (keys null)."""
    rows = [(None, _bytes(v), topic, 0, i, None) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, KAFKA_SCHEMA)


# --- files -------------------------------------------------------------------------------------


def read_values(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """One message per non-blank line (JSON lines or CSV lines), read by Spark."""
    lines = spark.read.text(list(paths)).where(F.length(F.trim("value")) > 0)
    return lines.select(
        F.lit(None).cast("binary").alias("key"),
        F.col("value").cast("binary").alias("value"),
        F.lit(None).cast("string").alias("topic"),
        F.lit(0).alias("partition"),
        F.monotonically_increasing_id().alias("offset"),
        F.lit(None).cast("timestamp").alias("timestamp"),
    )


def read_kcat(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """``kcat -C -J`` records, read by Spark."""
    records = spark.read.schema(_KCAT_SCHEMA).json(list(paths))
    return records.select(
        F.col("key").cast("binary").alias("key"),
        F.col("payload").cast("binary").alias("value"),
        "topic",
        "partition",
        "offset",
        F.timestamp_millis("ts").alias("timestamp"),
    )


def read_json_documents(
    spark: SparkSession, paths: Sequence[str], fmt: str | None = None
) -> DataFrame:
    """Arrays or concatenated JSON documents (pretty-printed samples), read on the driver.

    With ``fmt``, documents are assembled by that format first: e.g. Arcion's separate key and
    value documents become one Kafka message with both.
    """
    from contracts.formats import get_format
    from contracts.io import read_messages

    documents = read_messages(paths, "json")
    messages = get_format(fmt).assemble(documents) if fmt else documents
    return frame_from_messages(spark, messages)


def read_avro_messages(spark: SparkSession, paths: Sequence[str], fmt: str) -> DataFrame:
    """Avro-binary messages as Kafka values, one per record (split on the driver).

    DTS files hold concatenated records (or a container file); each record's own bytes become
    one message value, as DTS writes them to Kafka.
    """
    from contracts.errors import UnknownFormatError
    from spark_bindings.avro import AVRO_FORMATS, dts_values

    if fmt not in AVRO_FORMATS:
        raise UnknownFormatError(
            f"no Avro file reader for format {fmt!r}: Confluent-framed messages are read from "
            "Kafka-shaped Parquet (--input-format parquet: key/value columns), with a registry"
        )
    values: list[bytes | str | None] = []
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", path) from None
        values.extend(dts_values(data, path))
    return frame_from_values(spark, values)


def read_parquet(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Kafka-shaped Parquet files or directories: a binary (or string) ``value`` column and
    optionally ``key``; every other column is passed through to the feed."""
    for path in paths:
        _check_parquet(Path(path))
    try:
        df = spark.read.parquet(*paths)
    except Exception as err:  # Spark's errors for unreadable footers come in several classes
        raise InputError(f"is not readable as Parquet: {_first_line(err)}", paths[0]) from None
    types = dict(df.dtypes)
    for name in ("value", "key"):
        if types.get(name, "binary") not in ("binary", "string"):
            raise InputError(
                f"column {name!r} is {types[name]}, expected binary or string (Kafka-shaped "
                "Parquet: key, value, topic, partition, offset, timestamp)",
                paths[0],
            )
    if "value" not in types:
        raise InputError(
            f"no 'value' column (found: {', '.join(df.columns)}); expected Kafka-shaped "
            "Parquet: key, value, topic, partition, offset, timestamp",
            paths[0],
        )
    if "key" not in types:
        df = df.select(F.lit(None).cast("binary").alias("key"), "*")
    return df


def _check_parquet(path: Path) -> None:
    """Fail on a path that is not Parquet before Spark runs a job on it (whose failure would
    also be logged with the JVM's stack traces)."""
    if not path.exists():
        raise InputError("no such file", str(path))
    files = [path] if path.is_file() else _parquet_files(path)
    if not files:
        raise InputError("is a directory without Parquet files", str(path))
    for file in files:
        with file.open("rb") as handle:
            if handle.read(4) != PARQUET_MAGIC:
                raise InputError("is not a Parquet file (it does not start with PAR1)", str(file))


def _parquet_files(directory: Path) -> list[Path]:
    """The data files Spark would read in a directory (names starting with _ or . are not)."""
    return [
        p
        for p in directory.rglob("*")
        if p.is_file() and not any(part[:1] in "_." for part in p.relative_to(directory).parts)
    ]


def _first_line(err: Exception) -> str:
    """The first line of a (JVM) error's message, without the stack trace after it."""
    java = getattr(err, "java_exception", None)
    text = str(java.getMessage() if java is not None else err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__


def sniff(path: str) -> InputFormat:
    """``kcat``, ``values``, ``json``, ``csv``, ``avro`` or ``parquet`` from a file's first
    bytes (a directory: ``parquet``, when it holds Parquet files)."""
    p = Path(path)
    if p.is_dir():
        if any(f.suffix == ".parquet" for f in _parquet_files(p)):
            return "parquet"
        raise InputError("is a directory without Parquet files", str(p))
    try:
        with p.open("rb") as handle:
            head = handle.read(4096)
    except FileNotFoundError:
        raise InputError("no such file", str(p)) from None
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if head.startswith(b"Obj\x01") or head[:1] == b"\x00" or p.suffix in (".avro", ".bin"):
        return "avro"
    stripped = head.lstrip()
    if stripped[:1] == b"[":
        return "json"
    if stripped[:1] != b"{":
        return "csv"
    first = stripped.split(b"\n", 1)[0]
    try:
        doc = orjson.loads(first)
    except orjson.JSONDecodeError:
        return "json"
    if isinstance(doc, dict) and {"topic", "partition", "offset", "payload"} <= doc.keys():
        return "kcat"
    return "values"


def read_input(
    spark: SparkSession, paths: Sequence[str], input_format: InputFormat, fmt: str
) -> DataFrame:
    """A Kafka-shaped DataFrame from files; ``auto`` sniffs the first file."""
    if not paths:
        raise InputError("no input files")
    kind = sniff(paths[0]) if input_format == "auto" else input_format
    if kind == "avro":
        return read_avro_messages(spark, paths, fmt)
    if kind == "json":
        return read_json_documents(spark, paths, fmt)
    readers = {
        "kcat": read_kcat,
        "values": read_values,
        "csv": read_values,
        "parquet": read_parquet,
    }
    return readers[kind](spark, paths)
