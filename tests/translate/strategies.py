"""Hypothesis strategies for Connect schemas (shared by the translation property tests)."""

from __future__ import annotations

import base64
import itertools
from typing import Any

from hypothesis import strategies as st

from contracts.schema import ConnectSchema

FIELD_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).filter(
    lambda s: s[0] != "_"
)

_INTS = {
    "int8": st.integers(-(2**7), 2**7 - 1),
    "int16": st.integers(-(2**15), 2**15 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
}
_DEFAULTS: dict[str, st.SearchStrategy[Any]] = {
    **_INTS,
    "boolean": st.booleans(),
    "string": st.text(max_size=5),
    "double": st.floats(allow_nan=False, allow_infinity=False),
    "bytes": st.binary(max_size=4).map(lambda b: base64.b64encode(b).decode()),
}
PLAIN_TYPES = ["boolean", "int8", "int16", "int32", "int64", "float", "double", "bytes", "string"]

#: Logical schemas as Kafka Connect and Debezium write them (version 1 where they set it).
LOGICAL = [
    {"type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1},
    {"type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1},
    {"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
    {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "version": 1},
    {"type": "int64", "name": "io.debezium.time.NanoTimestamp", "version": 1},
    {"type": "string", "name": "io.debezium.time.ZonedTimestamp", "version": 1},
    {"type": "string", "name": "io.debezium.data.Json", "version": 1},
    {
        "type": "string",
        "name": "io.debezium.data.Enum",
        "version": 1,
        "parameters": {"allowed": "a,b"},
    },
]


@st.composite
def decimals(draw: st.DrawFn, max_precision: int = 70) -> dict[str, Any]:
    precision = draw(st.integers(1, max_precision))
    scale = draw(st.integers(0, precision))
    params = {"scale": str(scale)}
    if draw(st.booleans()) or max_precision <= 38:
        params["connect.decimal.precision"] = str(precision)
    return {
        "type": "bytes",
        "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1,
        "parameters": params,
    }


@st.composite
def primitives(draw: st.DrawFn, with_extras: bool) -> dict[str, Any]:
    kind = draw(st.sampled_from(["plain", "plain", "logical", "decimal"]))
    if kind == "logical":
        out = dict(draw(st.sampled_from(LOGICAL)))
    elif kind == "decimal":
        out = draw(decimals())
    else:
        out = {"type": draw(st.sampled_from(PLAIN_TYPES))}
    out["optional"] = draw(st.booleans())
    if with_extras and kind == "plain":
        if draw(st.booleans()) and out["type"] in _DEFAULTS:
            out["default"] = draw(_DEFAULTS[out["type"]])
        if draw(st.integers(0, 4)) == 0:
            out["doc"] = draw(st.text(max_size=6))
        if draw(st.integers(0, 4)) == 0:
            out["parameters"] = {"p.one": draw(st.text(max_size=3))}
        if draw(st.integers(0, 4)) == 0:
            out["name"] = "com.example.Custom"
            out["version"] = 2
    return out


def connect_json(with_extras: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """Connect schema JSON trees: primitives, logical types, arrays, maps and structs."""

    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        arrays = st.builds(
            lambda items, opt: {"type": "array", "items": items, "optional": opt},
            children,
            st.booleans(),
        )
        keys = st.one_of(
            st.just({"type": "string", "optional": False}),
            st.sampled_from(["int32", "int64", "string"]).map(
                lambda t: {"type": t, "optional": False}
            ),
        )
        maps = st.builds(
            lambda k, v, opt: {"type": "map", "keys": k, "values": v, "optional": opt},
            keys,
            children,
            st.booleans(),
        )
        structs = st.builds(
            lambda fields, opt: {
                "type": "struct",
                "fields": [{**f, "field": n} for n, f in fields.items()],
                "optional": opt,
            },
            st.dictionaries(FIELD_NAMES, children, min_size=1, max_size=4),
            st.booleans(),
        )
        return st.one_of(arrays, maps, structs)

    return st.recursive(primitives(with_extras), extend, max_leaves=8)


def top_struct(with_extras: bool = True, named: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """A non-optional top-level struct; nested structs get unique names (or none)."""
    base = st.dictionaries(FIELD_NAMES, connect_json(with_extras), min_size=1, max_size=5).map(
        lambda fields: {
            "type": "struct",
            "fields": [{**f, "field": n} for n, f in fields.items()],
            "optional": False,
        }
    )
    if not named:
        return base
    return st.tuples(base, st.integers(0, 2**16)).map(lambda t: name_structs(t[0], t[1]))


def name_structs(raw: dict[str, Any], seed: int) -> dict[str, Any]:
    """Give some structs unique dotted names (deterministically from ``seed``)."""
    counter = itertools.count()

    def visit(node: dict[str, Any]) -> dict[str, Any]:
        out = dict(node)
        if node["type"] == "struct":
            n = next(counter)
            if (seed >> (n % 16)) & 1:
                out["name"] = f"ns{n}.inner.S{n}"
            out["fields"] = [visit(f) for f in node["fields"]]
        for key in ("items", "keys", "values"):
            if key in node:
                out[key] = visit(node[key])
        return out

    return visit(raw)


def as_schema(raw: dict[str, Any]) -> ConnectSchema:
    from contracts.schema import parse_connect

    return parse_connect(raw)
