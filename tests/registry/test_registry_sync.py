"""registry_sync against the embedded registry over real HTTP: plan, push, pull, baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from contracts.contract import load_contract
from contracts.errors import InputError
from registry_sync.baseline import RegistryBaseline
from registry_sync.client import RegistryClient, RegistryConfig
from registry_sync.desired import desired_subjects
from registry_sync.naming import NamingError, SubjectNameStrategy, subject_for
from registry_sync.sync import Action, Outcome, plan, pull, push
from registry_sync.wire import frame, parse_frame

from .helpers import count_requests, make_contract, write_contracts

OPTIONAL_NOTE2 = {"field": "note2", "type": "string", "optional": True}
REQUIRED_SKU = {"field": "sku", "type": "string", "optional": False}


@pytest.fixture
def client(registry):
    with RegistryClient(RegistryConfig(url=registry.url, retry_wait_ms=10)) as c:
        yield c


def test_subject_naming_strategies() -> None:
    assert subject_for("shop.orders", "value") == "shop.orders-value"
    assert subject_for("shop.orders", "key", "topic") == "shop.orders-key"
    assert subject_for("t", "value", SubjectNameStrategy.RECORD, "a.b.Envelope") == "a.b.Envelope"
    assert subject_for("t", "key", "topic-record", "a.b.Key") == "t-a.b.Key"
    with pytest.raises(NamingError):
        subject_for("t", "value", "record")
    with pytest.raises(NamingError):
        subject_for("t", "value", "by-moon-phase")


def test_wire_format() -> None:
    data = frame(258, b"payload")
    assert data[:5] == b"\x00\x00\x00\x01\x02"
    assert parse_frame(data) == (258, b"payload")
    with pytest.raises(InputError):
        parse_frame(b"\x00\x01")
    with pytest.raises(InputError):
        parse_frame(b"\x01\x00\x00\x00\x01x")


def test_push_then_rerun_changes_nothing_and_unchanged_costs_one_request(client, unique) -> None:
    contracts = [make_contract(f"{unique}.orders"), make_contract(f"{unique}.items")]
    desired = desired_subjects(contracts)
    assert [d.subject for d in desired] == [
        f"{unique}.orders-value",
        f"{unique}.orders-key",
        f"{unique}.items-value",
        f"{unique}.items-key",
    ]
    first = push(client, desired)
    assert [r.outcome for r in first] == [Outcome.CREATED] * 4
    assert client.compatibility(f"{unique}.orders-value") == "BACKWARD"

    seen = count_requests(client)
    again = plan(client, desired)
    assert [p.action for p in again] == [Action.UNCHANGED] * 4
    assert len(seen) == 4 and all(s.startswith("POST /subjects/") for s in seen)
    assert [r.outcome for r in push(client, desired)] == [Outcome.UNCHANGED] * 4


def test_plan_kinds_and_refusal_does_not_stop_others(client, unique) -> None:
    base = [
        make_contract(f"{unique}.a"),
        make_contract(f"{unique}.b"),
        make_contract(f"{unique}.c"),
    ]
    push(client, desired_subjects(base))
    changed = [
        make_contract(f"{unique}.a", [OPTIONAL_NOTE2]),  # compatible: new version
        make_contract(f"{unique}.b", [REQUIRED_SKU]),  # BACKWARD-incompatible
        make_contract(f"{unique}.c", owner="team-c", compatibility="FULL"),  # identity + level
    ]
    planned = {p.subject: p for p in plan(client, desired_subjects(changed))}
    assert planned[f"{unique}.a-value"].action is Action.NEW_VERSION
    assert planned[f"{unique}.a-key"].action is Action.UNCHANGED
    refused = planned[f"{unique}.b-value"]
    assert refused.action is Action.INCOMPATIBLE
    assert any("sku" in m for m in refused.messages)
    assert any("sku" in f["path"] or "sku" in f["message"] for f in refused.findings)
    level = planned[f"{unique}.c-value"]
    assert level.action is Action.METADATA and level.level_change
    assert (level.level_from, level.level_to) == ("BACKWARD", "FULL")

    results = {r.plan.subject: r for r in push(client, desired_subjects(changed))}
    assert results[f"{unique}.a-value"].outcome is Outcome.REGISTERED
    assert results[f"{unique}.a-value"].version == 2
    assert results[f"{unique}.b-value"].outcome is Outcome.REFUSED
    assert results[f"{unique}.c-value"].outcome is Outcome.REGISTERED
    assert client.compatibility(f"{unique}.c-value") == "FULL"
    rerun = plan(client, desired_subjects(changed))
    assert {p.action for p in rerun if not p.subject.startswith(f"{unique}.b")} == {
        Action.UNCHANGED
    }


def test_pull_rebuilds_contracts_and_round_trips(client, unique, tmp_path: Path) -> None:
    contracts = [
        make_contract(f"{unique}.x", owner="data-team", description="Orders.\nTwo lines."),
        make_contract(f"{unique}.y", key=[]),
    ]
    push(client, desired_subjects(contracts))
    report = pull(client, tmp_path / "pulled", pattern=f"^{unique}\\.")
    assert report.contracts == [f"{unique}.x", f"{unique}.y"]
    for contract in contracts:
        assert load_contract(tmp_path / "pulled" / f"{contract.name}.yaml") == contract
    pulled = [load_contract(p) for p in report.written]
    assert {p.action for p in plan(client, desired_subjects(pulled))} == {Action.UNCHANGED}


def test_record_name_strategy_and_baseline(client, registry, unique) -> None:
    v1 = make_contract(f"{unique}.r")
    v2 = make_contract(f"{unique}.r", [OPTIONAL_NOTE2])
    for contract in (v1, v2):
        push(client, desired_subjects([contract], "record"))
    assert client.versions(f"{unique}.r.Envelope") == [1, 2]
    baseline = RegistryBaseline(registry.url, strategy="record")
    try:
        assert baseline.previous(v2) == [v1, v2]
        assert len(baseline.previous_avro(v2, "key")) == 1
    finally:
        baseline.close()


def test_cli_plan_push_pull(registry, unique, tmp_path: Path) -> None:
    source = write_contracts(tmp_path / "contracts", [make_contract(f"{unique}.cli")])
    args = ["--url", registry.url, "--output-format", "json"]
    planned = run("registry", "plan", str(source), *args)
    assert planned.code == 0, planned.output
    assert {s["action"] for s in json.loads(planned.text)["subjects"]} == {"create"}
    dry = run("registry", "push", str(source), "--dry-run", *args)
    assert {s["outcome"] for s in json.loads(dry.text)["subjects"]} == {"would-apply"}
    pushed = run("registry", "push", str(source), *args)
    assert pushed.code == 0 and "created" in pushed.text
    text = run("registry", "plan", str(source), "--url", registry.url)
    assert text.code == 0 and "unchanged" in text.text
    out = tmp_path / "pulled"
    pulled = run(
        "registry", "pull", "--url", registry.url, "-o", str(out), "--subject-pattern", unique
    )
    assert pulled.code == 0 and (out / f"{unique}.cli.yaml").exists()

    breaking = write_contracts(tmp_path / "v2", [make_contract(f"{unique}.cli", [REQUIRED_SKU])])
    refused = run("registry", "push", str(breaking), *args)
    assert refused.code == 1
    outcome = {s["subject"]: s["outcome"] for s in json.loads(refused.text)["subjects"]}
    assert outcome[f"{unique}.cli-value"] == "refused"


def test_clear_errors_carry_the_error_code(registry, unique) -> None:
    client = RegistryClient(RegistryConfig(url=registry.url, max_retries=0))
    with pytest.raises(Exception) as info:
        client.register(f"{unique}-value", '{"type": "record", "name": "R"}')
    assert "HTTP 422, error_code 42201" in str(info.value)
    dead = RegistryClient(RegistryConfig(url="http://127.0.0.1:9", max_retries=1, retry_wait_ms=1))
    with pytest.raises(Exception) as info:
        dead.subjects()
    assert "unreachable" in str(info.value)
