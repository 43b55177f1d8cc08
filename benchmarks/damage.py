"""A damaged sample for benchmarks/spark_decode.py: generated messages with one bad value (or a
bad op, code or text) in about one message in five.

The damage is what lenient decoders accept in silence: ``"1e3"`` and ``"0012"`` for integers,
``"1.234"`` in a DECIMAL(12,2), ``"yes"`` and ``"2"`` for a ``tinyint(1)``, ``"+10000-01-01"``
dates, a float ``1e50``; plus values of the wrong JSON type, unknown ops, Arcion ``exists``
codes outside 0-3 and text that is not JSON. Every message keeps a distinct ``id`` (1..n) so
that a decoded row can be traced to its damage (:class:`Damage`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from benchmarks import datagen

#: column → bad texts for the text formats (Canal, Arcion S3), each a value the grammar refuses.
BAD_TEXTS: Final[dict[str, tuple[str, ...]]] = {
    "customer_id": ("1e3", "0012", "12.0", "0x1F", "99999999999"),
    "amount": ("1.234", "1e3", "12,50", "abc", "--1"),
    "quantity": ("1e3", "0012", "+ 5", "70000"),
    "unit_price": ("abc", "1,5", "NaN-ish"),
    "is_gift": ("yes", "2", "on", "-1"),
    "created_at": (
        "+10000-01-01 00:00:00",
        "2026-11-27",
        "2026-13-01 00:00:00",
        "27/11/2026 09:30:00",
    ),
    "ship_date": ("+10000-01-01", "2026-02-30", "20261127", "2026-11-27 00:00:00"),
    "weight_kg": ("1e50", "heavy", "1,5"),
}
#: column → bad JSON values for Debezium (JsonConverter): wrong type or out of range.
BAD_JSON: Final[dict[str, tuple[Any, ...]]] = {
    "customer_id": ("12", 3_000_000_000, 1.5),
    "amount": ("@@@", "AQ", "AQIDBAUGBwgJ"),  # not base64, unpadded, 9 bytes > decimal(12,2)
    "quantity": (70_000, "7"),
    "is_gift": ("yes", 1),
    "created_at": (10**18, "2026-11-27"),
    "ship_date": (3_000_000, "2026-11-27"),
    "weight_kg": (1e50,),
    "sku": (None,),  # a required column
}

#: column → bad JSON values for Maxwell and GoldenGate (plain JSON; each value's text is read with the column's
#: text rule, so a number's digits count, not its JSON type, except in a string column).
BAD_MAXWELL: Final[dict[str, tuple[Any, ...]]] = {
    "customer_id": ("1e3", "0012", 1.5, "12.0"),
    "quantity": (2.5, "7x", True),
    "amount": ("abc", "1,5", [1]),
    "is_gift": ("yes", True),
    "created_at": (5, "+10000-01-01 00:00:00", "2026-13-01 00:00:00", "2026-11-27"),
    "ship_date": ("2026-02-30", "20261127", 20261127),
    "id": (None,),  # a required column
}


@dataclass(frozen=True)
class Damage:
    """What was done to message ``index`` (whose row id is ``row_id``)."""

    index: int
    row_id: int
    column: str
    bad: Any


def _text_doc(fmt: str, doc: dict[str, Any], rng: random.Random) -> tuple[str, Any]:
    """Damage one value of a Canal or Arcion S3 document in place: (column, bad text)."""
    column = rng.choice(sorted(BAD_TEXTS))
    bad = rng.choice(BAD_TEXTS[column])
    if fmt == "canal-json":
        doc["data"][0][column] = bad
    else:
        side = "after" if doc["opType"] != "D" else "before"
        doc[side][column] = bad
    return column, bad


def _json_doc(doc: dict[str, Any], rng: random.Random) -> tuple[str, Any]:
    payload = doc["payload"]
    column = rng.choice(sorted(BAD_JSON))
    bad = rng.choice(BAD_JSON[column])
    side = "after" if payload["after"] is not None else "before"
    payload[side][column] = bad
    return column, bad


def _plain_json_doc(fmt: str, doc: dict[str, Any], rng: random.Random) -> tuple[str, Any]:
    """Damage one value of a Maxwell or GoldenGate document in place: (column, bad value)."""
    column = rng.choice(sorted(BAD_MAXWELL))
    bad = rng.choice(BAD_MAXWELL[column])
    side = "data" if fmt == "maxwell-json" else "after" if "after" in doc else "before"
    doc[side][column] = bad
    return column, bad


def _set_id(fmt: str, doc: dict[str, Any], row_id: int) -> None:
    if fmt == "maxwell-json":
        doc["data"]["id"] = row_id
    elif fmt == "ogg-json":
        for side in ("before", "after"):
            if side in doc:
                doc[side]["id"] = row_id
    elif fmt == "canal-json":
        doc["data"][0]["id"] = str(row_id)
    elif fmt == "arcion-s3-json":
        for side in ("before", "after"):
            if doc[side]["id"] != "null":
                doc[side]["id"] = str(row_id)
    else:
        for side in ("before", "after"):
            if doc["payload"][side] is not None:
                doc["payload"][side]["id"] = row_id


def _bad_envelope(fmt: str, doc: dict[str, Any], rng: random.Random) -> tuple[str, Any]:
    """A damage outside the values: an unknown op, an unknown exists code, or not JSON."""
    roll = rng.randrange(3)
    if roll == 0:
        ops = {
            "canal-json": ("type",),
            "arcion-s3-json": ("opType",),
            "maxwell-json": ("type",),
            "ogg-json": ("op_type",),
        }
        at = ops.get(fmt, ("payload", "op"))
        target = doc
        for part in at[:-1]:
            target = target[part]
        target[at[-1]] = "UPSERT"
        return "op", "UPSERT"
    if roll == 1 and fmt == "arcion-s3-json":
        doc["exists"]["status"] = "7"
        return "exists", "7"
    return "$", "not JSON"


GENERATORS: Final[dict[str, Callable[[int], Any]]] = {
    "debezium-json": datagen.debezium_messages,
    "canal-json": datagen.canal_messages,
    "arcion-s3-json": datagen.arcion_s3_json_messages,
    "maxwell-json": datagen.maxwell_messages,
    "ogg-json": datagen.ogg_messages,
}


def damaged_sample(
    fmt: str, n: int = 600, share: float = 0.2, seed: int = 7
) -> tuple[list[bytes], list[Damage]]:
    """``n`` messages of ``fmt``, about ``share`` of them damaged (one thing each); ids 1..n."""
    rng = random.Random(seed)
    out: list[bytes] = []
    damages: list[Damage] = []
    for i, raw in enumerate(GENERATORS[fmt](n)):
        doc = orjson.loads(raw)
        _set_id(fmt, doc, i + 1)
        if rng.random() < share:
            if rng.random() < 0.1:
                column, bad = _bad_envelope(fmt, doc, rng)
            elif fmt == "debezium-json":
                column, bad = _json_doc(doc, rng)
            elif fmt in ("maxwell-json", "ogg-json"):
                column, bad = _plain_json_doc(fmt, doc, rng)
            else:
                column, bad = _text_doc(fmt, doc, rng)
            damages.append(Damage(i, i + 1, column, bad))
            if bad == "not JSON":
                out.append(b'{"broken": ' + raw[:40])
                continue
        out.append(orjson.dumps(doc))
    return out, damages
