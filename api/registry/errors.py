"""Schema Registry errors in Confluent's shape: an HTTP status, an ``error_code`` and a message.

Confluent clients (and every tool built on them) read ``{"error_code": int, "message": str}``;
the codes below are the ones Confluent Schema Registry and Karapace answer with.
"""

from __future__ import annotations

from typing import Final

#: error_code -> HTTP status. The name of each constant is what the code means.
UNAUTHORIZED: Final = 40101
SUBJECT_NOT_FOUND: Final = 40401
VERSION_NOT_FOUND: Final = 40402
SCHEMA_NOT_FOUND: Final = 40403
SUBJECT_SOFT_DELETED: Final = 40404
SUBJECT_NOT_SOFT_DELETED: Final = 40405
VERSION_SOFT_DELETED: Final = 40406
VERSION_NOT_SOFT_DELETED: Final = 40407
SUBJECT_COMPATIBILITY_NOT_CONFIGURED: Final = 40408
SUBJECT_MODE_NOT_CONFIGURED: Final = 40409
INCOMPATIBLE_SCHEMA: Final = 409
INVALID_SCHEMA: Final = 42201
INVALID_VERSION: Final = 42202
INVALID_COMPATIBILITY_LEVEL: Final = 42203
INVALID_MODE: Final = 42204
OPERATION_NOT_PERMITTED: Final = 42205
REFERENCE_EXISTS: Final = 42206
INVALID_SUBJECT: Final = 42208
UNPROCESSABLE: Final = 422
BAD_REQUEST: Final = 400
NOT_FOUND: Final = 404
NOT_ACCEPTABLE: Final = 406
UNSUPPORTED_MEDIA_TYPE: Final = 415
STORE_ERROR: Final = 50001

_STATUS_OF_CODE: Final[dict[int, int]] = {
    UNAUTHORIZED: 401,
    SUBJECT_NOT_FOUND: 404,
    VERSION_NOT_FOUND: 404,
    SCHEMA_NOT_FOUND: 404,
    SUBJECT_SOFT_DELETED: 404,
    SUBJECT_NOT_SOFT_DELETED: 404,
    VERSION_SOFT_DELETED: 404,
    VERSION_NOT_SOFT_DELETED: 404,
    SUBJECT_COMPATIBILITY_NOT_CONFIGURED: 404,
    SUBJECT_MODE_NOT_CONFIGURED: 404,
    NOT_FOUND: 404,
    INCOMPATIBLE_SCHEMA: 409,
    INVALID_SCHEMA: 422,
    INVALID_VERSION: 422,
    INVALID_COMPATIBILITY_LEVEL: 422,
    INVALID_MODE: 422,
    OPERATION_NOT_PERMITTED: 422,
    REFERENCE_EXISTS: 422,
    INVALID_SUBJECT: 422,
    UNPROCESSABLE: 422,
    BAD_REQUEST: 400,
    NOT_ACCEPTABLE: 406,
    UNSUPPORTED_MEDIA_TYPE: 415,
    STORE_ERROR: 500,
}


class RegistryError(Exception):
    """A refusal of the registry, answered as ``{"error_code": ..., "message": ...}``."""

    def __init__(
        self,
        error_code: int,
        message: str,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message
        self._status = status
        self.headers = headers

    @property
    def status(self) -> int:
        """The HTTP status: given, or the one Confluent answers for the error code."""
        if self._status is not None:
            return self._status
        return _STATUS_OF_CODE.get(self.error_code, 500)

    def to_json(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}


#: the reason phrases Confluent's server (Jetty / Jersey) writes in ``HTTP <status> <phrase>``
_PHRASES: Final[dict[int, str]] = {
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
}


def http_error(status: int) -> RegistryError:
    """A refusal made by the HTTP layer (no route, wrong method, body too large), as Confluent
    answers it: ``{"error_code": 404, "message": "HTTP 404 Not Found"}``."""
    phrase = _PHRASES.get(status, "Error")
    return RegistryError(status, f"HTTP {status} {phrase}", status=status)


def unauthorized(reason: str) -> RegistryError:
    """401 (error_code 40101), with the challenge RFC 9110 asks for."""
    return RegistryError(
        UNAUTHORIZED,
        f"Unauthorized: {reason}",
        headers={"WWW-Authenticate": 'Basic realm="cdc-contracts", charset="UTF-8"'},
    )


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(SUBJECT_NOT_FOUND, f"Subject '{subject}' not found.")


def version_not_found(version: int | str) -> RegistryError:
    return RegistryError(VERSION_NOT_FOUND, f"Version {version} not found.")


def schema_not_found(schema_id: int | str | None = None) -> RegistryError:
    text = "Schema not found" if schema_id is None else f"Schema {schema_id} not found"
    return RegistryError(SCHEMA_NOT_FOUND, text)


def invalid_version(version: str) -> RegistryError:
    return RegistryError(
        INVALID_VERSION,
        f"The specified version '{version}' is not a valid version id. Allowed values are "
        'between [1, 2^31-1] and the string "latest"',
    )


def invalid_schema(reason: str) -> RegistryError:
    return RegistryError(INVALID_SCHEMA, f"Invalid schema: {reason}")


def invalid_compatibility(value: object) -> RegistryError:
    return RegistryError(
        INVALID_COMPATIBILITY_LEVEL,
        f"Invalid compatibility level {value!r}. Valid values are none, backward, forward, "
        "full, backward_transitive, forward_transitive, and full_transitive",
    )
