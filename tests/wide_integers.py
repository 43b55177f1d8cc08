"""Plain-JSON messages (maxwell-json, ogg-json, opencdc-json, canal-json without ``mysqlType``,
debezium-json without an embedded schema) whose column ``big`` holds integers beyond int64, for
the Python and Spark tests of exact wide integers
(tests/formats/test_wide_integers.py, tests/spark/test_wide_integers.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

UINT64_MAX = 2**64 - 1
#: Small and huge values in one column: the column gets the Decimal. 2^53 + 1 is the first
#: integer a double cannot hold.
VALUES = [7, UINT64_MAX, 2**53 + 1, 2**63]


def _maxwell(i: int, value: int) -> dict[str, Any]:
    return {
        "database": "shop",
        "table": "t",
        "type": "insert",
        "ts": 1596684883,
        "xid": i,
        "commit": True,
        "data": {"id": i, "big": value},
        "primary_key_columns": ["id"],
    }


def _ogg(i: int, value: int) -> dict[str, Any]:
    return {
        "table": "SHOP.T",
        "pos": f"{i:020d}",
        "primary_keys": ["id"],
        "after": {"id": i, "big": value},
        "op_type": "I",
        "op_ts": "2020-05-13 15:40:06.000000",
    }


def _opencdc(i: int, value: int) -> dict[str, Any]:
    return {
        "position": "cG9z",
        "operation": "create",
        "metadata": {"opencdc.collection": "t"},
        "key": {"id": i},
        "payload": {"before": None, "after": {"id": i, "big": value}},
    }


def _canal(i: int, value: int) -> dict[str, Any]:
    return {
        "data": [{"id": i, "big": value}],
        "database": "shop",
        "table": "t",
        "type": "INSERT",
        "isDdl": False,
        "pkNames": ["id"],
        "es": 1589373515000,
        "ts": 1589373515477,
        "id": i,
    }


def _debezium(i: int, value: int) -> dict[str, Any]:
    """Debezium with ``schemas.enable=false``: the column's type comes from its values."""
    return {
        "before": None,
        "after": {"id": i, "big": value},
        "source": {"connector": "mysql", "db": "shop", "table": "t", "ts_ms": 1589373515000},
        "op": "c",
        "ts_ms": 1589373515477,
    }


MESSAGES: dict[str, Callable[[int, int], dict[str, Any]]] = {
    "maxwell-json": _maxwell,
    "ogg-json": _ogg,
    "opencdc-json": _opencdc,
    "canal-json": _canal,
    "debezium-json": _debezium,
}


def write_messages(path: Path, fmt: str, values: list[int] = VALUES) -> Path:
    """One insert per value, written by the standard JSON writer (big integers as digits)."""
    lines = [json.dumps(MESSAGES[fmt](i, v)) for i, v in enumerate(values)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
