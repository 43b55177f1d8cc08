"""Every command's ``--help`` reads well at 80 columns, and every flag has one meaning.

The commands are discovered from the app itself, so a command added later is covered without
touching this file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clirun import ROOT, command, run, run_process

from cli import conventions
from cli.main import command as command_tree

PATHS = conventions.command_paths(command_tree())
#: a type label such as <str>, <path>, <bool>, <int range>, <list[Path]>
TYPE_LABEL = re.compile(r"<(?:str|path|bool|int|float|dir|file|list|text|[a-z_]+\[)[^>]*>")
ORDERS = ROOT / "examples" / "topics" / "debezium-json" / "dbserver1.shop.orders.jsonl"


def test_the_tree_is_discovered() -> None:
    names = {" ".join(p) for p in PATHS}
    assert {"", "infer", "registry", "registry plan", "spark decode", "serve"} <= names


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "cdc-contracts")
def test_help_fits_80_columns(path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = run(*path, "--help")
    assert result.code == 0, result.err
    text = result.text
    assert text.startswith(f"Usage: cdc-contracts {' '.join(path)}".rstrip())
    assert "…" not in text, text
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert not too_wide, "\n".join(too_wide)
    assert not TYPE_LABEL.search(text), TYPE_LABEL.search(text)
    assert "(env " not in text and "env ...)" not in text
    assert "╭" not in text  # plain help, no rich panels


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "cdc-contracts")
def test_every_visible_option_says_what_it_does(path: tuple[str, ...]) -> None:
    node = command_tree()
    for name in path:
        node = node.commands[name]
    for param in node.params:
        if param.param_type_name == "option" and not getattr(param, "hidden", False):
            assert (param.help or "").strip(), f"{' '.join(path)} {param.opts}: no help text"


def test_output_is_a_file_and_output_format_is_what_is_written() -> None:
    """``-o/--output`` names a path wherever it exists; ``--output-format`` chooses text/json."""
    for path in PATHS:
        node = command_tree()
        for name in path:
            node = node.commands[name]
        for param in node.params:
            opts = set(param.opts)
            if opts & {"-o", "--output"}:
                assert conventions.metavar(param) in {"FILE", "DIR"}, (path, param.opts)
            if "--output-format" in opts:
                assert "json" in conventions.choices_of(param), (path, param.opts)


def test_help_of_the_installed_script_off_a_terminal() -> None:
    script = command()[0]
    if Path(script).name != "cdc-contracts":
        pytest.skip("the cdc-contracts script is not installed (make install)")
    done = run_process("registry", "plan", "--help", env={"COLUMNS": "80"})
    assert done.code == 0
    assert max(len(line) for line in done.text.splitlines()) <= 80
    assert "--basic-auth USER:PASSWORD" in done.text


# --- old spellings ---------------------------------------------------------------------------


def test_infer_dash_o_json_prints_json_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("infer", ORDERS, "-o", "json")
    assert result.code == 0, result.err
    assert '"contract"' in result.text
    assert not (tmp_path / "json").exists()
    assert "note: -o json is the old spelling of --output-format json" in result.err


def test_a_file_named_like_a_format_is_written_with_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("infer", ORDERS, "-o", "./json")
    assert result.code == 0, result.err
    assert (tmp_path / "json").read_text().startswith("name: ")
    assert "note:" not in result.err


def test_out_is_an_old_spelling_of_output(tmp_path: Path) -> None:
    target = tmp_path / "orders.yaml"
    result = run("infer", ORDERS, "--out", target)
    assert result.code == 0, result.err
    assert target.exists()
    assert "note: --out is deprecated: use --output" in result.err


@pytest.mark.parametrize(
    "args",
    [
        ("diff", "A", "A", "-o", "json"),
        ("diff", "A", "A", "--output=json"),
        ("diff", "A", "A", "-ojson"),
        ("formats", "--output", "json"),
    ],
)
def test_old_output_spellings_still_choose_the_format(args: tuple[str, ...]) -> None:
    contract = str(ROOT / "tests" / "fixtures" / "debezium-json" / "postgres-orders.expected.yaml")
    result = run(*(contract if a == "A" else a for a in args))
    assert result.code == 0, result.err
    assert result.text.lstrip().startswith(("{", "["))
    assert result.err.startswith("note: ") and "--output-format" in result.err.splitlines()[0]


def test_the_rewrite_leaves_values_and_positionals_alone() -> None:
    root = command_tree()
    notes: list[str] = []
    args = ["infer", "--name", "--out", "x.jsonl", "--", "--out"]
    assert conventions.rewrite_argv(root, args, notes.append) == args
    assert notes == []


def test_shell_completion_completes_commands() -> None:
    env = {
        "_CDC_CONTRACTS_COMPLETE": "complete_bash",
        "COMP_WORDS": "cdc-contracts reg",
        "COMP_CWORD": "1",
    }
    done = run_process(env=env)
    assert "registry" in done.text.split()
