"""``GET /health``: is the service up, and what is it serving from."""

from __future__ import annotations

import os

from fastapi import APIRouter

from api.deps import CatalogDep, SettingsDep
from api.responses import Health

router = APIRouter(tags=["service"])


@router.get("/health", summary="Service health and configuration")
async def health(settings: SettingsDep, catalog: CatalogDep) -> Health:
    """Liveness plus where contracts come from; ``problems`` lists unreadable contract files;
    ``process`` is the id of the (worker) process that answered."""
    index = await catalog.index()
    return Health(
        status="ok",
        registry="embedded" if settings.embedded_registry else settings.registry_url,
        contracts_dir=str(settings.contracts_dir) if settings.contracts_dir else None,
        contracts=len(index),
        problems=list(catalog.problems),
        process=os.getpid(),
    )
