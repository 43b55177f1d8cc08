"""``cdc-contracts serve``: the contract API (and the embedded Schema Registry) with uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: typer.Typer) -> None:
    app.command(
        "serve",
        help="Serve the contract API, the catalog page and (by default) the embedded Schema Registry.",
    )(serve)


def serve(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port")] = 8081,
    registry_url: Annotated[
        str | None,
        typer.Option(help="an external Confluent-compatible registry (no embedded registry then)"),
    ] = None,
    registry_db: Annotated[
        Path | None,
        typer.Option(
            help="SQLite file of the embedded registry [default: ./.cdc-contracts/registry.db]"
        ),
    ] = None,
    contracts: Annotated[
        Path | None,
        typer.Option(
            "--contracts", exists=True, file_okay=False, help="also serve the contract files in DIR"
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help="environment variable holding the API key that writes require (PUT /contracts "
            "and the embedded registry's writes; sent as X-API-Key or as basic-auth password)"
        ),
    ] = None,
    read_requires_key: Annotated[
        bool, typer.Option(help="require the API key for reads too (the registry's included)")
    ] = False,
    cors_origin: Annotated[
        list[str] | None, typer.Option(help="allow this browser origin (CORS is off by default)")
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            min=1, max=64, help="worker processes (each keeps its own caches, kept consistent)"
        ),
    ] = 1,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    access_log: Annotated[bool, typer.Option(help="log every request")] = False,
) -> None:
    """Run uvicorn with the app from :func:`api.main.create_app` (uvloop and httptools when
    installed, as with ``uvicorn[standard]``)."""
    from contracts.errors import ContractsError

    if registry_url and registry_db:
        raise ContractsError("give --registry-url or --registry-db, not both", "serve")
    import os

    import uvicorn

    from api.main import SETTINGS_ENV, create_app
    from api.settings import Settings

    values: dict[str, object] = {
        "host": host,
        "port": port,
        "registry_url": registry_url,
        "contracts_dir": contracts,
        "api_key_env": api_key_env,
        "read_requires_key": read_requires_key,
        "cors_origins": tuple(cors_origin or ()),
    }
    if registry_db is not None:
        values["registry_db"] = registry_db
    settings = Settings(**values)  # type: ignore[arg-type]
    if read_requires_key and settings.api_key() is None:
        raise ContractsError(
            "--read-requires-key needs --api-key-env VAR with VAR set to the key", "serve"
        )
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "access_log": access_log,
        "timeout_graceful_shutdown": 5,
    }
    if workers == 1:
        uvicorn.run(create_app(settings), **options)
        return
    # worker processes import the app: the factory reads these settings back
    os.environ[SETTINGS_ENV] = settings.model_dump_json()
    uvicorn.run("api.main:create_app_from_environment", factory=True, workers=workers, **options)
