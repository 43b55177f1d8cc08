"""The typed answers of the service's JSON routes, so the OpenAPI schema describes each body.

Field names and order are the wire format: a model here is the body a route has always sent,
written down once (frozen; the routes build them, FastAPI serializes them).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from api.catalog import Source
from contracts.formats.base import EmbeddedSchema, InputKind


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FormatInfo(_Answer):
    """One CDC format this service reads."""

    name: str
    description: str
    embedded_schema: EmbeddedSchema = Field(description="whether messages carry their schema")
    input_kind: InputKind = Field(description="how messages are framed")


class Health(_Answer):
    """Liveness and where contracts come from."""

    status: str = Field(description="`ok` when the service answers")
    registry: str | None = Field(description="`embedded`, or the external registry's URL")
    contracts_dir: str | None
    contracts: int = Field(description="how many contracts are served")
    problems: list[str] = Field(description="contract files that could not be read")
    process: int = Field(description="the id of the (worker) process that answered")


class ContractSummary(_Answer):
    """A contract in a listing."""

    name: str
    format: str
    topic: str | None
    owner: str | None
    source: Source
    latest_version: int
    versions: list[int]


class ContractPage(_Answer):
    """One page of contracts, by name."""

    total: int
    offset: int
    limit: int
    items: list[ContractSummary]


class ContractVersions(_Answer):
    """The version numbers of a contract, oldest first."""

    name: str
    source: Source
    versions: list[int]
