"""Decode the same Kafka messages with the Python ``normalize`` and with Spark's ``decode_changes``
and hold the two outcomes together, message by message.

Each message's outcome on each path is ``bad`` (Python: the message could not be read or
normalized; Spark: some row of the message has ``_error``) or its outputs in order: a control
record's kind, or a change event as a comparable dict (see :mod:`tests.spark.parity`), with the
columns an image leaves out listed apart (Python: keys missing from the image; Spark:
``_absent``).
"""

from __future__ import annotations

import math
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark.parity import from_python, from_spark

from contracts.contract import Contract
from contracts.errors import ContractsError, InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats import get_format
from contracts.formats.base import Message as CoreMessage
from contracts.io import read_csv_rows
from contracts.jsondoc import parse_document

from .messages import Message

BAD = "bad"


@dataclass
class Outcome:
    """What one path made of one message."""

    bad: bool
    outputs: list[Any]
    why: str = ""

    def shown(self) -> str:
        return f"bad ({self.why})" if self.bad else repr(self.outputs)


def _absent(image: dict[str, Any] | None, side: str, columns: list[str]) -> list[str]:
    if image is None:
        return []
    return [f"{side}.{c}" for c in columns if c not in image]


def python_outcomes(contract: Contract, messages: list[Message]) -> list[Outcome]:
    """The Python path: the JSON judge (or the CSV reader), then the format's ``normalize``."""
    fmt = get_format(contract.format)
    columns = contract.row_schema.field_names()
    out = []
    for i, m in enumerate(messages):
        where = f"m:{i}"
        try:
            core = _core_message(fmt.input_kind, m, where)
            found: list[Any] = []
            for e in fmt.normalize(core, contract):
                if isinstance(e, ChangeEvent):
                    event = from_python(e, contract)
                    event["absent"] = sorted(
                        _absent(e.before, "before", columns) + _absent(e.after, "after", columns)
                    )
                    found.append(event)
                else:
                    assert isinstance(e, ControlRecord)
                    found.append(f"control:{e.kind}")
            out.append(Outcome(False, found))
        except ContractsError as err:
            out.append(Outcome(True, [], str(err)))
    return out


def _core_message(kind: str, m: Message, where: str) -> CoreMessage:
    """A Kafka record as the core reads it: a null, empty or ``null`` value is a tombstone."""
    key = None
    if m.key is not None:
        key = parse_document(m.key, f"{where} $key")
    if m.value is None or not m.value.strip():
        return CoreMessage(value=None, key=key, where=where, has_key=m.key is not None)
    if kind == "csv":
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "m.csv"
            path.write_bytes(m.value + b"\n")
            errors: list[ContractsError] = []
            rows = list(read_csv_rows(path, errors.append))
            if errors:
                raise errors[0]
            if len(rows) != 1:
                raise InputError(f"{len(rows)} CSV rows in one message", where)
            return CoreMessage(value=rows[0].value, where=f"{where}:1")
    value = parse_document(m.value, where)
    return CoreMessage(value=value, key=key, where=where, has_key=m.key is not None)


def spark_outcomes(spark: Any, contract: Contract, messages: list[Message]) -> list[Outcome]:
    """The Spark path: ``decode_changes`` over a Kafka-shaped frame of the same records."""
    from spark_bindings import decode_changes
    from spark_bindings.inputs import KAFKA_SCHEMA

    rows = [(m.key, m.value, "parity", 0, i, None) for i, m in enumerate(messages)]
    frame = spark.createDataFrame(rows, KAFKA_SCHEMA)
    decoded = decode_changes(frame, contract).collect()
    by_offset: dict[int, list[Any]] = defaultdict(list)
    for r in decoded:
        by_offset[r["offset"]].append(r)
    rows_at = get_format(contract.format).spec.rows
    out = []
    for i in range(len(messages)):
        found = by_offset[i]
        if rows_at is not None:  # one row per row change: in the message's order
            found.sort(key=lambda r: int((r["position"] or {}).get(rows_at.index) or 0))
        errors = [r["_error"] for r in found if r["_error"] is not None]
        if errors:
            out.append(Outcome(True, [], "; ".join(errors)))
            continue
        outputs: list[Any] = []
        for r in found:
            if r["_control"] is not None:
                outputs.append(f"control:{r['_control']}")
            else:
                event = from_spark(r, contract)
                event["absent"] = sorted(r["_absent"] or [])
                outputs.append(event)
        out.append(Outcome(False, outputs))
    return out


def same(a: Any, b: Any) -> bool:
    """Equal outputs, NaN equal to NaN (a float column's ``NaN`` text decodes to a NaN on
    both paths, and ``nan != nan``)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def differences(
    contract: Contract, messages: list[Message], python: list[Outcome], spark: list[Outcome]
) -> list[str]:
    """Every message whose outcomes differ, said in one line each."""
    out = []
    for i, (m, p, s) in enumerate(zip(messages, python, spark, strict=True)):
        if p.bad != s.bad or (not p.bad and not same(p.outputs, s.outputs)):
            shown = (m.value or b"")[:300]
            out.append(
                f"message {i} ({m.note}) {shown!r} key {m.key!r}:\n"
                f"    python: {p.shown()}\n    spark:  {s.shown()}"
            )
    return out
