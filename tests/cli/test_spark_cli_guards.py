"""``cdc-contracts spark decode`` and ``spark-schema`` refuse what would hurt, in one line.

Through the real entry point (``cli.main.main``): the output directory never replaces an
input or, without ``--overwrite``, anything that exists; a contract path that is a directory
and a master URL Spark would reject are usage errors (exit 2) found before a JVM starts; an
input without messages still succeeds, with a warning. Only the tests that decode use the
shared Spark session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clirun import run

from cli.spark_cmd import check_master
from contracts.errors import InputError

ROOT = Path(__file__).parent.parent.parent
CANAL = ROOT / "tests" / "fixtures" / "canal-json"
CONTRACT = CANAL / "flink-products.expected.yaml"
SAMPLE = CANAL / "flink-products.jsonl"


def _refused(args: list[str | Path], monkeypatch: pytest.MonkeyPatch) -> str:
    """The one-line ``error: …`` of a run that must stop with exit 2 before Spark starts."""

    def no_spark(*_: Any, **__: Any) -> Any:
        raise AssertionError("Spark was started for a run that should have been refused")

    monkeypatch.setattr("spark_bindings.session.local_session", no_spark)
    result = run(*args)
    code, err = result.code, result.err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: "), err
    return err


def _decode(contract: Path, inputs: list[Path], output: Path, *more: str) -> list[str | Path]:
    args: list[str | Path] = ["spark", "decode", "-c", contract]
    for path in inputs:
        args += ["-i", path]
    return [*args, "-o", output, *more]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# --- the output directory ----------------------------------------------------------------------


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A contract, an input, a non-empty directory, an empty one and a plain file."""
    (tmp_path / "contract.yaml").write_bytes(CONTRACT.read_bytes())
    (tmp_path / "in.jsonl").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "notes.txt").write_text("not a feed\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("a regular file\n")
    return tmp_path


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("keep", "is a directory that is not empty"),
        ("afile", "is an existing file"),
    ],
)
def test_existing_output_is_refused_without_overwrite(
    work: Path, target: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _snapshot(work)
    args = _decode(work / "contract.yaml", [work / "in.jsonl"], work / target)
    err = _refused(args, monkeypatch)
    assert f"--output {work / target}: {expected}" in err
    assert "give --overwrite" in err
    assert _snapshot(work) == before


@pytest.mark.parametrize(
    ("inputs", "output", "relation"),
    [
        (["in.jsonl"], "in.jsonl", "is in.jsonl"),
        (["in.jsonl"], "./sub/../in.jsonl", "is in.jsonl"),
        (["keep"], "keep/feed", "is inside keep"),
        (["keep/notes.txt"], "keep", "contains keep/notes.txt"),
        (["in.jsonl", "keep/notes.txt"], "keep/..", "contains in.jsonl"),
        (["in.jsonl"], ".", "contains in.jsonl"),
    ],
)
def test_output_overlapping_an_input_is_refused_even_with_overwrite(
    work: Path,
    inputs: list[str],
    output: str,
    relation: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (work / "sub").mkdir()
    monkeypatch.chdir(work)
    before = _snapshot(work)
    args = _decode(Path("contract.yaml"), [Path(p) for p in inputs], Path(output), "--overwrite")
    err = _refused(args, monkeypatch)
    assert f"--output {Path(output)}: {relation}" in err
    assert "which this run reads; writing the output there would delete it" in err
    assert _snapshot(work) == before


def test_output_holding_the_contract_is_refused_even_with_overwrite(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contract = work / "keep" / "contract.yaml"
    contract.write_bytes(CONTRACT.read_bytes())
    before = _snapshot(work)
    args = _decode(contract, [work / "in.jsonl"], work / "keep", "--overwrite")
    err = _refused(args, monkeypatch)
    assert f"--output {work / 'keep'}: contains {contract}, which this run reads" in err
    assert _snapshot(work) == before


def test_output_under_a_file_is_refused(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _decode(work / "contract.yaml", [work / "in.jsonl"], work / "afile" / "feed")
    err = _refused(args, monkeypatch)
    assert f"{work / 'afile'} is not a directory" in err


# --- contract paths and master URLs ------------------------------------------------------------


def test_spark_schema_of_a_directory_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = _refused(["spark-schema", tmp_path], monkeypatch)
    assert err.strip() == f"error: {tmp_path}: is a directory, not a contract file"


def test_spark_schema_of_an_unknown_format_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contract = tmp_path / "c.yaml"
    text = CONTRACT.read_text()
    contract.write_text(text.replace("format: canal-json", "format: canal-jsn"))
    assert contract.read_text() != text
    err = _refused(["spark-schema", contract, "--as", "ddl"], monkeypatch)
    assert err.startswith(
        f"error: {contract}:2: format: unknown format 'canal-jsn'; did you mean 'canal-json'?"
    )


def test_decode_with_a_directory_of_no_contracts_is_a_usage_error(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory is a set of contracts (one per table, as ``validate DIR``): one holding
    none is refused before Spark starts."""
    args = _decode(work / "keep", [work / "in.jsonl"], work / "feed")
    err = _refused(args, monkeypatch)
    assert err.strip() == f"error: {work / 'keep'}: is a directory with no contract files (*.yaml)"


def test_decode_routing_flags_are_checked_before_spark_starts(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contract = work / "contract.yaml"
    args = _decode(contract, [work / "in.jsonl"], work / "feed", "--table", "(")
    assert "--table (: is not a regular expression" in _refused(args, monkeypatch)
    args = _decode(contract, [work / "in.jsonl"], work / "feed", "--unmatched", "skip")
    err = _refused([*args, "--encoding", "avro"], monkeypatch)
    assert "routing by table reads JSON messages only" in err
    args = _decode(contract, [work / "in.jsonl"], work / "feed", "-c", contract)
    assert "one contract per table" in _refused(args, monkeypatch)
    assert not (work / "feed").exists()


@pytest.mark.parametrize(
    "master", ["bogus://x", "local[0]", "local[]", "local[2]x", "spark://", "yarn-client", ""]
)
def test_bad_master_is_refused_before_spark_starts(
    work: Path, master: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _decode(work / "contract.yaml", [work / "in.jsonl"], work / "feed", "--master", master)
    err = _refused(args, monkeypatch)
    assert f"error: --master: {master!r} is not a Spark master URL" in err
    assert not (work / "feed").exists()


@pytest.mark.parametrize("layout", ["auto", "kcat", "values"])
def test_a_missing_input_is_refused_before_spark_starts(
    work: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README's own ``-i dumps/orders-topic/`` used to start a JVM (21 s of log) first."""
    missing = work / "dumps" / "orders-topic"
    args = _decode(CONTRACT, [SAMPLE, missing], work / "feed", "--input-format", layout)
    err = _refused(args, monkeypatch)
    assert err == f"error: {missing}: no such file\n"
    assert not (work / "feed").exists()


@pytest.mark.parametrize(
    "master",
    [
        "local",
        "local[1]",
        "local[*]",
        "local[4,2]",
        "local[*,3]",
        "local-cluster[2,1,1024]",
        "spark://host:7077",
        "spark://a:7077,b:7077",
        "yarn",
        "k8s://https://host:6443",
    ],
)
def test_master_urls_spark_accepts_pass(master: str) -> None:
    check_master(master)


def test_bad_master_names_the_value() -> None:
    with pytest.raises(InputError, match="'bogus://x' is not a Spark master URL"):
        check_master("bogus://x")


def test_help_documents_overwrite_and_repeated_inputs() -> None:
    result = run("spark", "decode", "--help", env={"COLUMNS": "200"})
    assert result.code == 0
    assert "--overwrite" in result.text
    assert "repeat -i for several" in result.text


# --- runs that decode (the shared Spark session) -----------------------------------------------


def _feed_rows(spark: Any, path: Path) -> int:
    return int(spark.read.parquet(str(path)).count())


@pytest.mark.spark
def test_decode_into_an_existing_empty_directory(
    spark: Any, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _decode(work / "contract.yaml", [work / "in.jsonl"], work / "empty")
    result = run(*args, "--output-format", "json")
    code, out, err = result.code, result.text, result.err
    assert code == 0, err
    summary = json.loads(out)
    assert summary["rows"] > 0
    assert _feed_rows(spark, work / "empty") == summary["rows"]
    assert "warning" not in err


@pytest.mark.spark
def test_overwrite_replaces_a_non_empty_directory(
    spark: Any, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _decode(work / "contract.yaml", [work / "in.jsonl"], work / "keep", "--overwrite")
    result = run(*args, "--output-format", "json")
    code, out, err = result.code, result.text, result.err
    assert code == 0, err
    assert not (work / "keep" / "notes.txt").exists()
    assert _feed_rows(spark, work / "keep") == json.loads(out)["rows"]
    assert (work / "in.jsonl").read_bytes() == SAMPLE.read_bytes()


@pytest.mark.spark
@pytest.mark.parametrize("contents", ["", "\n  \n\n"], ids=["empty", "blank-lines"])
def test_input_without_messages_warns_and_succeeds(
    spark: Any,
    work: Path,
    contents: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nothing = work / "nothing.jsonl"
    nothing.write_text(contents)
    result = run(*_decode(work / "contract.yaml", [nothing], work / "feed"))
    code, out, err = result.code, result.text, result.err
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {nothing}: the input holds no messages; the output has 0 rows"]
    assert "0 rows" in out


@pytest.mark.spark
def test_several_inputs_without_messages_are_named(
    spark: Any, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = work / "a.jsonl", work / "b.jsonl"
    first.write_text("")
    second.write_text("\n")
    args = _decode(
        work / "contract.yaml", [first, second], work / "feed", "--input-format", "values"
    )
    result = run(*args)
    code, err = result.code, result.err
    assert code == 0, err
    assert f"warning: {first}, {second}: the inputs hold no messages" in err
