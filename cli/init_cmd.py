"""``cdc-contracts init``: a commented ``cdc-contracts.yaml`` and a contracts directory.

With ``--from-registry URL`` the contracts registered there (by ``registry push`` or the API)
are pulled into the directory with ``registry_sync``'s ``pull``, and the URL is recorded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import plural, refuse_under_a_file


def register(app: typer.Typer) -> None:
    app.command("init")(init)


def init(
    directory: Annotated[
        Path,
        typer.Argument(help="Where to write cdc-contracts.yaml (normally the repository root)."),
    ] = Path("."),
    contracts: Annotated[
        str,
        typer.Option(
            "--contracts", metavar="DIR", help="The contracts directory, relative to DIRECTORY."
        ),
    ] = "contracts",
    from_registry: Annotated[
        str | None,
        typer.Option(
            "--from-registry",
            metavar="URL",
            help="Pull the contracts registered in this Schema Registry into the contracts "
            "directory, and record its URL.",
        ),
    ] = None,
    basic_auth: Annotated[
        str | None,
        typer.Option(
            "--basic-auth",
            envvar="SCHEMA_REGISTRY_BASIC_AUTH",
            metavar="USER:PASSWORD",
            help="Credentials for --from-registry (never written to the file).",
        ),
    ] = None,
    bearer_token: Annotated[
        str | None,
        typer.Option(
            "--bearer-token",
            envvar="SCHEMA_REGISTRY_BEARER_TOKEN",
            metavar="TOKEN",
            help="Bearer token for --from-registry (never written to the file).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Overwrite an existing cdc-contracts.yaml, and contract files the pull writes.",
        ),
    ] = False,
) -> None:
    """Write a commented starter cdc-contracts.yaml and a contracts directory.

    Refuses to overwrite an existing configuration (or, with --from-registry, a contracts
    directory that already holds contracts) without --force. Exit 2 when it cannot.
    """
    from contracts.config import CONFIG_NAME, starter_config
    from contracts.errors import InputError

    target = directory / CONFIG_NAME
    folder = Path(os.path.normpath(directory / contracts))  # "x/../contracts" with no x yet
    refuse_under_a_file(target, str(target))
    if directory.exists() and not directory.is_dir():
        raise InputError("is not a directory", str(directory))
    if target.exists() and not force:
        raise InputError(
            "already exists: give --force to replace it with the starter configuration",
            str(target),
        )
    if folder.exists() and not folder.is_dir():
        raise InputError("is a file: give --contracts a directory name", str(folder))
    written: list[str] = []
    if from_registry is not None:
        if _holds_contracts(folder) and not force:
            raise InputError(
                "already holds contract files, which the pull could overwrite: give --force "
                "to pull into it anyway",
                str(folder),
            )
        written = _pull(from_registry, folder, basic_auth, bearer_token)
    folder.mkdir(parents=True, exist_ok=True)
    if not any(folder.iterdir()):
        (folder / ".gitkeep").touch()  # git keeps no empty directory
    directory.mkdir(parents=True, exist_ok=True)
    target.write_text(starter_config(contracts, from_registry), encoding="utf-8")
    typer.echo(f"wrote {target}")
    typer.echo(
        f"contracts directory: {folder}"
        + (f" ({plural(len(written), 'contract')} pulled)" if from_registry else "")
    )
    typer.echo(
        "next: add contracts (cdc-contracts infer MESSAGES -o "
        f"{folder / 'NAME.yaml'}), commit them, then run cdc-contracts check"
    )


def _holds_contracts(folder: Path) -> bool:
    return folder.is_dir() and any(folder.rglob("*.y*ml"))


def _pull(url: str, folder: Path, basic_auth: str | None, bearer_token: str | None) -> list[str]:
    """Pull the registered contracts into ``folder`` (the one registry client, its one pull);
    subjects without a contract in their metadata are listed as skipped."""
    from registry_sync.client import RegistryClient, RegistryConfig
    from registry_sync.sync import pull

    config = RegistryConfig(url=url, basic_auth=basic_auth, bearer_token=bearer_token)
    with RegistryClient(config) as client:
        report: Any = pull(client, folder)
    for path in report.written:
        typer.echo(f"pulled {path}")
    for subject, why in report.skipped:
        typer.echo(f"skipped subject {subject}: {why}", err=True)
    return [str(p) for p in report.written]
