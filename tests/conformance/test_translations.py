"""Confluent's and Apache Spark's own translation tests, transcribed as data, run on ours.

``translation_cases.json`` holds one entry per assertion of the peers' test suites (the
repository, file, commit and test name in ``source``/``test``): Connect → Avro and Avro → Connect
from Confluent's ``AvroDataTest``/``AvroConverterTest``/``AdditionalAvroDataTest``, Avro → Spark
from Spark's ``AvroSuite``/``AvroLogicalTypeSuite``/``AvroCatalystDataConversionSuite``/
``AvroFunctionsSuite``. An entry with ``deviation`` is a documented difference
(docs/translations.md): it runs and must still differ, so the documentation cannot go stale;
``direction: not-run`` entries test settings this project does not offer and are only counted.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from api.registry.avro import canonicalize
from contracts.errors import SchemaError
from contracts.schema import parse_connect
from contracts.translate.avro import avro_to_connect, connect_to_avro
from contracts.translate.spark import avro_to_spark

HERE = Path(__file__).parent
CASES: list[dict[str, Any]] = json.loads((HERE / "translation_cases.json").read_text())
RUNNABLE = [c for c in CASES if c["direction"] != "not-run"]
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
NAMED = {"record", "error", "enum", "fixed"}


def test_corpus_counts() -> None:
    """The counts docs/translations.md states (held, documented deviations, not run)."""
    deviations = [c for c in RUNNABLE if "deviation" in c]
    assert len(CASES) >= 150
    assert (len(RUNNABLE) - len(deviations), len(deviations), len(CASES) - len(RUNNABLE)) == (
        159,
        5,
        21,
    )
    assert all(c["source"].count("@") == 1 and c["test"] for c in CASES)


@pytest.mark.parametrize("case", RUNNABLE, ids=[f"{c['direction']}:{c['name']}" for c in RUNNABLE])
def test_translation_case(case: dict[str, Any]) -> None:
    if "deviation" not in case:
        check(case)
        return
    with pytest.raises(AssertionError):  # still different: docs/translations.md says why
        check(case)


def check(case: dict[str, Any]) -> None:
    expect = case["expect"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = translate(case["direction"], case["input"], case.get("as_nullable", False))
    except SchemaError as err:
        assert "error" in expect, f"refused: {err}"
        assert re.search(re.escape(expect["error"]), str(err), re.IGNORECASE), str(err)
        return
    assert "error" not in expect, f"translated, expected a refusal: {got}"
    if "equals" in expect:
        assert_same(case["direction"], got["out"], expect["equals"], case.get("as_nullable", False))
    if expect.get("valid"):
        assert_valid_avro(got.get("avro", got["out"]), case["direction"])
    for path, value in expect.get("paths", {}).items():
        assert at_path(got["out"], path) == value, path


def translate(direction: str, value: Any, as_nullable: bool) -> dict[str, Any]:
    if direction == "connect->avro":
        return {"out": connect_to_avro(parse_connect(value))}
    if direction == "avro->connect":
        return {"out": avro_to_connect(value).to_json()}
    if direction == "avro->connect->avro":
        connect = avro_to_connect(value)
        return {"out": connect.to_json(), "avro": connect_to_avro(connect)}
    if direction == "avro->spark":
        out = avro_to_spark(value)
        return {"out": nullable(out) if as_nullable else out}
    raise AssertionError(f"unknown direction {direction}")


def assert_same(direction: str, got: Any, expected: Any, as_nullable: bool) -> None:
    if direction == "connect->avro":
        assert avro_form(got) == avro_form(expected)
    elif direction.startswith("avro->connect"):
        assert got == parse_connect(expected).to_json()
    else:
        assert got == (nullable(expected) if as_nullable else expected)


def assert_valid_avro(avro: Any, direction: str) -> None:
    """What Avro's Java parser accepts (names, defaults that are values of their type): the
    embedded registry's check, which follows it."""
    if direction in ("connect->avro", "avro->connect->avro"):
        canonicalize(json.dumps(avro))


def avro_form(schema: Any, space: str | None = None, defined: set[str] | None = None) -> Any:
    """An Avro schema with every name fully qualified and no ``namespace`` keys, so that two
    spellings of one schema (relative or full references, inherited namespaces) compare equal."""
    defined = set() if defined is None else defined
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return schema
        full = schema if "." in schema or not space else f"{space}.{schema}"
        return full if full in defined or schema not in defined else schema
    if isinstance(schema, list):
        return [avro_form(b, space, defined) for b in schema]
    kind = schema["type"]
    if kind in NAMED:
        name = schema["name"]
        namespace = schema.get("namespace", space)
        full = name if "." in name else f"{namespace}.{name}" if namespace else name
        own = full.rpartition(".")[0] or None
        defined.add(full)
        out = {k: v for k, v in schema.items() if k not in ("name", "namespace")}
        out["name"] = full
        if "fields" in schema:
            out["fields"] = [
                {**f, "type": avro_form(f["type"], own, defined)} for f in schema["fields"]
            ]
        return out
    if kind == "array":
        return {**schema, "items": avro_form(schema["items"], space, defined)}
    if kind == "map":
        return {**schema, "values": avro_form(schema["values"], space, defined)}
    rest = {k: v for k, v in schema.items() if k != "type"}
    return {"type": kind, **rest} if rest else kind


def nullable(spark: Any) -> Any:
    """Spark's ``asNullable``: what its file source does to the schema of an Avro file."""
    if not isinstance(spark, dict):
        return spark
    if spark["type"] == "struct":
        fields = [{**f, "type": nullable(f["type"]), "nullable": True} for f in spark["fields"]]
        return {**spark, "fields": fields}
    if spark["type"] == "array":
        return {**spark, "elementType": nullable(spark["elementType"]), "containsNull": True}
    if spark["type"] == "map":
        return {**spark, "valueType": nullable(spark["valueType"]), "valueContainsNull": True}
    return spark


def at_path(value: Any, path: str) -> Any:
    """``$.a[0].b`` in a JSON value; a missing key is None."""
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path.removeprefix("$")):
        if value is None:
            return None
        value = value[int(index)] if index else value.get(key)
    return value
