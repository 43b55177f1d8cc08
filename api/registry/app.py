"""The registry alone as a FastAPI app (tests, ``uvicorn --factory``, ``python -m api.registry``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.limits import HeadAsGet
from api.registry.errors import http_error
from api.registry.router import (
    create_registry_router,
    install_registry_error_handlers,
    registry_error_response,
    registry_json,
)
from api.registry.store import RegistryStore

DEFAULT_DB = Path(".cdc-contracts") / "registry.db"


def create_registry_app(db_path: str | Path | None = None) -> FastAPI:
    """A FastAPI app serving only the Schema Registry API from the SQLite file ``db_path``.

    Without an argument the path comes from ``CDC_CONTRACTS_REGISTRY_DB`` (so that
    ``uvicorn --factory api.registry.app:create_registry_app`` works), else
    ``.cdc-contracts/registry.db``.
    """
    path = Path(db_path or os.environ.get("CDC_CONTRACTS_REGISTRY_DB") or DEFAULT_DB)
    store = RegistryStore(path)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        store.close()

    app = FastAPI(
        title="cdc-contracts schema registry", docs_url=None, redoc_url=None, lifespan=lifespan
    )
    app.state.registry_store = store
    app.include_router(create_registry_router(store))
    install_registry_error_handlers(app)

    @app.get("/", include_in_schema=False)
    async def root() -> Response:
        return registry_json({})

    async def not_found(_request: Request, exc: Exception) -> Response:
        return registry_error_response(http_error(getattr(exc, "status_code", 404)))

    app.add_exception_handler(StarletteHTTPException, not_found)
    app.add_middleware(HeadAsGet)
    return app
