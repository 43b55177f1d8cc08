"""Pure ASGI middleware: request body size limit, catalog invalidation on registry writes, and
``HEAD`` answered as ``GET`` without the body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import problem, problem_response

REGISTRY_WRITE_PREFIXES: Final = ("/subjects", "/config", "/mode")
WRITE_METHODS: Final = frozenset({"POST", "PUT", "DELETE"})


class BodyTooLargeError(Exception):
    """Raised inside ``receive`` when the body passes the limit while streaming."""


class BodyLimit:
    """Answer 413 to bodies larger than ``max_bytes``, declared or streamed: problem+json, or
    what ``answer_for(path)`` gives for that path (the registry's Confluent-shaped error)."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        answer_for: Callable[[str], Any | None] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.answer_for = answer_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, send)
            return
        seen = 0
        started = False

        async def limited_receive() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLargeError
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLargeError:
            if not started:
                await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        if self.answer_for is not None:
            answer = self.answer_for(scope.get("path", ""))
            if answer is not None:
                await answer(scope, _empty_receive, send)
                return
        body = problem(
            413,
            detail=f"the request body is larger than {self.max_bytes} bytes",
            instance=scope.get("path"),
        )
        await problem_response(body)(scope, _empty_receive, send)


async def _empty_receive() -> dict[str, Any]:
    return {"type": "http.disconnect"}


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class InvalidateOnRegistryWrite:
    """Drop the catalog's listing after any write the embedded registry answers."""

    def __init__(self, app: ASGIApp, invalidate: Callable[[], None]) -> None:
        self.app = app
        self.invalidate = invalidate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in WRITE_METHODS
            and scope["path"].startswith(REGISTRY_WRITE_PREFIXES)
        ):
            try:
                await self.app(scope, receive, send)
            finally:
                self.invalidate()
            return
        await self.app(scope, receive, send)


class HeadAsGet:
    """Answer ``HEAD`` as the same ``GET`` would, headers only (RFC 9110 section 9.3.2)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
