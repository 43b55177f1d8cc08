"""RFC 9457 problem details (``application/problem+json``) for the contract API.

One place maps the project's errors to HTTP: :func:`status_for` reads the table below (most
specific class first, then the error's own ``http_status``), :func:`problem_response` renders a
problem, and :func:`install_problem_handlers` makes an app answer every
:class:`~contracts.errors.ContractsError`, request validation error and HTTP error this way.

The Schema Registry routes do not use this: Confluent clients expect
``{"error_code": int, "message": str}`` (see :mod:`api.registry.errors`).
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from contracts.errors import (
    ConflictError,
    ContractFileError,
    ContractsError,
    DecodeError,
    DetectionError,
    InputError,
    NotFoundError,
    SchemaError,
    UnknownFormatError,
)

PROBLEM_MEDIA_TYPE: Final = "application/problem+json"
PROBLEM_BASE: Final = "https://cdc-contracts.dev/problems/"

#: error class -> (HTTP status, problem type slug, title). Most specific classes first.
ERROR_TABLE: Final[tuple[tuple[type[ContractsError], int, str, str], ...]] = (
    (UnknownFormatError, 404, "unknown-format", "Unknown format"),
    (NotFoundError, 404, "not-found", "Not found"),
    (ConflictError, 409, "conflict", "Conflict"),
    (DetectionError, 422, "detection-failed", "Format detection failed"),
    (DecodeError, 422, "undecodable-value", "A value does not decode"),
    (InputError, 422, "invalid-input", "Invalid input"),
    (ContractFileError, 422, "invalid-contract", "Invalid contract"),
    (SchemaError, 422, "invalid-schema", "Invalid schema"),
)

_STATUS_TITLES: Final[dict[int, str]] = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    500: "Internal server error",
}


def classify(err: ContractsError) -> tuple[int, str, str]:
    """(status, type slug, title) for an error, from :data:`ERROR_TABLE`."""
    for cls, status, slug, title in ERROR_TABLE:
        if isinstance(err, cls):
            return status, slug, title
    return err.http_status, "contracts-error", "Request refused"


def status_for(err: ContractsError) -> int:
    """The HTTP status an error answers with."""
    return classify(err)[0]


def problem(
    status: int,
    title: str | None = None,
    detail: str | None = None,
    type_: str | None = None,
    instance: str | None = None,
    **extensions: Any,
) -> dict[str, Any]:
    """A problem details object (RFC 9457 section 3) as plain data."""
    body: dict[str, Any] = {
        "type": type_ or "about:blank",
        "title": title or _STATUS_TITLES.get(status, "Error"),
        "status": status,
    }
    if detail is not None:
        body["detail"] = detail
    if instance is not None:
        body["instance"] = instance
    body.update({k: v for k, v in extensions.items() if v is not None})
    return body


def problem_response(body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    """A problem details object as an ``application/problem+json`` response."""
    import orjson

    return Response(
        orjson.dumps(body),
        status_code=int(body["status"]),
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def problem_for_error(err: ContractsError, instance: str | None = None) -> dict[str, Any]:
    """The problem details of a project error; ``where`` becomes an extension member."""
    status, slug, title = classify(err)
    return problem(
        status,
        title=title,
        detail=" ".join(err.what.split()),
        type_=PROBLEM_BASE + slug,
        instance=instance,
        where=err.where,
    )


def install_problem_handlers(app: FastAPI) -> None:
    """Answer project errors, validation errors and HTTP errors as problem details."""

    async def on_contracts_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ContractsError)
        return problem_response(problem_for_error(exc, request.url.path))

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = [
            {
                "where": ".".join(str(p) for p in item.get("loc", ())),
                "what": str(item.get("msg", "")),
            }
            for item in exc.errors()
        ]
        first = errors[0] if errors else {"where": "request", "what": "invalid request"}
        body = problem(
            422,
            title="Invalid request",
            detail=f"{first['where']}: {first['what']}",
            type_=PROBLEM_BASE + "invalid-request",
            instance=request.url.path,
            errors=errors,
        )
        return problem_response(body)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        detail = exc.detail if isinstance(exc.detail, str) else None
        body = problem(exc.status_code, detail=detail, instance=request.url.path)
        return problem_response(body, headers=getattr(exc, "headers", None))

    app.add_exception_handler(ContractsError, on_contracts_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
