"""``cdc-contracts derive``: contracts from DDL, a migrations directory or a live database.

Exit codes: 0 contracts derived; 2 unusable input (a statement that cannot be read, an unknown
table in an ALTER, a type the connector does not map, an unreachable database).
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from cli.common import OutputMode, plural, print_json, refuse_under_a_file, write_output
from contracts.errors import InputError

if TYPE_CHECKING:
    from contracts.derive import DerivedSet


class DialectChoice(enum.StrEnum):
    mysql = "mysql"
    mariadb = "mariadb"
    postgres = "postgres"


def register(app: typer.Typer) -> None:
    app.command("derive")(derive)


def derive(
    from_ddl: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs Optional here
        typer.Option(
            "--from-ddl",
            metavar="PATH",
            help="A .sql file, or a directory of migrations (Flyway V1__x.sql, Liquibase "
            "formatted SQL, numbered files), applied in order.",
        ),
    ] = None,
    from_db: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--from-db",
            metavar="URL",
            envvar="CDC_CONTRACTS_DATABASE_URL",
            help="A live database: postgresql://user:pass@host:port/db or mysql://... "
            "(needs the db extra of cdc-contracts).",
        ),
    ] = None,
    dialect: Annotated[
        Optional[DialectChoice],  # noqa: UP045
        typer.Option("--dialect", help="SQL dialect of --from-ddl: mysql, mariadb or postgres."),
    ] = None,
    format: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="Contract format: debezium-json, canal-json or maxwell-json."
        ),
    ] = "debezium-json",
    server_name: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--server-name", metavar="NAME", help="Debezium topic.prefix (the names' first part)."
        ),
    ] = None,
    connector_option: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--connector-option",
            metavar="KEY=VALUE",
            help="A Debezium connector setting, e.g. decimal.handling.mode=string.",
        ),
    ] = None,
    placeholder: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--placeholder",
            metavar="KEY=VALUE",
            help="The value of a ${KEY} placeholder in the migrations (Flyway syntax).",
        ),
    ] = None,
    debezium_version: Annotated[
        str,
        typer.Option(
            "--debezium-version",
            metavar="VERSION",
            help="Debezium version whose mappings and envelope to use.",
        ),
    ] = "3.0",
    envelope_from: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--envelope-from",
            metavar="FILE",
            help="A message the connector wrote (any table): copy its envelope and source block.",
        ),
    ] = None,
    database: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--database", metavar="NAME", help="Database of tables the DDL names without one."
        ),
    ] = None,
    tables: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--tables",
            metavar="REGEX",
            help="Only tables whose db.table (or schema.table) matches.",
        ),
    ] = None,
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Write one <name>.yaml per contract into DIR (default: stdout).",
        ),
    ] = None,
    output_format: Annotated[
        OutputMode, typer.Option("--output-format", help="text (YAML) or json.")
    ] = OutputMode.text,
) -> None:
    """Derive contracts from table definitions, as a connector will type them.

    Reads CREATE/ALTER TABLE statements (or a live catalog) and writes one contract per table:
    columns typed as Debezium (or Canal) types them under the connector settings, the key, and
    the envelope with the connector's names.
    """
    from contracts.derive import DeriveRequest, derive_from_db, derive_from_ddl
    from contracts.derive.typemap import parse_version

    if (from_ddl is None) == (from_db is None):
        raise InputError("give exactly one of --from-ddl PATH and --from-db URL", "derive")
    request = DeriveRequest(
        format=format,
        dialect=(dialect.value if dialect else "mysql"),
        server_name=server_name,
        connector_options=_options(connector_option or [], "--connector-option"),
        debezium_version=parse_version(debezium_version),
        envelope_from=envelope_from,
        database=database,
        tables=tables,
        placeholders=_options(placeholder or [], "--placeholder", strip=False),
    )
    if output is not None:
        _check_output_dir(output)
    if from_ddl is not None:
        if dialect is None:
            raise InputError("--from-ddl needs --dialect (mysql, mariadb or postgres)", "--dialect")
        result = derive_from_ddl(from_ddl, request)
    else:
        assert from_db is not None
        if dialect is not None:
            raise InputError(
                "--dialect is for --from-ddl: a live database tells its own", "--dialect"
            )
        result = derive_from_db(from_db, request)
    written = _write(result, output, output_format)
    _report(result, request.format, debezium_version, output, written)


def _options(pairs: list[str], flag: str, strip: bool = True) -> dict[str, str]:
    """``KEY=VALUE`` pairs (a placeholder's value is kept as given: spaces may matter)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{pair!r} is not KEY=VALUE", flag)
        out[key.strip()] = value.strip() if strip else value
    return out


def _check_output_dir(output: Path) -> None:
    if output.exists() and not output.is_dir():
        raise InputError("is a file: --output takes a directory", f"--output {output}")
    refuse_under_a_file(output, f"--output {output}")


def _write(result: DerivedSet, output: Path | None, mode: OutputMode) -> list[Path]:
    from contracts.contract import dump_contract

    written: list[Path] = []
    if output is not None:
        for contract in result.contracts:
            target = output / f"{contract.name}.yaml"
            write_output(dump_contract(contract), target)
            written.append(target)
    if mode is OutputMode.json:
        print_json(_json(result, written))
    elif output is None:
        sys.stdout.write("---\n".join(dump_contract(c) for c in result.contracts))
    return written


def _json(result: DerivedSet, written: list[Path]) -> dict[str, Any]:
    return {
        "contracts": [c.to_dict() for c in result.contracts],
        "files": [str(p) for p in written],
        "sources": list(result.sources),
        "skipped_statements": dict(result.skipped),
        "notes": list(result.notes),
    }


def _report(
    result: DerivedSet, fmt: str, version: str, output: Path | None, written: list[Path]
) -> None:
    where = f" -> {output}" if output is not None else ""
    sources = plural(len(result.sources), "source")
    flavour = f", Debezium {version}" if fmt == "debezium-json" else ""
    sys.stderr.write(
        f"derived {plural(len(result.contracts), 'contract')} ({fmt}{flavour}) from {sources}"
        f"{where}\n"
    )
    if result.skipped:
        from contracts.derive.gate import skipped_note

        sys.stderr.write(f"note: {skipped_note(result.skipped)}\n")
    for note in result.notes:
        sys.stderr.write(f"note: {note}\n")
