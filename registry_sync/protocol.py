"""The Schema Registry REST protocol, without I/O: calls, answers, errors, retries, operations.

An operation (:func:`lookup`, :func:`register`, ...) is a generator: it yields the
:class:`Call` values it needs and receives each answer's JSON (or None when the call allows the
answer "absent"), then returns its result. :func:`program` wraps an operation with what every
call needs — the base URL (failing over between comma-separated URLs), retries with backoff,
and the reading of answers (:func:`read_answer`) — and yields :class:`Send` and :class:`Sleep`
instructions for a driver (:mod:`registry_sync.client`) to perform.

Reading an answer fails closed. Only a registry's own "not found" — HTTP 404 with a JSON body
whose ``error_code`` is 40401 (subject), 40402 (version) or 40403 (schema), where the
operation allows it — means absent. Any other answer that is not a registry's (HTML, not JSON,
a JSON body of the wrong shape, a 404 without a registry error code) is
:class:`NotARegistryError`; 401/403 are :class:`RegistryAuthError`; transport failures,
timeouts and 5xx are :class:`RegistryUnavailableError`. All of them mean the run could not be
made (exit 2); :class:`RegistryRefusedError` (the registry refused a write: 409, 422) is a
refusal (exit 1).
"""

from __future__ import annotations

import random
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar
from urllib.parse import quote

import orjson

from contracts.errors import ContractsError, NotFoundError

T = TypeVar("T")

CONTENT_TYPE: Final = "application/vnd.schemaregistry.v1+json"
ACCEPT: Final = "application/vnd.schemaregistry.v1+json, application/json"
SUBJECT_NOT_FOUND: Final = 40401
VERSION_NOT_FOUND: Final = 40402
SCHEMA_NOT_FOUND: Final = 40403
SUBJECT_LEVEL_NOT_CONFIGURED: Final = 40408
#: the registry's own "not found" codes: the only answers that mean absent
NOT_FOUND_CODES: Final = frozenset({SUBJECT_NOT_FOUND, VERSION_NOT_FOUND, SCHEMA_NOT_FOUND})
RETRIABLE_STATUS: Final = frozenset({408, 429, 500, 502, 503, 504})
LEVELS: Final = frozenset(
    {
        "BACKWARD",
        "BACKWARD_TRANSITIVE",
        "FORWARD",
        "FORWARD_TRANSITIVE",
        "FULL",
        "FULL_TRANSITIVE",
        "NONE",
    }
)


# --- errors ------------------------------------------------------------------------------------


class RegistryError(ContractsError):
    """A registry request failed. ``where`` is the registry URL; ``status`` the HTTP status
    (0: no answer) and ``error_code`` the registry's code (-1: none)."""

    exit_code = 2
    http_status = 502

    def __init__(
        self, what: str, where: str | None = None, status: int = 0, error_code: int = -1
    ) -> None:
        super().__init__(what, where)
        self.status = status
        self.error_code = error_code


class RegistryUnavailableError(RegistryError):
    """The registry could not be reached (refused, dropped, timed out) or answered 5xx."""


class NotARegistryError(RegistryError):
    """What answered is not a Schema Registry (HTML, not JSON, the wrong shape, a 404 that is
    not a registry's): a wrong URL, never "absent"."""


class RegistryAuthError(RegistryError):
    """The registry refused the credentials (401) or the operation (403)."""


class RegistrySettingsError(RegistryError):
    """The registry settings are unusable (a URL that is not one, a bad certificate path)."""


class RegistryNotFoundError(RegistryError, NotFoundError):
    """The registry says a subject, version or schema named by the user does not exist."""

    http_status = 404


class RegistryRefusedError(RegistryError):
    """The registry refused a write (409 incompatible, 422 invalid): a refusal (exit 1)."""

    exit_code = 1

    def __init__(
        self, what: str, where: str | None = None, status: int = 0, error_code: int = -1
    ) -> None:
        super().__init__(what, where, status, error_code)
        self.http_status = status if 400 <= status < 500 else 502


# --- settings ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegistryConfig:
    """How to reach a registry. ``url`` may list several base URLs, comma-separated (tried in
    order when one cannot be reached); ``basic_auth`` is ``user:password``."""

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

    @property
    def base_urls(self) -> tuple[str, ...]:
        urls = tuple(u.strip().rstrip("/") for u in self.url.split(",") if u.strip())
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise RegistrySettingsError(
                    "the registry URL must start with http:// or https://", url
                )
        if not urls:
            raise RegistrySettingsError("no registry URL given", self.url or "--url")
        return urls

    @classmethod
    def from_confluent(cls, conf: Mapping[str, Any]) -> RegistryConfig:
        """Settings from a Confluent ``SchemaRegistryClient`` configuration dict."""
        verify: Any = conf.get("ssl.ca.location", True)
        return cls(
            url=str(conf["url"]),
            basic_auth=conf.get("basic.auth.user.info"),
            bearer_token=conf.get("bearer.auth.token"),
            bearer_logical_cluster=str(conf.get("bearer.auth.logical.cluster", "")),
            bearer_identity_pool=conf.get("bearer.auth.identity.pool.id"),
            ca_location=verify if isinstance(verify, str) else None,
            cert_location=conf.get("ssl.certificate.location"),
            key_location=conf.get("ssl.key.location"),
            verify=verify is not False,
            timeout=float(conf.get("timeout", 10.0)),
            max_retries=int(conf.get("max.retries", 3)),
        )


def headers(config: RegistryConfig) -> dict[str, str]:
    """The headers every request carries (bearer auth; basic auth is the transport's)."""
    out = {"Accept": ACCEPT}
    if config.bearer_token:
        out["Authorization"] = f"Bearer {config.bearer_token}"
        if config.bearer_logical_cluster:
            out["target-sr-cluster"] = config.bearer_logical_cluster
        if config.bearer_identity_pool:
            out["Confluent-Identity-Pool-Id"] = config.bearer_identity_pool
    return out


# --- calls and answers ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One REST call. ``absent`` lists the registry error codes answered as None."""

    method: str
    path: str
    what: str
    body: Any = None
    params: tuple[tuple[str, str], ...] = ()
    absent: frozenset[int] = frozenset()

    def content(self) -> bytes | None:
        return orjson.dumps(self.body) if self.body is not None else None

    @property
    def line(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP answer, as the driver received it."""

    status: int
    content_type: str
    content: bytes


@dataclass(frozen=True, slots=True)
class Failure:
    """No answer: ``kind`` is ``timeout`` or ``transport`` (refused, reset, TLS...)."""

    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class Send:
    """Driver instruction: send ``call`` to ``base``; answer with a :class:`Reply` or
    :class:`Failure`."""

    base: str
    call: Call


@dataclass(frozen=True, slots=True)
class Sleep:
    """Driver instruction: wait (backoff before a retry); answer with None."""

    seconds: float


Instruction = Send | Sleep
Op = Generator[Call, Any, T]


def reason_of_transport(err: BaseException) -> str:
    """A transport error in a few words (``ConnectError: [Errno 111] Connection refused``)."""
    text = " ".join(str(err).split())[:160]
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _snippet(reply: Reply) -> str:
    kind = reply.content_type.split(";")[0].strip() or "no content type"
    text = reply.content[:200].decode("utf-8", errors="replace")
    text = " ".join(text.split())[:80]
    return f"{kind}, {text!r}" if text else f"{kind}, empty body"


_NOT_JSON: Final = object()


def _json(content: bytes) -> Any:
    if not content:
        return _NOT_JSON
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return _NOT_JSON


def registry_error(data: Any) -> tuple[int, str] | None:
    """``(error_code, message)`` when ``data`` is a registry's error body, else None."""
    if not isinstance(data, dict):
        return None
    code = data.get("error_code")
    if type(code) is not int:
        return None
    message = data.get("message")
    return code, " ".join(str(message or "").split())


def read_answer(call: Call, url: str, reply: Reply) -> Any:
    """The JSON of a successful answer, None for an allowed "absent", else the error."""
    data = _json(reply.content)
    status = reply.status
    head = f"{call.what}: {call.line} answered HTTP {status}"
    if 200 <= status < 300:
        if data is _NOT_JSON and not (
            status == 204 or (call.method == "DELETE" and not reply.content)
        ):
            raise NotARegistryError(
                f"not a Schema Registry: {call.line} answered HTTP {status} ({_snippet(reply)})",
                url,
                status,
            )
        return None if data is _NOT_JSON else data
    error = registry_error(data)
    if error is None:
        if status >= 500:
            raise RegistryUnavailableError(f"{head} ({_snippet(reply)})", url, status)
        if status in (401, 403):
            raise RegistryAuthError(f"{head}: {_auth_hint(status)}", url, status)
        raise NotARegistryError(
            f"not a Schema Registry: {call.line} answered HTTP {status} ({_snippet(reply)})",
            url,
            status,
        )
    code, message = error
    if status == 404 and code in call.absent:
        return None
    text = f"{head}, error_code {code}: {message or 'no message'}"
    if status >= 500:
        raise RegistryUnavailableError(text, url, status, code)
    if status in (401, 403):
        raise RegistryAuthError(f"{text} ({_auth_hint(status)})", url, status, code)
    if status == 404 and code in NOT_FOUND_CODES:
        raise RegistryNotFoundError(text, url, status, code)
    if status == 404:
        raise NotARegistryError(
            f"not a Schema Registry path: {call.line} answered HTTP 404, error_code {code}: "
            f"{message or 'no message'}",
            url,
            status,
            code,
        )
    raise RegistryRefusedError(text, url, status, code)


def _auth_hint(status: int) -> str:
    if status == 401:
        return "authentication failed (check --basic-auth / --bearer-token)"
    return "not authorized for this operation"


# --- the program around an operation ---------------------------------------------------------------


@dataclass
class State:
    """What a client keeps between calls: its settings, whether the registry was probed, and
    the base URL in use (the next one after a transport failure)."""

    config: RegistryConfig
    probed: bool = False
    current: int = 0
    rng: random.Random = field(default_factory=random.Random)


def program(state: State, op: Op[T]) -> Generator[Instruction, Any, T]:
    """Run ``op``: every call it yields is sent (with failover and retries) and answered."""
    bases = state.config.base_urls
    answer: Any = None
    while True:
        try:
            call = op.send(answer)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        except RegistryError as err:  # an answer of the wrong shape: name the registry
            raise (err if err.where else err.located(bases[state.current % len(bases)])) from None
        answer = yield from _exchange(state, bases, call)


def _exchange(state: State, bases: tuple[str, ...], call: Call) -> Generator[Instruction, Any, Any]:
    config = state.config
    attempts = config.max_retries + 1
    for attempt in range(attempts):
        last = attempt == attempts - 1
        base = bases[state.current % len(bases)]
        outcome = yield Send(base, call)
        if isinstance(outcome, Reply):
            if outcome.status not in RETRIABLE_STATUS or last:
                return read_answer(call, base, outcome)
        elif isinstance(outcome, Failure):
            if len(bases) > 1:
                state.current += 1  # the next URL for this and later calls
            if last:
                if outcome.kind == "timeout":
                    what = f"{call.what}: {call.line} timed out after {config.timeout:g}s"
                else:
                    what = f"{call.what}: registry unreachable ({outcome.reason})"
                raise RegistryUnavailableError(what, base)
        ceiling = min(config.retry_max_wait_ms, config.retry_wait_ms * 2**attempt)
        yield Sleep(state.rng.uniform(0, ceiling) / 1000.0)
    raise AssertionError("unreachable")


# --- values --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Registered:
    """A registered schema as the registry reports it."""

    subject: str
    version: int | None
    schema_id: int | None
    schema: str | None
    metadata_properties: dict[str, str] | None
    schema_type: str = "AVRO"


def subject_path(subject: str) -> str:
    return quote(subject, safe="")


def _schema_body(schema: str, properties: Mapping[str, str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"schema": schema, "schemaType": "AVRO"}
    if properties:
        body["metadata"] = {"properties": dict(properties)}
    return body


def _shape(call: Call, data: Any, expected: str) -> NotARegistryError:
    shown = orjson.dumps(data)[:80].decode("utf-8", errors="replace")
    return NotARegistryError(
        f"not a Schema Registry answer: {call.line} gave {shown} where {expected} was expected"
    )


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _properties(data: Mapping[str, Any]) -> dict[str, str] | None:
    metadata = data.get("metadata")
    props = metadata.get("properties") if isinstance(metadata, dict) else None
    if not isinstance(props, dict):
        return None
    return {str(k): str(v) for k, v in props.items()}


def _registered(call: Call, subject: str, data: Any) -> Registered:
    if not isinstance(data, dict) or not isinstance(data.get("schema", ""), str):
        raise _shape(call, data, "a registered schema object")
    return Registered(
        subject=str(data.get("subject") or subject),
        version=_int(data.get("version")),
        schema_id=_int(data.get("id")),
        schema=data.get("schema"),
        metadata_properties=_properties(data),
        schema_type=str(data.get("schemaType") or "AVRO"),
    )


def _level_of(call: Call, data: Any) -> str:
    level = (
        data.get("compatibilityLevel") or data.get("compatibility")
        if isinstance(data, dict)
        else None
    )
    if not isinstance(level, str) or level.upper() not in LEVELS:
        raise _shape(call, data, "a compatibility level")
    return level.upper()


# --- operations ------------------------------------------------------------------------------------


def probe() -> Op[list[str]]:
    """Check that the URL answers like a Schema Registry: ``GET /schemas/types`` must list
    the schema types, AVRO among them (every client makes this call once, first)."""
    call = Call("GET", "/schemas/types", "probe the registry")
    data = yield call
    if not isinstance(data, list) or "AVRO" not in data:
        raise _shape(call, data, "the list of schema types (with AVRO)")
    return [str(t) for t in data]


def global_compatibility() -> Op[str]:
    """The registry's global compatibility level."""
    call = Call("GET", "/config", "read the global compatibility")
    data = yield call
    return _level_of(call, data)


def subjects(prefix: str | None = None, deleted: bool = False) -> Op[list[str]]:
    """Every subject (with ``prefix``; soft-deleted ones too with ``deleted``), sorted."""
    params = [("deleted", "true")] if deleted else []
    if prefix:
        params.append(("subjectPrefix", prefix))
    call = Call("GET", "/subjects", "list subjects", params=tuple(params))
    data = yield call
    if not isinstance(data, list) or not all(isinstance(s, str) for s in data):
        raise _shape(call, data, "a list of subject names")
    found = sorted(data)
    return [s for s in found if s.startswith(prefix)] if prefix else found


def versions(subject: str, deleted: bool = False) -> Op[list[int]]:
    """The subject's version numbers, oldest first ([] when the subject does not exist)."""
    params = (("deleted", "true"),) if deleted else ()
    call = Call(
        "GET",
        f"/subjects/{subject_path(subject)}/versions",
        f"list versions of {subject}",
        params=params,
        absent=frozenset({SUBJECT_NOT_FOUND}),
    )
    data = yield call
    if data is None:
        return []
    if not isinstance(data, list) or not all(type(v) is int for v in data):
        raise _shape(call, data, "a list of version numbers")
    return sorted(data)


def version(subject: str, number: int | str = "latest") -> Op[Registered | None]:
    """One registered version (``latest`` by default), or None when it does not exist."""
    call = Call(
        "GET",
        f"/subjects/{subject_path(subject)}/versions/{number}",
        f"read {subject} version {number}",
        absent=frozenset({SUBJECT_NOT_FOUND, VERSION_NOT_FOUND}),
    )
    data = yield call
    return None if data is None else _registered(call, subject, data)


def lookup(
    subject: str, schema: str, properties: Mapping[str, str] | None = None
) -> Op[Registered | None]:
    """The version of ``subject`` holding this schema (and metadata), or None."""
    call = Call(
        "POST",
        f"/subjects/{subject_path(subject)}",
        f"look up {subject}",
        body=_schema_body(schema, properties),
        absent=frozenset({SUBJECT_NOT_FOUND, SCHEMA_NOT_FOUND}),
    )
    data = yield call
    if data is None:
        return None
    found = _registered(call, subject, data)
    return Registered(
        subject, found.version, found.schema_id, schema, dict(properties or {}) or None
    )


def register(
    subject: str, schema: str, properties: Mapping[str, str] | None = None
) -> Op[Registered]:
    """Register a schema; its id and version (asked with a lookup from registries that
    answer only the id)."""
    call = Call(
        "POST",
        f"/subjects/{subject_path(subject)}/versions",
        f"register {subject}",
        body=_schema_body(schema, properties),
    )
    data = yield call
    if not isinstance(data, dict) or _int(data.get("id")) is None:
        raise _shape(call, data, "an object with the schema id")
    number = _int(data.get("version"))
    if number is None:
        found = yield from lookup(subject, schema, properties)
        number = found.version if found is not None else None
    return Registered(subject, number, data["id"], schema, dict(properties or {}) or None)


def test_compatibility(
    subject: str, schema: str, properties: Mapping[str, str] | None = None
) -> Op[tuple[bool, list[str]]]:
    """The registry's verbose verdict for ``schema`` after the subject's versions (at its
    level): ``(compatible, messages)``; a subject that does not exist accepts anything."""
    body = _schema_body(schema, properties)
    call = Call(
        "POST",
        f"/compatibility/subjects/{subject_path(subject)}/versions",
        f"test compatibility of {subject}",
        body=body,
        params=(("verbose", "true"),),
        absent=frozenset({SUBJECT_NOT_FOUND, VERSION_NOT_FOUND}),
    )
    data = yield call
    if data is None:
        return True, []
    if not isinstance(data, dict) or not isinstance(data.get("is_compatible"), bool):
        raise _shape(call, data, "an is_compatible answer")
    messages = data.get("messages") or []
    return data["is_compatible"], [str(m) for m in messages]


def compatibility(subject: str | None = None) -> Op[str]:
    """The level in force for a subject (its own, else the global one), or the global one."""
    if subject is None:
        return (yield from global_compatibility())
    call = Call(
        "GET",
        f"/config/{subject_path(subject)}",
        f"read the compatibility of {subject}",
        params=(("defaultToGlobal", "true"),),
        absent=frozenset({SUBJECT_NOT_FOUND, SUBJECT_LEVEL_NOT_CONFIGURED}),
    )
    data = yield call
    if data is None:
        return (yield from global_compatibility())
    return _level_of(call, data)


def subject_compatibility(subject: str) -> Op[str | None]:
    """The subject's own level, or None when it has none (the global level applies)."""
    call = Call(
        "GET",
        f"/config/{subject_path(subject)}",
        f"read the compatibility of {subject}",
        params=(("defaultToGlobal", "false"),),
        absent=frozenset({SUBJECT_NOT_FOUND, SUBJECT_LEVEL_NOT_CONFIGURED}),
    )
    data = yield call
    return None if data is None else _level_of(call, data)


def set_compatibility(subject: str | None, level: str) -> Op[str]:
    """Set a subject's level (the global one when ``subject`` is None); the level set."""
    path = "/config" if subject is None else f"/config/{subject_path(subject)}"
    call = Call(
        "PUT",
        path,
        f"set the compatibility of {subject or 'the registry'} to {level}",
        body={"compatibility": level},
    )
    data = yield call
    return _level_of(call, data)


def delete_subject(subject: str, permanent: bool = False) -> Op[list[int]]:
    """Delete a subject (soft; ``permanent`` after a soft delete); the versions deleted."""
    params = (("permanent", "true"),) if permanent else ()
    call = Call("DELETE", f"/subjects/{subject_path(subject)}", f"delete {subject}", params=params)
    data = yield call
    if not isinstance(data, list) or not all(type(v) is int for v in data):
        raise _shape(call, data, "a list of version numbers")
    return sorted(data)


def delete_version(subject: str, number: int | str, permanent: bool = False) -> Op[int]:
    """Delete one version of a subject (soft, or ``permanent`` after a soft delete)."""
    params = (("permanent", "true"),) if permanent else ()
    call = Call(
        "DELETE",
        f"/subjects/{subject_path(subject)}/versions/{number}",
        f"delete {subject} version {number}",
        params=params,
    )
    data = yield call
    if type(data) is not int:
        raise _shape(call, data, "a version number")
    return data


def schema_by_id(schema_id: int) -> Op[Registered | None]:
    """The schema registered under a global id (None when the registry has no such id)."""
    call = Call(
        "GET",
        f"/schemas/ids/{schema_id}",
        f"read schema id {schema_id}",
        absent=frozenset({SCHEMA_NOT_FOUND}),
    )
    data = yield call
    if data is None:
        return None
    found = _registered(call, "", data)
    return Registered(
        "", None, schema_id, found.schema, found.metadata_properties, found.schema_type
    )
