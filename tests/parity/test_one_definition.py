"""One definition per fact: every format's facts live in its core module, every logical type in
``contracts.logical``; the Spark decoder is built from them, and nothing restates them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from contracts.formats import FORMATS, get_format
from contracts.formats._typing import TEXT_DECODERS
from contracts.formats.spec import FormatSpec
from contracts.logical import _SPECIALIZERS, LOGICAL_TYPES

pytest.importorskip("pyspark", reason="the Spark bindings need the [spark] extra")

from spark_bindings.avro import avro_records
from spark_bindings.build import SpecDecoder, decoder_for
from spark_bindings.expressions import JSON_RULES

ROOT = Path(__file__).parent.parent.parent
#: The packages of the product (tests state facts on purpose, to hold the code to them).
PRODUCT = ("contracts", "registry_sync", "api", "cli", "spark_bindings", "benchmarks")
CANONICAL_OPS = frozenset({"c", "u", "d", "r", "t"})


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_has_a_spec_and_a_spark_decoder_built_from_it(name: str) -> None:
    fmt = get_format(name)
    assert isinstance(fmt.spec, FormatSpec), f"{name} states no FormatSpec"
    if fmt.input_kind == "avro":
        # Avro records are normalized by the core format itself on the executors
        assert avro_records(name)
        assert FORMATS[name].spark is None
        return
    decoder = decoder_for(name)
    assert isinstance(decoder, SpecDecoder)
    assert decoder.spec is fmt.spec, "the Spark decoder reads another definition"
    module = FORMATS[name].spark
    if module is not None:
        assert (ROOT / "spark_bindings" / "formats" / f"{module}.py").is_file()


def _facts(spec: FormatSpec) -> set[str]:
    """Strings only a format's own definition should hold: its op codes and control
    spellings (other than the canonical ops), its position keys and exists flags."""
    out = {*spec.ops.codes, *spec.ops.controls} - CANONICAL_OPS
    position = spec.position
    out |= set(position.keys or ())
    for keys in (position.by_connector or {}).values():
        out |= set(keys)
    if spec.images.exists is not None:
        out |= set(spec.images.exists.flags)
    return out


def _literal_strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Dict):
        items = [k for k in node.keys if k is not None]
    elif isinstance(node, ast.Set | ast.List | ast.Tuple):
        items = list(node.elts)
    else:
        return []
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def _collections(path: Path) -> Iterator[tuple[int, list[str]]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        strings = _literal_strings(node)
        if len(strings) >= 2:
            yield getattr(node, "lineno", 0), strings


def test_no_op_flag_or_position_table_outside_contracts_formats() -> None:
    facts = {name: _facts(get_format(name).spec) for name in FORMATS}
    found = []
    for path in sorted((ROOT / "spark_bindings").rglob("*.py")):
        for line, strings in _collections(path):
            for name, known in facts.items():
                hits = sorted(set(strings) & known)
                if len(hits) >= 2:
                    found.append(f"{path.relative_to(ROOT)}:{line}: {name} facts {hits}")
    assert not found, "\n".join(found)


def test_every_logical_type_has_a_spark_rule_or_is_decoded_as_its_base() -> None:
    for name, entry in LOGICAL_TYPES.items():
        has_rule = entry.key in JSON_RULES
        assert has_rule != entry.as_base, (
            f"{name}: {'a Spark rule and as_base' if has_rule else 'no Spark rule, not as_base'}"
        )


def test_every_decoder_table_is_keyed_by_a_logical_types_kind_and_unit() -> None:
    from contracts.formats.dts_avro import _LOGICAL_FAMILIES

    keys = {entry.key for entry in LOGICAL_TYPES.values()}
    text_keys = {k for k in TEXT_DECODERS if isinstance(k, tuple)}
    for table, found in (
        ("JSON_RULES", set(JSON_RULES)),
        ("_SPECIALIZERS", set(_SPECIALIZERS)),
        ("dts _LOGICAL_FAMILIES", set(_LOGICAL_FAMILIES)),
        ("TEXT_DECODERS", text_keys),
    ):
        assert found <= keys, f"{table} has keys no logical type has: {found - keys}"


def test_no_logical_type_name_literal_outside_contracts_logical() -> None:
    names = set(LOGICAL_TYPES)
    found = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "contracts" / "logical.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value}")
    assert not found, "\n".join(found)
