"""``cdc-contracts spark-schema`` and ``cdc-contracts spark decode`` (pyspark imported lazily)."""

from __future__ import annotations

import enum
import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from cli.common import OutputMode, guard_output_dir, print_json
from cli.common import table as table_
from cli.infer_cmd import DatabaseRegex, TableRegex, UnmatchedMode, UnmatchedOpt

if TYPE_CHECKING:
    from contracts.routing import Unmatched


class Part(enum.StrEnum):
    row = "row"
    key = "key"
    value = "value"


class View(enum.StrEnum):
    decoded = "decoded"
    wire = "wire"


class Form(enum.StrEnum):
    json = "json"
    ddl = "ddl"
    python = "python"


class InputFormat(enum.StrEnum):
    auto = "auto"
    kcat = "kcat"
    values = "values"
    json = "json"
    csv = "csv"
    avro = "avro"
    parquet = "parquet"


class Encoding(enum.StrEnum):
    json = "json"
    avro = "avro"


#: The master URLs Spark accepts (the patterns of SparkContext.createTaskScheduler, with at
#: least one thread for ``local[N]``).
_MASTER: Final = re.compile(
    r"local"
    r"|local\[(?:[1-9][0-9]*|\*)\]"
    r"|local\[(?:[1-9][0-9]*|\*)\s*,\s*[0-9]+\]"
    r"|local-cluster\[\s*[0-9]+\s*,\s*[0-9]+\s*,\s*[0-9]+\s*\]"
    r"|spark://\S+"
    r"|yarn"
    r"|k8s://\S+"
)
_MASTER_FORMS: Final = (
    "local, local[N], local[*], local[N,F], local[*,F], local-cluster[N,C,M], "
    "spark://HOST:PORT, yarn or k8s://URL"
)


def check_master(master: str) -> None:
    """Refuse a master URL Spark would reject, before a JVM is started for it."""
    from contracts.errors import InputError

    if _MASTER.fullmatch(master) is None:
        raise InputError(f"{master!r} is not a Spark master URL: use {_MASTER_FORMS}", "--master")


def spark_schema_cmd(
    contract: Annotated[Path, typer.Argument(help="Contract file (YAML).")],
    part: Annotated[
        Part, typer.Option(help="Which part: the row, or the format's key/value.")
    ] = Part.row,
    view: Annotated[
        View, typer.Option(help="decoded (what jobs get) or wire (what from_json parses).")
    ] = View.decoded,
    as_: Annotated[Form, typer.Option("--as", help="json, ddl, or paste-able python.")] = Form.json,
) -> None:
    """Print a contract's Spark StructType (no JVM is started)."""
    from contracts.contract import load_contract
    from contracts.errors import SchemaError, UnknownFormatError
    from spark_bindings.schema import render, spark_schema

    c = load_contract(contract)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            schema = spark_schema(c, part.value, view.value)
        except (SchemaError, UnknownFormatError) as err:
            raise type(err)(err.what, str(contract)) from None
    for w in {str(w.message): w for w in caught}.values():
        sys.stderr.write(f"warning: {w.message}\n")
    typer.echo(render(schema, as_.value))


def decode_cmd(
    ctx: typer.Context,
    contract: Annotated[
        list[Path],
        typer.Option(
            "--contract",
            "-c",
            metavar="FILE",
            help="Contract file (YAML), or a directory of them; repeat -c for a topic of "
            "several tables (one Parquet directory per table under --output).",
        ),
    ],
    input_: Annotated[
        list[Path],
        typer.Option(
            "--input",
            "-i",
            metavar="PATH",
            help="An input file, or a directory of Parquet files; repeat -i for several.",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Directory for the Parquet output: new, or empty (see --overwrite).",
        ),
    ],
    input_format: Annotated[
        InputFormat, typer.Option(help="How the input is laid out.")
    ] = InputFormat.auto,
    master: Annotated[
        str,
        typer.Option(
            metavar="URL",
            help="Spark master URL: local, local[N], local[*], local[N,F], local-cluster[N,C,M], "
            "spark://HOST:PORT, yarn or k8s://URL.",
        ),
    ] = "local[*]",
    registry: Annotated[
        str | None,
        typer.Option(
            envvar="SCHEMA_REGISTRY_URL",
            metavar="URL",
            help="Schema Registry URL, for Confluent-framed Avro values.",
        ),
    ] = None,
    encoding: Annotated[
        Encoding | None,
        typer.Option(
            help="How values are encoded (default: the contract's value_encoding option, else json)."
        ),
    ] = None,
    subject: Annotated[
        str | None,
        typer.Option(
            metavar="SUBJECT",
            help="Value subject whose versions are the Avro writer schemas (from_avro).",
        ),
    ] = None,
    drop_control_records: Annotated[
        bool,
        typer.Option("--drop-control-records", help="Leave tombstones, heartbeats and DDL out."),
    ] = False,
    output_format: Annotated[
        OutputMode,
        typer.Option("--output-format", help="What is written: a text or json summary."),
    ] = OutputMode.text,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace an existing --output (a file, or a directory that is not empty: "
            "everything in it is deleted). Never allowed when the output is, holds, or is "
            "inside an input or the contract.",
        ),
    ] = False,
    table: TableRegex = None,
    database: DatabaseRegex = None,
    unmatched: UnmatchedOpt = None,
) -> None:
    """Decode messages with a contract into the canonical change feed, written as Parquet.

    Every option, the contract and the inputs are checked before Spark starts.
    """
    from contracts.contract import load_contract
    from spark_bindings.inputs import input_layout

    check_master(master)
    routed = table is not None or database is not None or unmatched is not None
    if routed or len(contract) > 1 or contract[0].is_dir():
        source = ctx.get_parameter_source("registry")
        typed = source is not None and source.name == "COMMANDLINE"
        _decode_tables(
            contract, input_, output, input_format, master, table, database, unmatched,
            drop_control_records, output_format, overwrite,
            avro_flags=bool(subject or encoding is Encoding.avro or (registry and typed)),
        )  # fmt: skip
        return
    c = load_contract(contract[0])
    guard_output_dir(output, [*input_, *contract], overwrite)
    paths = [str(p) for p in input_]
    layout = input_layout(paths, input_format.value)
    source = ctx.get_parameter_source("registry")
    from_env = source is not None and source.name == "ENVIRONMENT"
    options = _avro_options(c, registry, from_env, encoding, subject)

    from spark_bindings import decode_changes
    from spark_bindings.inputs import read_input
    from spark_bindings.progress import spark_task_progress
    from spark_bindings.session import command_session
    from spark_bindings.storage import feed_counts, write_parquet

    with command_session("cdc-contracts-decode", master) as spark:
        df = read_input(spark, paths, layout, c.format)
        feed = decode_changes(df, c, drop_control_records=drop_control_records, **options)
        with spark_task_progress(spark, f"decoding {c.name}"):
            write_parquet(feed, str(output))
            counts = feed_counts(spark.read.parquet(str(output)))
        if not counts and df.isEmpty():
            named = ", ".join(str(p) for p in input_)
            held = "the input holds" if len(input_) == 1 else "the inputs hold"
            sys.stderr.write(f"warning: {named}: {held} no messages; the output has 0 rows\n")
    summary: dict[str, Any] = {
        "output": str(output),
        "rows": sum(counts.values()),
        "counts": dict(sorted(counts.items())),
        "errors": counts.get("error", 0),
    }
    if output_format is OutputMode.json:
        print_json(summary)
        return
    # the path on a line of its own: a table title would wrap it at the table's width
    typer.echo(f"{summary['rows']} rows → {output}")
    table_(None, ["op / kind", "rows"], [[k, v] for k, v in sorted(counts.items())])
    typer.echo(f"errors: {summary['errors']}")


def _decode_tables(
    given: list[Path],
    input_: list[Path],
    output: Path,
    input_format: InputFormat,
    master: str,
    table: str | None,
    database: str | None,
    unmatched: UnmatchedMode | None,
    drop_control_records: bool,
    output_format: OutputMode,
    overwrite: bool,
    *,
    avro_flags: bool,
) -> None:
    """``spark decode`` routed by table (several contracts, a directory, --table/--database or
    --unmatched): each message with its table's contract, as ``normalize`` routes it; one
    Parquet directory per contract under ``output`` (named as ``infer --split-by-table`` names
    contract files) and ``_rest`` for every other row (skipped, unmatched, naming no table)."""
    from contracts.errors import InputError
    from spark_bindings.inputs import input_layout
    from spark_bindings.routing import routing_of

    mode: Unmatched | None = None if unmatched is None else unmatched.value
    # one per table, one format, the filters compiled: all checked before Spark starts
    routing, ordered = routing_of(
        given, table_include=table, database_include=database, unmatched=mode
    )
    if avro_flags:
        raise InputError(
            "routing by table reads JSON messages only: --encoding avro, --subject and "
            "--registry do not apply"
        )
    dirs = _table_dirs(ordered)
    guard_output_dir(output, [*input_, *given], overwrite)
    paths = [str(p) for p in input_]
    layout = input_layout(paths, input_format.value)

    from spark_bindings.inputs import read_input
    from spark_bindings.progress import spark_task_progress
    from spark_bindings.routing import decode_changes_by_table
    from spark_bindings.session import command_session
    from spark_bindings.storage import feed_counts, write_parquet

    summaries: dict[str, dict[str, Any]] = {}
    with command_session("cdc-contracts-decode", master) as spark:
        df = read_input(spark, paths, layout, ordered[0].format)
        feeds = decode_changes_by_table(
            df,
            ordered if routing.routes is not None else ordered[:1],
            table_include=table,
            database_include=database,
            unmatched=mode,
            drop_control_records=drop_control_records,
        )
        if output.exists() and overwrite:
            import shutil

            shutil.rmtree(output) if output.is_dir() else output.unlink()
        parts = {
            **{dirs[k]: (k, f) for k, f in feeds.tables.items()},
            REST_DIR: (REST_DIR, feeds.rest),
        }
        for name, (key, feed) in parts.items():
            where = output / name
            with spark_task_progress(spark, f"decoding {key}"):
                write_parquet(feed, str(where))
                counts = feed_counts(spark.read.parquet(str(where)))
            summaries[key] = {
                "output": str(where),
                "rows": sum(counts.values()),
                "counts": dict(sorted(counts.items())),
                "errors": counts.get("error", 0),
            }
    rest = summaries.pop(REST_DIR)
    every = [*summaries.values(), rest]
    summary: dict[str, Any] = {
        "output": str(output),
        "rows": sum(t["rows"] for t in every),
        "errors": sum(t["errors"] for t in every),
        "skipped": rest["counts"].get("control:skipped", 0),
        "tables": summaries,
        "rest": rest,
    }
    if output_format is OutputMode.json:
        print_json(summary)
        return
    typer.echo(f"{summary['rows']} rows → {output}")
    rows = [
        [name, t["rows"], t["errors"], t["counts"].get("control:skipped", 0)]
        for name, t in [*sorted(summaries.items()), ("(rest)", rest)]
    ]
    table_(None, ["table", "rows", "errors", "skipped"], rows)
    typer.echo(f"errors: {summary['errors']}, skipped: {summary['skipped']}")


def _table_dirs(contracts: list[Any]) -> dict[str, str]:
    """The output directory of each contract's table (by its per-table key): the name ``infer
    --split-by-table`` gives its contract file, without ``.yaml``; two alike are an error."""
    from cli.infer_cmd import _file_stem
    from contracts.errors import InputError
    from contracts.routing import table_key

    dirs: dict[str, str] = {}
    for c in contracts:
        stem = _file_stem(c.table_id)
        clash = [k for k, d in dirs.items() if d == stem]
        if clash:
            raise InputError(
                f"the tables {clash[0]} and {table_key(c.table_id)} would share the output "
                f"directory {stem}: decode them in separate runs"
            )
        dirs[table_key(c.table_id)] = stem
    return dirs


#: The directory of the rows no contract decodes (Spark's readers skip ``_`` names).
REST_DIR: Final = "_rest"


def _avro_options(
    c: Any, registry: str | None, from_env: bool, encoding: Encoding | None, subject: str | None
) -> dict[str, Any]:
    """The Avro options of ``decode_changes``, checked against the contract's encoding: a flag
    that would change nothing is an error (a registry from the environment is just not used)."""
    from contracts.errors import InputError
    from spark_bindings.avro import avro_records, wants_avro

    given = {"registry": registry, "encoding": encoding and encoding.value, "subject": subject}
    options = {k: v for k, v in given.items() if v is not None}
    flags = [f for f, v in (("--registry", not from_env and registry), ("--subject", subject)) if v]
    named = f"{' and '.join(flags)} {'apply' if len(flags) > 1 else 'applies'}"
    if avro_records(c.format):
        if encoding is Encoding.json:
            raise InputError(f"{c.format} values are Avro records; --encoding json does not apply")
        if flags:
            raise InputError(
                f"{named} to Confluent-framed values; {c.format} records carry no schema id"
            )
        return {k: v for k, v in options.items() if k == "encoding"}
    if not wants_avro(c, options):
        if flags:
            raise InputError(
                f"{named} to Avro values, and the values of {c.name} are "
                "JSON (give --encoding avro, or set value_encoding: avro in the contract)"
            )
        return {k: v for k, v in options.items() if k == "encoding"}
    if registry is None:
        raise InputError(
            "Confluent-framed Avro values need a Schema Registry for their writer schemas: "
            "give --registry URL or set SCHEMA_REGISTRY_URL"
        )
    return options


def register(app: typer.Typer) -> None:
    """Add ``spark-schema`` and the ``spark`` sub-app (``spark decode``)."""
    app.command("spark-schema")(spark_schema_cmd)
    spark_app = typer.Typer(
        help="Apply contracts in Spark: decode CDC messages into a change feed.",
        no_args_is_help=True,
    )
    spark_app.command("decode")(decode_cmd)
    app.add_typer(spark_app, name="spark")
