"""Build the contract API app: settings, catalog, routers, error handlers, middleware.

``create_app(settings)`` is the only entry point (``cdc-contracts serve`` calls it). With no
external registry URL the embedded Schema Registry is mounted at the root, so the service's
base URL also is a Schema Registry URL for any Confluent client.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import httpx
from fastapi import Depends, FastAPI, Request, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.cached import CachedRenderings
from api.catalog import Catalog
from api.deps import read_allowed, registry_access, require_read_key
from api.limits import BodyLimit, HeadAsGet, InvalidateOnRegistryWrite, allowed_methods
from api.locks import SubjectLocks, lock_directory, lock_directory_for
from api.offload import BusyError, Offload
from api.problems import install_problem_handlers, problem, problem_for_error, problem_response
from api.routers import catalog, contracts, diff, formats, health, infer
from api.settings import Settings
from contracts import __version__
from registry_sync.client import AsyncRegistryClient, RegistryConfig

if TYPE_CHECKING:
    from contracts.config import ProjectConfig

STATIC_DIR = Path(__file__).parent / "static"
API_ROUTERS = (health.router, formats.router, contracts.router, diff.router, infer.router)
#: the environment variable through which ``cdc-contracts serve --workers N`` hands its settings
#: (as JSON) to each worker process's :func:`create_app_from_environment`
SETTINGS_ENV = "CDC_CONTRACTS_SERVE_SETTINGS"


def create_app(settings: Settings | None = None) -> FastAPI:
    """The contract API (and, without ``registry_url``, the embedded registry) as one app."""
    settings = settings or Settings()
    app = FastAPI(
        title="cdc-contracts",
        summary="Contracts for change-data-capture streams: list, render, check, diff, infer.",
        version=__version__,
        docs_url=None,  # /docs and /redoc come from local files (api.routers.catalog)
        redoc_url=None,
        lifespan=_lifespan,
    )
    app.state.settings = settings
    store = _open_store(settings)
    app.state.registry_store = store
    # The embedded registry's listing needs no periodic refresh: this process drops it on its
    # own writes, and the SQLite data_version tells it about other processes' (other workers).
    # An external registry has other writers, so its listing is refreshed after the TTL.
    ttl = settings.catalog_ttl_seconds if settings.registry_url else math.inf
    changed = _data_version_watch(store) if store is not None else None
    registry = _registry_client(app, settings)
    app.state.catalog = Catalog(registry, settings.contracts_dir, ttl, changed)
    app.state.offload = Offload(
        settings.offload_workers, settings.offload_queue, settings.request_budget_seconds
    )
    locks_at = (
        lock_directory(settings.registry_db.parent)
        if settings.registry_url is None
        else lock_directory_for(settings.registry_url)
    )
    app.state.locks = SubjectLocks(locks_at)
    app.state.project = _project(settings)
    reads = [Depends(require_read_key)] if settings.read_requires_key else []
    for router in API_ROUTERS:
        app.include_router(router, dependencies=reads)
    app.include_router(catalog.router, dependencies=reads)
    # after the API's routes, so that matching a contract URL does not walk the registry's
    if store is not None:
        _mount_registry(app, store, settings)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    _install_errors(app, embedded=store is not None)
    _install_middleware(app, settings)
    return app


def create_app_from_environment() -> FastAPI:
    """The app with the settings ``cdc-contracts serve`` put in ``$CDC_CONTRACTS_SERVE_SETTINGS``
    (the uvicorn factory of each worker process), else from ``CDC_CONTRACTS_*`` variables."""
    given = os.environ.get(SETTINGS_ENV)
    return create_app(Settings.model_validate_json(given) if given else Settings())


def _project(settings: Settings) -> ProjectConfig:
    """The project configuration whose fail-on, exceptions and default level the gate applies
    (``serve --config``; none: the defaults, as ``check`` without a configuration)."""
    from contracts.config import ProjectConfig, load_config

    if settings.config_file is None:
        return ProjectConfig()
    return load_config(settings.config_file)


def _open_store(settings: Settings) -> Any:
    if not settings.embedded_registry:
        return None
    from api.registry.store import RegistryStore

    settings.registry_db.parent.mkdir(parents=True, exist_ok=True)
    return RegistryStore(settings.registry_db)


def _data_version_watch(store: Any) -> Callable[[], bool]:
    """A check that is True once after each commit by another connection to the store's file."""
    last = store.data_version()

    def changed() -> bool:
        nonlocal last
        now = store.data_version()
        if now == last:
            return False
        last = now
        return True

    return changed


def _mount_registry(app: FastAPI, store: Any, settings: Settings) -> None:
    from api.registry.router import (
        create_registry_router,
        install_registry_error_handlers,
        install_registry_root,
    )

    app.include_router(create_registry_router(store, registry_access(settings)))
    install_registry_error_handlers(app)
    install_registry_root(app)  # GET / with the registry's Accept: {} (the catalog page otherwise)


def _registry_answer(path: str, status: int) -> Response | None:
    """Confluent's answer to an HTTP-level refusal on a registry path (None elsewhere)."""
    from api.registry.errors import http_error
    from api.registry.router import is_registry_path, registry_error_response

    if not is_registry_path(path):
        return None
    return registry_error_response(http_error(status))


def _registry_client(app: FastAPI, settings: Settings) -> AsyncRegistryClient:
    """The registry, through the project's one client: in process (the embedded registry, over
    ASGI) or over the network (an external one)."""
    if settings.registry_url is None:
        # the contract API's own requests pass the registry's key check (as basic auth)
        key = settings.api_key()
        config = RegistryConfig(
            url="http://registry",
            basic_auth=f"cdc-contracts:{key}" if key else None,
            max_retries=0,
        )
        transport = httpx.ASGITransport(app=app)
        return AsyncRegistryClient(config, transport=transport, label="embedded registry")
    return AsyncRegistryClient(RegistryConfig(url=settings.registry_url, max_retries=2))


def _install_errors(app: FastAPI, embedded: bool) -> None:
    install_problem_handlers(app)
    from api.catalog import RefusedContractError, RegistryIncompatibleError, RollbackError
    from api.routers.contracts import refusal_problem

    on_problem_http_error = cast(
        Callable[[Request, Exception], Awaitable[Response]],
        app.exception_handlers[StarletteHTTPException],
    )

    async def on_refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RefusedContractError | RegistryIncompatibleError | RollbackError)
        return problem_response(refusal_problem(exc, request.url.path))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        answer = _registry_answer(request.url.path, exc.status_code) if embedded else None
        if answer is None:
            answer = await on_problem_http_error(request, exc)
        if exc.status_code == 405:  # every method some route of this path takes
            answer.headers["Allow"] = ", ".join(allowed_methods(request.app, request.scope))
        return answer

    async def on_busy(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BusyError)
        body = problem_for_error(exc, request.url.path)
        return problem_response(body, headers={"Retry-After": str(exc.retry_after)})

    async def on_too_deep(request: Request, exc: Exception) -> Response:
        """Input nested deeper than the code can follow (a deep schema or contract)."""
        detail = "the input is nested too deeply to be processed"
        if embedded:
            from api.registry.errors import invalid_schema
            from api.registry.router import is_registry_path, registry_error_response

            if is_registry_path(request.url.path):
                return registry_error_response(invalid_schema(detail))
        body = problem(
            422, title="Input nested too deeply", detail=detail, instance=request.url.path
        )
        return problem_response(body)

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        if embedded:
            from api.registry.errors import STORE_ERROR, RegistryError
            from api.registry.router import is_registry_path, registry_error_response

            if is_registry_path(request.url.path):
                reason = f"Internal Server Error: unexpected {type(exc).__name__}"
                return registry_error_response(RegistryError(STORE_ERROR, reason, status=500))
        return problem_response(
            problem(500, detail=f"unexpected {type(exc).__name__}", instance=request.url.path)
        )

    for refusal in (RefusedContractError, RegistryIncompatibleError, RollbackError):
        app.add_exception_handler(refusal, on_refused)
    app.add_exception_handler(BusyError, on_busy)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(RecursionError, on_too_deep)
    app.add_exception_handler(Exception, on_unexpected)


def _install_middleware(app: FastAPI, settings: Settings) -> None:
    # innermost: CORS (when on) also wraps the answers it gives from the cache
    app.add_middleware(
        CachedRenderings,
        catalog=app.state.catalog,
        read_key=lambda given: read_allowed(settings, given),
    )
    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "PUT"],
            allow_headers=["Content-Type", "X-API-Key", "Authorization"],
        )
    if settings.embedded_registry:
        app.add_middleware(InvalidateOnRegistryWrite, invalidate=app.state.catalog.invalidate)
    too_large = (lambda path: _registry_answer(path, 413)) if settings.embedded_registry else None
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, answer_for=too_large)
    app.add_middleware(HeadAsGet)  # outermost: every GET answer, cached ones too


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    # the workers import the project in the background: the service answers at once, and the
    # first request that needs a worker waits for it
    warming = asyncio.create_task(app.state.offload.start())
    yield
    warming.cancel()
    app.state.offload.close()
    await app.state.catalog.registry.aclose()
    if app.state.registry_store is not None:
        app.state.registry_store.close()
