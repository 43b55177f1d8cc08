"""The contract file: what loading refuses, with the file, line and key, before any command
needs the contract (a typo must not surface later as a bogus diff finding or a render error
that names no file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.contract import load_contract, parse_contract
from contracts.errors import ContractFileError
from contracts.translate.spark import connect_to_spark

ROOT = Path(__file__).parent.parent
GOOD = """\
name: shop.orders
format: debezium-json
table: {database: shop, name: orders}
key: [id]
columns:
  - {field: id, type: int64}
  - {field: amount, type: bytes, optional: true, name: org.apache.kafka.connect.data.Decimal, parameters: {scale: '2', connect.decimal.precision: '10'}}
  - {field: note, type: string, optional: true, default: none}
"""


def refused(text: str) -> str:
    with pytest.raises(ContractFileError) as info:
        parse_contract(text, "orders.yaml")
    said = info.value.one_line()
    assert "\n" not in said
    return said


def test_the_good_contract_loads() -> None:
    contract = parse_contract(GOOD, "orders.yaml")
    assert contract.row_schema.field_names() == ["id", "amount", "note"]


def test_an_unknown_format_is_refused_at_its_line_with_the_closest_name() -> None:
    said = refused(GOOD.replace("format: debezium-json", "format: debezium-jsn"))
    assert said.startswith("orders.yaml:2: format: unknown format 'debezium-jsn'")
    assert "did you mean 'debezium-json'?" in said


@pytest.mark.parametrize(
    ("before", "after", "line", "what"),
    [
        (
            "key: [id]\n",
            "key: [id]\nkey: [note]\n",
            5,
            "duplicate key 'key' (first given at line 4)",
        ),
        (
            "{database: shop, name: orders}",
            "{database: shop, name: orders, name: x}",
            3,
            "duplicate key 'name'",
        ),
    ],
)
def test_a_key_given_twice_is_refused(before: str, after: str, line: int, what: str) -> None:
    said = refused(GOOD.replace(before, after))
    assert said.startswith(f"orders.yaml:{line}: ")
    assert what in said


@pytest.mark.parametrize(
    ("parameters", "what"),
    [
        ("{scale: 'two', connect.decimal.precision: '10'}", "scale 'two' is not an integer"),
        ("{connect.decimal.precision: '10'}", "needs a 'scale' parameter"),
        ("{scale: '2', connect.decimal.precision: '0'}", "precision '0' is not a positive integer"),
        (
            "{scale: '2', connect.decimal.precision: ten}",
            "precision 'ten' is not a positive integer",
        ),
    ],
)
def test_a_decimal_needs_an_integer_scale_and_precision(parameters: str, what: str) -> None:
    said = refused(GOOD.replace("{scale: '2', connect.decimal.precision: '10'}", parameters))
    assert said.startswith("orders.yaml:7: ")
    assert "columns[1].parameters" in said and what in said


def test_a_default_that_does_not_fit_its_type_is_refused() -> None:
    said = refused(
        GOOD.replace("{field: id, type: int64}", "{field: id, type: int64, default: abc}")
    )
    assert said.startswith("orders.yaml:6: ")
    assert "columns[0].default: default a string does not fit a int64 schema" in said


@pytest.mark.parametrize(
    ("column", "where"),
    [
        ("{field: '', type: string}", "columns[3] needs 'field'"),
        (
            "{field: s, type: struct, fields: [{field: '', type: string}]}",
            "columns[3].fields[0]: a struct field needs a non-empty 'field' name",
        ),
    ],
)
def test_every_column_and_struct_field_is_named(column: str, where: str) -> None:
    said = refused(GOOD + f"  - {column}\n")
    assert said.startswith("orders.yaml:9: ") and where in said


@pytest.mark.parametrize(
    ("precision", "scale", "spark"),
    [("5", "-2", "decimal(7,0)"), ("2", "5", "decimal(5,5)"), ("10", "2", "decimal(10,2)")],
)
def test_out_of_spec_decimal_scales_load_and_keep_every_digit_in_spark(
    precision: str, scale: str, spark: str
) -> None:
    """Connect allows a negative scale (Oracle's NUMBER(p,-s)) and a scale above the precision;
    the Spark type must hold every value (it printed DECIMAL(1,1) for precision 1, scale 2)."""
    text = GOOD.replace(
        "{scale: '2', connect.decimal.precision: '10'}",
        f"{{scale: '{scale}', connect.decimal.precision: '{precision}'}}",
    )
    contract = parse_contract(text, "orders.yaml")
    amount = contract.row_schema.require_field("amount")
    assert connect_to_spark(amount) == spark


def test_every_contract_shipped_in_the_repository_still_loads() -> None:
    shipped = [
        p
        for pattern in ("tests/fixtures/**/*.yaml", "examples/**/*.yaml")
        for p in ROOT.glob(pattern)
        if "columns:" in p.read_text(encoding="utf-8")
    ]
    assert len(shipped) > 10
    for path in shipped:
        load_contract(path)


def test_yaml_aliases_are_refused_in_linear_time() -> None:
    """Nested aliases multiply: 26 levels of four references each would take minutes to walk
    (and the contract API parses request bodies)."""
    import time

    from contracts.diff.loading import load_contract_text

    bomb = (
        GOOD
        + "options:\n  a0: &a0 [1, 2, 3, 4]\n"
        + "".join(
            f"  a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]\n" for i in range(1, 27)
        )
    )
    for load in (parse_contract, load_contract_text):
        started = time.perf_counter()
        with pytest.raises(ContractFileError, match="YAML aliases are not allowed"):
            load(bomb, "orders.yaml")
        assert time.perf_counter() - started < 1.0
