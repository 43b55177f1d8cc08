"""The input reader with damaged input: each damaged message is one error at its file:line,
and reading goes on with the next message; the layout (JSON lines, documents, array) comes from
the file's head by the Spark reader's rule, so a damaged line never changes it; byte order
marks are skipped; one-time inputs (pipes) can be read again."""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from contracts.errors import InputError
from contracts.io import (
    HEAD_BYTES,
    _json_layout,
    iter_json_stream,
    open_input,
    read_csv_rows,
    read_json_messages,
    sniff_kind,
)


def read(data: bytes, name: str = "in.jsonl") -> tuple[list[str], list[str]]:
    """(where of each message, each error as one line) for JSON ``data``."""
    errors: list[InputError] = []
    messages = list(iter_json_stream(io.BytesIO(data), name, errors.append))
    return [m.where for m in messages], [e.one_line() for e in errors]


def line(i: int) -> bytes:
    return orjson.dumps({"schema": {"type": "struct"}, "payload": {"id": i, "name": "x" * 20}})


def pretty(i: int) -> bytes:
    return json.dumps({"id": i, "nested": {"a": [1, 2]}}, indent=2).encode() + b"\n"


# --- JSON lines: a damaged line is one error, the next lines are read ---------------------------


@pytest.mark.parametrize(
    ("damaged", "error"),
    [
        (b"garbage here", "in.jsonl:3: malformed JSON: Expecting value (column 1)"),
        (line(3)[:40], "in.jsonl:3: truncated JSON: the line ends inside a document"),
        (b'{"payload": "caf\xe9"}', "in.jsonl:3: input is not UTF-8 text"),
        (line(3) + b"}", f"in.jsonl:3: malformed JSON: Extra data (column {len(line(3)) + 1})"),
    ],
    ids=["garbage", "truncated", "not-utf8", "extra-data"],
)
def test_a_damaged_line_is_reported_and_the_rest_is_read(damaged: bytes, error: str) -> None:
    data = b"\n".join([line(1), line(2), damaged, line(4), line(5)]) + b"\n"
    wheres, errors = read(data)
    assert wheres == ["in.jsonl:1", "in.jsonl:2", "in.jsonl:4", "in.jsonl:5"]
    assert errors == [error]


def test_a_damaged_first_line_does_not_change_the_layout() -> None:
    """As in the Spark reader: the first whole JSON-object line says "JSON lines"."""
    data = b"\n".join([line(1)[:30], line(2), line(3)]) + b"\n"
    assert read(data) == (
        ["in.jsonl:2", "in.jsonl:3"],
        ["in.jsonl:1: truncated JSON: the line ends inside a document"],
    )


def test_several_damaged_lines_blank_lines_and_null_values() -> None:
    data = b"\n".join([line(1), b"", b"{oops", b"null", b"\xff\xfe", b"   ", line(7), b"]"])
    wheres, errors = read(data)
    assert wheres == ["in.jsonl:1", "in.jsonl:4", "in.jsonl:7"]
    assert [e.split(": ")[0] for e in errors] == ["in.jsonl:3", "in.jsonl:5", "in.jsonl:8"]


def test_a_kcat_record_with_a_bad_payload_is_one_error_at_its_line_and_path() -> None:
    def record(offset: int, payload: str) -> bytes:
        return orjson.dumps(
            {"topic": "t", "partition": 0, "offset": offset, "key": None, "payload": payload}
        )

    data = b"\n".join([record(1, '{"a": 1}'), record(2, '{"a": '), record(3, '{"a": 3}')])
    wheres, errors = read(data)
    assert wheres == ["in.jsonl:1", "in.jsonl:3"]
    assert errors == [
        "in.jsonl:2: $.payload: kcat payload is not valid JSON: unexpected end of data"
    ]


def test_without_an_error_callback_the_first_damaged_line_raises() -> None:
    data = b"\n".join([line(1), b"garbage", line(3)])
    with pytest.raises(InputError) as info:
        list(iter_json_stream(io.BytesIO(data), "in.jsonl"))
    assert info.value.where == "in.jsonl:2"


# --- the layout: the Spark reader's rule -----------------------------------------------------------


def test_a_whole_object_line_beyond_the_head_makes_documents() -> None:
    """No whole JSON-object line in the first 64 KiB: concatenated documents (as Spark)."""
    filler = b'{"a": "' + b"x" * (HEAD_BYTES + 10)  # one long truncated line
    data = filler + b"\n" + line(2) + b"\n" + line(3) + b"\n"
    wheres, errors = read(data)
    assert wheres == ["in.jsonl:2", "in.jsonl:3"]
    assert errors == [
        "in.jsonl:1: truncated JSON: the document is cut off before line 2, which opens another"
    ]


def test_the_layout_agrees_with_the_spark_reader(tmp_path: Path) -> None:
    inputs = pytest.importorskip("spark_bindings.inputs")  # imports pyspark, starts no JVM
    cases = {
        "lines": b"\n".join([line(1), line(2)]),
        "damaged-first": b"\n".join([line(1)[:20], line(2)]),
        "indented-first": b"   " + line(1) + b"\n" + line(2),
        "pretty": pretty(1) + pretty(2),
        "lone-brace": b"{\n" + b'"a": 1}\n' + line(2),
        "compact-concatenated": line(1) + line(2) + b"\n",
        "kcat": b'{"topic": "t", "partition": 0, "offset": 1, "payload": null}\n',
    }
    spark_layouts = {"values": "lines", "kcat": "lines", "json": "documents"}
    for label, data in cases.items():
        path = tmp_path / f"{label}.jsonl"
        path.write_bytes(data)
        with path.open("rb") as handle:
            ours = _json_layout(handle, [])
        assert ours == spark_layouts[inputs.sniff(str(path))], label


# --- pretty-printed documents and arrays ------------------------------------------------------


def test_a_malformed_pretty_document_is_skipped_to_the_next_one() -> None:
    bad = b'{\n  "id": 2,\n  "nested": oops\n}\n'
    assert read(pretty(1) + bad + pretty(3)) == (
        ["in.jsonl:1", "in.jsonl:14"],
        ["in.jsonl:12: malformed JSON: Expecting value"],
    )


def test_a_truncated_pretty_document_ends_where_the_next_one_starts() -> None:
    cut = b'{\n  "id": 2,\n  "nested": {\n'
    assert read(pretty(1) + cut + pretty(3)) == (
        ["in.jsonl:1", "in.jsonl:13"],
        [
            "in.jsonl:10: truncated JSON: the document is cut off before line 13, which opens another"
        ],
    )
    assert read(pretty(1) + cut) == (
        ["in.jsonl:1"],
        ["in.jsonl:10: truncated JSON: the document that starts here never ends"],
    )


def test_unindented_documents_with_objects_in_column_0_still_parse() -> None:
    data = b'{\n"a": [\n{\n"b": 2\n},\n{\n"b": 3\n}\n]\n}\n{\n"a": 1\n}\n'
    assert read(data) == (["in.jsonl:1", "in.jsonl:11"], [])
    assert read(b'{\n"a":\n{"b": 1}}\n{\n"a": 2\n}\n') == (["in.jsonl:1", "in.jsonl:4"], [])


def test_an_array_yields_its_elements_up_to_the_damage() -> None:
    good = b"[" + line(1) + b",\n" + line(2) + b"]"
    assert read(good) == (["in.jsonl[0]", "in.jsonl[1]"], [])
    truncated = b"[" + line(1) + b",\n" + line(2) + b",\n" + line(3)[:30]
    assert read(truncated) == (
        ["in.jsonl[0]", "in.jsonl[1]"],
        [
            "in.jsonl:3: truncated JSON array: element 2 never ends (element 2 and the rest of "
            "the array are skipped)"
        ],
    )
    trailing = good + b"\n{}"
    assert read(trailing)[1] == [
        "in.jsonl:3: malformed JSON: text after the array's closing bracket"
    ]


# --- byte order marks -------------------------------------------------------------------------


def test_a_byte_order_mark_is_skipped_in_json_and_csv(tmp_path: Path) -> None:
    bom = b"\xef\xbb\xbf"
    assert read(bom + line(1) + b"\n" + line(2)) == (["in.jsonl:1", "in.jsonl:2"], [])
    assert read(bom + b"[" + line(1) + b"]") == (["in.jsonl[0]"], [])
    assert read(bom + pretty(1)) == (["in.jsonl:1"], [])
    json_file = tmp_path / "bom.jsonl"
    json_file.write_bytes(bom + line(1) + b"\n")
    assert sniff_kind(json_file) == "json"
    csv_file = tmp_path / "bom.csv"
    csv_file.write_bytes(bom + b"r_comment,r_name\r\nx,y\r\n")
    rows = [m.value for m in read_csv_rows(csv_file)]
    assert rows == [["r_comment", "r_name"], ["x", "y"]]


# --- CSV --------------------------------------------------------------------------------------


def test_a_csv_line_that_is_not_utf8_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(b'a,b\r\n"multi\r\nline",2\r\n\r\ncaf\xe9,3\r\nd,4\r\n')
    errors: list[InputError] = []
    rows = [(m.where, m.value) for m in read_csv_rows(path, errors.append)]
    assert rows == [
        (f"{path}:1", ["a", "b"]),
        (f"{path}:2", ["multi\r\nline", "2"]),
        (f"{path}:6", ["d", "4"]),
    ]
    assert [e.one_line() for e in errors] == [f"{path}:5: input is not UTF-8 text"]


# --- opening inputs -------------------------------------------------------------------------------


def test_unusable_paths_are_input_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "f.jsonl"
    a_file.write_bytes(line(1))
    for path, what in [
        (tmp_path, "is a directory, not a file"),
        (tmp_path / "missing.jsonl", "no such file"),
        (a_file / "x.jsonl", "no such file (a directory in its path is a file)"),
    ]:
        with pytest.raises(InputError) as info:
            open_input(path)
        assert (info.value.where, info.value.what) == (str(path), what)


@contextlib.contextmanager
def feeding(fifo: Path, ids: range) -> Iterator[None]:
    """A writer thread feeding ``fifo`` one line per id while the block reads it."""
    data = b"\n".join(line(i) for i in ids) + b"\n"

    def write() -> None:
        with fifo.open("wb") as sink:
            sink.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield
    finally:
        writer.join(timeout=10)


def test_a_fifo_is_read_once_and_replayed(tmp_path: Path) -> None:
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    with feeding(fifo, range(1, 4)):
        assert sniff_kind(fifo) == "json"  # a first pass reads the head
        wheres = [m.where for m in read_json_messages(fifo)]  # the second starts over
    assert wheres == [f"{fifo}:1", f"{fifo}:2", f"{fifo}:3"]


def test_a_fifo_is_read_afresh_after_forgetting(tmp_path: Path) -> None:
    """Within a process a FIFO is replayed (detection, then reading); a program that reads it
    again for new data forgets what was kept first."""
    from contracts.io import forget_one_time_inputs

    fifo = tmp_path / "again.fifo"
    os.mkfifo(fifo)

    def batch(first: int) -> list[int]:
        with feeding(fifo, range(first, first + 2)):
            return [m.value["payload"]["id"] for m in read_json_messages(fifo)]

    assert batch(1) == [1, 2]
    forget_one_time_inputs()
    assert batch(5) == [5, 6]
