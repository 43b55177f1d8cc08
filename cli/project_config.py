"""``--config PATH``: the project configuration for the commands that read it.

Every setting comes from, in order: the command-line flag, the flag's environment variable,
``cdc-contracts.yaml`` (named by ``--config``, else found upward from the working directory up
to the repository root), the built-in default. The file's rules are in
:mod:`contracts.config`; this module only gives the commands one option and one loader.
"""

from __future__ import annotations

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
