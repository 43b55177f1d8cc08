"""Service settings (pydantic-settings): command-line flags override ``CDC_CONTRACTS_*`` variables."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_REGISTRY_DB = Path(".cdc-contracts") / "registry.db"


class Settings(BaseSettings):
    """Everything the contract API needs to know at start-up."""

    model_config = SettingsConfigDict(env_prefix="CDC_CONTRACTS_", frozen=True, extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8081, ge=0, le=65535)
    #: an external Confluent-compatible registry; None serves the embedded one at the root
    registry_url: str | None = None
    registry_db: Path = DEFAULT_REGISTRY_DB
    #: optional directory of contract files, listed beside the registered contracts
    contracts_dir: Path | None = None
    #: name of the environment variable holding the API key for writes
    api_key_env: str | None = None
    #: whether reads need the API key too
    read_requires_key: bool = False
    max_body_bytes: int = Field(default=4 * 1024 * 1024, gt=0)
    max_messages: int = Field(default=10_000, gt=0)
    max_page_size: int = Field(default=500, gt=0)
    #: origins allowed by CORS; empty (the default) keeps CORS off
    cors_origins: tuple[str, ...] = ()
    #: how long a listing read from an external registry is reused, in seconds
    catalog_ttl_seconds: float = Field(default=2.0, ge=0)
    #: the project configuration (cdc-contracts.yaml) whose exceptions, fail_on and default
    #: compatibility the API's gate applies, as ``check`` does; None: none
    config_file: Path | None = None
    #: worker processes parsing, diffing and inferring request bodies off the event loop
    offload_workers: int = Field(default=2, ge=1, le=64)
    #: requests that may wait for a worker; beyond them the answer is 503 with Retry-After
    offload_queue: int = Field(default=64, ge=0)
    #: seconds of processing a request may take before it is answered 503
    request_budget_seconds: float = Field(default=20.0, gt=0)

    @property
    def embedded_registry(self) -> bool:
        """Whether this service also is the Schema Registry (no external URL given)."""
        return self.registry_url is None

    def api_key(self) -> str | None:
        """The configured API key (from the variable named by ``api_key_env``), if any."""
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env)
        return value or None
