"""Holding the Spark change feed and the Python ``normalize`` together, row for row.

Both sides are brought to one comparable shape: typed Python values (Decimal, date, aware UTC
datetime, bytes, ...), time-of-day values as ``HH:MM:SS.ffffff`` text (Spark's documented
representation), positions as ``{key: text}`` (strings as-is, other values as JSON text) and
images with every contract column (a column a producer left out is None on both sides).
"""

from __future__ import annotations

import datetime as dt
import json
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from contracts.contract import Contract, load_contract
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats import get_format
from contracts.formats.base import Message
from contracts.io import read_messages
from contracts.schema import ConnectSchema
from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_messages

FIXTURES = Path(__file__).parent.parent / "fixtures"


def orders_message() -> dict[str, Any]:
    """A real Debezium message of the postgres-orders fixture ``{schema, payload}`` (its
    embedded schema is what the core checks)."""
    line = (FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl").read_text().splitlines()[0]
    return dict(json.loads(json.loads(line)["payload"]))


def messages(fmt: str, sample: str) -> list[Message]:
    f = get_format(fmt)
    return list(f.assemble(read_messages([FIXTURES / fmt / sample], f.input_kind)))


def contract(fmt: str, name: str) -> Contract:
    return load_contract(FIXTURES / fmt / name)


def _float32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _value(v: Any, schema: ConnectSchema | None) -> Any:
    if isinstance(v, dt.datetime):
        aware = v if v.tzinfo else v.astimezone()  # Spark gives local wall-clock time
        return aware.astimezone(dt.UTC)
    if isinstance(v, dt.time):
        return v.isoformat(timespec="microseconds")
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, float) and schema is not None and schema.type == "float":
        return _float32(v)
    return v


def image(values: Any, row: ConnectSchema) -> dict[str, Any] | None:
    if values is None:
        return None
    data = values.asDict(recursive=True) if hasattr(values, "asDict") else dict(values)
    return {f.field: _value(data.get(f.field), f) for f in row.fields or ()}


def position(values: Any) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in (values or {}).items()}


def from_python(event: ChangeEvent, c: Contract) -> dict[str, Any]:
    key = None
    if c.key and event.key is not None:
        key = {k: _value(event.key.get(k), c.row_schema.get_field(k)) for k in c.key}
    return {
        "op": event.op,
        "table": event.table.to_json(),
        "key": key,
        "before": image(event.before, c.row_schema),
        "after": image(event.after, c.row_schema),
        "ts_ms": event.ts_ms,
        "source_ts_ms": event.source_ts_ms,
        "position": position(event.position),
    }


def from_spark(row: Any, c: Contract) -> dict[str, Any]:
    key = None
    if c.key and row["key"] is not None:
        key = {k: _value(row["key"][k], c.row_schema.get_field(k)) for k in c.key}
    return {
        "op": row["op"],
        "table": row["table"].asDict(),
        "key": key,
        "before": image(row["before"], c.row_schema),
        "after": image(row["after"], c.row_schema),
        "ts_ms": row["ts_ms"],
        "source_ts_ms": row["source_ts_ms"],
        "position": position(row["position"]),
    }


def python_feed(fmt: str, msgs: Iterable[Message], c: Contract) -> list[tuple[int, Any]]:
    """(message index, event dict or control kind) for every normalized output."""
    out: list[tuple[int, Any]] = []
    f = get_format(fmt)
    for i, m in enumerate(msgs):
        for e in f.normalize(m, c):
            out.append((i, from_python(e, c) if isinstance(e, ChangeEvent) else _control(e)))
    return out


def _control(e: ControlRecord) -> str:
    return f"control:{e.kind}"


def spark_feed(rows: Iterable[Any], c: Contract) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    for r in rows:
        assert r["_error"] is None, f"offset {r['offset']}: {r['_error']}"
        if r["_control"] is not None:
            out.append((r["offset"], f"control:{r['_control']}"))
        else:
            out.append((r["offset"], from_spark(r, c)))
    return out


def assert_same_feed(got: list[tuple[int, Any]], want: list[tuple[int, Any]]) -> None:
    """Spark's feed equals Python's: same length, same message index and output, in order."""
    assert len(got) == len(want)
    for (gi, g), (wi, w) in zip(got, want, strict=True):
        assert gi == wi
        assert g == w, f"message {gi}"


def assert_spark_equals_python(spark: Any, fmt: str, sample: str, contract_file: str) -> None:
    """A fixture decoded by Spark gives exactly the Python ``normalize`` feed."""
    c = contract(fmt, contract_file)
    msgs = messages(fmt, sample)
    want = python_feed(fmt, msgs, c)
    rows = decode_changes(frame_from_messages(spark, msgs), c).orderBy("offset").collect()
    assert_same_feed(spark_feed(rows, c), want)
