"""Request dependencies, as ``Annotated`` aliases the routers declare in their signatures."""

from __future__ import annotations

import base64
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Header, Request

from api.catalog import Catalog
from api.locks import SubjectLocks
from api.offload import Offload
from api.settings import Settings
from contracts.contract import CompatibilityLevel
from contracts.diff.verdict import ExceptionPolicy, FailOn

if TYPE_CHECKING:
    from contracts.config import ProjectConfig
from contracts.errors import ContractsError


class UnauthorizedError(ContractsError):
    """The request needs a valid API key in ``X-API-Key``."""

    exit_code = 1
    http_status = 401


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_catalog(request: Request) -> Catalog:
    catalog: Catalog = request.app.state.catalog
    return catalog


async def get_offload(request: Request) -> Offload:
    offload: Offload = request.app.state.offload
    return offload


@dataclass(frozen=True, slots=True)
class GateRules:
    """What the gate applies besides the verdict: the configuration's fail-on, exceptions
    (judged today) and default level for contracts that set none."""

    fail_on: FailOn
    exceptions: ExceptionPolicy
    default_level: CompatibilityLevel | None


async def get_gate_rules(request: Request) -> GateRules:
    project: ProjectConfig = request.app.state.project
    return GateRules(project.fail_on or "breaking", project.exception_set(), project.compatibility)


async def get_locks(request: Request) -> SubjectLocks:
    locks: SubjectLocks = request.app.state.locks
    return locks


SettingsDep = Annotated[Settings, Depends(get_settings)]
CatalogDep = Annotated[Catalog, Depends(get_catalog)]
OffloadDep = Annotated[Offload, Depends(get_offload)]
LocksDep = Annotated[SubjectLocks, Depends(get_locks)]
GateDep = Annotated[GateRules, Depends(get_gate_rules)]
ApiKeyHeader = Annotated[
    str | None, Header(alias="X-API-Key", description="API key (writes; reads when configured)")
]


def presented_key(request: Request) -> str | None:
    """The key a request presents: ``X-API-Key``, else the password of HTTP basic auth (any
    user name; what Confluent clients send with ``basic.auth.user.info``), else a bearer token
    (``bearer.auth.token``)."""
    return key_from_headers(request.headers.get("x-api-key"), request.headers.get("authorization"))


def key_from_headers(x_api_key: str | None, authorization: str | None) -> str | None:
    """:func:`presented_key` from the two header values (for middleware reading raw scopes)."""
    if x_api_key is not None:
        return x_api_key
    scheme, _, credentials = (authorization or "").partition(" ")
    credentials = credentials.strip()
    if scheme.lower() == "bearer":
        return credentials or None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        _user, colon, password = decoded.partition(":")
        return password if colon else None
    return None


def registry_access(settings: Settings) -> Callable[[Request, bool], str | None]:
    """The embedded registry's guard in ``cdc-contracts serve``.

    With no API key configured the registry is open, like a Schema Registry without
    authentication (``registry push``, the demo and every Confluent client work unchanged).
    With a key, writes need it; with ``read_requires_key``, reads need it too.
    """

    def check(request: Request, write: bool) -> str | None:
        if not write and not settings.read_requires_key:
            return None
        expected = settings.api_key()
        if expected is None:
            return "no API key is configured" if settings.read_requires_key else None
        if key_matches(presented_key(request), expected):
            return None
        return "missing or wrong API key (send X-API-Key, or the key as basic auth password)"

    return check


def key_matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented key with the configured one."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


async def require_write_key(
    request: Request, settings: SettingsDep, x_api_key: ApiKeyHeader = None
) -> None:
    """Writes need the API key; with no key configured, writes are refused."""
    expected = settings.api_key()
    if expected is None:
        raise UnauthorizedError(
            "writes are disabled: start the service with --api-key-env VAR and VAR set",
            "X-API-Key",
        )
    if not key_matches(presented_key(request), expected):
        raise UnauthorizedError("missing or wrong API key", "X-API-Key")


def read_allowed(settings: Settings, x_api_key: str | None) -> bool:
    """Whether a read may proceed: always, unless reads need the key (then it must match; with
    no key configured, no read is allowed)."""
    if not settings.read_requires_key:
        return True
    expected = settings.api_key()
    return expected is not None and key_matches(x_api_key, expected)


async def require_read_key(
    request: Request, settings: SettingsDep, x_api_key: ApiKeyHeader = None
) -> None:
    """Reads need the API key only when the service is configured so."""
    if not read_allowed(settings, presented_key(request)):
        raise UnauthorizedError("missing or wrong API key", "X-API-Key")


WriteKey = Annotated[None, Depends(require_write_key)]
ReadKey = Depends(require_read_key)
