"""The Schema Registry client: every operation written once, run synchronously or asynchronously.

The project's one client of a Confluent-compatible Schema Registry (the CLI, the API, the Spark
Avro path and ``check --against registry`` all use it). Each operation is a generator that
yields the REST calls it needs and turns the answers into values (:mod:`registry_sync.protocol`
holds the calls, the answer checks and the retry policy); :class:`RegistryClient` runs them over
``httpx.Client`` and :class:`AsyncRegistryClient` over ``httpx.AsyncClient`` (any transport:
the API reaches its embedded registry in process). The methods of both are generated from the
one table :data:`OPERATIONS`, so they cannot drift apart.

Fail closed: before its first call a client probes the registry once (``GET /config``); an
answer that is not a registry's ends the run with :class:`NotARegistryError`. Afterwards only a
registry's own "not found" (a JSON body with error code 40401/40402/40403) means absent.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Concatenate, Final, ParamSpec, TypeVar

import httpx

from registry_sync import protocol as p
from registry_sync.protocol import (
    NotARegistryError,
    Registered,
    RegistryAuthError,
    RegistryConfig,
    RegistryError,
    RegistryNotFoundError,
    RegistryRefusedError,
    RegistrySettingsError,
    RegistryUnavailableError,
)

__all__ = [
    "OPERATIONS",
    "AsyncRegistryClient",
    "NotARegistryError",
    "Registered",
    "RegistryAuthError",
    "RegistryClient",
    "RegistryConfig",
    "RegistryError",
    "RegistryNotFoundError",
    "RegistryRefusedError",
    "RegistrySettingsError",
    "RegistryUnavailableError",
]

P = ParamSpec("P")
T = TypeVar("T")

#: every operation of the client, by method name (both clients get one method per entry)
OPERATIONS: Final[dict[str, Callable[..., p.Op[Any]]]] = {
    "probe": p.probe,
    "subjects": p.subjects,
    "versions": p.versions,
    "version": p.version,
    "lookup": p.lookup,
    "register": p.register,
    "test_compatibility": p.test_compatibility,
    "compatibility": p.compatibility,
    "subject_compatibility": p.subject_compatibility,
    "set_compatibility": p.set_compatibility,
    "delete_subject": p.delete_subject,
    "delete_version": p.delete_version,
    "schema_by_id": p.schema_by_id,
}


def _http_options(config: RegistryConfig) -> dict[str, Any]:
    """``httpx`` client options from the settings (auth, TLS, timeout, headers)."""
    verify: Any = config.verify if not config.ca_location else config.ca_location
    cert: Any = None
    if config.cert_location:
        cert = (
            (config.cert_location, config.key_location)
            if config.key_location
            else config.cert_location
        )
    auth = None
    if config.basic_auth:
        user, _, password = config.basic_auth.partition(":")
        auth = (user, password)
    return {
        "auth": auth,
        "verify": verify,
        "cert": cert,
        "timeout": config.timeout,
        "headers": p.headers(config),
        "follow_redirects": False,
    }


def _reply(response: httpx.Response) -> p.Reply:
    return p.Reply(response.status_code, response.headers.get("content-type", ""), response.content)


def _failure(err: Exception) -> p.Failure:
    if isinstance(err, httpx.TimeoutException):
        return p.Failure("timeout", "")
    return p.Failure("transport", p.reason_of_transport(err))


def _request_args(send: p.Send) -> dict[str, Any]:
    return {
        "method": send.call.method,
        "url": send.base + send.call.path,
        "params": dict(send.call.params) or None,
        "content": send.call.content(),
        "headers": {"Content-Type": p.CONTENT_TYPE} if send.call.body is not None else None,
    }


# --- synchronous ---------------------------------------------------------------------------------


def _sync(op: Callable[P, p.Op[T]]) -> Callable[Concatenate[RegistryClient, P], T]:
    def method(self: RegistryClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.run(op(*args, **kwargs))

    method.__name__ = op.__name__
    method.__doc__ = op.__doc__
    method.__wrapped__ = op  # type: ignore[attr-defined]
    return method


class RegistryClient:
    """One registry over ``httpx.Client`` (thread-safe: ``plan`` and ``push`` share one)."""

    def __init__(
        self, config: RegistryConfig, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.config = config
        self._state = p.State(config)
        try:
            self._http = httpx.Client(transport=transport, **_http_options(config))
        except (ValueError, TypeError, OSError) as err:
            raise RegistrySettingsError(f"bad registry settings: {err}", config.url) from None
        self._probe_lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def ensure_registry(self) -> None:
        """Probe the registry unless this client already did (once per client)."""
        if not self._state.probed:
            with self._probe_lock:
                if not self._state.probed:
                    self._drive(p.program(self._state, p.probe()))
                    self._state.probed = True

    def run(self, op: p.Op[T]) -> T:
        """Run one operation (after the client's one probe)."""
        self.ensure_registry()
        return self._drive(p.program(self._state, op))

    def _drive(self, program: Generator[p.Instruction, Any, T]) -> T:
        outcome: Any = None
        while True:
            try:
                instruction = program.send(outcome)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            if isinstance(instruction, p.Sleep):
                time.sleep(instruction.seconds)
                outcome = None
                continue
            try:
                outcome = _reply(self._http.request(**_request_args(instruction)))
            except httpx.HTTPError as err:
                outcome = _failure(err)
            except (ValueError, OSError) as err:  # a URL or certificate httpx cannot use
                raise RegistrySettingsError(
                    f"bad registry settings: {err}", self.config.url
                ) from None

    probe = _sync(p.probe)
    subjects = _sync(p.subjects)
    versions = _sync(p.versions)
    version = _sync(p.version)
    lookup = _sync(p.lookup)
    register = _sync(p.register)
    test_compatibility = _sync(p.test_compatibility)
    compatibility = _sync(p.compatibility)
    subject_compatibility = _sync(p.subject_compatibility)
    set_compatibility = _sync(p.set_compatibility)
    delete_subject = _sync(p.delete_subject)
    delete_version = _sync(p.delete_version)
    schema_by_id = _sync(p.schema_by_id)


# --- asynchronous --------------------------------------------------------------------------------


def _async(
    op: Callable[P, p.Op[T]],
) -> Callable[Concatenate[AsyncRegistryClient, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncRegistryClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.run(op(*args, **kwargs))

    method.__name__ = op.__name__
    method.__doc__ = op.__doc__
    method.__wrapped__ = op  # type: ignore[attr-defined]
    return method


class AsyncRegistryClient:
    """One registry over ``httpx.AsyncClient`` (the API's; ``transport`` reaches the embedded
    registry in process)."""

    def __init__(
        self,
        config: RegistryConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        label: str | None = None,
    ) -> None:
        self.config = config
        self.label = label or config.url
        self._state = p.State(config)
        try:
            self._http = httpx.AsyncClient(transport=transport, **_http_options(config))
        except (ValueError, TypeError, OSError) as err:
            raise RegistrySettingsError(f"bad registry settings: {err}", config.url) from None
        self._probe_lock = asyncio.Lock()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def ensure_registry(self) -> None:
        """Probe the registry unless this client already did (once per client)."""
        if not self._state.probed:
            async with self._probe_lock:
                if not self._state.probed:
                    await self._drive(p.program(self._state, p.probe()))
                    self._state.probed = True

    async def run(self, op: p.Op[T]) -> T:
        """Run one operation (after the client's one probe)."""
        await self.ensure_registry()
        return await self._drive(p.program(self._state, op))

    async def _drive(self, program: Generator[p.Instruction, Any, T]) -> T:
        outcome: Any = None
        while True:
            try:
                instruction = program.send(outcome)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            if isinstance(instruction, p.Sleep):
                await asyncio.sleep(instruction.seconds)
                outcome = None
                continue
            try:
                outcome = _reply(await self._http.request(**_request_args(instruction)))
            except httpx.HTTPError as err:
                outcome = _failure(err)
            except (ValueError, OSError) as err:
                raise RegistrySettingsError(
                    f"bad registry settings: {err}", self.config.url
                ) from None

    probe = _async(p.probe)
    subjects = _async(p.subjects)
    versions = _async(p.versions)
    version = _async(p.version)
    lookup = _async(p.lookup)
    register = _async(p.register)
    test_compatibility = _async(p.test_compatibility)
    compatibility = _async(p.compatibility)
    subject_compatibility = _async(p.subject_compatibility)
    set_compatibility = _async(p.set_compatibility)
    delete_subject = _async(p.delete_subject)
    delete_version = _async(p.delete_version)
    schema_by_id = _async(p.schema_by_id)
