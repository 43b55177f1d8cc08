"""``--config PATH``: the project configuration for the commands that read it.

Every setting comes from, in order: the command-line flag, the flag's environment variable,
``cdc-contracts.yaml`` (named by ``--config``, else found upward from the working directory up
to the repository root), the built-in default. The file's rules are in
:mod:`contracts.config`; this module only gives the commands one option and one loader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from contracts.config import ProjectConfig

#: Help text shared by every command that takes ``--config``.
CONFIG_HELP = (
    "Project configuration file [default: cdc-contracts.yaml in this directory or the "
    "nearest parent, up to the repository root]. Flags and their environment variables "
    "override its settings."
)

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", envvar="CDC_CONTRACTS_CONFIG", metavar="FILE", help=CONFIG_HELP),
]


def project_config(path: Path | None) -> ProjectConfig:
    """The configuration ``--config`` names, else the one found upward, else the defaults."""
    from contracts.config import load_project_config

    return load_project_config(path)


def first_set(*values: Any, default: Any = None) -> Any:
    """The first value that is not None (flag, environment, file), else ``default``."""
    return next((v for v in values if v is not None), default)


@dataclass(frozen=True, slots=True)
class RegistryOptions:
    """How a command reaches the registry, flags first, then the configuration."""

    url: str
    basic_auth: str | None
    bearer_token: str | None
    strategy: str

    def auth(self) -> dict[str, str]:
        """The credentials given, as ``RegistryConfig`` keywords."""
        given = {"basic_auth": self.basic_auth, "bearer_token": self.bearer_token}
        return {k: v for k, v in given.items() if v}


def registry_options(
    settings: ProjectConfig,
    url: str | None,
    basic_auth: str | None = None,
    bearer_token: str | None = None,
    strategy: str | None = None,
    needed_by: str = "this command",
) -> RegistryOptions:
    """The registry URL, credentials and naming strategy: each flag (or its environment
    variable) first, then ``registry.*`` in the configuration (a ``*_env`` variable it names is
    read only when the flag is not given). No URL anywhere is an error (exit 2)."""
    from contracts.errors import InputError

    found = first_set(url, settings.registry.url)
    if not found:
        raise InputError(
            f"{needed_by} needs --url URL (or SCHEMA_REGISTRY_URL, or registry.url in "
            "cdc-contracts.yaml)",
            "--url",
        )
    return RegistryOptions(
        found,
        basic_auth or settings.registry_secret("basic_auth"),
        bearer_token or settings.registry_secret("bearer_token"),
        first_set(strategy, settings.registry.subject_naming),
    )
