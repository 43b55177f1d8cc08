"""The ``{schema, payload}`` parse that starts at the payload key, against its fallbacks.

``decode_changes`` parses a Connect message from its last ``"payload":`` on and parses the
whole message only when that key is not the top-level one. Each case here is a message where
the cut must not be taken (or is taken with the payload not last), decoded next to the same
change written plainly: the two rows must agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from spark_bindings import decode_changes
from spark_bindings.inputs import frame_from_values

from .test_feed import ORDERS, _row

pytestmark = pytest.mark.spark

SCHEMA = {"type": "struct", "fields": [], "optional": False, "name": "shop.public.orders.Envelope"}


def _envelope(after: dict[str, Any]) -> dict[str, Any]:
    source = {"connector": "postgresql", "db": "shop", "schema": "public", "table": "orders"}
    return {"before": None, "after": after, "source": source, "op": "c", "ts_ms": 7}


CUT_COLUMNS = ("op", "table", "key", "before", "after", "ts_ms", "position", "_control", "_error")


def _decoded(spark: Any, values: list[str | None]) -> list[dict[str, Any]]:
    rows = decode_changes(frame_from_values(spark, values), ORDERS).orderBy("offset").collect()
    return [{c: r[c] for c in CUT_COLUMNS} for r in rows]


def test_messages_the_cut_must_not_trust_decode_as_the_plain_one(spark: Any) -> None:
    payload = _envelope(_row(1, 250))
    plain = json.dumps({"schema": SCHEMA, "payload": payload})
    nested_in_row = {**payload, "after": {**_row(1, 250), "payload": {"op": "d", "after": None}}}
    nested_in_schema = {**SCHEMA, "parameters": {"payload": {"op": "d"}}}
    tricky = [
        # payload first: the cut is the whole message (schema skipped by the parser)
        json.dumps({"payload": payload, "schema": SCHEMA}),
        # a column holding an object with a "payload" key: the last key is nested in the row
        json.dumps({"schema": SCHEMA, "payload": nested_in_row}),
        # the schema, written after the payload, nests a "payload" key
        json.dumps({"payload": payload, "schema": nested_in_schema}),
        # no whitespace, pretty-printed
        json.dumps({"schema": SCHEMA, "payload": payload}, separators=(",", ":")),
        json.dumps({"schema": SCHEMA, "payload": payload}, indent=2),
    ]
    got = _decoded(spark, [plain, *tricky])
    assert got[0]["_error"] is None and got[0]["op"] == "c"
    for i, row in enumerate(got[1:], start=1):
        assert row == got[0], f"message {i}"


def test_messages_without_a_usable_payload_key_are_parsed_whole(spark: Any) -> None:
    payload = _envelope(_row(2, 1))
    values = [
        json.dumps(payload),  # the envelope alone, for a contract whose messages carry a schema
        json.dumps({"schema": SCHEMA, "payload": None, "ts_ms": 3}),
        json.dumps({"schema": SCHEMA, "payload": payload})[:-40],  # cut short
        '{"schema": {}, "payload": {"op": "c", "after": {"id": 1}}} trailing',
    ]
    got = _decoded(spark, values)
    assert got[0]["_error"] == "$.payload.op: is not a known op code"
    assert got[1]["_error"] == "$.payload.op: is not a known op code"
    assert "not valid JSON" in got[2]["_error"]
    # text after the envelope: Spark's parser would stop at the first value and ignore it
    assert got[3]["_error"] == "$: is not valid JSON (content after the document)"


def test_the_schema_half_is_not_checked_for_syntax(spark: Any) -> None:
    """The documented difference: text before the payload key is skipped, not parsed."""
    payload = json.dumps(_envelope(_row(3, 1)))
    broken_schema = '{"schema": {"type": "struct", "fields": [,,]}, "payload": ' + payload + "}"
    (row,) = _decoded(spark, [broken_schema])
    assert row["_error"] is None and row["op"] == "c"
