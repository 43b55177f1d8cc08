"""``cdc-contracts registry``: keep a Schema Registry in step with contracts, and administer it.

``plan | push | pull`` sync contract files; ``subjects | describe | set-level | delete`` are the
everyday admin goals (the Confluent CLI's and the Maven plugin's). Every command probes the
registry once first: an answer that is not a registry's is one error line and exit 2.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, get_type_hints

import typer

from cli.common import OutputMode, print_json, refuse_under_a_file, stderr_console
from cli.project_config import ConfigOpt

if TYPE_CHECKING:
    from contracts.config import ProjectConfig
    from registry_sync.client import RegistryClient, RegistryConfig

registry_app = typer.Typer(
    name="registry",
    help="Plan, push and pull contracts against any Confluent-compatible Schema Registry "
    "(Confluent, Redpanda, Karapace, Apicurio's ccompat API, or `cdc-contracts serve`), and "
    "list, describe, set the level of and delete its subjects.",
    no_args_is_help=True,
)

Url = Annotated[
    str | None,
    typer.Option(
        "--url",
        envvar="SCHEMA_REGISTRY_URL",
        metavar="URL",
        help="Registry base URL, e.g. http://localhost:8081 [default: registry.url in the "
        "configuration]",
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
    str | None,
    typer.Option(
        "--strategy",
        metavar="[topic|record|topic-record]",
        help="Subject naming strategy [default: the configuration's, else topic]",
    ),
]
Concurrency = Annotated[
    int, typer.Option("--concurrency", min=1, max=64, metavar="N", help="Parallel requests")
]
OutputFormat = Annotated[
    OutputMode, typer.Option("--output-format", help="What is written: text or json")
]
Source = Annotated[
    Path | None,
    typer.Argument(
        help="A contract file or a directory of *.yaml contract files [default: the "
        "configuration's contracts directory, else .]",
        show_default=False,
    ),
]
Yes = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Do not ask for confirmation (needed when not on a terminal)"),
]
VersionOpt = Annotated[
    int | None, typer.Option("--version", min=1, metavar="N", help="One version (default: latest)")
]


def _config(
    url: str,
    basic_auth: str | None,
    bearer_token: str | None,
    logical_cluster: str,
    ca_cert: Path | None,
    client_cert: Path | None,
    client_key: Path | None,
    insecure: bool,
    timeout: float,
) -> RegistryConfig:
    from registry_sync.client import RegistryConfig

    return RegistryConfig(
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


#: how every registry command reaches the registry: these options (``_config``'s parameters)
_CONNECTION: Final = {
    "url": (Url, None),
    "basic_auth": (BasicAuth, None),
    "bearer_token": (Bearer, None),
    "logical_cluster": (LogicalCluster, ""),
    "ca_cert": (CaCert, None),
    "client_cert": (ClientCert, None),
    "client_key": (ClientKey, None),
    "insecure": (Insecure, False),
    "timeout": (Timeout, 10.0),
}


def registry_command(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``registry NAME``: a function whose first parameter is a connected
    :class:`~registry_sync.client.RegistryClient` (and, when it has one, whose ``project``
    parameter is the project configuration); the connection options (``--url``, auth, TLS,
    ``--timeout``, ``--config``) are added to its options once, here, for every command. The
    URL and credentials come from the flags, else their environment variables, else
    ``registry.*`` in ``cdc-contracts.yaml``."""

    def decorate(fn: Callable[..., None]) -> Callable[..., None]:
        # the client is typed for mypy only; the options are what typer reads
        hints = get_type_hints(
            fn, localns={"RegistryClient": Any, "ProjectConfig": Any}, include_extras=True
        )
        wants_project = "project" in inspect.signature(fn).parameters
        own = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name])
            for p in inspect.signature(fn).parameters.values()
            if p.name not in ("client", "project")
        ]
        connection = [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=t, default=d)
            for n, (t, d) in {**_CONNECTION, "config": (ConfigOpt, None)}.items()
        ]

        def command(**options: Any) -> None:
            from cli.project_config import project_config, registry_options
            from registry_sync.client import RegistryClient

            project = project_config(options.pop("config"))
            given = {n: options.pop(n) for n in _CONNECTION}
            found = registry_options(
                project,
                given.pop("url"),
                given.pop("basic_auth"),
                given.pop("bearer_token"),
                needed_by=f"registry {name}",
            )
            config = _config(found.url, found.basic_auth, found.bearer_token, **given)
            with RegistryClient(config) as client:
                if wants_project:
                    options["project"] = project
                fn(client, **options)

        command.__name__ = fn.__name__
        command.__doc__ = fn.__doc__
        command.__signature__ = inspect.Signature(connection[:1] + own + connection[1:])  # type: ignore[attr-defined]
        registry_app.command(name)(command)
        return fn

    return decorate


def _desired(project: ProjectConfig, source: Path | None, strategy: str | None) -> list[Any]:
    """The subjects the contracts want: ``source`` else the configuration's contracts
    directory; ``--strategy`` else the configuration's subject naming, else topic; the
    configuration's level for contracts that set none."""
    from cli.project_config import first_set
    from registry_sync.desired import desired_subjects, load_contracts
    from registry_sync.naming import parse_strategy

    folder = first_set(source, project.contracts_dir, default=Path("."))
    naming = parse_strategy(first_set(strategy, project.registry.subject_naming, default="topic"))
    return desired_subjects(load_contracts(folder), naming, project.compatibility)


def _gate(project: ProjectConfig) -> dict[str, Any]:
    """The configuration's fail-on and exceptions, as ``check`` applies them."""
    return {"fail_on": project.fail_on or "breaking", "exceptions": project.exception_set()}


# --- plan / push / pull ------------------------------------------------------------------------


@registry_command("plan")
def plan_cmd(
    client: RegistryClient,
    project: ProjectConfig,
    source: Source = None,
    strategy: Strategy = None,
    concurrency: Concurrency = 8,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Show per subject what a push would do; writes nothing.

    One row per subject: the action (create, new-version, metadata, level, unchanged,
    incompatible, error), current -> new version and the level; then why, numbered. Exit 1
    if a push would refuse something, 2 if the registry could not be used.
    """
    from cli.registry_view import plan_view, summary
    from registry_sync.sync import Action, plan

    desired = _desired(project, source, strategy)
    planned = plan(client, desired, concurrency, **_gate(project))
    if output_format is OutputMode.json:
        print_json({"registry": client.config.url, "subjects": [p.to_json() for p in planned]})
    else:
        sys.stdout.write(plan_view(client.config.url, planned))
        stderr_console().print(summary(p.action.value for p in planned))
    if any(p.action is Action.ERROR and p.error_exit == 2 for p in planned):
        raise typer.Exit(2)  # the registry could not be reached or used: no verdict
    if any(p.action in (Action.INCOMPATIBLE, Action.ERROR) for p in planned):
        raise typer.Exit(1)


@registry_command("push")
def push_cmd(
    client: RegistryClient,
    project: ProjectConfig,
    source: Source = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Plan only; write nothing")] = False,
    strategy: Strategy = None,
    concurrency: Concurrency = 8,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Check every subject first, then register what changed; exit 1 if anything was refused.

    A refused or failed subject does not stop the others; a re-run after success changes nothing.
    """
    from cli.registry_view import push_view, summary
    from registry_sync.sync import Action, push

    desired = _desired(project, source, strategy)
    results = push(client, desired, concurrency, dry_run=dry_run, **_gate(project))
    if output_format is OutputMode.json:
        print_json(
            {
                "registry": client.config.url,
                "dry_run": dry_run,
                "subjects": [r.to_json() for r in results],
            }
        )
    else:
        sys.stdout.write(push_view(client.config.url, results, dry_run))
        stderr_console().print(summary(r.outcome.value for r in results))
    if any(r.plan.action is Action.ERROR and r.plan.error_exit == 2 for r in results):
        raise typer.Exit(2)  # the registry could not be reached or used
    if not all(r.ok for r in results):
        raise typer.Exit(1)


@registry_command("pull")
def pull_cmd(
    client: RegistryClient,
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
    concurrency: Concurrency = 8,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Write contract files rebuilt from the contracts carried in registered schemas."""
    from registry_sync.sync import pull

    _check_out_dir(output)
    report = pull(client, output, subject_pattern, concurrency)
    if output_format is OutputMode.json:
        print_json(report.to_json())
        return
    lines = [f"written  {p}" for p in report.written]
    lines += [f"skipped  {s}: {why}" for s, why in report.skipped]
    sys.stdout.write("\n".join([f"registry pull: {client.config.url}", *lines]) + "\n")


def _check_out_dir(out_dir: Path) -> None:
    """``--output`` must be a directory, or a path where one can be made (checked before any
    request)."""
    from contracts.errors import InputError

    where = f"--output {out_dir}"
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError("is a file: give a directory for the contract files", where)
    refuse_under_a_file(out_dir, where)


# --- admin -----------------------------------------------------------------------------------


@registry_command("subjects")
def subjects_cmd(
    client: RegistryClient,
    prefix: Annotated[
        str | None, typer.Option("--prefix", metavar="TEXT", help="Only subjects starting so")
    ] = None,
    deleted: Annotated[
        bool, typer.Option("--deleted", help="Include soft-deleted subjects")
    ] = False,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """List the registry's subjects, one per line (sorted)."""
    found = client.subjects(prefix, deleted)
    if output_format is OutputMode.json:
        print_json({"registry": client.config.url, "subjects": found})
    elif found:
        sys.stdout.write("\n".join(found) + "\n")


@registry_command("describe")
def describe_cmd(
    client: RegistryClient,
    subject: Annotated[str, typer.Argument(metavar="SUBJECT", help="The subject")],
    version: VersionOpt = None,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Show one version of a subject (the latest by default): id, level, contract, schema."""
    import json

    from cli.registry_view import describe_view
    from registry_sync.protocol import RegistryNotFoundError

    found = client.version(subject, version if version is not None else "latest")
    if found is None:
        what = f"no version {version}" if version is not None else "no such subject"
        raise RegistryNotFoundError(what, subject)
    versions = client.versions(subject)
    level = client.compatibility(subject)
    try:
        schema: Any = json.loads(found.schema or "")
    except ValueError:
        schema = found.schema
    answer = {
        "subject": subject,
        "version": found.version,
        "versions": versions,
        "id": found.schema_id,
        "schemaType": found.schema_type,
        "compatibility": level,
        "metadata": found.metadata_properties or {},
        "schema": schema,
    }
    if output_format is OutputMode.json:
        print_json(answer)
    else:
        sys.stdout.write(describe_view(answer))


@registry_command("set-level")
def set_level_cmd(
    client: RegistryClient,
    target: Annotated[
        list[str],
        typer.Argument(
            metavar="[SUBJECT] LEVEL",
            help="The level (BACKWARD, FULL_TRANSITIVE, NONE, ...; any case), after a subject "
            "to set that subject's; alone it sets the registry's global level",
        ),
    ],
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Set the compatibility level of a subject, or the registry's global level."""
    subject, level = _level_target(target)
    before = client.compatibility(subject)
    now = client.set_compatibility(subject, level)
    scope = subject or "global"
    if output_format is OutputMode.json:
        print_json({"subject": subject, "from": before, "to": now})
    else:
        sys.stdout.write(f"{scope}: {before} → {now}\n" if before != now else f"{scope}: {now}\n")


def _level_target(target: list[str]) -> tuple[str | None, str]:
    from contracts.contract import CompatibilityLevel
    from contracts.errors import InputError

    if len(target) not in (1, 2):
        raise InputError("give LEVEL, or SUBJECT LEVEL", "set-level")
    subject, raw = (None, target[0]) if len(target) == 1 else (target[0], target[1])
    try:
        level = CompatibilityLevel(raw.upper())
    except ValueError:
        known = ", ".join(lv.value for lv in CompatibilityLevel)
        raise InputError(f"unknown level {raw!r} (one of {known})", "LEVEL") from None
    return subject, level.value


@registry_command("delete")
def delete_cmd(
    client: RegistryClient,
    subject: Annotated[str, typer.Argument(metavar="SUBJECT", help="The subject")],
    version: Annotated[
        int | None,
        typer.Option("--version", min=1, metavar="N", help="Delete this version only"),
    ] = None,
    permanent: Annotated[
        bool,
        typer.Option("--permanent", help="Delete for good (soft-deletes first when still live)"),
    ] = False,
    yes: Yes = False,
    output_format: OutputFormat = OutputMode.text,
) -> None:
    """Delete a subject or one of its versions (soft; --permanent for good).

    Asks for confirmation on a terminal; elsewhere (CI) it needs --yes.
    """
    from contracts.errors import InputError

    what = f"{subject} version {version}" if version is not None else f"subject {subject}"
    how = "permanently " if permanent else ""
    if not yes:
        if not sys.stdin.isatty():
            raise InputError(
                f"refusing to delete {what} without confirmation: pass --yes", "delete"
            )
        if not typer.confirm(f"Delete {how}{what} in {client.config.url}?", default=False):
            stderr_console().print("nothing deleted")
            raise typer.Exit(1)
    deleted = _delete(client, subject, version, permanent)
    if output_format is OutputMode.json:
        print_json({"subject": subject, "deleted": deleted, "permanent": permanent})
    else:
        shown = ", ".join(map(str, deleted)) or "none"
        sys.stdout.write(f"deleted {how}{subject} version(s) {shown}\n")


def _delete(client: Any, subject: str, version: int | None, permanent: bool) -> list[int]:
    """Soft-delete (what is live), then hard-delete when ``permanent``; the versions deleted."""
    from registry_sync.protocol import RegistryNotFoundError

    if version is not None:
        live = version in client.versions(subject)
        if not live and version not in client.versions(subject, deleted=True):
            raise RegistryNotFoundError(f"no version {version}", subject)
        if live:
            client.delete_version(subject, version)
        if permanent:
            client.delete_version(subject, version, permanent=True)
        return [version]
    live = client.versions(subject)
    if not live and not client.versions(subject, deleted=True):
        raise RegistryNotFoundError("no such subject", subject)
    deleted = client.delete_subject(subject) if live else []
    if permanent:
        deleted = client.delete_subject(subject, permanent=True)
    return sorted(deleted)


def register(app: typer.Typer) -> None:
    app.add_typer(registry_app, name="registry")
