"""The registry listing: how many requests it costs, and that it lists the live versions.

The catalog talks to a real registry app (``api.registry.app``) over the Confluent REST
protocol, in process; an httpx event hook counts the requests it sends.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from test_api import orders

from api.catalog import Catalog, put_through_gate, registered_entries
from api.locks import SubjectLocks
from api.offload import Offload
from api.registry.app import create_registry_app
from contracts.contract import Contract
from registry_sync.client import AsyncRegistryClient, RegistryConfig


def widened(name: str, column: str) -> Contract:
    data: dict[str, Any] = orders(name)
    data["columns"].append({"field": column, "type": "string", "optional": True})
    return Contract.model_validate(data)


async def listing_with_request_count(tmp: Path) -> tuple[dict[str, list[int]], list[str], int]:
    sent: list[str] = []

    async def count(request: httpx.Request) -> None:
        sent.append(f"{request.method} {request.url.path}")

    app = create_registry_app(tmp / "registry.db")
    transport = httpx.ASGITransport(app=app)
    config = RegistryConfig(url="http://registry", max_retries=0)
    registry = AsyncRegistryClient(config, transport=transport)
    registry._http.event_hooks["request"].append(count)
    gate = {"locks": SubjectLocks(None), "offload": Offload(1, 4, 30.0, processes=False)}
    catalog = Catalog(registry)
    try:
        for name in ("l.one", "l.two"):
            await put_through_gate(catalog, Contract.model_validate(orders(name)), **gate)
        for column in ("c1", "c2"):
            await put_through_gate(catalog, widened("l.three", column), **gate)
        await registry.delete_version("t.l.three-value", 1)
        subjects = len(await registry.subjects())
        sent.clear()
        problems: list[str] = []
        entries = await registered_entries(registry, problems)
        assert problems == []
    finally:
        await registry.aclose()
    versions = {name: [r.version for r in e.versions] for name, e in entries.items()}
    return versions, sent, subjects


def test_listing_asks_once_per_subject_and_lists_live_versions(tmp_path: Path) -> None:
    versions, sent, subjects = asyncio.run(listing_with_request_count(tmp_path))
    assert versions == {"l.one": [1], "l.two": [1], "l.three": [2]}
    assert subjects == 6  # key and value of each
    latest = [s for s in sent if s.endswith("/versions/latest")]
    assert len(latest) == subjects
    # the subject list, the latest of each subject, and the version list of the one contract
    # whose latest version is above 1 (its version 1 was deleted, so [2] and not [1, 2])
    assert sent.count("GET /subjects/t.l.three-value/versions") == 1
    assert len(sent) == 1 + subjects + 1
