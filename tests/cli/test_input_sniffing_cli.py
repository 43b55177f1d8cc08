"""What the CLI makes of inputs that are not plain UTF-8 JSON or CSV (issue #27 item 2): a kcat
capture with its ``%`` status lines, gzip/zstd files and standard input, UTF-16/32 text, SQL
DDL; through the real CLI on real files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from clirun import ROOT, run, run_process

KCAT = ROOT / "tests/fixtures/debezium-json/postgres-orders.kcat.jsonl"
SUMMARY = (
    "normalized 7 messages: 5 change events, control records: message 1, tombstone 1, "
    "bad messages: 0"
)


def kcat_capture(tmp_path: Path) -> Path:
    """kcat's output with its standard error captured too: ``%`` lines around the records."""
    path = tmp_path / "orders.txt"
    path.write_bytes(
        b"% Auto-selecting Consumer mode (use -P or -C to override)\n"
        + KCAT.read_bytes()
        + b"% Reached end of topic pgserver1.public.orders [0] at offset 7\n"
    )
    return path


def normalized(path: Path) -> tuple[int, bytes, str]:
    done = run("normalize", path)
    return done.code, done.out, done.err


def test_a_kcat_capture_with_status_lines_is_kcat_json_not_csv(tmp_path: Path) -> None:
    path = kcat_capture(tmp_path)
    inferred = run("infer", path, "--name", "orders", "-o", "-")
    assert inferred.code == 0, inferred.err
    assert b"format: debezium-json" in inferred.out
    code, out, err = normalized(path)
    assert (code, err.strip().splitlines()[-1]) == (0, SUMMARY)
    assert out == normalized(KCAT)[1]


def test_gzip_and_utf16_inputs_are_read_as_the_plain_file(tmp_path: Path) -> None:
    plain = kcat_capture(tmp_path)
    want = normalized(plain)[1]
    text = plain.read_text("utf-8")
    variants = {
        "orders.txt.gz": gzip.compress(plain.read_bytes()),
        "orders-16le.txt": text.encode("utf-16"),  # BOM first, little-endian
        "orders-16be.txt": b"\xfe\xff" + text.encode("utf-16-be"),
        "orders-32.txt": text.encode("utf-32"),
        "orders-16.gz": gzip.compress(text.encode("utf-16")),
    }
    for name, data in variants.items():
        path = tmp_path / name
        path.write_bytes(data)
        code, out, err = normalized(path)
        assert (code, out) == (0, want), (name, err)
        assert err.strip().splitlines()[-1] == SUMMARY


def test_gzip_on_standard_input_is_read_too() -> None:
    done = run_process("normalize", "-", stdin=gzip.compress(KCAT.read_bytes()), cwd=None)
    assert done.code == 0, done.err
    assert done.out == normalized(KCAT)[1]


def test_a_damaged_gzip_file_is_one_error_after_what_it_could_read(tmp_path: Path) -> None:
    data = gzip.compress(KCAT.read_bytes())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) - 40])
    code, _, err = normalized(path)
    assert code == 2
    assert f"error: {path}: the gzip data is cut short (the file ends inside it)" in err
    assert "Traceback" not in err


def test_utf16_that_does_not_decode_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\xff\xfe" + '{"a": 1}\n'.encode("utf-16-le") + b"\x00\xdc")  # lone low
    code, _, err = normalized(path)
    assert code == 2
    assert f"error: {path}: is not UTF-16 text" in err and "Traceback" not in err


def test_zstd_is_read_when_zstandard_is_installed(tmp_path: Path) -> None:
    zstandard = pytest.importorskip(
        "zstandard", reason="zstandard not installed: zstd input not exercised here"
    )
    path = tmp_path / "orders.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(KCAT.read_bytes()))
    assert normalized(path)[:2] == normalized(KCAT)[:2]


def test_zstd_without_zstandard_says_to_install_it(tmp_path: Path) -> None:
    path = tmp_path / "orders.jsonl.zst"
    # a zstd frame header: the refusal is decided from the magic number, before any decoding
    path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)
    hidden = ["import sys", "sys.modules['zstandard'] = None"]
    done = run_process("normalize", path, python=hidden)
    assert done.code == 2
    assert done.err == (
        f"error: {path}: is zstd-compressed: install the [zstd] extra to read it "
        "(pip install 'cdc-contracts[zstd]'), or decompress it first (zstd -d)\n"
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("orders.sql", "-- the orders table\nCREATE TABLE orders (id INT PRIMARY KEY, n TEXT);\n"),
        ("orders.txt", "/* dump */\nSET NAMES utf8mb4;\ncreate table orders (id int);\n"),
        ("orders.ddl", "ALTER TABLE orders ADD COLUMN note TEXT, ADD COLUMN x INT;\n"),
    ],
)
def test_sql_ddl_is_refused_naming_derive(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    for args in (["infer", path, "--name", "orders"], ["normalize", path]):
        done = run(*args)
        assert (done.code, done.err) == (
            2,
            f"error: {path}: this looks like SQL DDL; derive a contract with "
            "`cdc-contracts derive --from-ddl FILE`\n",
        ), args


def test_a_csv_header_named_like_a_keyword_is_still_csv(tmp_path: Path) -> None:
    from contracts.io import sniff_kind

    path = tmp_path / "rows.csv"
    path.write_text("set,create,drop\n1,2,3\n")
    assert sniff_kind(path) == "csv"


# --- a wrong --format: identical errors collapse, naming the format the input looks like ------

CANAL = ROOT / "tests/fixtures/canal-json/dts-ddl.json"
DEBEZIUM_CONTRACT = ROOT / "tests/fixtures/debezium-json/flink.expected.yaml"
OP_ERROR = "$.payload.op: unknown op code None (expected c, u, d, r, t or m)"


def canal_messages(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "canal.jsonl"
    one = b" ".join(CANAL.read_bytes().split()) + b"\n"  # one document per line
    path.write_bytes(one * count)
    return path


def test_a_wrong_format_prints_ten_errors_and_one_line_for_the_rest(tmp_path: Path) -> None:
    path = canal_messages(tmp_path, 300)
    done = run("normalize", path, "--format", "debezium-json")
    assert done.code == 1
    lines = done.err.splitlines()
    assert lines[:10] == [f"error: {path}:{i}: {OP_ERROR}" for i in range(1, 11)]
    assert lines[10:] == [
        f"… 290 more like this ({OP_ERROR}); the input looks like canal-json, not debezium-json",
        "normalized 300 messages: 0 change events, control records: none, bad messages: 300",
    ]


def test_identical_errors_of_a_detected_format_collapse_without_a_hint(tmp_path: Path) -> None:
    path = canal_messages(tmp_path, 12)
    done = run("normalize", path)  # detected canal-json: DDL messages are control records
    assert done.code == 0 and "more like this" not in done.err
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b'{"a": \n' * 15)
    done = run("normalize", broken, "--format", "canal-json")
    assert done.code == 2
    # numbers in the text (here the next line's) do not make errors different; the last one is
    assert sum(line.startswith("error:") for line in done.err.splitlines()) == 11
    assert "… 4 more like this (truncated JSON: the document is cut off before line 2" in done.err
    assert "looks like" not in done.err  # detection finds no format in it


def test_validate_collapses_its_text_output_but_json_keeps_every_problem(tmp_path: Path) -> None:
    path = canal_messages(tmp_path, 40)
    text = run("validate", DEBEZIUM_CONTRACT, path)
    shown = text.out.decode().splitlines()
    assert text.code == 1 and len(shown) == 11
    assert shown[10].startswith("… 30 more like this (")
    assert shown[10].endswith("; the input looks like canal-json, not debezium-json")
    as_json = run("validate", DEBEZIUM_CONTRACT, path, "--output-format", "json")
    problems = json.loads(as_json.out)["problems"]
    assert as_json.code == 1 and len(problems) == 40 and "more like this" not in as_json.err
