"""The compiled envelope readers of contracts/formats/spec.py: their fast paths (a time rule
read in one pass, a table remembered by its parts' values) give exactly what the full checked
reading gives, errors and their locations included."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from contracts.errors import DecodeError, InputError
from contracts.formats.spec import Table, Time, table_reader, time_reader

TIME_VALUES: list[Any] = [
    None,
    1,
    -5,
    2**63 - 1,
    -(2**63),
    2**63,
    2**60,
    9_223_372_036_854_776,  # seconds whose milliseconds leave int64
    True,
    1.5,
    "12",
    "x",
    {"c": 3},
    {"c": "x"},
    [1],
]


def _outcome(read: Any, doc: Any) -> tuple[Any, ...]:
    try:
        return ("ok", read(doc, "f:1"))
    except (DecodeError, InputError) as err:
        return ("error", type(err).__name__, err.what, err.where)


@pytest.mark.parametrize(
    "rules",
    [
        (Time(("a",)), Time(("b", "c"), "us"), Time(("d",), "s", text=True)),
        (Time(("a",), "s"), Time(("b", "c"), "ns"), Time(("d",), "ms", text=True)),
    ],
)
def test_time_rules_read_in_one_pass_as_the_checked_loop_reads_them(
    rules: tuple[Time, ...],
) -> None:
    fast = time_reader(rules, "$.payload")
    # an ISO rule (its field never present) makes the reader the checked loop alone
    checked = time_reader((*rules, Time(("never",), "iso")), "$.payload")
    seen = set()
    for a, b, d in itertools.product(TIME_VALUES, repeat=3):
        doc = {"a": a, "b": b, "d": d}
        expected = _outcome(checked, doc)
        assert _outcome(fast, doc) == expected, doc
        seen.add(expected[0])
    odd: list[Any] = [None, [], "x", {"b": 5}]
    for doc in odd:
        assert _outcome(fast, doc) == _outcome(checked, doc), doc
    assert seen == {"ok", "error"}


TABLE_PARTS: list[Any] = [None, "", "shop", "a.b", 1, True, {}, ["x"]]


@pytest.mark.parametrize(
    "parts",
    [
        {"database": ("s", "db"), "schema": ("s", "schema"), "name": ("s", "table")},
        {"database": ("s", "db"), "name": ("s", "table"), "required": (("s",), ("here",))},
        {"qualified": ("t",), "empty_is_null": True},
        {"database": ("db",), "name": ("n",), "fallback": True, "empty_is_null": True},
    ],
)
def test_a_remembered_table_is_the_one_the_rule_reads(parts: dict[str, Any]) -> None:
    rule = Table(**parts)
    fast = table_reader(rule, "$.payload")

    def fresh(doc: Any, where: str) -> Any:  # a new reader remembers nothing: reads in full
        return table_reader(rule, "$.payload")(doc, where)

    for a, b, c in itertools.product(TABLE_PARTS, repeat=3):
        for here in ("x", "", None):
            doc = {"s": {"db": a, "schema": b, "table": c}, "t": a, "db": b, "n": c, "here": here}
            expected = _outcome(fresh, doc)
            assert _outcome(fast, doc) == expected, doc
            assert _outcome(fast, doc) == expected, doc  # the second time from what it remembers
    odd: list[Any] = [None, {"s": 5, "here": "x"}, {"s": [1], "t": {}, "here": "x"}]
    for doc in odd:
        assert _outcome(fast, doc) == _outcome(fresh, doc), doc
