"""Messages say what and where in the tool's own words: no library internals (pydantic's
"Value error,", a "(top level)" location, uvicorn's own start-up error and exit 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import run


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("nosuchhost.invalid", "cannot listen on host 'nosuchhost.invalid'"),
        ("10.255.255.1", "cannot listen on '10.255.255.1': it is not an address of this machine"),
        ("http://x", "cannot listen on host 'http://x'"),
        ("", "give an interface address or name"),
    ],
)
def test_serve_with_a_bad_host_is_one_line_and_exit_2(host: str, says: str, tmp_path: Path) -> None:
    for port in ("0", "18555"):
        result = run("serve", "--host", host, "--port", port, "--registry-db", tmp_path / "r.db")
        assert result.code == 2, result.err
        assert result.err.startswith("error: --host: ") and says in result.err
        assert len(result.err.strip().splitlines()) == 1  # no uvicorn log, no traceback


def _contract(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text("name: t\nformat: debezium-json\ntable: {name: t}\n" + body)
    return path


def test_a_contract_level_error_is_located_at_its_key(tmp_path: Path) -> None:
    path = _contract(tmp_path, "key: [nope]\ncolumns: [{field: id, type: int32}]\n")
    result = run("render", path, "--to", "avro")
    assert result.code == 2
    assert result.err == f"error: {path}:4: key: key column(s) nope are not among the columns\n"


def test_a_column_error_names_the_column_once(tmp_path: Path) -> None:
    path = _contract(tmp_path, "columns: [{field: id, type: int32}, {field: id, type: int32}]\n")
    result = run("render", path, "--to", "avro")
    assert result.err == f"error: {path}:4: columns.1: duplicate column 'id'\n"
    assert "Value error" not in result.err and "top level" not in result.err
