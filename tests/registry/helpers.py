"""Contracts for the registry tests, derived from a real debezium-json contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contracts.contract import Contract, dump_contract, load_contract

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "registry" / "orders.yaml"
_BASE = load_contract(FIXTURE)


def make_contract(
    name: str,
    extra_columns: list[dict[str, Any]] | None = None,
    **changes: Any,
) -> Contract:
    """The orders contract renamed (topic = name), with extra columns and top-level changes."""
    data = _BASE.to_dict()
    data["name"] = name
    data["topic"] = name
    data["options"] = {
        **data["options"],
        "row_name": f"{name}.Value",
        "key_name": f"{name}.Key",
        "envelope_name": f"{name}.Envelope",
    }
    data["columns"] = [*data["columns"], *(extra_columns or [])]
    data.update(changes)
    return Contract.model_validate(data)


def write_contracts(directory: Path, contracts: list[Contract]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for contract in contracts:
        (directory / f"{contract.name}.yaml").write_text(dump_contract(contract), encoding="utf-8")
    return directory


def count_requests(client: Any) -> list[str]:
    """Record every HTTP request the registry client sends."""
    seen: list[str] = []

    def hook(request: Any) -> None:
        seen.append(f"{request.method} {request.url.path}")

    client._http.event_hooks["request"].append(hook)
    return seen
