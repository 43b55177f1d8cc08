"""``registry subjects | describe | set-level | delete`` (#23 item 9) and the plan/push text
(#23 item 10), with the real command against a real registry process."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import yaml
from clirun import run

from .conftest import RegistryServer
from .helpers import make_contract, write_contracts

DECIMAL_SCALE_3 = {"scale": "3", "connect.decimal.precision": "10"}


def pushed(registry: RegistryServer, tmp_path: Path, name: str) -> Path:
    directory = write_contracts(tmp_path / "c", [make_contract(name)])
    assert run("registry", "push", str(directory), "--url", registry.url).code == 0
    return directory


def test_subjects_describe_and_set_level(
    registry: RegistryServer, tmp_path: Path, unique: str
) -> None:
    pushed(registry, tmp_path, f"{unique}.orders")
    url = ("--url", registry.url)
    listed = run("registry", "subjects", "--prefix", unique, *url)
    assert listed.code == 0
    assert listed.text.splitlines() == [f"{unique}.orders-key", f"{unique}.orders-value"]
    as_json = json.loads(
        run("registry", "subjects", "--prefix", unique, *url, "--output-format", "json").text
    )
    assert as_json["subjects"] == [f"{unique}.orders-key", f"{unique}.orders-value"]

    described = run(
        "registry", "describe", f"{unique}.orders-value", *url, "--output-format", "json"
    )
    found = json.loads(described.text)
    assert (found["version"], found["versions"], found["compatibility"]) == (1, [1], "BACKWARD")
    assert found["metadata"]["cdc.contract.name"] == f"{unique}.orders"
    assert found["schema"]["type"] == "record"
    text = run("registry", "describe", f"{unique}.orders-value", "--version", "1", *url).text
    assert f"contract       {unique}.orders" in text and '"type": "record"' in text
    missing = run("registry", "describe", f"{unique}.nope-value", *url)
    assert missing.code == 2
    assert missing.err.strip() == f"error: {unique}.nope-value: no such subject"

    changed = run("registry", "set-level", f"{unique}.orders-value", "full_transitive", *url)
    assert changed.code == 0
    assert changed.text.strip() == f"{unique}.orders-value: BACKWARD → FULL_TRANSITIVE"
    level = httpx.get(f"{registry.url}/config/{unique}.orders-value").json()
    assert level == {"compatibilityLevel": "FULL_TRANSITIVE"}
    bad = run("registry", "set-level", f"{unique}.orders-value", "SIDEWAYS", *url)
    assert bad.code == 2 and "unknown level 'SIDEWAYS'" in bad.err


def test_delete_asks_or_needs_yes(registry: RegistryServer, tmp_path: Path, unique: str) -> None:
    pushed(registry, tmp_path, f"{unique}.orders")
    subject = f"{unique}.orders-key"
    url = ("--url", registry.url)
    refused = run("registry", "delete", subject, *url)  # stdin is not a terminal
    assert refused.code == 2
    assert "refusing to delete subject" in refused.err and "--yes" in refused.err
    assert httpx.get(f"{registry.url}/subjects/{subject}/versions").json() == [1]

    soft = run("registry", "delete", subject, "--version", "1", "--yes", *url)
    assert soft.code == 0 and soft.text.strip() == f"deleted {subject} version(s) 1"
    assert httpx.get(f"{registry.url}/subjects/{subject}/versions").status_code == 404
    gone = run(
        "registry", "delete", subject, "--permanent", "--yes", *url, "--output-format", "json"
    )
    assert gone.code == 0, gone.err
    assert json.loads(gone.text) == {"subject": subject, "deleted": [1], "permanent": True}
    listed = run("registry", "subjects", "--deleted", "--prefix", unique, *url).text.split()
    assert subject not in listed
    again = run("registry", "delete", subject, "--yes", *url)
    assert again.code == 2 and "no such subject" in again.err


def test_plan_text_is_one_row_per_subject_with_numbered_reasons(
    registry: RegistryServer, tmp_path: Path, unique: str
) -> None:
    name = f"{unique}.orders"
    directory = pushed(registry, tmp_path, name)
    changed = make_contract(name)
    data = changed.to_dict()
    amount = next(c for c in data["columns"] if c["field"] == "amount")
    amount["parameters"] = DECIMAL_SCALE_3
    newcomer = make_contract(f"{unique}.new", compatibility="FULL")
    write_contracts(directory, [type(changed).model_validate(data), newcomer])
    plan = run("registry", "plan", str(directory), "--url", registry.url)
    assert plan.code == 1, plan.err
    lines = plan.text.splitlines()
    rows = {line.split()[0]: line.split()[2:] for line in lines[3:7]}
    assert rows[f"{name}-value"] == ["incompatible", "1", "BACKWARD"]
    assert rows[f"{name}-key"] == ["unchanged", "1", "BACKWARD"]
    assert rows[f"{unique}.new-value"] == ["create", "new", "→", "1", "FULL"]
    why = plan.text.split("why:\n", 1)[1]
    flat = " ".join(why.split())
    assert flat.startswith(f"1. {name}-value: contract '{name}' is not BACKWARD compatible")
    assert "- decimal-scale-changed at value.after.amount: Column amount changed decimal" in flat
    assert "- ->" not in plan.text and "Action." not in plan.text and "{'" not in plan.text
    assert all(len(line) <= 80 for line in why.splitlines())


def test_plan_and_push_read_the_configuration(
    registry: RegistryServer, tmp_path: Path, unique: str
) -> None:
    """registry.url, the contracts directory and the exceptions come from cdc-contracts.yaml."""
    name = f"{unique}.orders"
    directory = pushed(registry, tmp_path, name)
    data = make_contract(name).to_dict()
    amount = next(c for c in data["columns"] if c["field"] == "amount")
    amount["parameters"] = DECIMAL_SCALE_3
    (directory / f"{name}.yaml").write_text(yaml.safe_dump(data))
    config = tmp_path / "cdc-contracts.yaml"
    config.write_text(
        f"version: 1\ncontracts: {directory}\nregistry:\n  url: {registry.url}\n"
        f"exceptions:\n  - contract: {name}\n    rule: decimal-scale-changed\n"
        "    reason: tenths of a cent from release 42 on\n"
    )
    planned = run("registry", "plan", "--config", str(config), "--output-format", "json")
    assert planned.code == 0, planned.text + planned.err
    actions = {s["subject"]: s["action"] for s in json.loads(planned.text)["subjects"]}
    assert actions[f"{name}-value"] == "new-version"
    config.write_text(f"version: 1\ncontracts: {directory}\nregistry:\n  url: {registry.url}\n")
    refused = run("registry", "push", "--config", str(config))
    assert refused.code == 1 and "decimal-scale-changed" in refused.text
    no_url = run("registry", "plan", str(directory), "--config", str(tmp_path / "none.yaml"))
    assert no_url.code == 2 and no_url.err.startswith("error: ")
