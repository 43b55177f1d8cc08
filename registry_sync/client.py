"""A Schema Registry connection: Confluent's client plus the few REST calls it lacks.

:class:`RegistryClient` wraps ``confluent_kafka.schema_registry.SchemaRegistryClient`` (basic
auth, bearer token, TLS, timeouts, retries with backoff on 408/429/5xx and dropped
connections). Two reads go over REST directly because the client cannot make them: the
*verbose* compatibility test (the client only returns a boolean) and ``defaultToGlobal``
config reads. Every failure becomes a :class:`RegistryRequestError` naming the HTTP status
and the registry's ``error_code`` in one line.
"""

from __future__ import annotations

import random
import time
import types
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote

from contracts.errors import ConflictError, ContractsError, NotFoundError

#: error codes that mean "not there" (subject, version, schema) rather than a failure
NOT_FOUND_CODES: Final = frozenset({40401, 40402, 40403, 40404, 40408})
RETRIABLE_STATUS: Final = frozenset({408, 429, 500, 502, 503, 504})

_HINTS: Final[dict[int, str]] = {
    401: "authentication failed (check --basic-auth / --bearer-token)",
    403: "not authorized for this operation",
    404: "not found",
    409: "refused as incompatible",
    422: "refused as invalid",
}


class RegistryRequestError(ContractsError):
    """The registry answered a request with an error (or could not be reached)."""

    exit_code = 1
    http_status = 502

    def __init__(
        self, what: str, where: str | None = None, status: int = 0, error_code: int = -1
    ) -> None:
        super().__init__(what, where)
        self.status = status
        self.error_code = error_code


class RegistryUnavailableError(RegistryRequestError):
    """The registry could not be reached (connection refused or dropped, timeout): the run
    could not be made, as with unusable input (exit 2), not a refusal (exit 1)."""

    exit_code = 2


class RegistrySettingsError(RegistryRequestError):
    """The registry settings are unusable (a URL that is not one, a bad auth value)."""

    exit_code = 2


@dataclass(frozen=True)
class RegistryConfig:
    """How to reach a registry. ``basic_auth`` is ``user:password``."""

    url: str
    basic_auth: str | None = None
    bearer_token: str | None = None
    bearer_logical_cluster: str = ""
    bearer_identity_pool: str | None = None
    ca_location: str | None = None
    cert_location: str | None = None
    key_location: str | None = None
    verify: bool = True
    timeout: float = 10.0
    max_retries: int = 3
    retry_wait_ms: int = 200
    retry_max_wait_ms: int = 5000
    extra: dict[str, Any] = field(default_factory=dict)

    def confluent_conf(self) -> dict[str, Any]:
        """The configuration dict for Confluent's ``SchemaRegistryClient``."""
        conf: dict[str, Any] = {
            "url": self.url,
            "timeout": self.timeout,
            "max.retries": self.max_retries,
            "retries.wait.ms": self.retry_wait_ms,
            "retries.max.wait.ms": self.retry_max_wait_ms,
        }
        if self.basic_auth:
            conf["basic.auth.user.info"] = self.basic_auth
        if self.bearer_token:
            conf["bearer.auth.credentials.source"] = "STATIC_TOKEN"
            conf["bearer.auth.token"] = self.bearer_token
            conf["bearer.auth.logical.cluster"] = self.bearer_logical_cluster
            if self.bearer_identity_pool:
                conf["bearer.auth.identity.pool.id"] = self.bearer_identity_pool
        if not self.verify:
            conf["ssl.ca.location"] = False
        elif self.ca_location:
            conf["ssl.ca.location"] = self.ca_location
        if self.cert_location:
            conf["ssl.certificate.location"] = self.cert_location
        if self.key_location:
            conf["ssl.key.location"] = self.key_location
        conf.update(self.extra)
        return conf


@dataclass(frozen=True, slots=True)
class Registered:
    """A registered schema as the registry reports it."""

    subject: str
    version: int | None
    schema_id: int | None
    schema: str | None
    metadata_properties: dict[str, str] | None


def _encode(subject: str) -> str:
    return quote(subject, safe="")


class RegistryClient:
    """One registry, reached through Confluent's client (and httpx where it falls short)."""

    def __init__(self, config: RegistryConfig) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        self.config = config
        try:
            self._sr = SchemaRegistryClient(config.confluent_conf())
        except (ValueError, TypeError) as err:
            raise RegistrySettingsError(f"bad registry settings: {err}", config.url) from None
        self._http: Any = None

    def close(self) -> None:
        close = getattr(self._sr, "close", None)
        if close is not None:
            close()
        if self._http is not None:
            self._http.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- error handling -----------------------------------------------------------------------

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        timeouts, transport = _transport_errors()
        try:
            return fn(*args, **kwargs)
        except SchemaRegistryError as err:
            raise self._error(
                what, err.http_status_code, err.error_code, err.error_message
            ) from None
        except timeouts:
            raise RegistryUnavailableError(
                f"{what}: timed out after {self.config.timeout:g}s", self.config.url
            ) from None
        except transport as err:
            reason = str(err) or type(err).__name__
            raise RegistryUnavailableError(
                f"{what}: registry unreachable ({reason})", self.config.url
            ) from None

    def _error(self, what: str, status: int, code: int, message: str | None) -> ContractsError:
        text = " ".join(str(message or "").split()) or _HINTS.get(status, "request failed")
        line = f"{what}: HTTP {status}, error_code {code}: {text}"
        if status == 404 or code in NOT_FOUND_CODES:
            err: ContractsError = NotFoundError(line, self.config.url)
            err.status, err.error_code = status, code  # type: ignore[attr-defined]
            return err
        if status == 409:
            conflict = ConflictError(line, self.config.url)
            conflict.status, conflict.error_code = status, code  # type: ignore[attr-defined]
            return conflict
        if status >= 500:
            return RegistryUnavailableError(line, self.config.url, status, code)
        return RegistryRequestError(line, self.config.url, status, code)

    @staticmethod
    def error_code(err: Exception) -> int | None:
        """The registry error code carried by an error this client raised."""
        return getattr(err, "error_code", None)

    # --- through Confluent's client ------------------------------------------------------------

    @staticmethod
    def _schema(schema: str, properties: dict[str, str] | None) -> Any:
        from confluent_kafka.schema_registry import Schema
        from confluent_kafka.schema_registry.schema_registry_client import (
            Metadata,
            MetadataProperties,
        )

        metadata = None
        if properties:
            metadata = Metadata(
                tags=None, properties=MetadataProperties(properties), sensitive=None
            )
        return Schema(schema, "AVRO", metadata=metadata)

    def lookup(
        self, subject: str, schema: str, properties: dict[str, str] | None = None
    ) -> Registered | None:
        """The version of ``subject`` holding this schema, or None (subject or schema absent)."""
        try:
            found = self._call(
                f"lookup {subject}",
                self._sr.lookup_schema,
                subject,
                self._schema(schema, properties),
            )
        except NotFoundError:
            return None
        return Registered(subject, found.version, found.schema_id, schema, properties)

    def register(
        self, subject: str, schema: str, properties: dict[str, str] | None = None
    ) -> Registered:
        """Register a schema; answers its id (and version where the registry reports it)."""
        found = self._call(
            f"register {subject}",
            self._sr.register_schema_full_response,
            subject,
            self._schema(schema, properties),
        )
        return Registered(subject, found.version, found.schema_id, schema, properties)

    def version(self, subject: str, version: int | str = "latest") -> Registered | None:
        """One registered version (``latest`` by default), or None when the subject is absent."""
        fn = self._sr.get_latest_version if version == "latest" else self._sr.get_version
        args = (subject,) if version == "latest" else (subject, int(version))
        try:
            found = self._call(f"read {subject} version {version}", fn, *args)
        except NotFoundError:
            return None
        metadata = found.schema.metadata
        properties = None
        if metadata is not None and metadata.properties is not None:
            properties = dict(metadata.properties.properties)
        return Registered(
            subject, found.version, found.schema_id, found.schema.schema_str, properties
        )

    def versions(self, subject: str) -> list[int]:
        try:
            return list(self._call(f"list versions of {subject}", self._sr.get_versions, subject))
        except NotFoundError:
            return []

    def subjects(self) -> list[str]:
        return list(self._call("list subjects", self._sr.get_subjects))

    def set_compatibility(self, subject: str, level: str) -> str:
        answer = self._call(
            f"set compatibility of {subject}", self._sr.set_compatibility, subject, level
        )
        if isinstance(answer, dict):
            return str(answer.get("compatibility") or answer.get("compatibilityLevel") or level)
        return level

    # --- direct REST (what the client lacks) ---------------------------------------------------

    def _client(self) -> Any:
        if self._http is None:
            import httpx

            conf = self.config
            verify: Any = conf.verify if not conf.ca_location else conf.ca_location
            cert: Any = None
            if conf.cert_location:
                cert = (
                    (conf.cert_location, conf.key_location)
                    if conf.key_location
                    else conf.cert_location
                )
            auth = None
            if conf.basic_auth:
                user, _, password = conf.basic_auth.partition(":")
                auth = (user, password)
            headers = {"Accept": "application/vnd.schemaregistry.v1+json, application/json"}
            if conf.bearer_token:
                headers["Authorization"] = f"Bearer {conf.bearer_token}"
                if conf.bearer_logical_cluster:
                    headers["target-sr-cluster"] = conf.bearer_logical_cluster
            self._http = httpx.Client(
                base_url=conf.url.split(",")[0].rstrip("/"),
                auth=auth,
                verify=verify,
                cert=cert,
                timeout=conf.timeout,
                headers=headers,
            )
        return self._http

    def rest(
        self,
        method: str,
        path: str,
        what: str,
        body: Any = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        """One REST call with retries (backoff with jitter) on 408/429/5xx and transport errors."""
        import httpx

        client = self._client()
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = client.request(method, path, json=body, params=params)
            except httpx.TimeoutException:
                if last:
                    raise RegistryUnavailableError(
                        f"{what}: timed out after {self.config.timeout:g}s", self.config.url
                    ) from None
            except httpx.TransportError as err:
                if last:
                    reason = str(err) or type(err).__name__
                    raise RegistryUnavailableError(
                        f"{what}: registry unreachable ({reason})", self.config.url
                    ) from None
            else:
                if response.is_success:
                    return response.json() if response.content else None
                if response.status_code not in RETRIABLE_STATUS or last:
                    code, message = _error_body(response)
                    raise self._error(what, response.status_code, code, message)
            self._sleep(attempt)
        raise AssertionError("unreachable")

    def _sleep(self, attempt: int) -> None:
        ceiling = min(self.config.retry_max_wait_ms, self.config.retry_wait_ms * 2**attempt)
        time.sleep(random.uniform(0, ceiling) / 1000.0)

    def test_compatibility(
        self, subject: str, schema: str, properties: dict[str, str] | None = None
    ) -> tuple[bool, list[str]]:
        """Verbose compatibility of a schema with the subject (at its level): (ok, messages)."""
        body: dict[str, Any] = {"schema": schema, "schemaType": "AVRO"}
        if properties:
            body["metadata"] = {"properties": properties}
        answer = self.rest(
            "POST",
            f"/compatibility/subjects/{_encode(subject)}/versions",
            f"test compatibility of {subject}",
            body=body,
            params={"verbose": "true"},
        )
        messages = answer.get("messages") or []
        return bool(answer.get("is_compatible")), [str(m) for m in messages]

    def compatibility(self, subject: str | None = None) -> str:
        """The level in force for a subject (falling back to the global level), or global."""
        path = "/config" if subject is None else f"/config/{_encode(subject)}"
        params = None if subject is None else {"defaultToGlobal": "true"}
        try:
            answer = self.rest(
                "GET", path, f"read compatibility of {subject or 'registry'}", params=params
            )
        except NotFoundError:
            answer = self.rest("GET", "/config", "read global compatibility")
        return str(answer.get("compatibilityLevel") or answer.get("compatibility") or "BACKWARD")


def _transport_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """Timeout and transport error classes of httpx and of the httpx the Confluent client uses
    (it prefers ``httpx2`` when installed)."""
    import httpx

    timeouts: list[type[Exception]] = [httpx.TimeoutException]
    transport: list[type[Exception]] = [httpx.TransportError]
    sr_httpx: types.ModuleType
    try:
        from confluent_kafka.schema_registry.common._httpx_compat import httpx as sr_httpx
    except ImportError:  # older clients use httpx itself
        sr_httpx = httpx
    timeouts.append(sr_httpx.TimeoutException)
    transport.append(sr_httpx.TransportError)
    return tuple(timeouts), tuple(transport)


def _error_body(response: Any) -> tuple[int, str | None]:
    try:
        data = response.json()
    except ValueError:
        return -1, response.text[:200] or None
    if isinstance(data, dict):
        code = data.get("error_code", -1)
        return int(code) if isinstance(code, int) else -1, data.get("message")
    return -1, None
