"""The catalog for people: ``GET /`` (every contract), a contract's page per version, the diff
between two versions, and the API docs (``/docs``, Swagger UI) served from local files.

Server-rendered with Jinja2 from the same catalog the JSON API reads; the page contents are
built by :mod:`api.catalog_pages`, which the static export (``cdc-contracts catalog build``)
uses too. The one script (``static/catalog.js``) filters and sorts the index, copies renderings
and keeps keyboard focus visible; every page works without it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.templating import Jinja2Templates

from api.catalog import Catalog, Entry, VersionRef
from api.catalog_pages import (
    TIMELINE_LIMIT,
    ContractView,
    VersionView,
    contract_context,
    diff_context,
    index_context,
)
from api.deps import CatalogDep
from contracts.errors import ContractsError, NotFoundError

TEMPLATE_DIR = Path(__file__).parent.parent / "templates"
TEMPLATES = Jinja2Templates(directory=str(TEMPLATE_DIR))
router = APIRouter(include_in_schema=False)


def served_link(kind: str, **at: Any) -> str:
    """The URL of a catalog page or asset on the running service."""
    name = quote(str(at.get("name", "")), safe="")
    if kind == "index":
        return "/"
    if kind == "contract":
        return f"/catalog/{name}"
    if kind == "version":
        return f"/catalog/{name}/versions/{at['version']}"
    if kind == "diff":
        return f"/catalog/{name}/diff?old={at['old']}&new={at['new']}"
    if kind == "static":
        return f"/static/{at['path']}"
    if kind == "json":
        return f"/contracts/{name}/versions/{at['version']}"
    if kind == "api-docs":
        return "/docs"
    raise ValueError(f"unknown link kind {kind!r}")


def _page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    context = {**context, "link": served_link, "served": True}
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status)


def _error_page(request: Request, err: ContractsError) -> Response:
    from api.problems import status_for

    return _page(request, "error.html", {"error": err.one_line()}, status_for(err))


# --- gathering versions ------------------------------------------------------------------------


async def _version(catalog: Catalog, ref: VersionRef) -> VersionView:
    try:
        loaded = await catalog.load(ref)
    except ContractsError as err:
        return VersionView(ref.version, None, dict(ref.subjects), problem=err.one_line())
    return VersionView(
        ref.version, loaded.contract, dict(ref.subjects), dict(loaded.ids), _mtime(ref)
    )


def _mtime(ref: VersionRef) -> str | None:
    """A directory contract's last change: its file's modification time."""
    if ref.path is None:
        return None
    from datetime import UTC, datetime

    try:
        stamp = ref.path.stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


async def _view(catalog: Catalog, entry: Entry, *, every: bool) -> ContractView:
    """A contract with its latest version loaded, or (``every``) the versions its page shows."""
    refs = list(entry.versions)
    wanted = refs[-(TIMELINE_LIMIT + 1) :] if every else refs[-1:]
    loaded = dict(
        zip(
            [r.version for r in wanted],
            await asyncio.gather(*(_version(catalog, r) for r in wanted)),
            strict=True,
        )
    )
    versions = tuple(
        loaded.get(r.version) or VersionView(r.version, None, dict(r.subjects)) for r in refs
    )
    path = str(refs[-1].path) if refs[-1].path is not None else None
    return ContractView(entry.name, entry.source, versions, path)


# --- pages -------------------------------------------------------------------------------------


@router.get("/")
async def index(
    request: Request, catalog: CatalogDep, q: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """Every contract; ``q`` keeps those whose name, topic, format, owner or description
    contains it (the page's script filters as you type)."""
    entries = list((await catalog.index()).values())
    views = await asyncio.gather(*(_view(catalog, e, every=False) for e in entries))
    context = index_context(views, catalog.problems, q)
    needle = q.strip().lower()
    if needle:
        context["rows"] = [
            r
            for r in context["rows"]
            if any(needle in v.lower() for v in (r.name, r.topic, r.format, r.owner, r.description))
        ]
    return _page(request, "index.html", context)


@router.get("/catalog/{name}")
async def contract_page(
    request: Request,
    name: str,
    catalog: CatalogDep,
    version: Annotated[int | None, Query(ge=1)] = None,
) -> Response:
    """A contract's latest version (or ``?version=N``)."""
    return await _contract(request, catalog, name, version)


@router.get("/catalog/{name}/versions/{version}")
async def version_page(request: Request, name: str, version: int, catalog: CatalogDep) -> Response:
    """One version of a contract: its columns, renderings, subjects and the timeline."""
    return await _contract(request, catalog, name, version)


async def _contract(request: Request, catalog: Catalog, name: str, number: int | None) -> Response:
    try:
        entry = await catalog.entry(name)
        if number is not None:
            entry.version(number)  # 404 naming the versions there are
        view = await _view(catalog, entry, every=True)
        shown = view.version(number) if number is not None else view.latest
        if shown is None or shown.contract is None:
            raise NotFoundError(
                (shown.problem if shown else None) or f"version {number} could not be read",
                f"/catalog/{name}",
            )
    except ContractsError as err:
        return _error_page(request, err)
    return _page(request, "contract.html", contract_context(view, shown))


@router.get("/catalog/{name}/diff")
async def diff_page(
    request: Request,
    name: str,
    catalog: CatalogDep,
    old: Annotated[int, Query(ge=1)],
    new: Annotated[int, Query(ge=1)],
) -> Response:
    """What changed between two versions: the verdict and findings first, then the columns."""
    try:
        entry = await catalog.entry(name)
        refs = (entry.version(old), entry.version(new))
        left, right = await asyncio.gather(*(_version(catalog, r) for r in refs))
        for side in (left, right):
            if side.contract is None:
                raise NotFoundError(side.problem or "a version could not be read", name)
        view = await _view(catalog, entry, every=False)
        context = diff_context(view, left, right)
    except ContractsError as err:
        return _error_page(request, err)
    return _page(request, "diff.html", context)


# --- API docs from local files -----------------------------------------------------------------

#: Swagger UI as the fastapi-offline package ships it: nothing from another host. (Not its
#: ReDoc: that bundle fetches its logo from its own CDN.)
DOC_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")
#: what the docs page may load: this service only
DOCS_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self' 'unsafe-inline'; worker-src 'self' blob:; connect-src 'self'; "
    "font-src 'self' data:"
)


def _doc_assets() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


@router.get("/api-docs/{asset}")
async def doc_asset(asset: str) -> Response:
    if asset not in DOC_ASSETS:
        return Response(status_code=404)
    return FileResponse(_doc_assets() / asset, headers={"Cache-Control": "max-age=86400"})


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI for the OpenAPI document, from local files."""
    from fastapi.openapi.docs import get_swagger_ui_html

    page = get_swagger_ui_html(
        openapi_url=request.app.openapi_url,
        title=f"{request.app.title} API",
        swagger_js_url="/api-docs/swagger-ui-bundle.js",
        swagger_css_url="/api-docs/swagger-ui.css",
        swagger_favicon_url="/api-docs/favicon.png",
        swagger_ui_parameters={"validatorUrl": None, "defaultModelsExpandDepth": 0},
    )
    page.headers["Content-Security-Policy"] = DOCS_POLICY
    return page
