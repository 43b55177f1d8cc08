"""``GET /formats``: the CDC formats this service can infer and render contracts for."""

from __future__ import annotations

from fastapi import APIRouter

from api.responses import FormatInfo
from contracts.formats import FORMATS, get_format

router = APIRouter(tags=["formats"])


@router.get("/formats", summary="Known CDC formats")
async def list_formats() -> list[FormatInfo]:
    """Every registered format with its description and whether messages embed a schema."""
    out = []
    for name in FORMATS:
        try:
            fmt = get_format(name)
        except ImportError:
            continue  # registered but not shipped in this build
        out.append(
            FormatInfo(
                name=fmt.name,
                description=fmt.description,
                embedded_schema=fmt.embedded_schema,
                input_kind=fmt.input_kind,
            )
        )
    return out
