"""``cdc-contracts catalog build``: the contract catalog as static pages (GitHub Pages)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.common import guard_output_dir, plural

catalog_app = typer.Typer(
    help="The contract catalog as static pages, to publish (e.g. on GitHub Pages).",
    no_args_is_help=True,
)


@catalog_app.command("build")
def build(
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="Directory of contract files; in a git repository, each commit that changed "
            "a contract is one of its versions.",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="Where the site is written: new, or empty."
        ),
    ],
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite", help="Replace an existing --output (everything in it is deleted)."
        ),
    ] = False,
) -> None:
    """Write the catalog of the contracts in DIR as static HTML pages.

    The pages are the served catalog's: an index (search, filters, problems first), a page per
    contract version (columns, renderings, subjects, the version timeline) and a diff per pair
    of consecutive versions. Exit 1 when a contract file cannot be read (the site is written,
    listing it), 2 for unusable input.
    """
    import shutil

    from api.catalog_site import build_site
    from contracts.errors import InputError

    if not directory.is_dir():
        raise InputError(
            "no such directory" if not directory.exists() else "not a directory", str(directory)
        )
    guard_output_dir(output, [directory], overwrite)
    if output.exists() and overwrite:
        shutil.rmtree(output) if output.is_dir() else output.unlink()
    site = build_site(directory, output)
    for problem in site.problems:
        sys.stderr.write(f"error: {problem}\n")
    sys.stderr.write(
        f"catalog of {plural(site.contracts, 'contract')} ({plural(site.versions, 'version')}, "
        f"{plural(len(site.pages), 'page')}) written to {output}/index.html\n"
    )
    if site.problems:
        sys.stderr.write(
            f"{plural(len(site.problems), 'contract file')} could not be read (listed on the index)\n"
        )
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog")
