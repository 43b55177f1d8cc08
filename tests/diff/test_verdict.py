"""The one verdict of a contract at its level (contracts.diff.verdict)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.contract import Contract, load_contract
from contracts.diff import Finding, Side
from contracts.diff.verdict import contract_verdict, schema_verdict

ORDERS = Path(__file__).resolve().parents[1] / "fixtures" / "registry" / "orders.yaml"


def _orders(**changes: Any) -> Contract:
    data = load_contract(ORDERS).to_dict()
    columns = changes.pop("columns", None)
    if columns is not None:
        data["columns"] = columns(data["columns"])
    data.update(changes)
    return Contract.model_validate(data)


def _scale(columns: list[dict[str, Any]], scale: str) -> list[dict[str, Any]]:
    out = []
    for c in columns:
        if c["field"] == "amount":
            c = {**c, "parameters": {**c["parameters"], "scale": scale}}
        out.append(c)
    return out


V1 = _orders()
V3 = _orders(columns=lambda cols: _scale(cols, "3"))


def test_a_decimal_scale_change_fails_the_gate_though_avro_accepts_it() -> None:
    found = contract_verdict(V3, [Side.of_contract(V1)])
    assert found.status == "changed"
    assert found.result.compatible  # the Avro checker sees bytes either way
    assert [f.rule for f in found.failing()] == ["decimal-scale-changed"]
    assert found.failed
    assert "decimal-scale-changed at value.after.amount" in found.refusal()
    assert found.refusal().startswith("contract 'pgserver1.public.orders' is not BACKWARD")


def test_fail_on_never_passes_the_same_change() -> None:
    found = contract_verdict(V3, [Side.of_contract(V1)], fail_on="never")
    assert not found.failed and found.failing() == []


def test_no_history_is_added_and_equal_to_latest_is_unchanged() -> None:
    assert contract_verdict(V1, []).status == "added"
    same = contract_verdict(V1, [Side.of_contract(V3), Side.of_contract(V1)], versions=[4, 7])
    assert (same.status, same.same_as, same.against, same.failed) == ("unchanged", 7, (7,), False)


def test_an_older_versions_text_is_a_rollback() -> None:
    found = contract_verdict(V1, [Side.of_contract(V1), Side.of_contract(V3)], fail_on="never")
    assert found.rollback and found.same_as == 1 and found.status == "changed"


def test_transitive_levels_are_judged_against_every_version() -> None:
    found = contract_verdict(
        V1,
        [Side.of_contract(V1), Side.of_contract(V3)],
        level="BACKWARD_TRANSITIVE",
        versions=[2, 5],
    )
    assert found.against == (2, 5)
    assert contract_verdict(V3, [Side.of_contract(V1)], versions=[9]).against == (9,)


@dataclass(frozen=True)
class _Exception:
    rule: str
    reason: str
    expired: bool = False


@dataclass(frozen=True)
class _Policy:
    items: tuple[_Exception, ...]

    def waiver(self, contract: str, finding: Finding) -> _Exception | None:
        return next((e for e in self.items if e.rule == finding.rule), None)


def test_an_exception_waives_the_finding_and_an_expired_one_does_not() -> None:
    history = [Side.of_contract(V1)]
    waived = contract_verdict(
        V3, history, exceptions=_Policy((_Exception("decimal-scale-changed", "re-scaled"),))
    )
    assert not waived.failed
    assert [w.finding.rule for w in waived.waived] == ["decimal-scale-changed"]
    assert waived.to_json()["waived"][0]["reason"] == "re-scaled"
    expired = contract_verdict(
        V3, history, exceptions=_Policy((_Exception("decimal-scale-changed", "x", True),))
    )
    assert expired.failed and [w.finding.rule for w in expired.expired] == ["decimal-scale-changed"]


def test_schema_verdict_names_real_version_numbers_and_the_level() -> None:
    old = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]}
    new = {"type": "record", "name": "r", "fields": [{"name": "b", "type": "int"}]}
    found = schema_verdict(new, [(4, old)], "BACKWARD")
    assert not found.compatible
    assert found.messages[0].startswith(
        "the new schema cannot read data written with version 4: at b:"
    )
    assert found.messages[-1] == "{compatibility: 'BACKWARD'}"
    assert schema_verdict(new, [], "FULL").compatible
