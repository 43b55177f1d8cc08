"""The Confluent Schema Registry REST API over a :class:`~api.registry.store.RegistryStore`.

:func:`create_registry_router` returns a self-contained router: its routes answer every
refusal in Confluent's shape (``{"error_code": 40401, "message": "..."}``) themselves, so it can
be mounted at the root of any FastAPI app without touching the app's own error handlers.

Subject names may contain ``/`` (sent URL-encoded, ``%2F``), as in Confluent: the routes match
the request's *raw* path, so ``/subjects/x%2Fversions`` is subject ``x/versions`` and never
``/subjects/x/versions``. Path parameters are then decoded as UTF-8; bytes that are not UTF-8
name no subject (40401; 42208 where a subject would be created).

An optional :data:`AccessCheck` guards the routes (``cdc-contracts serve`` passes one when an
API key is configured); :data:`WRITE_ROUTES` names the routes that change the registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar
from urllib.parse import quote, unquote_to_bytes

import orjson
from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.routing import Match
from starlette.types import Scope

from api.registry import errors as e
from api.registry.avro import SUPPORTED_TYPES, SchemaRequest, check_request_schema
from api.registry.errors import RegistryError
from api.registry.store import (
    Candidate,
    Registration,
    RegistryStore,
    StoredVersion,
    check_level,
    check_metadata,
    check_mode,
    check_rule_set,
    check_subject,
    page,
    parse_schema_id,
)

MEDIA_TYPE: Final = "application/vnd.schemaregistry.v1+json"
#: what the registry answers with, in order of preference (Confluent's @Produces)
PRODUCES: Final = (MEDIA_TYPE, "application/vnd.schemaregistry+json", "application/json")
#: what request bodies may be (Confluent's @Consumes); others are 415
CONSUMES: Final = frozenset({*PRODUCES, "application/octet-stream"})
#: the fields of a register / lookup / compatibility body (Confluent's RegisterSchemaRequest)
REQUEST_FIELDS: Final = frozenset(
    {
        "schema",
        "schemaType",
        "references",
        "metadata",
        "ruleSet",
        "id",
        "version",
        "schemaTagsToAdd",
        "schemaTagsToRemove",
        "propagateSchemaTags",
    }
)
T = TypeVar("T")

#: the first path segments of Confluent's REST API: a refusal by the HTTP layer (no route, wrong
#: method, body too large) on these paths is answered in Confluent's shape
REGISTRY_PREFIXES: Final = (
    "/subjects",
    "/schemas",
    "/compatibility",
    "/config",
    "/mode",
    "/contexts",
    "/exporters",
)
#: the routes (by endpoint name) that change the registry; the others only read
WRITE_ROUTES: Final = frozenset(
    {
        "register",
        "delete_version",
        "delete_subject",
        "put_global_config",
        "delete_global_config",
        "put_subject_config",
        "delete_subject_config",
        "put_global_mode",
        "put_subject_mode",
        "delete_global_mode",
        "delete_subject_mode",
    }
)
#: the routes that create a subject (a subject that is not UTF-8 is invalid there, 42208)
_CREATING_ROUTES: Final = frozenset({"register", "put_subject_config", "put_subject_mode"})

#: ``check(request, write)``: None to let the request through, else why it is refused (401)
AccessCheck = Callable[[Request, bool], str | None]


def is_registry_path(path: str) -> bool:
    """Whether a request path belongs to the Schema Registry API."""
    for prefix in REGISTRY_PREFIXES:
        if path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] in "/?"):
            return True
    return False


def registry_json(value: Any, status: int = 200) -> Response:
    """A response with Confluent's media type."""
    return Response(orjson.dumps(value), status_code=status, media_type=MEDIA_TYPE)


def negotiate(accept: str | None) -> str | None:
    """The media type to answer with for an ``Accept`` header (None: nothing acceptable, 406).

    Ranges are tried by quality, then order; ``*``, ``*/*``, ``application/*`` and ``*/x``
    take the default (:data:`MEDIA_TYPE`), as Confluent's server does; ``q=0`` excludes."""
    if accept is None or not accept.strip():
        return MEDIA_TYPE
    ranges: list[tuple[float, int, str]] = []
    for i, part in enumerate(accept.split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media and quality > 0:
            ranges.append((-quality, i, media.lower()))
    for _quality, _i, media in sorted(ranges):
        kind, _, subtype = media.partition("/")
        if media == "*" or kind == "*" or (kind == "application" and subtype == "*"):
            return MEDIA_TYPE
        if media in PRODUCES:
            return media
    return None


def body_charset(content_type: str | None) -> str | None:
    """The charset of a request body whose ``Content-Type`` the registry reads (UTF-8 unless
    said), or None for one it does not (415)."""
    if content_type is None or not content_type.strip():
        return "utf-8"
    media, *params = (p.strip() for p in content_type.split(";"))
    if media.lower() not in CONSUMES:
        return None
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return "utf-8"


def registry_error_response(err: RegistryError) -> Response:
    response = registry_json(err.to_json(), err.status)
    if err.headers:
        response.headers.update(err.headers)
    return response


class RegistryRoute(APIRoute):
    """A route of the registry: matched on the raw path, guarded by the router's
    :data:`AccessCheck`, answering :class:`RegistryError` and bad requests as Confluent does."""

    access: AccessCheck | None = None

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        raw = scope.get("raw_path")
        if scope["type"] != "http" or not raw or b"%" not in raw:
            return super().matches(scope)  # nothing encoded: the raw path is the path
        path = raw.split(b"?", 1)[0].decode("latin-1")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        match, child = super().matches({**scope, "path": path, "root_path": ""})
        if match is not Match.NONE:
            params = child["path_params"]
            for name in self.param_convertors:
                if isinstance(params.get(name), str):
                    params[name] = _decode(params[name])
        return match, child

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        write = self.name in WRITE_ROUTES

        async def guarded(request: Request) -> Response:
            media = negotiate(request.headers.get("accept")) or MEDIA_TYPE
            try:
                if negotiate(request.headers.get("accept")) is None:
                    raise e.http_error(406)
                if request.method in ("POST", "PUT"):
                    charset = body_charset(request.headers.get("content-type"))
                    if charset is None:
                        raise e.http_error(415)
                    request.state.charset = charset
                if self.access is not None:
                    refused = self.access(request, write)
                    if refused is not None:
                        raise e.unauthorized(refused)
                self._check_params(request.path_params)
                response = await handler(request)
            except RegistryError as err:
                response = registry_error_response(err)
            except RequestValidationError as err:
                first = err.errors()[0] if err.errors() else {}
                where = ".".join(str(p) for p in first.get("loc", ()))
                text = f"{where}: {first.get('msg', 'invalid request')}".strip(": ")
                response = registry_error_response(RegistryError(e.UNPROCESSABLE, text))
            response.headers["content-type"] = media
            return response

        return guarded

    def _check_params(self, params: dict[str, Any]) -> None:
        """Path parameters whose bytes were not UTF-8 name nothing that exists."""
        for name, value in params.items():
            if not isinstance(value, str) or value.isascii() or not _undecodable(value):
                continue
            shown = quote(value.encode("utf-8", "surrogateescape"), safe="")
            if name == "subject":
                if self.name in _CREATING_ROUTES:
                    raise RegistryError(
                        e.INVALID_SUBJECT,
                        f"The specified subject '{shown}' is not valid: it is not UTF-8.",
                    )
                raise e.subject_not_found(shown)
            if name == "version":
                raise e.invalid_version(shown)
            raise e.schema_not_found(shown)


def _decode(raw: str) -> str:
    """A percent-encoded path segment as text; bytes that are not UTF-8 become lone surrogates
    (refused by :meth:`RegistryRoute._check_params`)."""
    return unquote_to_bytes(raw).decode("utf-8", "surrogateescape")


def _undecodable(value: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in value)


def install_registry_error_handlers(app: FastAPI) -> None:
    """Answer a :class:`RegistryError` raised outside the registry routes in Confluent's shape.

    The registry router does not need it (its routes answer their own errors); it is for apps
    that raise registry errors from their own code.
    """

    async def handle(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RegistryError)
        return registry_error_response(exc)

    app.add_exception_handler(RegistryError, handle)


def _flag(request: Request, name: str, default: bool = False) -> bool:
    """A boolean query parameter; Confluent clients send ``true``, ``True`` or ``1``."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in ("true", "1", "yes")


async def _body(request: Request) -> Any:
    raw = await request.body()
    charset = getattr(request.state, "charset", "utf-8")
    if charset.lower().replace("-", "") not in ("utf8", "ascii", "usascii"):
        try:
            raw = raw.decode(charset).encode("utf-8")
        except (LookupError, UnicodeDecodeError):
            raise RegistryError(
                e.BAD_REQUEST, f"The request body is not text in its charset {charset!r}"
            ) from None
    if not raw.strip():
        raise RegistryError(e.UNPROCESSABLE, "The request body is empty")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise RegistryError(e.BAD_REQUEST, f"The request body is not JSON: {err}") from None


def _paging(request: Request) -> tuple[int, int]:
    """``offset`` and ``limit`` query parameters (0 and -1 when absent)."""
    out = []
    for name, default in (("offset", 0), ("limit", -1)):
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            out.append(default)
        elif re.fullmatch(r"-?[0-9]{1,9}", raw.strip()):
            out.append(int(raw))
        else:
            raise RegistryError(e.UNPROCESSABLE, f"Query parameter {name!r} must be an integer")
    return out[0], out[1]


def _request_fields(body: Any) -> None:
    if isinstance(body, dict):
        for key in body:
            if key not in REQUEST_FIELDS:
                raise RegistryError(e.UNPROCESSABLE, f"Unrecognized field: {key}")


def _optional_id(body: dict[str, Any], key: str) -> int | None:
    """A body's ``id`` or ``version``: None when absent or -1 (Confluent's "none")."""
    value = body.get(key)
    if value is None or value == -1:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**31 - 1:
        raise RegistryError(e.UNPROCESSABLE, f"Field {key!r} must be a positive integer")
    return value


def _schema_id(text: str) -> int:
    return parse_schema_id(text)


def create_registry_router(store: RegistryStore, access: AccessCheck | None = None) -> APIRouter:
    """The Schema Registry API (subjects, schemas, compatibility, config, mode) at ``/``.

    ``access`` decides, per request, whether it may proceed (``write`` tells the routes of
    :data:`WRITE_ROUTES` from reads); a refusal is 401, error_code 40101.
    """
    route_class = type(
        "GuardedRegistryRoute", (RegistryRoute,), {"access": access and staticmethod(access)}
    )
    router = APIRouter(route_class=route_class, tags=["schema registry"])

    async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await run_in_threadpool(fn, *args, **kwargs)

    async def schema_request(request: Request) -> tuple[dict[str, Any], SchemaRequest]:
        body = await _body(request)
        _request_fields(body)
        return body, check_request_schema(body)

    async def candidate_of(request: Request) -> Candidate:
        body, wanted = await schema_request(request)
        metadata, rule_set = (
            check_metadata(body.get("metadata")),
            check_rule_set(body.get("ruleSet")),
        )
        return await call(store.candidate, wanted, metadata, rule_set)

    async def compatibility(request: Request, subject: str, version: str | None) -> Response:
        verbose = _flag(request, "verbose")
        try:
            candidate = await candidate_of(request)
        except RegistryError as err:
            if not verbose or err.error_code != e.INVALID_SCHEMA:
                raise
            # Confluent's verbose answer to a schema it cannot parse: incompatible, and why
            return registry_json({"is_compatible": False, "messages": [err.message]})
        ok, messages = await call(store.test_compatibility, subject, candidate, version)
        return registry_json(_compat_answer(ok, messages, verbose))

    # --- schemas --------------------------------------------------------------------------

    @router.get("/schemas/types")
    async def schema_types() -> Response:
        return registry_json(list(SUPPORTED_TYPES))

    @router.get("/schemas/ids/{schema_id}")
    async def schema_by_id(schema_id: str, request: Request) -> Response:
        number = _schema_id(schema_id)
        found = await call(store.get_schema, number)
        out = found.to_json()
        out.pop("id", None)
        subject = request.query_params.get("subject")
        if subject:  # Confluent names the subject's (newest) version of this schema
            pairs = await call(store.schema_versions, number, subject, False)
            if pairs:
                out["subject"], out["version"] = pairs[-1]
        if _flag(request, "fetchMaxId"):
            out["maxId"] = await call(store.max_schema_id)
        return registry_json(out)

    @router.get("/schemas/ids/{schema_id}/schema")
    async def raw_schema_by_id(schema_id: str) -> Response:
        found = await call(store.get_schema, _schema_id(schema_id))
        return Response(found.schema, media_type=MEDIA_TYPE)

    @router.get("/schemas/ids/{schema_id}/subjects")
    async def subjects_of_schema(schema_id: str, request: Request) -> Response:
        pairs = await call(
            store.schema_versions,
            _schema_id(schema_id),
            request.query_params.get("subject"),
            _flag(request, "deleted"),
        )
        return registry_json(page(sorted({s for s, _ in pairs}), *_paging(request)))

    @router.get("/schemas/ids/{schema_id}/versions")
    async def versions_of_schema(schema_id: str, request: Request) -> Response:
        pairs = await call(
            store.schema_versions,
            _schema_id(schema_id),
            request.query_params.get("subject"),
            _flag(request, "deleted"),
        )
        listed = [{"subject": s, "version": v} for s, v in pairs]
        return registry_json(page(listed, *_paging(request)))

    @router.get("/schemas/guids/{guid}")
    async def schema_by_guid(guid: str) -> Response:
        found = await call(store.get_schema_by_guid, guid)
        return registry_json(found.to_json())

    # --- subjects (most specific paths first: subject names may contain '/') ----------------

    @router.get("/subjects")
    async def list_subjects(request: Request) -> Response:
        names = await call(
            store.subjects,
            request.query_params.get("subjectPrefix"),
            _flag(request, "deleted"),
            _deleted_only(request),
        )
        return registry_json(page(names, *_paging(request)))

    @router.post("/compatibility/subjects/{subject:path}/versions/{version}")
    async def compatibility_with_version(subject: str, version: str, request: Request) -> Response:
        return await compatibility(request, subject, version)

    @router.post("/compatibility/subjects/{subject:path}/versions")
    async def compatibility_with_all(subject: str, request: Request) -> Response:
        return await compatibility(request, subject, None)

    @router.get("/subjects/{subject:path}/metadata")
    async def latest_with_metadata(subject: str, request: Request) -> Response:
        keys = request.query_params.getlist("key")
        values = request.query_params.getlist("value")
        if len(keys) != len(values):
            raise RegistryError(e.UNPROCESSABLE, "Give as many 'value' as 'key' parameters")
        found = await call(
            store.latest_with_metadata,
            subject,
            dict(zip(keys, values, strict=True)),
            _flag(request, "deleted"),
        )
        return registry_json(found.to_json())

    @router.get("/subjects/{subject:path}/versions/{version}/schema")
    async def raw_schema_of_version(subject: str, version: str, request: Request) -> Response:
        found = await call(store.get_version, subject, version, _flag(request, "deleted"))
        return Response(found.schema, media_type=MEDIA_TYPE)

    @router.get("/subjects/{subject:path}/versions/{version}/referencedby")
    async def referenced_by(subject: str, version: str, request: Request) -> Response:
        ids = await call(store.referenced_by, subject, version)
        return registry_json(page(ids, *_paging(request)))

    @router.get("/subjects/{subject:path}/versions/{version}")
    async def get_version(subject: str, version: str, request: Request) -> Response:
        found: StoredVersion = await call(
            store.get_version, subject, version, _flag(request, "deleted")
        )
        return registry_json(found.to_json())

    @router.delete("/subjects/{subject:path}/versions/{version}")
    async def delete_version(subject: str, version: str, request: Request) -> Response:
        deleted = await call(store.delete_version, subject, version, _flag(request, "permanent"))
        return registry_json(deleted)

    @router.get("/subjects/{subject:path}/versions")
    async def list_versions(subject: str, request: Request) -> Response:
        numbers = await call(
            store.versions, subject, _flag(request, "deleted"), _deleted_only(request)
        )
        return registry_json(page(numbers, *_paging(request)))

    @router.post("/subjects/{subject:path}/versions")
    async def register(subject: str, request: Request) -> Response:
        check_subject(subject)
        body = await _body(request)
        _request_fields(body)
        wanted = check_request_schema(body, schema_optional=True)
        metadata, rule_set = (
            check_metadata(body.get("metadata")),
            check_rule_set(body.get("ruleSet")),
        )
        if wanted.schema is None and metadata is None and rule_set is None:
            raise RegistryError(e.INVALID_SCHEMA, "Empty schema")
        candidate = None
        if wanted.schema is not None:
            candidate = await call(store.candidate, wanted, metadata, rule_set)
        registration = Registration(
            wanted,
            metadata,
            rule_set,
            _optional_id(body, "id"),
            _optional_id(body, "version"),
            candidate,
        )
        found = await call(store.register, subject, registration)
        return registry_json({"id": found.schema_id, "version": found.version, "guid": found.guid})

    @router.post("/subjects/{subject:path}")
    async def lookup(subject: str, request: Request) -> Response:
        deleted = _flag(request, "deleted")
        if not await call(store.has_subject, subject, deleted):  # before the body, as Confluent
            raise e.subject_not_found(subject)
        candidate = await candidate_of(request)
        found = await call(store.lookup, subject, candidate, deleted)
        return registry_json(found.to_json())

    @router.delete("/subjects/{subject:path}")
    async def delete_subject(subject: str, request: Request) -> Response:
        versions = await call(store.delete_subject, subject, _flag(request, "permanent"))
        return registry_json(versions)

    @router.get("/contexts")
    async def contexts(request: Request) -> Response:
        return registry_json(page(["."], *_paging(request)))  # only the default context

    # --- config ---------------------------------------------------------------------------

    @router.get("/config")
    async def get_global_config() -> Response:
        return registry_json({"compatibilityLevel": await call(store.get_compatibility)})

    @router.put("/config")
    async def put_global_config(request: Request) -> Response:
        level = await call(store.set_compatibility, _level_of(await _body(request)))
        return registry_json({"compatibility": level})

    @router.delete("/config")
    async def delete_global_config() -> Response:
        level = await call(store.delete_compatibility)
        return registry_json({"compatibilityLevel": level})

    @router.get("/config/{subject:path}")
    async def get_subject_config(subject: str, request: Request) -> Response:
        level = await call(store.get_compatibility, subject, _flag(request, "defaultToGlobal"))
        return registry_json({"compatibilityLevel": level})

    @router.put("/config/{subject:path}")
    async def put_subject_config(subject: str, request: Request) -> Response:
        check_subject(subject)
        level = await call(store.set_compatibility, _level_of(await _body(request)), subject)
        return registry_json({"compatibility": level})

    @router.delete("/config/{subject:path}")
    async def delete_subject_config(subject: str) -> Response:
        level = await call(store.delete_compatibility, subject)
        return registry_json({"compatibilityLevel": level})

    # --- mode -----------------------------------------------------------------------------

    @router.get("/mode")
    async def get_global_mode() -> Response:
        return registry_json({"mode": await call(store.get_mode)})

    @router.put("/mode")
    async def put_global_mode(request: Request) -> Response:
        wanted = _mode_of(await _body(request))
        mode = await call(store.set_mode, wanted, None, _flag(request, "force"))
        return registry_json({"mode": mode})

    @router.delete("/mode")
    async def delete_global_mode(request: Request) -> Response:
        mode = await call(store.delete_mode, None, _flag(request, "recursive"))
        return registry_json({"mode": mode})

    @router.get("/mode/{subject:path}")
    async def get_subject_mode(subject: str, request: Request) -> Response:
        mode = await call(store.get_mode, subject, _flag(request, "defaultToGlobal"))
        return registry_json({"mode": mode})

    @router.put("/mode/{subject:path}")
    async def put_subject_mode(subject: str, request: Request) -> Response:
        check_subject(subject)
        wanted = _mode_of(await _body(request))
        mode = await call(store.set_mode, wanted, subject, _flag(request, "force"))
        return registry_json({"mode": mode})

    @router.delete("/mode/{subject:path}")
    async def delete_subject_mode(subject: str) -> Response:
        return registry_json({"mode": await call(store.delete_mode, subject)})

    return router


def _deleted_only(request: Request) -> bool:
    return _flag(request, "deleted_only") or _flag(request, "deletedOnly")


class _RegistryRootRoute(APIRoute):
    """``GET /`` for a client that asks for the registry's JSON (``Accept:
    application/vnd.schemaregistry…``): ``{}``, as Confluent answers; other requests for ``/``
    go to the app's own page."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        headers = dict(scope.get("headers") or ())
        accept = headers.get(b"accept", b"").decode("latin-1").lower()
        if "schemaregistry" not in accept:
            return Match.NONE, {}
        return super().matches(scope)


def install_registry_root(app: FastAPI) -> None:
    """Answer ``GET /`` with ``{}`` for registry clients, before the app's own ``/`` route."""

    async def root(request: Request) -> Response:
        response = registry_json({})
        response.headers["content-type"] = negotiate(request.headers.get("accept")) or MEDIA_TYPE
        return response

    route = _RegistryRootRoute("/", root, methods=["GET"], include_in_schema=False)
    app.router.routes.insert(0, route)


def _compat_answer(ok: bool, messages: list[str], verbose: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"is_compatible": ok}
    if verbose:
        out["messages"] = messages
    return out


def _level_of(body: Any) -> Any:
    if not isinstance(body, dict):
        raise e.invalid_compatibility(body)
    level = body.get("compatibility", body.get("compatibilityLevel"))
    return check_level(level)


def _mode_of(body: Any) -> Any:
    """The mode of a ``PUT /mode`` body; ``{"mode": null}`` (or no mode) clears it."""
    if not isinstance(body, dict):
        return check_mode(body)
    mode = body.get("mode")
    return None if mode is None else check_mode(mode)
