"""A catalog worth looking at: contracts inferred from every sample topic (with owners and
descriptions), one with three registered versions (a column added, then a decimal scale changed
and the note documented), and two contract files that cannot be read."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import yaml
from api_server import API_KEY, ROOT, register_directly

from contracts.contract import dump_contract
from contracts.formats.base import InferOptions
from contracts.pipeline import open_stream

TOPICS = ROOT / "examples" / "topics"
ORDERS = ROOT / "tests" / "fixtures" / "debezium-json" / "postgres-orders.expected.yaml"
EVOLVING = "checkout.orders"
OWNERS = {
    "debezium-json": "team-checkout",
    "canal-json": "team-catalog",
    "dts-avro": "team-payments",
}


def inferred_contracts() -> list[dict[str, Any]]:
    """One contract per sample topic, as ``cdc-contracts infer`` writes it."""
    found = []
    for path in sorted(TOPICS.glob("*/*")):
        if not path.is_file():
            continue
        stream = open_stream([path], path.parent.name)
        result = stream.format.infer(
            stream.messages(), InferOptions(name=path.stem, topic=path.stem)
        )
        data = result.contract.to_dict()
        owner = OWNERS.get(path.parent.name)
        if owner:
            data["owner"] = owner
        data["description"] = (
            f"Changes of {result.contract.table_id.qualified()} ({path.parent.name})."
        )
        found.append(data)
    return found


def evolving_versions() -> list[dict[str, Any]]:
    """Three versions of the orders contract: v2 adds a column, v3 widens a decimal's scale
    (breaking) and documents a column."""
    v1 = yaml.safe_load(ORDERS.read_text())
    v1.update(
        name=EVOLVING,
        topic="checkout.orders",
        owner="team-checkout",
        compatibility="NONE",
        description="Orders placed in the web shop, one row per order (Debezium, PostgreSQL).",
    )
    v2 = copy.deepcopy(v1)
    v2["columns"].append(
        {"field": "coupon", "type": "string", "optional": True, "doc": "Promotion code, if any."}
    )
    v3 = copy.deepcopy(v2)
    amount = next(c for c in v3["columns"] if c["field"] == "amount")
    amount["parameters"]["scale"] = "3"
    note = next(c for c in v3["columns"] if c["field"] == "note")
    note["doc"] = "Free text the customer wrote at checkout; may hold a very long sentence."
    return [v1, v2, v3]


def seed(url: str, contracts_dir: Path) -> None:
    """Write a contract file and two broken ones, then register every contract (the evolving
    one three times: each write refreshes the catalog's listing)."""
    from contracts.contract import Contract

    contracts_dir.mkdir(parents=True, exist_ok=True)
    (contracts_dir / "broken.yaml").write_text("name: broken\nformat: debezium-json\ntopix: x\n")
    (contracts_dir / "typo.yaml").write_text("name: typo\nformat: debezium-jsn\n")
    contract = yaml.safe_load(ORDERS.read_text())
    contract.update(name="files.orders", topic="files.orders", owner="team-data")
    (contracts_dir / "files.orders.yaml").write_text(
        dump_contract(Contract.model_validate(contract))
    )
    headers = {"X-API-Key": API_KEY, "Content-Type": "application/yaml"}
    *passing, breaking = evolving_versions()
    with httpx.Client(base_url=url, timeout=60) as client:
        for data in [*inferred_contracts(), *passing]:
            answer = client.put(
                f"/contracts/{data['name']}", content=yaml.safe_dump(data), headers=headers
            )
            assert answer.status_code in (200, 201), answer.text
        # the gate refuses a decimal scale change (as `check` does): v3 reaches the registry
        # past it, as another tool would register it
        refused = client.put(
            f"/contracts/{breaking['name']}", content=yaml.safe_dump(breaking), headers=headers
        )
        assert refused.status_code == 409, refused.text
        register_directly(client, breaking, headers={"X-API-Key": API_KEY})
