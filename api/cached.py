"""Cached renderings on the hot path: ETags, ``304 Not Modified``, and a pure ASGI shortcut.

``GET /contracts/{name}[/versions/{v}]?render=...`` is what pipelines poll. Once the full route
has rendered a version, :class:`CachedRenderings` answers the same request from the catalog's
cache before FastAPI routes, validates and injects anything; on any doubt (no cached rendering,
listing due for a refresh, an unusual query, a read key that does not match) it hands the
request to the app unchanged, so the answers are the same byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import parse_qsl

from api.catalog import PARTS, RENDER_TARGETS, Catalog, Rendered
from api.deps import key_from_headers

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]
ASGIApp = Callable[[Scope, Receive, Send], Any]

_PATH: Final = re.compile(r"^/contracts/([^/]+)(?:/versions/([0-9]{1,10}))?$")


def not_modified(if_none_match: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header matches ``etag`` (weak comparison, RFC 9110 13.1.2)."""
    if not if_none_match:
        return False
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


def response_parts(
    rendered: Rendered, if_none_match: str | None
) -> tuple[int, bytes, dict[str, str]]:
    """Status, body and headers of an answer with an ETag (304 with no body when it matches)."""
    if not_modified(if_none_match, rendered.etag):
        return 304, b"", {"etag": rendered.etag}
    return 200, rendered.body, {"etag": rendered.etag, "content-type": "application/json"}


class CachedRenderings:
    """Answer cached renderings before the app runs; everything else goes to the app."""

    def __init__(self, app: ASGIApp, catalog: Catalog, read_key: Callable[[str | None], bool]):
        self.app = app
        self.catalog = catalog
        self.read_key = read_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            rendered = self._lookup(scope)
            if rendered is not None:
                await _send(send, rendered, _header(scope, b"if-none-match"))
                return
        await self.app(scope, receive, send)

    def _lookup(self, scope: Scope) -> Rendered | None:
        match = _PATH.match(scope["path"])  # already percent-decoded by the server
        if match is None:
            return None
        query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
        render = query.get("render")
        part = query.get("part", "value")
        if render not in RENDER_TARGETS or part not in PARTS:
            return None
        presented = key_from_headers(_header(scope, b"x-api-key"), _header(scope, b"authorization"))
        if not self.read_key(presented):
            return None
        version = int(match.group(2)) if match.group(2) else None
        if version == 0:
            return None
        return self.catalog.cached_rendering(match.group(1), version, render, part)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def _send(send: Send, rendered: Rendered, if_none_match: str | None) -> None:
    status, body, headers = response_parts(rendered, if_none_match)
    raw = [(k.encode(), v.encode()) for k, v in headers.items()]
    if status == 200:
        raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
