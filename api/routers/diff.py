"""``POST /diff``: compare two contracts (or Avro / Connect schemas), as ``cdc-contracts diff``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from api.deps import OffloadDep
from api.routers.contracts import Level
from contracts.errors import SchemaError

router = APIRouter(tags=["diff"])


class DiffRequest(BaseModel):
    """Two sides (each a contract, an Avro schema or a Connect schema, as JSON) and a level."""

    model_config = ConfigDict(extra="forbid")

    old: dict[str, Any] = Field(description="the registered / previous side")
    new: dict[str, Any] = Field(description="the candidate side")
    level: Level | None = Field(
        default=None, description="defaults to the new contract's level, else BACKWARD (any case)"
    )


@router.post("/diff", summary="Diff two contracts or schemas")
async def diff(request: DiffRequest, offload: OffloadDep) -> dict[str, Any]:
    """The diff result, identical to ``cdc-contracts diff --output json``."""
    return await offload.run(diff_request, request)


def diff_request(request: DiffRequest) -> dict[str, Any]:
    """What ``POST /diff`` answers (runs in a worker)."""
    from contracts.diff import diff_sides
    from contracts.diff.inputs import load_side_obj

    _check_depth(request.old, "$.old")
    _check_depth(request.new, "$.new")
    try:
        old = load_side_obj(request.old, "$.old")
        new = load_side_obj(request.new, "$.new")
        result: dict[str, Any] = diff_sides(old, new, request.level).to_json()
    except RecursionError:
        raise SchemaError("the sides are nested too deeply to be compared", "$") from None
    return result


def _check_depth(value: Any, where: str) -> None:
    """Refuse a side nested deeper than the registry accepts, before the parsers recurse."""
    from api.registry.avro import MAX_DEPTH, too_deep

    if too_deep(value):
        raise SchemaError(f"nested too deeply (over {MAX_DEPTH} levels)", where)
