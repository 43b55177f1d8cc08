"""The canonical change event: one shape for every format, everywhere.

The CLI's ``normalize``, the API and the Spark change feed all produce this shape:
``op, table, key, before, after, ts_ms, source_ts_ms, position``.
Control records (tombstones, heartbeats, DDL, transaction markers) are :class:`ControlRecord`
values: recognized and reported, never emitted as row changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from contracts.values import to_jsonable

Op = Literal["c", "u", "d", "r", "t"]
OPS: Final = ("c", "u", "d", "r", "t")
OP_NAMES: Final = {"c": "create", "u": "update", "d": "delete", "r": "read", "t": "truncate"}

ControlKind = Literal["tombstone", "heartbeat", "ddl", "transaction", "message", "other"]


@dataclass(frozen=True, slots=True)
class TableId:
    """A table's identity: database (or catalog), schema, name. Absent parts are None."""

    database: str | None = None
    schema: str | None = None
    name: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"database": self.database, "schema": self.schema, "name": self.name}

    def qualified(self) -> str:
        """``database.schema.name`` with absent parts left out."""
        return ".".join(p for p in (self.database, self.schema, self.name) if p)


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One row change.

    ``before``/``after`` hold typed values (ints, floats, Decimal, date, aware datetimes, bytes)
    or None when the image is absent. ``ts_ms`` is when the producer processed the change,
    ``source_ts_ms`` when the database committed it; ``position`` is the producer's position
    (lsn, binlog file/pos, scn, cursor ...).
    """

    op: Op
    table: TableId
    key: dict[str, Any] | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    ts_ms: int | None = None
    source_ts_ms: int | None = None
    position: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The event as JSON: decimals as strings, dates and timestamps ISO-8601, bytes base64."""
        return {
            "op": self.op,
            "table": self.table.to_json(),
            "key": to_jsonable(self.key),
            "before": to_jsonable(self.before),
            "after": to_jsonable(self.after),
            "ts_ms": self.ts_ms,
            "source_ts_ms": self.source_ts_ms,
            "position": to_jsonable(self.position),
        }


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A message that is not a row change: a tombstone, heartbeat, DDL or transaction marker."""

    kind: ControlKind
    reason: str
    table: TableId | None = None
    key: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "control": self.kind,
            "reason": self.reason,
            "table": self.table.to_json() if self.table else None,
            "key": to_jsonable(self.key),
        }


Normalized = ChangeEvent | ControlRecord
