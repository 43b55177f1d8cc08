"""Deterministic generators of CDC messages for benchmarks, the Spark tests and the demo.

Each generator is seeded, so the same arguments give byte-identical messages:

- :func:`debezium_messages` — Debezium MySQL change events for ``shop.orders`` (12 columns incl.
  a Connect Decimal(12,2) and an ``io.debezium.time.MicroTimestamp``), about 2 KB each with the
  embedded schema (``schemas.enable=true``), op mix r/c/u/d;
- :func:`canal_messages` — Canal FlatMessages for the same table (string values, mysqlType,
  sqlType, pkNames, ``old`` on updates);
- :func:`arcion_s3_json_messages` — Arcion Replicant S3 JSON records (``tableName``, ``opType``,
  string images with ``"null"``, ``exists``, ``cursor`` as JSON text).

:func:`write_jsonl` writes messages one per line. Run as a script to write a file::

    .venv/bin/python -m benchmarks.datagen debezium 100000 /tmp/debezium.jsonl
"""

from __future__ import annotations

import base64
import datetime as dt
import random
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import orjson

from contracts.logical import DEBEZIUM_DATE_NAME, DECIMAL_NAME, ENUM_NAME, MICRO_TIMESTAMP_NAME

SERVER: Final = "dbserver1"
DATABASE: Final = "shop"
TABLE: Final = "orders"
BASE_TS_MS: Final = 1_795_771_800_000  # 2026-11-27T09:30:00Z
EPOCH_DAY_2026: Final = 20_454  # 2026-01-01 as days since epoch
STATUSES: Final = ("NEW", "PAID", "SHIPPED", "DELIVERED", "CANCELLED")
NOTES: Final = (
    None,
    "leave at the door",
    "gift wrap, no invoice in the parcel",
    "call before delivery ☎",
    "fragile: glassware",
)
#: op → cumulative weight (r 10 %, c 50 %, u 30 %, d 10 %).
OP_MIX: Final = (("r", 10), ("c", 60), ("u", 90), ("d", 100))


# --- the orders row -----------------------------------------------------------------------------


def _field(type_: str, column: str, optional: bool = False, **extra: Any) -> dict[str, Any]:
    return {"type": type_, "optional": optional, **extra, "field": column}


ROW_FIELDS: Final = [
    _field("int64", "id"),
    _field("int32", "customer_id"),
    _field("string", "status"),
    _field(
        "bytes",
        "amount",
        name=DECIMAL_NAME,
        version=1,
        parameters={"scale": "2", "connect.decimal.precision": "12"},
    ),
    _field("int16", "quantity"),
    _field("double", "unit_price"),
    _field("float", "weight_kg", optional=True),
    _field("string", "sku"),
    _field("string", "note", optional=True),
    _field("boolean", "is_gift"),
    _field("int64", "created_at", name=MICRO_TIMESTAMP_NAME, version=1),
    _field("int32", "ship_date", optional=True, name=DEBEZIUM_DATE_NAME, version=1),
]

_SOURCE_FIELDS: Final = [
    _field("string", "version"),
    _field("string", "connector"),
    _field("string", "name"),
    _field("int64", "ts_ms"),
    _field(
        "string",
        "snapshot",
        optional=True,
        name=ENUM_NAME,
        version=1,
        parameters={"allowed": "true,last,false,incremental"},
        default="false",
    ),
    _field("string", "db"),
    _field("string", "sequence", optional=True),
    _field("string", "table", optional=True),
    _field("int64", "server_id"),
    _field("string", "gtid", optional=True),
    _field("string", "file"),
    _field("int64", "pos"),
    _field("int32", "row"),
    _field("int64", "thread", optional=True),
    _field("string", "query", optional=True),
]


def envelope_schema() -> dict[str, Any]:
    """The Debezium MySQL envelope schema for ``dbserver1.shop.orders``."""
    value = f"{SERVER}.{DATABASE}.{TABLE}.Value"
    row = {"type": "struct", "fields": ROW_FIELDS, "optional": True, "name": value}
    transaction = {
        "type": "struct",
        "fields": [
            _field("string", "id"),
            _field("int64", "total_order"),
            _field("int64", "data_collection_order"),
        ],
        "optional": True,
        "name": "event.block",
        "version": 1,
        "field": "transaction",
    }
    return {
        "type": "struct",
        "fields": [
            {**row, "field": "before"},
            {**row, "field": "after"},
            {
                "type": "struct",
                "fields": _SOURCE_FIELDS,
                "optional": False,
                "name": "io.debezium.connector.mysql.Source",
                "field": "source",
            },
            _field("string", "op"),
            _field("int64", "ts_ms", optional=True),
            transaction,
        ],
        "optional": False,
        "name": f"{SERVER}.{DATABASE}.{TABLE}.Envelope",
        "version": 1,
    }


def _amount(cents: int) -> str:
    length = max(1, (cents.bit_length() + 8) // 8)
    return base64.b64encode(cents.to_bytes(length, "big", signed=True)).decode("ascii")


def _row(rng: random.Random, order_id: int, ts_ms: int) -> dict[str, Any]:
    quantity = rng.randint(1, 40)
    unit_cents = rng.randint(99, 250_000)
    ship = rng.random()
    return {
        "id": order_id,
        "customer_id": rng.randint(1, 2_000_000),
        "status": rng.choice(STATUSES),
        "amount": _amount(quantity * unit_cents * (1 if rng.random() > 0.02 else -1)),
        "quantity": quantity,
        "unit_price": unit_cents / 100,
        "weight_kg": round(rng.uniform(0.05, 30.0), 3) if ship > 0.1 else None,
        "sku": f"SKU-{rng.randint(0, 99_999):05d}-{rng.choice('ABCDEFGH')}",
        "note": rng.choice(NOTES),
        "is_gift": rng.random() < 0.15,
        "created_at": (ts_ms - rng.randint(0, 86_400_000)) * 1000 + rng.randint(0, 999),
        "ship_date": EPOCH_DAY_2026 + rng.randint(300, 400) if ship > 0.3 else None,
    }


def _pick_op(rng: random.Random) -> str:
    roll = rng.randrange(100)
    for op, bound in OP_MIX:
        if roll < bound:
            return op
    return "c"


def _source(i: int, ts_ms: int, op: str) -> dict[str, Any]:
    return {
        "version": "2.7.3.Final",
        "connector": "mysql",
        "name": SERVER,
        "ts_ms": ts_ms,
        "snapshot": "true" if op == "r" else "false",
        "db": DATABASE,
        "sequence": None,
        "table": TABLE,
        "server_id": 223344,
        "gtid": f"3e11fa47-71ca-11e1-9e33-c80aa9429562:{1000 + i}",
        "file": f"mysql-bin.{3 + i // 50_000:06d}",
        "pos": 154 + (i % 50_000) * 731,
        "row": 0,
        "thread": 7 if op != "r" else None,
        "query": None,
    }


def debezium_messages(n: int, *, with_schema: bool = True, seed: int = 0) -> Iterator[bytes]:
    """``n`` Debezium MySQL change events as JSON bytes (``{schema, payload}`` or bare)."""
    rng = random.Random(seed)
    schema = envelope_schema()
    for i in range(n):
        ts_ms = BASE_TS_MS + i * 37
        op = _pick_op(rng)
        order_id = 10_000_000 + rng.randrange(max(n, 1))
        row = _row(rng, order_id, ts_ms)
        before = after = None
        if op in ("c", "r"):
            after = row
        elif op == "d":
            before = row
        else:
            before = row
            after = {**row, "status": rng.choice(STATUSES), "note": rng.choice(NOTES)}
        payload = {
            "before": before,
            "after": after,
            "source": _source(i, ts_ms - rng.randint(1, 900), op),
            "op": op,
            "ts_ms": ts_ms,
            "transaction": None,
        }
        doc = {"schema": schema, "payload": payload} if with_schema else payload
        yield orjson.dumps(doc)


# --- Canal --------------------------------------------------------------------------------------

CANAL_MYSQL_TYPES: Final = {
    "id": "bigint(20)",
    "customer_id": "int(11)",
    "status": "varchar(16)",
    "amount": "decimal(12,2)",
    "quantity": "smallint(6)",
    "unit_price": "double",
    "weight_kg": "float",
    "sku": "varchar(32)",
    "note": "varchar(255)",
    "is_gift": "tinyint(1)",
    "created_at": "datetime(6)",
    "ship_date": "date",
}
#: java.sql.Types codes for the columns above.
CANAL_SQL_TYPES: Final = {
    "id": -5,
    "customer_id": 4,
    "status": 12,
    "amount": 3,
    "quantity": 5,
    "unit_price": 8,
    "weight_kg": 7,
    "sku": 12,
    "note": 12,
    "is_gift": -7,
    "created_at": 93,
    "ship_date": 91,
}


def _canal_row(rng: random.Random, order_id: int, ts_ms: int) -> dict[str, str | None]:
    raw = _row(rng, order_id, ts_ms)
    cents = int.from_bytes(base64.b64decode(raw["amount"]), "big", signed=True)
    created = dt.datetime.fromtimestamp(raw["created_at"] / 1_000_000, dt.UTC)
    ship = raw["ship_date"]
    return {
        "id": str(raw["id"]),
        "customer_id": str(raw["customer_id"]),
        "status": raw["status"],
        "amount": f"{cents / 100:.2f}",
        "quantity": str(raw["quantity"]),
        "unit_price": repr(raw["unit_price"]),
        "weight_kg": None if raw["weight_kg"] is None else repr(raw["weight_kg"]),
        "sku": raw["sku"],
        "note": raw["note"],
        "is_gift": "1" if raw["is_gift"] else "0",
        "created_at": created.strftime("%Y-%m-%d %H:%M:%S.%f"),
        "ship_date": None
        if ship is None
        else (dt.date(1970, 1, 1) + dt.timedelta(days=ship)).isoformat(),
    }


def canal_messages(n: int, seed: int = 0) -> Iterator[bytes]:
    """``n`` Canal FlatMessages (one row each; ``old`` holds changed columns on UPDATE)."""
    rng = random.Random(seed)
    kinds = {"r": "INSERT", "c": "INSERT", "u": "UPDATE", "d": "DELETE"}
    for i in range(n):
        ts = BASE_TS_MS + i * 37
        kind = kinds[_pick_op(rng)]
        row = _canal_row(rng, 10_000_000 + rng.randrange(max(n, 1)), ts)
        old = None
        if kind == "UPDATE":
            new_status = rng.choice(STATUSES)
            old = [{"status": row["status"]}]
            row = {**row, "status": new_status}
        doc = {
            "data": [row],
            "database": DATABASE,
            "es": ts - rng.randint(1, 900),
            "id": i + 1,
            "isDdl": False,
            "mysqlType": CANAL_MYSQL_TYPES,
            "old": old,
            "pkNames": ["id"],
            "sql": "",
            "sqlType": CANAL_SQL_TYPES,
            "table": TABLE,
            "ts": ts,
            "type": kind,
        }
        yield orjson.dumps(doc)


# --- Arcion S3 JSON -----------------------------------------------------------------------------


def arcion_s3_json_messages(n: int, seed: int = 0) -> Iterator[bytes]:
    """``n`` Arcion S3 JSON records for ``shop.orders`` (values as strings, ``"null"``)."""
    rng = random.Random(seed)
    kinds = {"r": "I", "c": "I", "u": "U", "d": "D"}
    counts = {"I": 0, "U": 0, "D": 0}
    for i in range(n):
        ts = BASE_TS_MS + i * 37
        op = kinds[_pick_op(rng)]
        counts[op] += 1
        row = {
            k: ("null" if v is None else v) for k, v in _canal_row(rng, 10_000_000 + i, ts).items()
        }
        nulls = dict.fromkeys(row, "null")
        if op == "I":
            before, after, exists = nulls, row, dict.fromkeys(row, "1")
        elif op == "D":
            before, after, exists = row, nulls, dict.fromkeys(row, "2")
        else:
            after = {**row, "status": rng.choice(STATUSES)}
            before, exists = row, dict.fromkeys(row, "3")
        cursor = {
            "extractorId": 0,
            "nodeID": "node1",
            "timestamp": ts,
            "extractionTimestamp": ts + 5,
            "dscId": 1_795_000_000_000,
            "mutId": 326_000 + i,
            "partNum": 1,
            "v": 2,
        }
        operation_count = {
            "insertCount": counts["I"],
            "updateCount": counts["U"],
            "deleteCount": counts["D"],
            "replaceCount": 0,
        }
        doc = {
            "tableName": {
                "namespace": {"catalog": None, "schema": DATABASE, "hash": 696_406_511},
                "name": TABLE,
                "hash": -821_029_210,
            },
            "opType": op,
            "cursor": orjson.dumps(cursor).decode(),
            "before": before,
            "after": after,
            "exists": exists,
            "operationcount": orjson.dumps(operation_count).decode(),
        }
        yield orjson.dumps(doc)


# --- Maxwell -------------------------------------------------------------------------------------

#: How Maxwell writes each column of the benchmark table as JSON (MySQL's JSON mapping: numbers
#: as numbers, a ``tinyint(1)`` as 0/1, a ``datetime(6)`` and a ``date`` as text).
MAXWELL_NUMBERS: Final = {
    "id": int,
    "customer_id": int,
    "amount": float,
    "quantity": int,
    "unit_price": float,
    "weight_kg": float,
    "is_gift": int,
}


def _maxwell_row(rng: random.Random, order_id: int, ts_ms: int) -> dict[str, Any]:
    text = _canal_row(rng, order_id, ts_ms)
    return {
        k: v if v is None or k not in MAXWELL_NUMBERS else MAXWELL_NUMBERS[k](v)
        for k, v in text.items()
    }


def maxwell_messages(n: int, seed: int = 0) -> Iterator[bytes]:
    """``n`` Maxwell row events (``old`` holds the changed columns on update; ``ts`` in
    seconds). No ``bootstrap-insert``: Flink's maxwell-json fails the job on one."""
    rng = random.Random(seed)
    kinds = {"r": "insert", "c": "insert", "u": "update", "d": "delete"}
    for i in range(n):
        ts = BASE_TS_MS + i * 37
        kind = kinds[_pick_op(rng)]
        row = _maxwell_row(rng, 10_000_000 + rng.randrange(max(n, 1)), ts)
        doc: dict[str, Any] = {
            "database": DATABASE,
            "table": TABLE,
            "type": kind,
            "ts": ts // 1000,
            "xid": 7_000 + i,
            "xoffset": 0,
            "commit": True,
            "position": f"mysql-bin.000003:{4 + 400 * i}",
            "data": row,
            "primary_key_columns": ["id"],
        }
        if kind == "update":
            doc["old"] = {"status": row["status"]}
            row["status"] = rng.choice(STATUSES)
        yield orjson.dumps(doc)


# --- Oracle GoldenGate JSON ------------------------------------------------------------------------


def _ogg_time(ts_ms: int, sep: str) -> str:
    return dt.datetime.fromtimestamp(ts_ms / 1000, dt.UTC).strftime(f"%Y-%m-%d{sep}%H:%M:%S.%f")


def ogg_messages(n: int, seed: int = 0) -> Iterator[bytes]:
    """``n`` GoldenGate JSON operations on ``SHOP.ORDERS`` (an update carries both images;
    values in the same JSON types as Maxwell's)."""
    rng = random.Random(seed)
    kinds = {"r": "I", "c": "I", "u": "U", "d": "D"}
    for i in range(n):
        ts = BASE_TS_MS + i * 37
        kind = kinds[_pick_op(rng)]
        row = _maxwell_row(rng, 10_000_000 + rng.randrange(max(n, 1)), ts)
        before: dict[str, Any] | None = row if kind != "I" else None
        after: dict[str, Any] | None = row if kind != "D" else None
        if kind == "U":
            after = {**row, "status": rng.choice(STATUSES)}
        doc: dict[str, Any] = {
            "table": f"{DATABASE.upper()}.{TABLE.upper()}",
            "op_type": kind,
            "op_ts": _ogg_time(ts - rng.randint(1, 900), " "),
            "current_ts": _ogg_time(ts, "T"),
            "pos": f"{i * 1_000 + 100:023d}",
            "primary_keys": ["id"],
        }
        if before is not None:
            doc["before"] = before
        if after is not None:
            doc["after"] = after
        yield orjson.dumps(doc)


# --- writing ------------------------------------------------------------------------------------


def write_jsonl(path: str | Path, messages: Iterable[bytes]) -> int:
    """Write messages one per line; returns the number of bytes written."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with p.open("wb") as out:
        for message in messages:
            out.write(message)
            out.write(b"\n")
            written += len(message) + 1
    return written


GENERATORS: Final = {
    "debezium": lambda n: debezium_messages(n),
    "debezium-noschema": lambda n: debezium_messages(n, with_schema=False),
    "canal": canal_messages,
    "arcion-s3-json": arcion_s3_json_messages,
    "maxwell": maxwell_messages,
    "ogg": ogg_messages,
}


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[0] not in GENERATORS:
        sys.exit(f"usage: python -m benchmarks.datagen {{{','.join(GENERATORS)}}} N OUT.jsonl")
    size = write_jsonl(argv[2], GENERATORS[argv[0]](int(argv[1])))
    print(f"wrote {argv[1]} messages, {size / 1e6:.1f} MB to {argv[2]}")


if __name__ == "__main__":
    main(sys.argv[1:])
