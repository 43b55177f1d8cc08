"""``infer``, ``validate``, ``normalize``, ``render``, ``registry pull`` and ``serve`` with
damaged inputs and the mistakes people make with files, through the real entry point.

A damaged message is reported at its file:line and the rest is read (never "all conform");
an output that is an input or the contract is refused before anything is written; a
directory, a path under a file, a pipe, a byte order mark, a busy port: one line and exit 2,
never ``internal error``.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from clirun import Run, run, run_process

ROOT = Path(__file__).parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DBZ = FIXTURES / "debezium-json" / "flink-debezium-data-schema-include.txt"
DBZ_CONTRACT = FIXTURES / "debezium-json" / "flink.expected.yaml"
KCAT = FIXTURES / "debezium-json" / "postgres-orders.kcat.jsonl"
KCAT_CONTRACT = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"
REGION = FIXTURES / "arcion-s3-csv" / "realtime-region.csv"
REGION_CONTRACT = FIXTURES / "arcion-s3-csv" / "realtime-region.expected.yaml"


def one_error_line(result: Run) -> str:
    """The run printed exactly one line, an ``error:`` line, and no traceback."""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    return lines[0]


def dbz_lines() -> list[bytes]:
    return [raw for raw in DBZ.read_bytes().splitlines() if raw.strip()]


def damaged_copy(tmp_path: Path, replace: dict[int, bytes], name: str = "damaged.jsonl") -> Path:
    """The Debezium sample with lines replaced (1-based)."""
    lines = dbz_lines()
    for number, text in replace.items():
        lines[number - 1] = text
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# --- bug 4: a damaged line is reported and the next ones are read ---------------------------------


@pytest.mark.parametrize(
    ("damage", "error"),
    [
        (b"garbage here", "malformed JSON: Expecting value (column 1)"),
        (b'{"schema":{"type":"struct","fields":[{"type":', "truncated JSON"),
        (b'{"payload": "caf\xe9"}', "input is not UTF-8 text"),
    ],
    ids=["garbage", "truncated", "not-utf8"],
)
def test_validate_reports_a_damaged_line_and_checks_the_rest(
    tmp_path: Path, damage: bytes, error: str
) -> None:
    total = len(dbz_lines())
    path = damaged_copy(tmp_path, {3: damage})
    result = run("validate", DBZ_CONTRACT, path)
    assert result.code == 2
    assert result.text == ""
    assert len(result.errors()) == 1
    assert result.errors()[0].startswith(f"error: {path}:3: {error}")
    summary = result.err.strip().splitlines()[-1]
    assert summary.startswith(f"{total - 1} messages checked against ")
    assert "1 unusable input (errors above)" in summary
    assert "all conform" not in result.err


def test_normalize_and_infer_read_past_a_damaged_line(tmp_path: Path) -> None:
    total = len(dbz_lines())
    path = damaged_copy(tmp_path, {2: b"garbage here"})
    events = tmp_path / "events.jsonl"
    result = run("normalize", path, "-c", DBZ_CONTRACT, "-o", events)
    assert result.code == 2
    assert result.errors() == [f"error: {path}:2: malformed JSON: Expecting value (column 1)"]
    expected = (FIXTURES / "debezium-json" / "flink.events.jsonl").read_text().splitlines()
    written = [json.loads(e) for e in events.read_text().splitlines()]
    assert written == [json.loads(e) for e in expected[:1] + expected[2:]]  # all but line 2's
    assert "1 unusable input (errors above)" in result.err

    contract = tmp_path / "inferred.yaml"
    inferred = run("infer", path, "-o", contract)
    assert inferred.code == 2
    assert inferred.errors() == result.errors()
    assert f"from {total - 1} messages" in inferred.err
    assert contract.exists()


def test_a_kcat_record_with_a_bad_payload_is_counted_and_the_next_records_read(
    tmp_path: Path,
) -> None:
    records = [json.loads(raw) for raw in KCAT.read_text().splitlines() if raw.strip()]
    records[1]["payload"] = '{"schema": '
    path = tmp_path / "kcat.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    result = run("validate", KCAT_CONTRACT, path)
    assert result.code == 2
    assert result.errors() == [
        f"error: {path}:2: $.payload: kcat payload is not valid JSON: unexpected end of data"
    ]
    assert f"{len(records) - 1} messages checked" in result.err
    assert "all conform" not in result.err


# --- bug 5: an output that is an input or the contract is refused ---------------------------------


def test_normalize_refuses_to_write_onto_an_input_however_named(tmp_path: Path) -> None:
    sample = tmp_path / "sample.jsonl"
    sample.write_bytes(DBZ.read_bytes())
    (tmp_path / "link.jsonl").symlink_to(sample)
    os.link(sample, tmp_path / "hard.jsonl")
    contract = tmp_path / "c.yaml"
    contract.write_bytes(DBZ_CONTRACT.read_bytes())
    for target in ["sample.jsonl", "./link.jsonl", "hard.jsonl", "sub/../sample.jsonl"]:
        (tmp_path / "sub").mkdir(exist_ok=True)
        result = run("normalize", sample, "-o", tmp_path / target)
        assert result.code == 2
        assert "which this run reads" in one_error_line(result)
    result = run("normalize", sample, "-c", contract, "-o", contract)
    assert result.code == 2 and f"is {contract}, which this run reads" in one_error_line(result)
    assert sample.read_bytes() == DBZ.read_bytes()
    assert contract.read_bytes() == DBZ_CONTRACT.read_bytes()


def test_infer_and_render_refuse_to_write_onto_their_input(tmp_path: Path) -> None:
    sample = tmp_path / "sample.jsonl"
    sample.write_bytes(DBZ.read_bytes())
    contract = tmp_path / "c.yaml"
    contract.write_bytes(DBZ_CONTRACT.read_bytes())
    assert run("infer", sample, "-o", sample).code == 2
    result = run("render", contract, "--to", "avro", "-o", contract)
    assert result.code == 2
    assert one_error_line(result) == (
        f"error: --output {contract}: is {contract}, which this run reads: writing there "
        "would destroy it; choose another output file"
    )
    assert sample.read_bytes() == DBZ.read_bytes()
    assert contract.read_bytes() == DBZ_CONTRACT.read_bytes()


# --- bug 6: common mistakes are one line and exit 2 -----------------------------------------------


def test_a_directory_as_input_or_output(tmp_path: Path) -> None:
    folder = tmp_path / "adir"
    folder.mkdir()
    for args in (["infer", folder], ["normalize", folder]):
        result = run(*args)
        assert result.code == 2
        assert one_error_line(result) == f"error: {folder}: is a directory, not a file"
    checked = run("validate", DBZ_CONTRACT, folder)
    assert checked.code == 2
    assert checked.errors() == [f"error: {folder}: is a directory, not a file"]
    for args in (
        ["infer", DBZ, "-o", folder],
        ["normalize", DBZ, "-o", folder],
        ["render", DBZ_CONTRACT, "--to", "avro", "-o", folder],
    ):
        result = run(*args)
        assert result.code == 2
        assert one_error_line(result).endswith(f" {folder}: is a directory: give a file name")


def test_an_output_under_a_file(tmp_path: Path) -> None:
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    result = run("infer", DBZ, "-o", a_file / "x.yaml")
    assert result.code == 2
    assert (
        one_error_line(result)
        == f"error: --output {a_file / 'x.yaml'}: {a_file} is not a directory"
    )
    pulled = run("registry", "pull", "--url", "http://127.0.0.1:9", "-o", a_file)
    assert pulled.code == 2
    assert one_error_line(pulled) == (
        f"error: --output {a_file}: is a file: give a directory for the contract files"
    )


def test_an_invalid_contract_name(tmp_path: Path) -> None:
    for name in ("bad name/x", ""):
        result = run("infer", DBZ, "--name", name)
        assert result.code == 2
        assert one_error_line(result).startswith(
            f"error: --name: invalid contract name {name!r}: use letters"
        )


@pytest.mark.parametrize("name", ["-", "/dev/stdin"])
def test_standard_input_is_read_as_a_file(name: str) -> None:
    data = DBZ.read_bytes()
    total = len(dbz_lines())
    checked = run_process("validate", DBZ_CONTRACT, name, stdin=data)
    assert checked.code == 0, checked.err
    assert f"{total} messages checked" in checked.err and "all conform" in checked.err
    inferred = run_process("infer", name, stdin=data)  # sniffed, detected, then read again
    assert inferred.code == 0, inferred.err
    assert inferred.text == run("infer", DBZ).text
    normalized = run_process("normalize", name, stdin=data)
    assert normalized.code == 0 and len(normalized.text.splitlines()) == total


def test_damaged_standard_input_is_located_as_stdin() -> None:
    lines = dbz_lines()
    data = b"\n".join([lines[0], b"oops", *lines[1:]]) + b"\n"
    result = run_process("validate", DBZ_CONTRACT, "-", stdin=data)
    assert result.code == 2
    assert result.errors() == ["error: <stdin>:2: malformed JSON: Expecting value (column 1)"]
    twice = run_process("validate", DBZ_CONTRACT, "-", "-", stdin=data)
    assert twice.code == 2 and "given more than once" in one_error_line(twice)


def test_serve_refuses_an_unusable_registry_database(tmp_path: Path) -> None:
    folder = tmp_path / "adir"
    folder.mkdir()
    result = run_process("serve", "--port", "0", "--registry-db", folder)
    assert result.code == 2
    assert one_error_line(result) == (
        f"error: --registry-db {folder}: is a directory: give an SQLite file name"
    )
    result = run_process("serve", "--port", "0", "--registry-db", DBZ)
    assert result.code == 2
    assert one_error_line(result) == (
        f"error: --registry-db {DBZ}: is not an SQLite database (the embedded registry's file)"
    )


# --- bug 15: a busy port ----------------------------------------------------------------------------


def test_serve_on_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run_process(
            "serve", "--port", port, "--registry-db", tmp_path / "r.db", cwd=tmp_path
        )
    assert result.code == 2
    assert one_error_line(result) == (
        f"error: port {port} is in use on 127.0.0.1: stop what listens there, or pass --port N"
    )


# --- bug 13: normalize and validate agree on arcion-s3-csv modes --------------------------------


def test_a_snapshot_row_in_a_realtime_contract_is_refused_by_both(tmp_path: Path) -> None:
    rows = REGION.read_text().splitlines()
    path = tmp_path / "region.csv"
    path.write_text("\n".join([rows[0], "a,b,c", *rows[1:]]) + "\n")
    checked = run("validate", REGION_CONTRACT, path)
    assert checked.code == 1
    assert checked.text.splitlines() == [f"{path}:2: $: a snapshot row in a realtime contract"]
    normalized = run("normalize", path, "-c", REGION_CONTRACT)
    assert normalized.code == 1
    assert normalized.errors() == [f"error: {path}:2: $: a snapshot row in a realtime contract"]
    assert len(normalized.text.splitlines()) == len(rows)


# --- bug 16: byte order marks ------------------------------------------------------------------------


def test_files_with_a_byte_order_mark(tmp_path: Path) -> None:
    bom = b"\xef\xbb\xbf"
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes(bom + DBZ.read_bytes())
    inferred = run("infer", jsonl, "--name", "x")
    assert inferred.code == 0, inferred.err
    assert "(debezium-json)" in inferred.err
    assert run("validate", DBZ_CONTRACT, jsonl).code == 0
    csv_file = tmp_path / "region.csv"
    header = b"r_comment_NEW_VAL,r_comment_OLD_VAL,r_comment_EXISTS_VAL,r_name_NEW_VAL,"
    header += b"r_name_OLD_VAL,r_name_EXISTS_VAL,r_regionkey_NEW_VAL,r_regionkey_OLD_VAL,"
    header += b"r_regionkey_EXISTS_VAL,opType,cursor,operationcount\n"
    csv_file.write_bytes(bom + header + REGION.read_bytes())
    result = run("infer", csv_file, "--name", "region")
    assert result.code == 0, result.err
    assert "column_order: [r_comment, r_name, r_regionkey]" in result.text
    assert "\ufeff" not in result.text


# --- bug 17: --max-errors stops after N violations -------------------------------------------------


def test_max_errors_counts_violations_in_text_and_json(tmp_path: Path) -> None:
    other = FIXTURES / "debezium-json" / "postgres-orders.expected.yaml"
    text = run("validate", other, DBZ, "--max-errors", "3")
    assert text.code == 1
    assert len(text.text.splitlines()) == 3
    assert "(3 violations) (stopped at --max-errors 3" in text.err
    as_json = json.loads(
        run("validate", other, DBZ, "--max-errors", "3", "--output-format", "json").text
    )
    assert len(as_json["problems"]) == 3 and as_json["stopped_early"] is True
    unbounded = json.loads(run("validate", other, DBZ, "--output-format", "json").text)
    assert len(unbounded["problems"]) > 3 and unbounded["stopped_early"] is False


def test_max_errors_counts_damaged_lines_too(tmp_path: Path) -> None:
    path = damaged_copy(tmp_path, {2: b"x", 4: b"y", 6: b"z"})
    result = run("validate", DBZ_CONTRACT, path, "--max-errors", "2")
    assert result.code == 2
    assert [e.split(":")[2] for e in result.errors()] == ["2", "4"]
    assert "stopped at --max-errors 2" in result.err


# --- nits 3, 5, 6, 13: locations, summaries, JSON fields, names -------------------------------------


def test_errors_from_a_format_are_located_file_line_path(tmp_path: Path) -> None:
    path = damaged_copy(tmp_path, {2: b"42"})
    result = run("infer", path, "-f", "debezium-json")
    assert result.code == 1  # a bad message: left out, the contract inferred from the others
    first, *rest = result.err.splitlines()
    assert first.startswith(f"error: {path}:2: $: expected a debezium-json")
    assert (
        rest[-1]
        == "1 bad message (errors above): the contract is inferred from the other 15 messages"
    )


def test_validate_summary_counts_in_the_singular(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_bytes(dbz_lines()[0] + b"\n")
    result = run("validate", DBZ_CONTRACT, path)
    assert result.code == 0
    assert result.err.strip().startswith("1 message checked against ")


def test_validate_json_has_the_documented_fields(tmp_path: Path) -> None:
    path = damaged_copy(tmp_path, {3: b"garbage"})
    report = json.loads(run("validate", DBZ_CONTRACT, path, "--output-format", "json").text)
    assert list(report) == [
        "contract",
        "valid",
        "messages",
        "bad_messages",
        "problems",
        "unusable_input",
        "stopped_early",
    ]
    assert report["valid"] is False
    assert report["unusable_input"] == [
        {
            "where": f"{path}:3",
            "path": None,
            "message": "malformed JSON: Expecting value (column 1)",
        }
    ]


def test_infer_names_a_csv_contract_after_its_file(tmp_path: Path) -> None:
    path = tmp_path / "tpch.region.csv"
    path.write_bytes(REGION.read_bytes())
    result = run("infer", path)
    assert result.code == 0, result.err
    assert result.text.startswith(
        "name: tpch.region\nformat: arcion-s3-csv\ntable:\n  name: tpch.region"
    )
    assert "named after tpch.region.csv" in result.err
    piped = run_process("infer", "-", stdin=REGION.read_bytes())
    assert piped.code == 2
    assert one_error_line(piped) == (
        "error: <stdin>: the messages name no table, so the contract needs a name: pass --name NAME"
    )
