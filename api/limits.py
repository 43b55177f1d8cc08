"""Pure ASGI middleware: request body size limit, catalog invalidation on registry writes, and
``HEAD`` answered as ``GET`` without the body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import problem, problem_response

REGISTRY_WRITE_PREFIXES: Final = ("/subjects", "/config", "/mode")
WRITE_METHODS: Final = frozenset({"POST", "PUT", "DELETE"})


class BodyLimit:
    """Answer 413 to bodies larger than ``max_bytes``, declared or streamed (chunked too):
    problem+json, or what ``answer_for(path)`` gives for that path (the registry's
    Confluent-shaped error).

    The body is read here, before any route runs, and handed on whole; the bodies the service
    takes are small enough (``max_bytes``) to hold, and no route then meets a body that breaks
    off half way (which FastAPI would answer 400).
    """

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
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client went away: nothing to answer
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await self._refuse(scope, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)

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


_METHODS: Final = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(app: Any, scope: Scope) -> list[str]:
    """Every method some route of the app takes at the request's path (for ``Allow``): each
    method is tried against the routes as the router itself matches them."""
    from starlette.routing import Match, Mount

    # as the app's own router saw the request (a mount, e.g. /static, changes root_path)
    top = {**scope, "root_path": scope.get("app_root_path", "")}
    for route in app.router.routes:
        if isinstance(route, Mount) and route.matches(top)[0] is Match.FULL:
            return ["GET", "HEAD"]  # the static files
    allowed = [
        method
        for method in _METHODS
        if any(
            route.matches({**top, "method": method})[0] is Match.FULL for route in app.router.routes
        )
    ]
    if "GET" in allowed and "HEAD" not in allowed:
        allowed.append("HEAD")  # answered as GET (HeadAsGet)
    return sorted(allowed)


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
