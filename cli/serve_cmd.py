"""``cdc-contracts serve``: the contract API (and the embedded Schema Registry) with uvicorn."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import refuse_under_a_file
from cli.project_config import ConfigOpt


class LogLevel(enum.StrEnum):
    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"
    debug = "debug"


def register(app: typer.Typer) -> None:
    app.command(
        "serve",
        help="Serve the contract API, the catalog page and (by default) the embedded Schema Registry.",
    )(serve)


def serve(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, metavar="N", help="TCP port")] = 8081,
    registry_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="an external Confluent-compatible registry (no embedded registry then)",
        ),
    ] = None,
    registry_db: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="SQLite file of the embedded registry [default: ./.cdc-contracts/registry.db]",
        ),
    ] = None,
    contracts: Annotated[
        Path | None,
        typer.Option(
            "--contracts",
            exists=True,
            file_okay=False,
            metavar="DIR",
            help="also serve the contract files in DIR",
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            metavar="VAR",
            help="environment variable holding the API key that writes require (PUT /contracts "
            "and the embedded registry's writes; sent as X-API-Key or as basic-auth password)",
        ),
    ] = None,
    read_requires_key: Annotated[
        bool,
        typer.Option(
            "--read-requires-key",
            help="require the API key for reads too (the registry's included)",
        ),
    ] = False,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option(metavar="ORIGIN", help="allow this browser origin (CORS is off by default)"),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            metavar="N",
            help="worker processes (each keeps its own caches, kept consistent)",
        ),
    ] = 1,
    log_level: Annotated[
        LogLevel, typer.Option(case_sensitive=False, help="server log level")
    ] = LogLevel.info,
    access_log: Annotated[bool, typer.Option("--access-log", help="log every request")] = False,
    config: ConfigOpt = None,
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
    from cli.project_config import project_config

    # cdc-contracts.yaml: its registry (unless a flag chose one), its contracts directory; the
    # API's gate reads its exceptions, fail_on and compatibility from the file itself
    project = project_config(config)
    if registry_url is None and registry_db is None:
        registry_url = project.registry.url
    if contracts is None and project.contracts_dir is not None and project.contracts_dir.is_dir():
        contracts = project.contracts_dir.resolve()

    values: dict[str, object] = {
        "host": host,
        "port": port,
        "registry_url": registry_url,
        "contracts_dir": contracts,
        "api_key_env": api_key_env,
        "read_requires_key": read_requires_key,
        "cors_origins": tuple(cors_origin or ()),
        "config_file": project.path.resolve() if project.path is not None else None,
    }
    if registry_db is not None:
        values["registry_db"] = registry_db
    settings = Settings(**values)  # type: ignore[arg-type]
    if settings.embedded_registry:
        _check_registry_db(settings.registry_db, registry_db is not None)
    _check_listen(host, port)
    if settings.registry_url:
        _check_registry_url(settings.registry_url)
    if read_requires_key and settings.api_key() is None:
        raise ContractsError(
            "--read-requires-key needs --api-key-env VAR with VAR set to the key", "serve"
        )
    if api_key_env is not None and settings.api_key() is None:
        # the operator asked for a key: starting without one would leave the registry open
        raise ContractsError(
            f"--api-key-env {api_key_env}: the variable is not set (or empty); set it to the key",
            "serve",
        )
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level.value,
        "access_log": access_log,
        "timeout_graceful_shutdown": 5,
    }
    if workers == 1:
        import sqlite3

        try:
            app = create_app(settings)
        except sqlite3.Error as err:  # e.g. a directory SQLite may not write in
            raise ContractsError(
                f"cannot open the registry database: {err}", str(settings.registry_db)
            ) from None
        _run(uvicorn.run, app, **options)
        return
    # worker processes import the app: the factory reads these settings back
    os.environ[SETTINGS_ENV] = settings.model_dump_json()
    _run(
        uvicorn.run,
        "api.main:create_app_from_environment",
        factory=True,
        workers=workers,
        **options,
    )


def _run(run: Any, *args: Any, **options: Any) -> None:
    """uvicorn, whose own exit on a failed start (3) becomes our one-line error and exit 2
    (its log above says why: the checks before it make that rare)."""
    from contracts.errors import InputError

    try:
        run(*args, **options)
    except SystemExit as stop:
        if stop.code in (None, 0):
            return
        raise InputError(
            f"the server could not start on {options['host']}:{options['port']} (its log above says why)",
            "serve",
        ) from None


def _check_registry_url(url: str) -> None:
    """Refuse an external registry URL that does not answer like a Schema Registry (exit 2);
    one that cannot be reached yet is a warning (the API answers 502 until it can)."""
    from registry_sync.client import RegistryClient, RegistryConfig
    from registry_sync.protocol import RegistryUnavailableError

    with RegistryClient(RegistryConfig(url=url, max_retries=0, timeout=5.0)) as client:
        try:
            client.ensure_registry()
        except RegistryUnavailableError as err:
            sys.stderr.write(f"warning: {err.one_line()}; serving anyway\n")


#: The first bytes of every SQLite 3 database file.
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _check_registry_db(path: Path, given: bool) -> None:
    """Refuse a registry database path SQLite cannot use, before the server starts: a
    directory, a path under a file, or a file that is not an SQLite database."""
    from contracts.errors import InputError

    where = f"--registry-db {path}" if given else f"registry database {path}"
    if path.is_dir():
        raise InputError("is a directory: give an SQLite file name", where)
    refuse_under_a_file(path, where)
    if path.exists():
        try:
            with path.open("rb") as handle:
                head = handle.read(len(_SQLITE_MAGIC))
        except OSError as err:
            raise InputError(f"cannot be read: {err.strerror or err}", where) from None
        if head and head != _SQLITE_MAGIC:
            raise InputError("is not an SQLite database (the embedded registry's file)", where)


def _check_listen(host: str, port: int) -> None:
    """Refuse a host this machine cannot listen on and a port something already listens on,
    before uvicorn starts (it would log its own error and exit 3)."""
    import errno
    import socket

    from contracts.errors import InputError

    if not host.strip():
        raise InputError(
            "give an interface address or name, e.g. 127.0.0.1 (0.0.0.0: every interface)",
            "--host",
        )
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        reason = getattr(err, "strerror", None) or "not a host name or address"
        raise InputError(f"cannot listen on host {host!r}: {reason}", "--host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise InputError(
                    f"port {port} is in use on {host}: stop what listens there, or pass --port N"
                ) from None
            if err.errno == errno.EADDRNOTAVAIL:
                raise InputError(
                    f"cannot listen on {host!r}: it is not an address of this machine", "--host"
                ) from None
            raise InputError(
                f"cannot listen on {host}:{port}: {err.strerror or err}", "--port"
            ) from None
