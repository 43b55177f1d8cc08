"""``/contracts``: list, read, render, check and register contracts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import yaml
from fastapi import APIRouter, Body, Header, Path, Query, Request, Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from api.cached import response_parts
from api.catalog import Catalog, Entry, Loaded, RegistryIncompatibleError, Rendered
from api.deps import CatalogDep, SettingsDep, WriteKey
from contracts.contract import NAME_PATTERN, CompatibilityLevel, Contract, parse_contract
from contracts.errors import ConflictError, ContractFileError, ContractsError, NotFoundError

router = APIRouter(prefix="/contracts", tags=["contracts"])

Name = Annotated[str, Path(pattern=NAME_PATTERN, max_length=200, description="contract name")]
Render = Literal["connect", "avro", "spark-json", "spark-ddl"]
Part = Literal["key", "value", "row"]
RenderQuery = Annotated[Render | None, Query(description="return this rendering of the contract")]
PartQuery = Annotated[Part, Query(description="which schema to render")]


class ContractPayloadError(ContractsError):
    """A request body is not a usable contract."""


@router.get("", summary="List contracts")
async def list_contracts(
    catalog: CatalogDep,
    settings: SettingsDep,
    format: Annotated[str | None, Query(max_length=100)] = None,
    topic: Annotated[str | None, Query(max_length=300)] = None,
    prefix: Annotated[str | None, Query(max_length=200, description="name prefix")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    """Contracts matching the filters, by name, one page at a time."""
    found = await catalog.list(format=format, topic=topic, prefix=prefix)
    limit = min(limit, settings.max_page_size)
    return {
        "total": len(found),
        "offset": offset,
        "limit": limit,
        "items": [e.summary() for e in found[offset : offset + limit]],
    }


IfNoneMatch = Annotated[
    str | None, Header(description="answer 304 when the ETag of the answer is one of these")
]
_CONDITIONAL: dict[int | str, dict[str, Any]] = {
    304: {"description": "not modified: the ETag matches `If-None-Match`"}
}


@router.get("/{name}", summary="The latest version of a contract", responses=_CONDITIONAL)
async def latest(
    name: Name,
    catalog: CatalogDep,
    render: RenderQuery = None,
    part: PartQuery = "value",
    if_none_match: IfNoneMatch = None,
) -> Response:
    """The latest version, or one of its renderings with ``?render=`` (with an ETag)."""
    entry = await catalog.entry(name)
    loaded = await catalog.load(entry.latest)
    return await _answer(catalog, entry, loaded, render, part, if_none_match)


@router.get("/{name}/versions", summary="Version numbers of a contract")
async def versions(name: Name, catalog: CatalogDep) -> dict[str, Any]:
    entry = await catalog.entry(name)
    return {"name": name, "source": entry.source, "versions": [r.version for r in entry.versions]}


@router.get(
    "/{name}/versions/{version}", summary="One version of a contract", responses=_CONDITIONAL
)
async def one_version(
    name: Name,
    version: Annotated[int, Path(ge=1, le=2**31 - 1)],
    catalog: CatalogDep,
    render: RenderQuery = None,
    part: PartQuery = "value",
    if_none_match: IfNoneMatch = None,
) -> Response:
    entry = await catalog.entry(name)
    loaded = await catalog.load(entry.version(version))
    return await _answer(catalog, entry, loaded, render, part, if_none_match)


async def _answer(
    catalog: Catalog,
    entry: Entry,
    loaded: Loaded,
    render: str | None,
    part: str,
    if_none_match: str | None,
) -> Response:
    if render is None:
        import orjson

        answer = Rendered.of(orjson.dumps(loaded.to_json([r.version for r in entry.versions])))
    else:
        answer = await catalog.rendering(loaded, render, part)
    status, body, headers = response_parts(answer, if_none_match)
    return Response(body, status_code=status, headers=headers)


# --- check and register -----------------------------------------------------------------------


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


#: a compatibility level in any case (``backward``), as the registry accepts it
Level = Annotated[CompatibilityLevel, BeforeValidator(_upper)]


class CheckRequest(BaseModel):
    """A candidate contract (as a JSON object or YAML text) and an optional level."""

    model_config = ConfigDict(extra="forbid")

    candidate: dict[str, Any] | str = Field(description="the contract, as JSON or YAML text")
    level: Level | None = Field(
        default=None, description="defaults to the candidate's compatibility level (any case)"
    )


def candidate_contract(value: dict[str, Any] | str, where: str) -> Contract:
    """A contract from a request value (a JSON object, or YAML / JSON text); an unknown format
    is refused by the parser, as for ``PUT``."""
    text = value if isinstance(value, str) else yaml.safe_dump(value, sort_keys=False)
    return parse_contract(text, where)


async def verdict(
    catalog: Catalog, name: str, candidate: Contract, level: CompatibilityLevel | None
) -> dict[str, Any]:
    """The candidate diffed with the latest version; the registry verdict is taken against
    every version for transitive levels, against the latest otherwise (as the registry does)."""
    from contracts.diff import Side, diff_sides

    entry = await catalog.entry(name)
    history = [Side.of_contract((await catalog.load(ref)).contract) for ref in entry.versions]
    result = diff_sides(history[-1], Side.of_contract(candidate), level, history=history)
    against = entry.versions if result.level.transitive else entry.versions[-1:]
    return {"name": name, "against_versions": [r.version for r in against], **result.to_json()}


@router.post("/{name}/check", summary="Check a candidate against the registered versions")
async def check(
    name: Name,
    request: Annotated[CheckRequest, Body()],
    catalog: CatalogDep,
) -> dict[str, Any]:
    """Would the candidate be accepted? Transitive levels check every version, others the latest."""
    candidate = candidate_contract(request.candidate, "$.candidate")
    _same_name(name, candidate)
    return await verdict(catalog, name, candidate, request.level)


_PUT_BODY = {
    "requestBody": {
        "required": True,
        "description": "the contract file, as YAML or as the same document in JSON",
        "content": {
            "application/yaml": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}


@router.put(
    "/{name}",
    summary="Register a new version of a contract",
    openapi_extra=_PUT_BODY,
    status_code=201,
    responses={
        200: {"description": "unchanged: the latest version already is this contract"},
        409: {"description": "incompatible with the registered versions"},
    },
)
async def put_contract(
    name: Name, request: Request, catalog: CatalogDep, _key: WriteKey
) -> Response:
    """Registers the key and value schemas (with the contract metadata) if compatible."""
    contract = _contract_from_body(await request.body(), "request body")
    _same_name(name, contract)
    entry = await _registered_entry(catalog, name)
    result = None
    if entry is not None:
        latest = (await catalog.load(entry.latest)).contract
        if latest.to_dict() == contract.to_dict():
            return _json({"name": name, "changed": False, "version": entry.latest.version}, 200)
        result = await verdict(catalog, name, contract, contract.compatibility)
        if not result["compatible"]:
            raise IncompatibleContractError(result)
    try:
        outcome = await catalog.register(contract)
    except RegistryIncompatibleError as err:
        raise IncompatibleContractError.by_registry(name, contract, result, err) from None
    return _json({"name": name, "changed": True, **outcome}, 201)


async def _registered_entry(catalog: Catalog, name: str) -> Entry | None:
    try:
        entry = await catalog.entry(name)
    except NotFoundError:
        return None
    return entry if entry.source == "registry" else None


class IncompatibleContractError(ConflictError):
    """The candidate breaks compatibility with registered versions; the verdict is kept."""

    def __init__(self, result: dict[str, Any]) -> None:
        versions = ", ".join(map(str, result["against_versions"])) or "the registered schema"
        super().__init__(
            f"contract {result['name']!r} is not {result['level']} compatible with "
            f"version(s) {versions}",
            f"/contracts/{result['name']}",
        )
        self.extra = {"verdict": result}

    @classmethod
    def by_registry(
        cls,
        name: str,
        contract: Contract,
        result: dict[str, Any] | None,
        refusal: RegistryIncompatibleError,
    ) -> IncompatibleContractError:
        """The registry refused a subject the diff engine let through (or had nothing to diff
        against): the verdict says so, with the registry's reasons under ``registry``."""
        base = result or {
            "name": name,
            "against_versions": [],
            "level": contract.compatibility.value,
            "findings": [],
        }
        registry = {"subject": refusal.subject, "part": refusal.part, "messages": refusal.messages}
        return cls({**base, "compatible": False, "breaking": True, "registry": registry})


def _contract_from_body(raw: bytes, where: str) -> Contract:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ContractFileError("the body is not UTF-8 text", where) from None
    if not text.strip():
        raise ContractFileError("the body is empty: send the contract as YAML or JSON", where)
    return parse_contract(text, where)


def _same_name(name: str, contract: Contract) -> None:
    if contract.name != name:
        raise ContractPayloadError(
            f"the contract is named {contract.name!r} but the URL names {name!r}", "$.name"
        )


def _json(value: Any, status: int) -> Response:
    import orjson

    return Response(orjson.dumps(value), status_code=status, media_type="application/json")
