"""The project configuration file, ``cdc-contracts.yaml``, as ``buf.yaml`` is buf's.

It is found upward from the working directory, stopping at the repository root (the directory
holding ``.git``) or the filesystem root; ``--config PATH`` names one instead. Paths in it are
relative to the file's directory. Every command that reads it takes each setting from, in
order: its command-line flag, the flag's environment variable, this file, the built-in default.

A person writes it, so it is strict: an unknown key, a bad value or a secret written in it is
one error naming the file and line (:class:`~contracts.errors.ConfigError`, exit 2). Secrets
never belong in it (it is committed): the registry's credentials are named by the environment
variables that hold them.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from contracts.contract import CompatibilityLevel, line_of, parse_yaml_model
from contracts.diff.exceptions import ChangeException, ExceptionSet
from contracts.errors import ConfigError

__all__ = [
    "CONFIG_NAME",
    "DeriveSettings",
    "ProjectConfig",
    "RegistrySettings",
    "find_config",
    "load_config",
    "load_project_config",
]

#: The file name looked for, upward from the working directory.
CONFIG_NAME: Final = "cdc-contracts.yaml"

FailOn = Literal["breaking", "warning", "never"]
SubjectNaming = Literal["topic", "record", "topic-record"]

_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET_HINT: Final = (
    "a secret may not be written in the configuration file (it is committed): put it in an "
    "environment variable and name the variable with {key}_env"
)


def _env_name(value: str) -> str:
    if not _ENV_NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not the name of an environment variable: write the variable's "
            "name (e.g. SCHEMA_REGISTRY_BASIC_AUTH), never the secret itself"
        )
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]


class RegistrySettings(BaseModel):
    """Where the Schema Registry is and how to authenticate (by environment variable names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = Field(default=None, description="the registry's base URL")
    basic_auth_env: EnvName | None = Field(
        default=None, description="the variable holding USER:PASSWORD"
    )
    bearer_token_env: EnvName | None = Field(
        default=None, description="the variable holding a bearer token"
    )
    subject_naming: SubjectNaming = Field(
        default="topic", description="topic, record or topic-record (Confluent's strategies)"
    )
    # Secrets written in the file are refused by name, at their line.
    basic_auth: Any = Field(default=None, exclude=True, repr=False)
    bearer_token: Any = Field(default=None, exclude=True, repr=False)
    password: Any = Field(default=None, exclude=True, repr=False)
    token: Any = Field(default=None, exclude=True, repr=False)
    api_key: Any = Field(default=None, exclude=True, repr=False)

    @field_validator("basic_auth", "bearer_token", "password", "token", "api_key")
    @classmethod
    def _no_secrets(cls, value: Any, info: Any) -> Any:
        if value is not None:
            key = {"password": "basic_auth", "token": "bearer_token", "api_key": "basic_auth"}
            raise ValueError(_SECRET_HINT.format(key=key.get(info.field_name, info.field_name)))
        return value

    @field_validator("url")
    @classmethod
    def _plain_url(cls, url: str | None) -> str | None:
        if url is None:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        if parts.password is not None:
            raise ValueError("the URL holds a password: " + _SECRET_HINT.format(key="basic_auth"))
        return url


class DeriveSettings(BaseModel):
    """Contracts derived from the DDL in the repository (``derive:``): ``check`` derives them at
    both sides of the comparison, so a migration that narrows a column fails the gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    from_ddl: str = Field(
        min_length=1, description="a .sql file or a migrations directory (relative to the file)"
    )
    dialect: Literal["mysql", "mariadb", "postgres"] = Field(description="the DDL's SQL dialect")
    format: Literal["debezium-json", "canal-json"] = Field(
        default="debezium-json", description="the contracts' format"
    )
    server_name: str | None = Field(default=None, description="Debezium's topic.prefix")
    debezium_version: str = Field(default="3.0", description="the Debezium version to follow")
    connector_options: dict[str, str] = Field(
        default_factory=dict, description="Debezium settings, e.g. decimal.handling.mode"
    )
    database: str | None = Field(default=None, description="database of unqualified tables")
    tables: str | None = Field(default=None, description="only tables matching this regex")
    placeholders: dict[str, str] = Field(
        default_factory=dict, description="values of the migrations' ${key} placeholders"
    )


class ProjectConfig(BaseModel):
    """The settings of ``cdc-contracts.yaml`` (all optional; an absent file is all defaults)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1] = Field(default=1, description="the file format's version: 1")
    contracts: str | None = Field(
        default=None, min_length=1, description="the contracts directory (relative to the file)"
    )
    compatibility: CompatibilityLevel | None = Field(
        default=None, description="the level of contracts that set no compatibility"
    )
    against: str | None = Field(default=None, description="check's baseline: git:REF or registry")
    fail_on: FailOn | None = Field(default=None, description="breaking, warning or never")
    output_format: str | None = Field(
        default=None, description="what check and diff write: text, json, sarif, ..."
    )
    registry: RegistrySettings = Field(default_factory=RegistrySettings)
    exceptions: tuple[ChangeException, ...] = ()
    derive: DeriveSettings | None = None

    _path: Path | None = PrivateAttr(default=None)
    _lines: dict[tuple[str | int, ...], int] = PrivateAttr(default_factory=dict)

    @field_validator("against")
    @classmethod
    def _baseline(cls, against: str | None) -> str | None:
        if (
            against is None
            or against == "registry"
            or (against.startswith("git:") and len(against) > 4)
        ):
            return against
        raise ValueError(f"{against!r} is not a baseline: use git:REF or registry")

    @field_validator("output_format")
    @classmethod
    def _renderer(cls, name: str | None) -> str | None:
        from contracts.diff.report import RENDERERS

        if name is not None and name not in RENDERERS:
            raise ValueError(f"unknown output format {name!r} (use {', '.join(RENDERERS)})")
        return name

    @field_validator("exceptions")
    @classmethod
    def _distinct(cls, exceptions: tuple[ChangeException, ...]) -> tuple[ChangeException, ...]:
        seen: set[tuple[str, str, str | None, Any]] = set()
        for i, e in enumerate(exceptions):
            key = (e.contract, e.rule, e.path, e.until)
            if key in seen:
                raise ValueError(f"exceptions[{i}] repeats an earlier exception ({e.describe()})")
            seen.add(key)
        return exceptions

    # --- where it came from -------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        """The file read (None: no configuration file, all defaults)."""
        return self._path

    @property
    def base_dir(self) -> Path:
        """The directory relative paths in the file start from (the cwd without a file)."""
        return self._path.parent if self._path is not None else Path(".")

    def where(self, *key: str | int) -> str:
        """``cdc-contracts.yaml:12`` for a key path such as ``("registry", "url")``."""
        shown = _shown(self._path) if self._path is not None else CONFIG_NAME
        line = self._lines.get(tuple(key))
        return f"{shown}:{line}" if line else shown

    # --- settings, resolved -------------------------------------------------------------------

    @property
    def contracts_dir(self) -> Path | None:
        """The contracts directory, resolved against the file's directory (None: not set)."""
        if self.contracts is None:
            return None
        return _relative_to_cwd(self.base_dir / self.contracts)

    def exception_set(self, on: date | None = None) -> ExceptionSet:
        """The exceptions as the policy the verdict asks, judged on ``on`` (default: today)."""
        return ExceptionSet(self.exceptions, on)

    def registry_secret(self, key: Literal["basic_auth", "bearer_token"]) -> str | None:
        """The registry's ``basic_auth`` or ``bearer_token``, read from the environment
        variable the file names for it (None: the file names none).

        A variable the file names but the environment does not set is an error: the file says
        the registry needs it, and asking without it would fail later and less clearly.
        """
        name: str | None = getattr(self.registry, f"{key}_env")
        if name is None:
            return None
        value = os.environ.get(name)
        if not value:
            raise ConfigError(
                f"registry.{key}_env names the environment variable {name}, which is not "
                "set: set it, or remove the key if the registry needs no credentials",
                self.where("registry", f"{key}_env"),
            )
        return value


def _shown(path: Path) -> str:
    """A path as people read it: relative to the cwd when it is under it."""
    return str(_relative_to_cwd(path))


def _relative_to_cwd(path: Path) -> Path:
    """``path`` relative to the cwd (``../cdc-contracts.yaml`` from a subdirectory)."""
    try:
        return Path(os.path.relpath(path.resolve(), Path.cwd().resolve()))
    except ValueError:  # another drive
        return path


def find_config(start: Path | None = None) -> Path | None:
    """``cdc-contracts.yaml`` in ``start`` (default: the cwd) or the nearest parent, looking no
    further than the repository root (a directory holding ``.git``) or the filesystem root."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            return None
    return None


def load_config(path: Path) -> ProjectConfig:
    """Read and validate a configuration file; errors name the file, line and key."""
    shown = _shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("no such configuration file", shown) from None
    except IsADirectoryError:
        raise ConfigError("is a directory, not a configuration file", shown) from None
    except UnicodeDecodeError:
        raise ConfigError("the configuration file is not UTF-8 text", shown) from None
    except OSError as err:
        raise ConfigError(f"cannot be read: {err.strerror or err}", shown) from None
    config, node = parse_yaml_model(text, shown, ProjectConfig, ConfigError, "configuration file")
    config._path = path
    config._lines = _key_lines(node, config)
    for i, exception in enumerate(config.exceptions):
        exception.located(_shown(path), config._lines.get(("exceptions", i)))
    return config


def _key_lines(node: Any, config: ProjectConfig) -> dict[tuple[str | int, ...], int]:
    """The lines of the keys a later error may name (settings and each exception)."""
    keys: list[tuple[str | int, ...]] = [
        (name,) for name in ProjectConfig.model_fields if name != "exceptions"
    ]
    keys += [("registry", name) for name in RegistrySettings.model_fields]
    keys += [("derive", name) for name in DeriveSettings.model_fields]
    keys += [("exceptions", i) for i in range(len(config.exceptions))]
    lines: dict[tuple[str | int, ...], int] = {}
    for key in keys:
        line = line_of(node, key)
        if line is not None:
            lines[key] = line
    return lines


def load_project_config(path: Path | None = None, start: Path | None = None) -> ProjectConfig:
    """The configuration named by ``path`` (``--config``), else the one found upward from
    ``start``, else all defaults."""
    found = path if path is not None else find_config(start)
    return load_config(found) if found is not None else ProjectConfig()


def starter_config(contracts: str = "contracts", registry_url: str | None = None) -> str:
    """The commented configuration ``cdc-contracts init`` writes (it loads as it is)."""
    url = f"  url: {_scalar(registry_url)}" if registry_url else "  # url: http://localhost:8081"
    return _STARTER.format(contracts=_scalar(contracts), url=url, name=CONFIG_NAME)


def _scalar(text: str) -> str:
    """A YAML scalar for ``text``: plain when it is simple, else double-quoted (JSON)."""
    import json

    return text if _PLAIN.fullmatch(text) else json.dumps(text, ensure_ascii=False)


_PLAIN: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:@+-]*")


_STARTER: Final = """\
# {name}: settings for cdc-contracts (check, diff, registry plan/push/pull, serve).
# Each setting is taken from the command-line flag first, then the flag's environment
# variable, then this file, then the built-in default. Paths are relative to this file.
version: 1

# Where the contract files live: every *.yaml/*.yml under it must be a contract.
contracts: {contracts}

# The compatibility level of contracts that set no `compatibility:` of their own:
# BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE or NONE.
compatibility: BACKWARD

# What `cdc-contracts check` compares with: git:REF (e.g. git:origin/main) or registry.
# against: git:origin/main

# When the gate fails: breaking (the default), warning (also on warnings) or never.
fail_on: breaking

# What check and diff write: text, json, github, junit, markdown, sarif or gitlab.
# output_format: text

registry:
{url}
  # Credentials: the NAMES of the environment variables that hold them, never the secrets.
  # basic_auth_env: SCHEMA_REGISTRY_BASIC_AUTH      # USER:PASSWORD
  # bearer_token_env: SCHEMA_REGISTRY_BEARER_TOKEN
  # How subjects are named: topic (<topic>-value), record or topic-record.
  subject_naming: topic

# Contracts derived from DDL (check derives them at both sides; see docs/ci.md):
# derive: {{from_ddl: migrations, dialect: mysql, server_name: shop}}

# Deliberate breaking changes the gate lets pass, each for one contract, rule and column,
# with the reason (shown in every report) and optionally the last day it applies. An expired
# exception fails the gate again; one that matches nothing is reported as a warning.
# exceptions:
#   - contract: shop.orders
#     rule: decimal-scale-changed
#     path: amount
#     reason: amounts carry tenths of a cent from release 42 on; consumers updated (PR 1234)
#     until: 2026-12-31
"""
