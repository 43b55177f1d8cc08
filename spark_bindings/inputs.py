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

Every reader but ``parquet`` adds ``location``: where each message is in its file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from pyspark.sql import Column, DataFrame, SparkSession, Window
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
from contracts.jsonnumbers import as_written

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

#: The column file readers add to the Kafka columns: where a message is in its file, as the
#: Python commands say it (``file:line``, ``file[i]``, ``file@offset``).
LOCATION_COL: Final = "location"
LOCATED_SCHEMA: Final = StructType([*KAFKA_SCHEMA.fields, StructField(LOCATION_COL, StringType())])

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
    return orjson.dumps(value, default=as_written)


def kafka_rows(
    messages: Iterable[Message], topic: str | None = None, *, located: bool = False
) -> list[tuple[Any, ...]]:
    """Rows of :data:`KAFKA_SCHEMA` for core messages (values re-serialized as compact JSON);
    ``located`` adds each message's ``where`` (:data:`LOCATED_SCHEMA`)."""
    rows = []
    for i, m in enumerate(messages):
        ts = m.meta.get("ts")
        row = (
            _bytes(m.key),
            _bytes(m.value),
            m.meta.get("topic", topic),
            m.meta.get("partition", 0),
            m.meta.get("offset", i),
            dt.datetime.fromtimestamp(ts / 1000, dt.UTC) if isinstance(ts, int) else None,
        )
        rows.append((*row, m.where) if located else row)
    return rows


def frame_from_messages(
    spark: SparkSession,
    messages: Iterable[Message],
    topic: str | None = None,
    *,
    located: bool = False,
) -> DataFrame:
    """A Kafka-shaped DataFrame from core :class:`Message` values (driver side, for samples);
    ``located`` adds the messages' ``location``."""
    schema = LOCATED_SCHEMA if located else KAFKA_SCHEMA
    return spark.createDataFrame(kafka_rows(messages, topic, located=located), schema)


def frame_from_values(
    spark: SparkSession,
    values: Sequence[bytes | str | None],
    topic: str | None = None,
    locations: Sequence[str] | None = None,
) -> DataFrame:
    """A Kafka-shaped DataFrame whose values are the given raw messages (keys null), with
    their ``location`` when ``locations`` are given."""
    rows = [(None, _bytes(v), topic, 0, i, None) for i, v in enumerate(values)]
    if locations is None:
        return spark.createDataFrame(rows, KAFKA_SCHEMA)
    located = [(*r, at) for r, at in zip(rows, locations, strict=True)]
    return spark.createDataFrame(located, LOCATED_SCHEMA)


# --- files -------------------------------------------------------------------------------------


def read_values(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """One message per non-blank line (JSON lines or CSV lines), read by Spark, with its
    ``location`` (``file:line``, as the Python commands say it)."""
    lines = numbered_lines(spark, paths).where(F.length(F.trim("value")) > 0)
    return lines.select(
        F.lit(None).cast("binary").alias("key"),
        F.col("value").cast("binary").alias("value"),
        F.lit(None).cast("string").alias("topic"),
        F.lit(0).alias("partition"),
        F.col("_id").alias("offset"),
        F.lit(None).cast("timestamp").alias("timestamp"),
        LOCATION_COL,
    )


def numbered_lines(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Every line of the files (``value``) with its ``location`` (``file:line``, the path as
    given, the line counted from 1) and a unique increasing id (``_id``).

    Spark reads a large file as several splits (and packs small files into one task), so the
    number is the line's index in its split plus the lines of the file's earlier splits: one
    extra pass counts each split's lines (a table of a row per split, broadcast back)."""
    lines = spark.read.text(list(paths)).select(
        "value",
        F.col("_metadata.file_path").alias("_file"),
        F.col("_metadata.file_block_start").alias("_block"),
        F.monotonically_increasing_id().alias("_id"),
    )
    earlier = (
        Window.partitionBy("_file").orderBy("_block").rowsBetween(Window.unboundedPreceding, -1)
    )
    splits = (
        lines.groupBy("_file", "_block")
        .agg(F.count(F.lit(1)).alias("_n"), F.min("_id").alias("_first"))
        .select(
            "_file",
            "_block",
            "_first",
            F.coalesce(F.sum("_n").over(earlier), F.lit(0)).alias("_before"),
        )
    )
    numbered = lines.join(F.broadcast(splits), ["_file", "_block"])
    line = F.col("_before") + F.col("_id") - F.col("_first") + F.lit(1)
    location = F.concat_ws(":", _as_given(paths), line.cast("string"))
    return numbered.select("value", location.alias(LOCATION_COL), "_id")


def _as_given(paths: Sequence[str]) -> Column:
    """A file's path as the user gave it (Spark names files by URI)."""
    given = {Path(p).resolve().as_uri(): p for p in paths if Path(p).is_file()}
    as_uri = F.regexp_replace("_file", "^file:/(?!/)", "file:///")  # file:/x → file:///x
    found = F.create_map(*[F.lit(x) for pair in given.items() for x in pair])[as_uri]
    plain = F.try_url_decode(F.regexp_replace("_file", "^file:(//)?", ""))
    return F.coalesce(found, plain) if given else plain


def read_kcat(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """``kcat -C -J`` records, read by Spark.

    Each file's first record must be a kcat record (else: the wrong ``--input-format``). A
    later line that is not one (truncated, or without ``topic``/``payload``) becomes a message
    whose value is the line itself, so the decode reports it in ``_error`` instead of taking it
    for a tombstone."""
    for path in paths:
        _check_kcat_head(path)
    lines = numbered_lines(spark, paths).where(F.trim("value") != F.lit(""))
    with_corrupt = StructType([*_KCAT_SCHEMA.fields, StructField("_corrupt", StringType())])
    record = F.from_json("value", with_corrupt, _KCAT_OPTIONS)
    keys = F.json_object_keys("value")
    is_record = F.coalesce(
        record["_corrupt"].isNull()
        & F.array_contains(keys, "payload")
        & F.array_contains(keys, "topic"),
        F.lit(False),
    )
    parsed = lines.select(
        F.col("value").alias("line"), record.alias("r"), is_record.alias("ok"), LOCATION_COL
    )
    r, ok = F.col("r"), F.col("ok")
    return parsed.select(
        F.when(ok, r["key"]).cast("binary").alias("key"),
        F.when(ok, r["payload"]).otherwise(F.col("line")).cast("binary").alias("value"),
        F.when(ok, r["topic"]).alias("topic"),
        F.when(ok, r["partition"]).alias("partition"),
        F.when(ok, r["offset"]).alias("offset"),
        F.when(ok, F.timestamp_millis(r["ts"])).alias("timestamp"),
        LOCATION_COL,
    )


_KCAT_OPTIONS: Final = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt"}


def _check_kcat_head(path: str) -> None:
    """The first JSON line of ``path`` is a kcat ``-J`` record, else an InputError (lines
    before it that are not JSON are read as damaged records)."""
    try:
        with Path(path).open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", path) from None
    first = _first_object(head.splitlines(keepends=True))
    if first is None and not head.strip():
        return
    if first is None:
        raise InputError(
            f"holds no JSON line in its first {_HEAD_BYTES // 1024} KiB: not kcat -J records",
            path,
        )
    number, doc = first
    if not _is_kcat_record(doc):
        raise InputError(
            "is not a kcat -J record (no topic and payload fields): for one message per line "
            "use --input-format values",
            f"{path}:{number}",
        )


#: How far the readers look for a file's first JSON line.
_HEAD_BYTES: Final = 1 << 16


def _first_object(lines: Iterable[bytes]) -> tuple[int, dict[str, Any]] | None:
    """The first line that is a whole JSON object, with its number (lines of a file's head).

    A lone ``{`` first opens a pretty-printed document: none. Otherwise the first non-blank
    line may be indented and a later one must start in column 0, so the inner lines of such a
    document (``    {"id": 1}``) never count. A damaged first line then does not hide that the
    file holds one message per line."""
    first = True
    for number, line in enumerate(lines, 1):
        if not line.strip() or not (first or line[:1] == b"{"):
            continue
        if first and line.strip() == b"{":
            return None
        first = False
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(doc, dict):
            return number, doc
    return None


def _is_kcat_record(doc: dict[str, Any]) -> bool:
    return "payload" in doc and "topic" in doc


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
    return frame_from_messages(spark, messages, located=True)


def read_avro_messages(spark: SparkSession, paths: Sequence[str], fmt: str) -> DataFrame:
    """Avro-binary messages as Kafka values, one per record (split on the driver).

    DTS files hold concatenated records (or a container file); each record's own bytes become
    one message value, as DTS writes them to Kafka.
    """
    from contracts.errors import UnknownFormatError
    from spark_bindings.avro import avro_records, dts_values

    if not avro_records(fmt):
        raise UnknownFormatError(
            f"no Avro file reader for format {fmt!r}: Confluent-framed messages are read from "
            "Kafka-shaped Parquet (--input-format parquet: key/value columns), with a registry"
        )
    values: list[bytes | str | None] = []
    locations: list[str] = []
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", path) from None
        for value, where in dts_values(data, path):
            values.append(value)
            locations.append(where)
    return frame_from_values(spark, values, locations=locations)


def read_parquet(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Kafka-shaped Parquet files or directories: a binary (or string) ``value`` column and
    optionally ``key``; every other column is passed through to the feed.

    Every data file's footer is checked on the driver first (with pyarrow), so a file that is
    not Parquet, is damaged, or lacks a usable ``value`` is named in one line before Spark
    runs a job on it."""
    for path in paths:
        for file in _data_files(Path(path)):
            _check_kafka_parquet(file)
    try:
        df = spark.read.parquet(*paths)
    except Exception as err:  # Spark's errors for unreadable footers come in several classes
        raise InputError(f"is not readable as Parquet: {_first_line(err)}", paths[0]) from None
    if "key" not in df.columns:
        df = df.select(F.lit(None).cast("binary").alias("key"), "*")
    return df


#: Arrow types of a usable ``key``/``value`` column (Spark's binary and string).
_KAFKA_COLUMN_TYPES: Final = frozenset({"binary", "large_binary", "string", "large_string"})
_KAFKA_COLUMNS: Final = "key, value, topic, partition, offset, timestamp"


def _data_files(path: Path) -> list[Path]:
    """The Parquet data files of an input path (a file, or the files Spark reads in a
    directory)."""
    if not path.exists():
        raise InputError("no such file", str(path))
    files = [path] if path.is_file() else _parquet_files(path)
    if not files:
        raise InputError("is a directory without Parquet files", str(path))
    return files


def _check_kafka_parquet(file: Path) -> None:
    """One Parquet data file: its magic, its footer, and a binary or string ``value`` (and
    ``key``, when it has one)."""
    import pyarrow.parquet as pq

    if not _is_parquet(file):
        raise InputError("is not a Parquet file (it does not start with PAR1)", str(file))
    try:
        schema = pq.read_schema(file)
    except Exception as err:  # pyarrow reports damaged files as ArrowInvalid or OSError
        raise InputError(f"is not readable as Parquet: {_first_line(err)}", str(file)) from None
    types = {name: str(schema.field(name).type) for name in schema.names}
    if "value" not in types:
        found = ", ".join(schema.names)
        raise InputError(
            f"no 'value' column (found: {found}); expected Kafka-shaped Parquet: {_KAFKA_COLUMNS}",
            str(file),
        )
    for name in ("value", "key"):
        if name in types and types[name] not in _KAFKA_COLUMN_TYPES:
            raise InputError(
                f"column {name!r} is {types[name]}, expected binary or string (Kafka-shaped "
                f"Parquet: {_KAFKA_COLUMNS})",
                str(file),
            )


def _is_parquet(file: Path) -> bool:
    with file.open("rb") as handle:
        return handle.read(4) == PARQUET_MAGIC


def _parquet_files(directory: Path) -> list[Path]:
    """The data files Spark would read in a directory: not empty, and no name on the way
    starting with ``_`` or ``.`` (``_SUCCESS``, checksums)."""
    return [
        p
        for p in sorted(directory.rglob("*"))
        if p.is_file()
        and p.stat().st_size > 0
        and not any(part[:1] in "_." for part in p.relative_to(directory).parts)
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
        files = _parquet_files(p)
        if files and _is_parquet(files[0]):
            return "parquet"
        raise InputError("is a directory without Parquet files", str(p))
    try:
        with p.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
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
    first = _first_object(stripped.splitlines(keepends=True))
    if first is None:  # pretty-printed or concatenated documents
        return "json"
    if _is_kcat_record(first[1]) and {"partition", "offset"} <= first[1].keys():
        return "kcat"
    return "values"


def _sniff_all(paths: Sequence[str]) -> InputFormat:
    """The one layout of all ``paths`` (``csv`` and ``values`` lines count as one)."""
    kinds = {path: sniff(path) for path in paths}
    first = kinds[paths[0]]
    for path, kind in kinds.items():
        if kind != first and {kind, first} != {"csv", "values"}:
            raise InputError(
                f"looks like {kind}, but {paths[0]} looks like {first}: give inputs of one "
                "layout, or name it with --input-format",
                path,
            )
    return first


def input_layout(paths: Sequence[str], input_format: InputFormat) -> InputFormat:
    """The layout of the input files, checked without Spark (so a missing file is refused
    before a JVM starts): ``auto`` sniffs each path (they must agree)."""
    if not paths:
        raise InputError("no input files")
    kind = _sniff_all(paths) if input_format == "auto" else input_format
    for path in paths:
        if not Path(path).exists():
            raise InputError("no such file", path)
        if kind != "parquet" and Path(path).is_dir():
            raise InputError(f"is a directory; only {kind!r} files are read", path)
    return kind


def read_input(
    spark: SparkSession, paths: Sequence[str], input_format: InputFormat, fmt: str
) -> DataFrame:
    """A Kafka-shaped DataFrame from files; ``auto`` sniffs each path (they must agree)."""
    kind = input_layout(paths, input_format)
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
