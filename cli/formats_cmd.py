"""``cdc-contracts formats``: the registered CDC formats."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.common import OutputMode, print_json, table


def register(app: typer.Typer) -> None:
    app.command("formats")(formats)


def formats(
    output_format: Annotated[
        OutputMode, typer.Option("--output-format", help="What is written: text (a table) or json")
    ] = OutputMode.text,
) -> None:
    """List the CDC formats: name, description, whether messages embed their schema."""
    rows = format_rows()
    if output_format is OutputMode.json:
        print_json(rows)
        return
    table(
        "CDC formats",
        ["name", "description", "embedded schema", "input"],
        [[r["name"], r["description"], r["embedded_schema"], r["input_kind"]] for r in rows],
    )


def format_rows() -> list[dict[str, Any]]:
    """One row per registered format (formats whose module is missing are marked)."""
    from contracts.formats import FORMATS, get_format

    rows: list[dict[str, Any]] = []
    for name in FORMATS:
        try:
            fmt = get_format(name)
        except ImportError:
            rows.append(
                {
                    "name": name,
                    "description": "(not available in this build)",
                    "embedded_schema": None,
                    "input_kind": None,
                }
            )
            continue
        rows.append(
            {
                "name": fmt.name,
                "description": fmt.description,
                "embedded_schema": fmt.embedded_schema,
                "input_kind": fmt.input_kind,
            }
        )
    return rows
