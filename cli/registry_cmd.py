"""``cdc-contracts registry plan | push | pull``: keep a Schema Registry in step with contracts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import OutputMode, print_json, refuse_under_a_file, table

registry_app = typer.Typer(
    name="registry",
    help="Plan, push and pull contracts against any Confluent-compatible Schema Registry "
    "(Confluent, Redpanda, Karapace, Apicurio's ccompat API, or `cdc-contracts serve`).",
    no_args_is_help=True,
)

Url = Annotated[
    str,
    typer.Option(
        "--url",
        envvar="SCHEMA_REGISTRY_URL",
        metavar="URL",
        help="Registry base URL, e.g. http://localhost:8081",
    ),
]
BasicAuth = Annotated[
    str | None,
    typer.Option(
        "--basic-auth",
        envvar="SCHEMA_REGISTRY_BASIC_AUTH",
        metavar="USER:PASSWORD",
        help="Basic authentication",
    ),
]
Bearer = Annotated[
    str | None,
    typer.Option(
        "--bearer-token",
        envvar="SCHEMA_REGISTRY_BEARER_TOKEN",
        metavar="TOKEN",
        help="Bearer token",
    ),
]
LogicalCluster = Annotated[
    str,
    typer.Option(
        "--logical-cluster",
        metavar="ID",
        show_default=False,
        help="Confluent Cloud logical cluster (with a bearer token)",
    ),
]
CaCert = Annotated[Path | None, typer.Option("--ca-cert", metavar="FILE", help="CA bundle for TLS")]
ClientCert = Annotated[
    Path | None, typer.Option("--client-cert", metavar="FILE", help="Client certificate (PEM)")
]
ClientKey = Annotated[
    Path | None, typer.Option("--client-key", metavar="FILE", help="Client private key (PEM)")
]
Insecure = Annotated[bool, typer.Option("--insecure", help="Do not verify TLS certificates")]
Timeout = Annotated[float, typer.Option("--timeout", metavar="SECONDS", help="Seconds per request")]
Strategy = Annotated[
    str,
    typer.Option(
        "--strategy",
        metavar="[topic|record|topic-record]",
        help="Subject naming strategy",
    ),
]
Concurrency = Annotated[
    int, typer.Option("--concurrency", min=1, max=64, metavar="N", help="Parallel requests")
]
OutputFormat = Annotated[
    OutputMode, typer.Option("--output-format", help="What is written: text (a table) or json")
]
Source = Annotated[
    Path, typer.Argument(help="A contract file or a directory of *.yaml contract files")
]


def _client(
    url: str,
    basic_auth: str | None,
    bearer_token: str | None,
    logical_cluster: str,
    ca_cert: Path | None,
    client_cert: Path | None,
    client_key: Path | None,
    insecure: bool,
    timeout: float,
) -> Any:
    from registry_sync.client import RegistryClient, RegistryConfig

    return RegistryClient(
        RegistryConfig(
            url=url,
            basic_auth=basic_auth,
            bearer_token=bearer_token,
            bearer_logical_cluster=logical_cluster,
            ca_location=str(ca_cert) if ca_cert else None,
            cert_location=str(client_cert) if client_cert else None,
            key_location=str(client_key) if client_key else None,
            verify=not insecure,
            timeout=timeout,
        )
    )


def _desired(source: Path, strategy: str) -> list[Any]:
    from registry_sync.desired import desired_subjects, load_contracts
    from registry_sync.naming import parse_strategy

    return desired_subjects(load_contracts(source), parse_strategy(strategy))


def _action_text(item: Any) -> str:
    text = str(item.action.value)
    if item.level_change and item.level_from:
        text += f", compatibility {item.level_from} changed to {item.level_to}"
    elif item.level_change:
        text += f", compatibility set to {item.level_to}"
    return text


def _reason(item: Any) -> str:
    lines = list(item.messages)
    lines += [f"{f['path']}: {f['message']}" for f in item.findings]
    return "\n".join(lines)


@registry_app.command("plan")
def plan_cmd(
    url: Url,
    source: Source = Path("."),
    basic_auth: BasicAuth = None,
    bearer_token: Bearer = None,
    logical_cluster: LogicalCluster = "",
    ca_cert: CaCert = None,
    client_cert: ClientCert = None,
    client_key: ClientKey = None,
    insecure: Insecure = False,
    timeout: Timeout = 10.0,
    strategy: Strategy = "topic",
    concurrency: Concurrency = 8,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Show per subject what a push would do; writes nothing; exit 1 if a push would refuse,
    2 if the registry could not be reached or used.

    Actions: create, new-version, metadata (identity only), unchanged, incompatible, error;
    a compatibility level change is shown beside the action.
    """
    from registry_sync.sync import Action, plan

    desired = _desired(source, strategy)
    with _client(
        url,
        basic_auth,
        bearer_token,
        logical_cluster,
        ca_cert,
        client_cert,
        client_key,
        insecure,
        timeout,
    ) as client:
        planned = plan(client, desired, concurrency)
    if output_format is OutputMode.json:
        print_json({"registry": url, "subjects": [p.to_json() for p in planned]})
    else:
        rows = [
            [p.subject, p.contract, _action_text(p), p.version, p.schema_id, _reason(p)]
            for p in planned
        ]
        table(
            f"registry plan: {url}", ["subject", "contract", "action", "version", "id", "why"], rows
        )
        _summary([p.action.value for p in planned])
    if any(p.action is Action.ERROR and p.error_exit == 2 for p in planned):
        raise typer.Exit(2)  # the registry could not be reached or used: no verdict
    if any(p.action in (Action.INCOMPATIBLE, Action.ERROR) for p in planned):
        raise typer.Exit(1)


@registry_app.command("push")
def push_cmd(
    url: Url,
    source: Source = Path("."),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Plan only; write nothing")] = False,
    basic_auth: BasicAuth = None,
    bearer_token: Bearer = None,
    logical_cluster: LogicalCluster = "",
    ca_cert: CaCert = None,
    client_cert: ClientCert = None,
    client_key: ClientKey = None,
    insecure: Insecure = False,
    timeout: Timeout = 10.0,
    strategy: Strategy = "topic",
    concurrency: Concurrency = 8,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Check every subject first, then register what changed; exit 1 if anything was refused.

    A refused or failed subject does not stop the others; a re-run after success changes nothing.
    """
    from registry_sync.sync import Action, push

    desired = _desired(source, strategy)
    with _client(
        url,
        basic_auth,
        bearer_token,
        logical_cluster,
        ca_cert,
        client_cert,
        client_key,
        insecure,
        timeout,
    ) as client:
        results = push(client, desired, concurrency, dry_run=dry_run)
    if output_format is OutputMode.json:
        print_json(
            {"registry": url, "dry_run": dry_run, "subjects": [r.to_json() for r in results]}
        )
    else:
        rows = [
            [
                r.plan.subject,
                r.plan.contract,
                _action_text(r.plan),
                r.outcome.value,
                r.version,
                r.schema_id,
                r.error or _reason(r.plan),
            ]
            for r in results
        ]
        title = f"registry push{' (dry run)' if dry_run else ''}: {url}"
        table(title, ["subject", "contract", "plan", "outcome", "version", "id", "why"], rows)
        _summary([r.outcome.value for r in results])
    if any(r.plan.action is Action.ERROR and r.plan.error_exit == 2 for r in results):
        raise typer.Exit(2)  # the registry could not be reached or used
    if not all(r.ok for r in results):
        raise typer.Exit(1)


@registry_app.command("pull")
def pull_cmd(
    url: Url,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", metavar="DIR", help="Directory for contract files"),
    ],
    subject_pattern: Annotated[
        str | None,
        typer.Option(
            "--subject-pattern", metavar="REGEX", help="Regular expression on subject names"
        ),
    ] = None,
    basic_auth: BasicAuth = None,
    bearer_token: Bearer = None,
    logical_cluster: LogicalCluster = "",
    ca_cert: CaCert = None,
    client_cert: ClientCert = None,
    client_key: ClientKey = None,
    insecure: Insecure = False,
    timeout: Timeout = 10.0,
    concurrency: Concurrency = 8,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Write contract files rebuilt from the contracts carried in registered schemas."""
    from registry_sync.sync import pull

    _check_out_dir(output)
    with _client(
        url,
        basic_auth,
        bearer_token,
        logical_cluster,
        ca_cert,
        client_cert,
        client_key,
        insecure,
        timeout,
    ) as client:
        report = pull(client, output, subject_pattern, concurrency)
    if output_format is OutputMode.json:
        print_json(report.to_json())
        return
    rows: list[list[Any]] = [[str(p), "written"] for p in report.written]
    rows += [[s, f"skipped: {why}"] for s, why in report.skipped]
    table(f"registry pull: {url}", ["file / subject", "result"], rows)


def _check_out_dir(out_dir: Path) -> None:
    """``--output`` must be a directory, or a path where one can be made (checked before any
    request)."""
    from contracts.errors import InputError

    where = f"--output {out_dir}"
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError("is a file: give a directory for the contract files", where)
    refuse_under_a_file(out_dir, where)


def _summary(values: list[str]) -> None:
    from collections import Counter

    from cli.common import stderr_console

    counts = Counter(values)
    stderr_console().print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing")


def register(app: typer.Typer) -> None:
    app.add_typer(registry_app, name="registry")
