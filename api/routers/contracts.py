"""``/contracts``: list, read, render, check and register contracts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import yaml
from fastapi import APIRouter, Body, Header, Path, Query, Request, Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from api.cached import response_parts
from api.catalog import (
    Catalog,
    Entry,
    Loaded,
    RefusedContractError,
    RegistryIncompatibleError,
    Rendered,
    RollbackError,
    put_through_gate,
)
from api.deps import CatalogDep, GateDep, GateRules, LocksDep, OffloadDep, SettingsDep, WriteKey
from api.problems import PROBLEM_BASE, problem_for_error
from api.responses import ContractPage, ContractSummary, ContractVersions
from contracts.contract import NAME_PATTERN, CompatibilityLevel, Contract, parse_contract
from contracts.diff.side import Side
from contracts.errors import ContractFileError, ContractsError, InputError

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
) -> ContractPage:
    """Contracts matching the filters, by name, one page at a time."""
    found = await catalog.list(format=format, topic=topic, prefix=prefix)
    limit = min(limit, settings.max_page_size)
    return ContractPage(
        total=len(found),
        offset=offset,
        limit=limit,
        items=[ContractSummary.model_validate(e.summary()) for e in found[offset : offset + limit]],
    )


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
async def versions(name: Name, catalog: CatalogDep) -> ContractVersions:
    entry = await catalog.entry(name)
    return ContractVersions(
        name=name, source=entry.source, versions=[r.version for r in entry.versions]
    )


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


def judge_candidate(
    value: dict[str, Any] | str,
    name: str,
    history: list[Contract],
    versions: list[int],
    level: CompatibilityLevel | None,
    rules: GateRules,
) -> dict[str, Any]:
    """The candidate's verdict against the registered versions, as JSON (runs in a worker)."""
    from contracts.diff.verdict import contract_verdict

    refuse_lone_surrogates(value, "$.candidate")
    candidate = candidate_contract(value, "$.candidate")
    _same_name(name, candidate)
    sides = [Side.of_contract(c, f"{name} v{n}") for n, c in zip(versions, history, strict=True)]
    found = contract_verdict(
        candidate,
        sides,
        level=level,
        versions=versions,
        fail_on=rules.fail_on,
        exceptions=rules.exceptions,
        default_level=rules.default_level,
    )
    return found.to_json()


@router.post("/{name}/check", summary="Check a candidate against the registered versions")
async def check(
    name: Name,
    request: Annotated[CheckRequest, Body()],
    catalog: CatalogDep,
    offload: OffloadDep,
    rules: GateDep,
) -> dict[str, Any]:
    """Would ``PUT`` accept the candidate? The same verdict as ``cdc-contracts check``: the CDC
    rules against the latest version and the registry verdict at the level (against every
    version for transitive levels, else the latest)."""
    entry = await catalog.entry(name)
    history = [(await catalog.load(ref)).contract for ref in entry.versions]
    versions = [ref.version for ref in entry.versions]
    return await offload.run(
        judge_candidate, request.candidate, name, history, versions, request.level, rules
    )


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
        409: {
            "description": "refused: the gate's verdict (the findings, as `check` reports "
            "them), another contract's subject, the registry's refusal, or a rollback"
        },
        503: {"description": "busy: retry after the `Retry-After` seconds"},
    },
)
async def put_contract(
    name: Name,
    request: Request,
    catalog: CatalogDep,
    offload: OffloadDep,
    locks: LocksDep,
    rules: GateDep,
    _key: WriteKey,
    rollback: Annotated[
        bool,
        Query(description="register the contract again though it equals an older version"),
    ] = False,
) -> Response:
    """Registers the key and value schemas (with the contract metadata) if the gate passes
    them: exactly what ``cdc-contracts check`` applies. Writes to a subject are serialized."""
    contract = await offload.run(_contract_from_body, await request.body(), "request body")
    _same_name(name, contract)
    outcome = await put_through_gate(
        catalog,
        contract,
        locks=locks,
        offload=offload,
        rollback=rollback,
        fail_on=rules.fail_on,
        exceptions=rules.exceptions,
        default_level=rules.default_level,
    )
    return _json(outcome.to_json(), 201 if outcome.changed else 200)


def refusal_problem(
    err: RefusedContractError | RegistryIncompatibleError | RollbackError, instance: str
) -> dict[str, Any]:
    """The 409 problem of a refused ``PUT``: ``verdict`` is the contract's verdict in the
    CLI's JSON, ``findings`` the findings that refuse it (rule, path, severity, message)."""
    body = problem_for_error(err, instance)
    if isinstance(err, RefusedContractError):
        body["type"] = PROBLEM_BASE + "refused-by-the-gate"
        body["verdict"] = err.verdict.to_json()
        body["findings"] = [f.to_json() for f in err.verdict.failing()]
    elif isinstance(err, RegistryIncompatibleError):
        body["type"] = PROBLEM_BASE + "refused-by-the-registry"
        body["registry"] = {"subject": err.subject, "part": err.part, "messages": err.messages}
        body["findings"] = []
    else:
        body["type"] = PROBLEM_BASE + "rollback"
    return body


def _contract_from_body(raw: bytes, where: str) -> Contract:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ContractFileError("the body is not UTF-8 text", where) from None
    if not text.strip():
        raise ContractFileError("the body is empty: send the contract as YAML or JSON", where)
    contract = parse_contract(text, where)
    refuse_lone_surrogates(contract.to_dict(), "$")
    return contract


def refuse_lone_surrogates(value: Any, path: str) -> None:
    """Refuse a string holding a lone surrogate (``"\\ud800"`` in JSON or YAML): it is not
    Unicode text, and no registry, file or JSON answer can carry it."""
    import orjson

    try:
        orjson.dumps(value)
    except TypeError:
        where = _surrogate_path(value, path) or path
        raise InputError(
            "a string holds a lone surrogate (e.g. \\ud800), which is not Unicode text", where
        ) from None


def _surrogate_path(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            found = _surrogate_path(k, f"{path} (a key)") or _surrogate_path(v, f"{path}.{k}")
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _surrogate_path(v, f"{path}[{i}]")
            if found:
                return found
    return None


def _same_name(name: str, contract: Contract) -> None:
    if contract.name != name:
        raise ContractPayloadError(
            f"the contract is named {contract.name!r} but the URL names {name!r}", "$.name"
        )


def _json(value: Any, status: int) -> Response:
    import orjson

    return Response(orjson.dumps(value), status_code=status, media_type="application/json")
