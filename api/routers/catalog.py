"""The catalog page for people: ``GET /`` (search), contract detail, side-by-side version diff.

Server-rendered with Jinja2 from the same catalog the JSON API reads; the one script
(``static/catalog.js``) only filters the list as you type.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.templating import Jinja2Templates

from api.catalog import PARTS, RENDER_TARGETS, Catalog
from api.deps import CatalogDep
from contracts.contract import dump_contract
from contracts.errors import ContractsError

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent.parent / "templates"))
router = APIRouter(include_in_schema=False)


def _page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status)


def _error_page(request: Request, err: ContractsError) -> Response:
    from api.problems import status_for

    return _page(request, "error.html", {"error": err.one_line()}, status_for(err))


@router.get("/")
async def index(
    request: Request, catalog: CatalogDep, q: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """Every contract, filtered by ``q`` (name, topic, format or owner contains it)."""
    needle = q.strip().lower()
    entries = [
        e
        for e in (await catalog.index()).values()
        if not needle
        or any(needle in (v or "").lower() for v in (e.name, e.topic, e.format, e.owner))
    ]
    return _page(request, "index.html", {"entries": entries, "q": q, "problems": catalog.problems})


@router.get("/catalog/{name}")
async def detail(
    request: Request,
    name: str,
    catalog: CatalogDep,
    version: Annotated[int | None, Query(ge=1)] = None,
    render: Annotated[str, Query()] = "avro",
    part: Annotated[str, Query()] = "value",
) -> Response:
    """One contract version with its YAML and a rendering; links to the other versions."""
    try:
        entry = await catalog.entry(name)
        ref = entry.version(version) if version is not None else entry.latest
        loaded = await catalog.load(ref)
    except ContractsError as err:
        return _error_page(request, err)
    render = render if render in RENDER_TARGETS else "avro"
    part = part if part in PARTS else "value"
    rendering, render_error = await _rendering(catalog, loaded, render, part)
    return _page(
        request,
        "detail.html",
        {
            "entry": entry,
            "ref": ref,
            "contract": loaded.contract,
            "yaml": dump_contract(loaded.contract),
            "render": render,
            "part": part,
            "targets": RENDER_TARGETS,
            "parts": PARTS,
            "rendering": rendering,
            "render_error": render_error,
        },
    )


async def _rendering(catalog: Catalog, loaded: Any, to: str, part: str) -> tuple[str, str | None]:
    import orjson

    try:
        body = orjson.loads((await catalog.rendering(loaded, to, part)).body)
    except ContractsError as err:
        return "", err.one_line()
    schema = body["schema"]
    if isinstance(schema, str):
        return schema, None
    return orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode("utf-8"), None


@dataclass(frozen=True, slots=True)
class Row:
    """One line pair of the side-by-side view."""

    old: str | None
    new: str | None
    change: str  # same | changed | added | removed
    finding: str | None  # severity of a finding about this line's column


@router.get("/catalog/{name}/diff")
async def diff_page(
    request: Request,
    name: str,
    catalog: CatalogDep,
    old: Annotated[int, Query(ge=1)],
    new: Annotated[int, Query(ge=1)],
) -> Response:
    """Two versions side by side, changed lines marked and lines with findings highlighted."""
    from contracts.diff import diff_contracts

    try:
        entry = await catalog.entry(name)
        left = (await catalog.load(entry.version(old))).contract
        right = (await catalog.load(entry.version(new))).contract
        result = diff_contracts(left, right, right.compatibility)
    except ContractsError as err:
        return _error_page(request, err)
    severity = _column_severity(result.findings)
    rows = side_by_side(dump_contract(left), dump_contract(right), severity)
    return _page(
        request,
        "diff.html",
        {"entry": entry, "old": old, "new": new, "rows": rows, "result": result},
    )


def _column_severity(findings: Any) -> dict[str, str]:
    """column -> the most severe finding's severity (breaking beats warning beats info)."""
    out: dict[str, str] = {}
    for f in sorted(findings, key=lambda f: -f.severity.rank):
        if f.column:
            out[f.column] = f.severity.value
    return out


def side_by_side(old: str, new: str, severity: dict[str, str]) -> list[Row]:
    """Align two texts line by line (difflib opcodes) and tag each pair."""
    a, b = old.splitlines(), new.splitlines()
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [Row(x, y, "same", None) for x, y in zip(a[i1:i2], b[j1:j2], strict=True)]
            continue
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            x = left[k] if k < len(left) else None
            y = right[k] if k < len(right) else None
            change = (
                "changed"
                if x is not None and y is not None
                else ("removed" if y is None else "added")
            )
            rows.append(Row(x, y, change, _line_severity(x, y, severity)))
    return rows


def _line_severity(old: str | None, new: str | None, severity: dict[str, str]) -> str | None:
    for line in (new, old):
        if line is None:
            continue
        for column, level in severity.items():
            if f"field: {column}," in line or f"field: {column}}}" in line:
                return level
    return None
