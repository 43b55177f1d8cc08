"""``cdc-contracts demo``: the whole product on embedded defaults, in one command.

1. infer a contract from every sample topic shipped in ``cli/demo_topics/`` (one file per topic);
2. start the contract API with the embedded Schema Registry on a free port, show the registry
   plan and push the contracts;
3. decode every topic with Spark into the canonical change feed (Parquet under
   ``./demo-output/``), printing counts per format and op and a few decoded rows;
4. evolve one contract with a breaking change and show the CI gate failing;
5. print the URLs and what to try next, then shut everything down (or, with
   ``--keep-running``, leave the API, the registry and the catalog up until Ctrl-C).

Off a terminal (``make demo > demo.log``) nothing is wrapped or cut: each line is as long as it
needs to be, headings are plain ``== N. ... ==`` lines and JSON is printed as JSON.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

#: The sample topics, shipped with the package (examples/topics/ in the repository links here).
DEFAULT_TOPICS = Path(__file__).resolve().parent / "demo_topics"


@dataclass(frozen=True)
class Topic:
    """One sample topic: its file, its format (the folder name) and its name (the file stem)."""

    path: Path
    format: str

    @property
    def name(self) -> str:
        return self.path.stem


def register(app: typer.Typer) -> None:
    app.command(
        "demo", help="Run the main job end to end on embedded defaults (no services needed)."
    )(demo)


def demo(
    topics: Annotated[
        Path,
        typer.Option(metavar="DIR", help="folder of sample topics, one sub-folder per format"),
    ] = DEFAULT_TOPICS,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", metavar="DIR", help="where the change feed is written"),
    ] = Path("demo-output"),
    work: Annotated[
        Path,
        typer.Option(metavar="DIR", help="scratch folder for contracts and the registry database"),
    ] = Path(".cdc-contracts/demo"),
    skip_spark: Annotated[
        bool, typer.Option("--skip-spark", help="skip the Spark step (no JVM)")
    ] = False,
    keep_running: Annotated[
        bool,
        typer.Option(
            "--keep-running",
            help="leave the API, the registry and the catalog up until Ctrl-C, and print their URLs",
        ),
    ] = False,
) -> None:
    """Run the demo; exits non-zero if any step fails."""
    from cli.common import console as make_console

    console = make_console()
    started = time.monotonic()
    found = _topics(topics)
    if work.exists():
        shutil.rmtree(work)
    contracts_dir = work / "contracts"
    contracts_dir.mkdir(parents=True)

    _heading(console, "1. Infer a contract from every sample topic")
    contracts = _infer_all(console, found, contracts_dir)

    _heading(console, "2. Serve the contract API with the embedded Schema Registry")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with _server(port, work / "registry.db", work / "server.log") as server:
        _wait_until_up(url, work / "server.log")
        console.print(f"contract API and Schema Registry at [bold]{url}[/]")
        _cli(console, ["registry", "plan", str(contracts_dir), "--url", url], allow={0})
        _cli(console, ["registry", "push", str(contracts_dir), "--url", url], allow={0})
        _show_api(console, url, contracts)

        if skip_spark:
            console.print("[yellow]skipping the Spark step (--skip-spark)[/]")
        else:
            _heading(console, "3. Decode every topic with Spark into the change feed")
            _spark_job(console, found, contracts, output, work / "spark.log")

        _heading(console, "4. A breaking change, stopped by the CI gate")
        _breaking_change(console, contracts, work, url)

        _heading(console, "5. Try it yourself")
        _next_steps(console, url, contracts_dir, output)
        console.print(f"[green]demo finished in {time.monotonic() - started:.0f} s[/]")
        if keep_running:
            _keep_running(console, url, server)
        else:
            console.print(
                "(the server above stops now; `cdc-contracts demo --keep-running` leaves it up, "
                "`cdc-contracts serve` runs one for as long as you like)"
            )


def _heading(console: Any, title: str) -> None:
    """A step's heading: a rule on a terminal, a plain line in a log."""
    if console.is_terminal:
        from rich.rule import Rule

        console.print(Rule(f"[bold]{title}"))
    else:
        console.print(f"\n== {title} ==")


def _keep_running(console: Any, url: str, server: subprocess.Popen[bytes]) -> None:
    """Print where everything is and wait until Ctrl-C (or until the server stops)."""
    console.print(f"\ncontract API:     {url}/contracts")
    console.print(f"Schema Registry:  {url}  (any Confluent client: schema.registry.url={url})")
    console.print(f"catalog:          {url}/")
    console.print(f"API docs:         {url}/docs")
    console.print("running until Ctrl-C ...")
    sys.stdout.flush()
    try:
        code = server.wait()
    except KeyboardInterrupt:
        console.print("stopping")
        return
    from contracts.errors import ContractsError

    raise ContractsError(f"the server stopped by itself (exit {code})", url)


# --- step 1 -----------------------------------------------------------------------------------


def _topics(folder: Path) -> list[Topic]:
    from contracts.errors import InputError
    from contracts.formats import FORMATS

    if not folder.is_dir():
        raise InputError("no such folder of sample topics", str(folder))
    found = [
        Topic(path, path.parent.name)
        for path in sorted(folder.glob("*/*"))
        if path.is_file() and path.parent.name in FORMATS
    ]
    if not found:
        raise InputError("no sample topics (expected <format>/<topic file>)", str(folder))
    return found


def _infer_all(console: Any, topics: list[Topic], out: Path) -> dict[str, Any]:
    from rich.table import Table

    from cli.common import progress
    from contracts.contract import dump_contract
    from contracts.formats.base import InferOptions
    from contracts.pipeline import open_stream

    table = Table("format", "topic", "messages", "columns", "key", "table", header_style="bold")
    contracts: dict[str, Any] = {}
    for topic in progress(topics, "inferring contracts", total=len(topics)):
        stream = open_stream([topic.path], topic.format)
        result = stream.format.infer(
            stream.messages(), InferOptions(name=topic.name, topic=topic.name)
        )
        contract = result.contract
        (out / f"{contract.name}.yaml").write_text(dump_contract(contract), encoding="utf-8")
        contracts[topic.name] = contract
        table.add_row(
            topic.format,
            topic.name,
            str(result.messages),
            str(len(contract.columns)),
            ", ".join(contract.key) or "-",
            contract.table_id.qualified(),
        )
    console.print(table)
    console.print(f"{len(contracts)} contracts written to {out}/")
    return contracts


# --- step 2 -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _server(port: int, db: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "cli.main", "serve", "--port", str(port)]
    command += ["--registry-db", str(db), "--log-level", "warning"]
    with log.open("wb") as sink:
        proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_until_up(url: str, log: Path, timeout: float = 30.0) -> None:
    from contracts.errors import ContractsError

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    tail = log.read_text(errors="replace")[-400:] if log.exists() else ""
    raise ContractsError(f"the server did not start within {timeout:.0f} s: {tail}", url)


def _cli(console: Any, args: list[str], allow: set[int]) -> int:
    """Run one ``cdc-contracts`` command as a user would, echoing it and its output."""
    console.print(f"[dim]$ cdc-contracts {' '.join(args)}[/]")
    env = {**os.environ, "NO_COLOR": "1"}
    if console.is_terminal:  # the command's tables fit the terminal; in a log they are unwrapped
        env["COLUMNS"] = str(console.width)
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    text = (done.stdout + done.stderr).rstrip()
    if text:
        console.out(text, highlight=False)
    console.print(f"[dim]exit code {done.returncode}[/]")
    if done.returncode not in allow:
        from contracts.errors import ContractsError

        raise ContractsError(f"`cdc-contracts {' '.join(args)}` exited {done.returncode}")
    return done.returncode


def _show_api(console: Any, url: str, contracts: dict[str, Any]) -> None:
    import json

    name = _orders(contracts).name
    path = f"/contracts/{name}?render=spark-ddl&part=row"
    with urllib.request.urlopen(f"{url}{path}", timeout=10) as response:
        body = json.loads(response.read())
    console.print(f"[dim]$ curl -s '{url}{path}'[/]")
    console.out(json.dumps(body, indent=2, ensure_ascii=False), highlight=False)


def _orders(contracts: dict[str, Any]) -> Any:
    """The generated Debezium orders contract (decimal + micro-timestamp columns)."""
    return contracts.get("dbserver1.shop.orders") or next(iter(contracts.values()))


# --- step 3 -----------------------------------------------------------------------------------


def _spark_job(
    console: Any, topics: list[Topic], contracts: dict[str, Any], output: Path, log: Path
) -> None:
    import json

    from rich.table import Table

    from cli.common import progress
    from contracts.errors import ContractsError
    from spark_bindings.inputs import read_input
    from spark_bindings.storage import feed_counts, write_parquet

    spark = _spark_session(console, log)
    try:
        if output.exists():
            shutil.rmtree(output)
        table = Table(
            "format", "topic", "c", "u", "d", "r", "t", "control", "errors", header_style="bold"
        )
        samples: dict[str, Any] = {}
        skipped: list[str] = []
        for topic in progress(topics, "decoding topics with Spark", total=len(topics)):
            from spark_bindings import decode_changes

            try:
                frame = read_input(spark, [str(topic.path)], "auto", topic.format)
                changes = decode_changes(frame, contracts[topic.name])
            except (ContractsError, ImportError, TypeError) as err:
                skipped.append(f"{topic.format}/{topic.name}: {type(err).__name__}: {err}")
                continue
            target = output / topic.format / topic.name
            write_parquet(changes, str(target))
            written = spark.read.parquet(str(target))
            counts = feed_counts(written)
            control = sum(n for what, n in counts.items() if what.startswith("control:"))
            table.add_row(
                topic.format,
                topic.name,
                *(str(counts.get(op, 0)) for op in ("c", "u", "d", "r", "t")),
                str(control),
                str(counts.get("error", 0)),
            )
            if topic.name == "dbserver1.shop.orders":
                samples[topic.name] = written
        console.print(table)
        for line in skipped:
            console.print(f"[yellow]not decoded by Spark: {line}[/]")
        console.print(f"change feed written as Parquet under {output}/<format>/<topic>/")
        for name, frame in samples.items():
            console.print(f"a few decoded rows of {name} (typed: decimal amount, timestamps):")
            rows = (
                frame.where("op = 'u'")
                .selectExpr(
                    "op",
                    "coalesce(after.id, before.id) AS id",
                    "before.amount AS amount_before",
                    "after.amount AS amount_after",
                    "after.created_at AS created_at",
                    "source_ts_ms",
                )
                .limit(3)
                .collect()
            )
            for row in rows:
                console.out(
                    json.dumps(row.asDict(), default=str, ensure_ascii=False), highlight=False
                )
    finally:
        spark.stop()


def _spark_session(console: Any, log: Path) -> Any:
    """A local session whose JVM writes its own log (start-up banners, warnings) to ``log``,
    not into the demo's output."""
    from spark_bindings.session import local_session

    console.print(f"starting a local Spark session (local[2]); Spark's own log: {log}")
    sys.stderr.flush()
    saved = os.dup(2)
    with log.open("ab") as sink:
        os.dup2(sink.fileno(), 2)  # the JVM started now keeps this as its stderr
        try:
            return local_session("cdc-contracts-demo")
        finally:
            os.dup2(saved, 2)
            os.close(saved)


# --- step 4 -----------------------------------------------------------------------------------


def _breaking_change(console: Any, contracts: dict[str, Any], work: Path, url: str) -> None:
    from contracts.contract import dump_contract

    contract = _orders(contracts)
    evolved = _widen_scale(contract)
    old_path = work / "contracts" / f"{contract.name}.yaml"
    new_dir = work / "proposed"
    new_dir.mkdir(parents=True, exist_ok=True)
    new_path = new_dir / f"{contract.name}.yaml"
    new_path.write_text(dump_contract(evolved), encoding="utf-8")
    console.print(
        "A producer change sets the decimal scale of one column from 2 to 3. Avro calls that "
        "compatible (same bytes type); every consumer would read amounts 10x off."
    )
    _cli(console, ["diff", str(old_path), str(new_path)], allow={1})
    _cli(console, ["registry", "plan", str(new_path), "--url", url], allow={0, 1})
    console.print(
        "The registry alone would accept this as a new version (the Avro types did not change); "
        "plan (like check, push and the API) applies the CDC rules too: "
        "[bold red]it exits 1, so the pull request that makes this change fails CI.[/]"
    )


def _widen_scale(contract: Any) -> Any:
    """A copy of the contract whose first Decimal column has its scale raised by one."""
    from contracts.logical import DECIMAL_NAME

    columns = [dict(c) for c in contract.columns]
    for col in columns:
        if col.get("name") == DECIMAL_NAME:
            params = dict(col.get("parameters") or {})
            params["scale"] = str(int(params.get("scale", "0")) + 1)
            col["parameters"] = params
            break
    data = contract.to_dict()
    data["columns"] = columns
    return type(contract).model_validate(data)


# --- step 5 -----------------------------------------------------------------------------------


def _next_steps(console: Any, url: str, contracts_dir: Path, output: Path) -> None:
    console.print(f"catalog:   {url}/")
    console.print(f"API docs:  {url}/docs")
    console.print("what to try next:")
    for line in (
        "cdc-contracts demo --keep-running                    # this, left up to look around",
        "cdc-contracts serve                                  # the API + registry on :8081",
        f"cdc-contracts catalog build {contracts_dir} -o site/   # the catalog as static pages",
        f"cdc-contracts render {contracts_dir}/dbserver1.shop.orders.yaml --to avro",
        f"cdc-contracts spark-schema {contracts_dir}/dbserver1.shop.orders.yaml --as python",
        "cdc-contracts normalize examples/topics/canal-json/inventory.products2.jsonl",
        f"cdc-contracts diff {contracts_dir}/dbserver1.shop.orders.yaml {contracts_dir.parent}/proposed/dbserver1.shop.orders.yaml --output-format markdown",
        f"python -c \"import pandas; print(pandas.read_parquet('{output}/debezium-json/dbserver1.shop.orders').head())\"",
    ):
        console.print(f"  {line}")
