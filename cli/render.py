"""``cdc-contracts render``: a schema or contract as Connect JSON, Avro, Spark JSON or Spark DDL."""

from __future__ import annotations

import enum
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer

from cli.common import guard_output_file, write_output
from contracts.errors import InputError


class Target(enum.StrEnum):
    connect = "connect"
    avro = "avro"
    spark_json = "spark-json"
    spark_ddl = "spark-ddl"


class PartChoice(enum.StrEnum):
    row = "row"
    key = "key"
    value = "value"


def render(
    input_path: Annotated[
        Path,
        typer.Argument(
            metavar="INPUT",
            help="A Connect schema JSON, an Avro .avsc, a message with an embedded schema "
            '({"schema": ..., "payload": ...}) or a contract YAML file.',
        ),
    ],
    to: Annotated[
        Target,
        typer.Option("--to", "-t", help="What to render: connect, avro, spark-json or spark-ddl."),
    ],
    part: Annotated[
        PartChoice | None,
        typer.Option(
            "--part",
            "-p",
            help="For a contract: the row, or the key/value schema its format emits "
            "(default: value).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."),
    ] = None,
) -> None:
    """Render INPUT's schema as Connect JSON, Avro (AvroData), Spark StructType JSON or DDL."""
    from contracts.contract import Contract
    from contracts.render import load_schema_input, render_contract, render_schema

    guard_output_file(output, [input_path], "--output")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_schema_input(input_path)
        if isinstance(loaded, Contract):
            text = render_contract(loaded, to.value, part.value if part else "value")
        else:
            if part is not None:
                raise InputError("--part applies to contract files only", str(input_path))
            text = render_schema(loaded, to.value)
    for w in caught:
        sys.stderr.write(f"warning: {w.message}\n")
    write_output(text, output)


def register(app: typer.Typer) -> None:
    """Add the ``render`` command."""
    app.command("render")(render)
