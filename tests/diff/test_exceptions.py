"""Which findings a configured exception covers, and how the verdict applies it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from contracts.contract import load_contract
from contracts.diff.exceptions import ChangeException, ExceptionSet, unmatched
from contracts.diff.model import Finding, Severity
from contracts.diff.side import Side
from contracts.diff.verdict import contract_verdict

FIX = Path(__file__).parent.parent / "fixtures" / "diff"


def finding(path: str, column: str | None, rule: str = "decimal-scale-changed") -> Finding:
    return Finding(rule, path, Severity.breaking, "m", column=column)


def exception(**kw: object) -> ChangeException:
    data: dict[str, object] = {
        "contract": "shop.orders",
        "rule": "decimal-scale-changed",
        "reason": "deliberate",
    }
    data.update(kw)
    return ChangeException.model_validate(data)


@pytest.mark.parametrize(
    ("path", "finding_path", "column", "covered"),
    [
        ("amount", "value.after.amount", "amount", True),
        ("value.after.amount", "value.after.amount", "amount", True),
        ("amount", "value.after.amount_due", "amount_due", False),
        ("address", "value.after.address.city", "address", True),
        ("address.city", "value.after.address.city", "address", True),
        ("address.zip", "value.after.address.city", "address", False),
        ("tags", "value.after.tags[]", "tags", True),
        ("id", "key.id", "id", True),
        (None, "value.after.anything", "anything", True),
    ],
)
def test_an_exception_covers_its_column_and_what_lies_under_it(
    path: str | None, finding_path: str, column: str, covered: bool
) -> None:
    assert exception(path=path).covers("shop.orders", finding(finding_path, column)) is covered


def test_an_exception_covers_only_its_contract_and_rule() -> None:
    e = exception(path="amount")
    assert not e.covers("shop.refunds", finding("value.after.amount", "amount"))
    assert not e.covers("shop.orders", finding("value.after.amount", "amount", "column-removed"))


def test_a_current_exception_wins_over_an_expired_one() -> None:
    old = exception(path="amount", until=date(2020, 1, 1))
    new = exception(path="amount", until=date(2030, 1, 1), reason="renewed")
    policy = ExceptionSet((old, new), on=date(2026, 11, 26))
    waiver = policy.waiver("shop.orders", finding("value.after.amount", "amount"))
    assert waiver is not None and waiver.reason == "renewed" and not waiver.expired
    alone = ExceptionSet((old,), on=date(2026, 11, 26))
    expired = alone.waiver("shop.orders", finding("value.after.amount", "amount"))
    assert expired is not None and expired.expired
    assert (
        ExceptionSet((old,), on=date(2020, 1, 1))
        .waiver(  # the until day itself still counts
            "shop.orders", finding("value.after.amount", "amount")
        )
        .expired
        is False
    )  # type: ignore[union-attr]


def test_registry_reasons_and_unknown_rules_cannot_be_excepted() -> None:
    with pytest.raises(ValidationError, match="cannot make the registry accept it"):
        exception(rule="avro-field-no-default")
    with pytest.raises(ValidationError, match="did you mean 'column-removed'"):
        exception(rule="column-remove")
    with pytest.raises(ValidationError, match="needs a reason"):
        exception(reason="   ")


def test_the_verdict_sets_aside_what_an_exception_covers() -> None:
    old = load_contract(FIX / "decimal-scale-changed" / "before.yaml")
    new = load_contract(FIX / "decimal-scale-changed" / "after.yaml")
    e = ChangeException.model_validate(
        {"contract": new.name, "rule": "decimal-scale-changed", "path": "amount", "reason": "r"}
    )
    plain = contract_verdict(new, [Side.of_contract(old)])
    assert plain.failed
    judged = contract_verdict(new, [Side.of_contract(old)], exceptions=ExceptionSet((e,)))
    assert not judged.failed and judged.result.findings == []
    assert [w.finding for w in judged.waived] == plain.result.findings
    assert unmatched([e], [(new.name, w.finding) for w in judged.waived]) == []
    assert unmatched([e], []) == [e]
