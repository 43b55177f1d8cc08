"""Comparing a directory of contract files with a baseline (a git ref, or a registry).

:func:`git_baseline` reads every contract file under a directory as it was at a git ref, in one
``git cat-file --batch`` call; :func:`compare_catalog` diffs each current file with its baseline
text and reports added and removed contracts. :class:`LineIndex` finds the line to annotate for a
finding (the column's entry, or the ``key:``/``format:``/``topic:`` line).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from contracts.contract import CompatibilityLevel, Contract, parse_contract
from contracts.diff.engine import diff_sides
from contracts.diff.model import DiffResult, Finding
from contracts.diff.report import Entry
from contracts.diff.rules import RULES_BY_ID
from contracts.diff.side import Side
from contracts.errors import ContractFileError, InputError

CONTRACT_SUFFIXES: Final = (".yaml", ".yml")
_CONTRACT_KEYS: Final = frozenset({"columns", "format"})
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# --- reading contracts fast ------------------------------------------------------------------


def read_contract(text: str, source: str) -> Contract | None:
    """The contract in ``text``; None when the YAML is not a contract (no columns/format).

    Uses libyaml when available; on any problem it re-parses with :func:`parse_contract`,
    whose errors name the file and line.
    """
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        return parse_contract(text, source)
    if not isinstance(data, dict) or not data.keys() >= _CONTRACT_KEYS:
        return None
    try:
        return Contract.model_validate(data)
    except Exception:
        return parse_contract(text, source)


class LineIndex:
    """Lines of a contract file's top-level keys and columns (built once per file)."""

    def __init__(self, text: str) -> None:
        self.keys: dict[str, int] = {}
        self.columns: dict[str, int] = {}
        try:
            node = yaml.compose(text, Loader=_LOADER)
        except yaml.YAMLError:
            return
        if not isinstance(node, yaml.MappingNode):
            return
        for k, v in node.value:
            self.keys[str(k.value)] = k.start_mark.line + 1
            if k.value == "columns" and isinstance(v, yaml.SequenceNode):
                for item in v.value:
                    if isinstance(item, yaml.MappingNode):
                        for ck, cv in item.value:
                            if ck.value == "field" and isinstance(cv, yaml.ScalarNode):
                                self.columns[str(cv.value)] = item.start_mark.line + 1

    def line(self, finding: Finding) -> int | None:
        """The line a finding points at: its column, else the top-level key it concerns."""
        if finding.column and finding.column in self.columns:
            return self.columns[finding.column]
        top = finding.path.split(".", 1)[0]
        return self.keys.get(top) or self.keys.get("columns") or 1

    @classmethod
    def of_file(cls, path: str | Path) -> LineIndex:
        try:
            return cls(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return cls("")


# --- git ---------------------------------------------------------------------------------------


def _git(args: Sequence[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise InputError("git is not installed", str(cwd)) from None
    if done.returncode != 0:
        problem = done.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(
            f"git {args[0]} failed: {problem[-1] if problem else 'exit ' + str(done.returncode)}",
            str(cwd),
        )
    return done.stdout


@dataclass(frozen=True, slots=True)
class GitBaseline:
    """Contract files under a directory at a git ref: paths relative to the repository root."""

    root: Path
    prefix: str
    ref: str
    texts: Mapping[str, str]


def git_baseline(directory: str | Path, ref: str) -> GitBaseline:
    """Every ``*.yaml``/``*.yml`` file under ``directory`` as it was at ``ref``."""
    d = Path(directory).resolve()
    if not d.is_dir():
        raise InputError("not a directory", str(directory))
    root = Path(_git(["rev-parse", "--show-toplevel"], d).decode().strip())
    prefix = _git(["rev-parse", "--show-prefix"], d).decode().strip()
    _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root)
    listing = _git(["ls-tree", "-r", "-z", "--name-only", ref, "--", prefix or "."], root)
    paths = [
        p
        for p in listing.decode("utf-8", errors="replace").split("\0")
        if p.endswith(CONTRACT_SUFFIXES)
    ]
    return GitBaseline(root, prefix, ref, _cat_files(root, ref, paths))


def _cat_files(root: Path, ref: str, paths: list[str]) -> dict[str, str]:
    """File texts at ``ref`` in one ``git cat-file --batch`` run."""
    if not paths:
        return {}
    request = "".join(f"{ref}:{p}\n" for p in paths).encode()
    out = _git(["cat-file", "--batch"], root, stdin=request)
    texts: dict[str, str] = {}
    pos = 0
    for p in paths:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # missing or not a blob
        size = int(header[2])
        texts[p] = out[pos : pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return texts


def current_files(directory: str | Path, root: Path) -> dict[str, Path]:
    """Contract-like files under ``directory`` now, keyed by path relative to ``root``."""
    d = Path(directory).resolve()
    out: dict[str, Path] = {}
    for p in sorted(d.rglob("*")):
        if p.suffix not in CONTRACT_SUFFIXES or not p.is_file():
            continue
        rel = p.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        out[rel.as_posix()] = p
    return out


# --- comparing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CatalogResult:
    """The entries of a ``check`` run, and YAML files skipped because they are not contracts."""

    entries: list[Entry]
    skipped: list[str]


def compare_catalog(
    files: Mapping[str, Path],
    baseline: Mapping[str, str],
    level: CompatibilityLevel | None = None,
) -> CatalogResult:
    """Diff each current file with its baseline text; report added and removed contracts."""
    entries: list[Entry] = []
    skipped: list[str] = []
    for rel in sorted(set(files) | set(baseline)):
        path = files.get(rel)
        new_text = _read(path) if path is not None else None
        old_text = baseline.get(rel)
        if new_text is not None and new_text == old_text:
            unchanged = _unchanged_entry(rel, new_text, level)  # no parsing for untouched files
            if unchanged is None:
                skipped.append(rel)
            else:
                entries.append(unchanged)
            continue
        new = read_contract(new_text, rel) if new_text is not None else None
        old = _old_contract(old_text, rel)
        if new is None and old is None:
            if new_text is not None:
                skipped.append(rel)
            continue
        entries.append(_entry(rel, old, new, old_text == new_text, new_text, level))
    return CatalogResult(entries, skipped)


_NAME_LINE: Final = re.compile(r"^name:[ \t]*['\"]?([^'\"\n#]+?)['\"]?[ \t]*$", re.MULTILINE)
_COMPAT_LINE: Final = re.compile(r"^compatibility:[ \t]*([A-Z_]+)[ \t]*$", re.MULTILINE)


def _unchanged_entry(rel: str, text: str, level: CompatibilityLevel | None) -> Entry | None:
    """An ``unchanged`` entry for a file whose text equals its baseline (None: not a contract)."""
    if not re.search(r"^columns:", text, re.MULTILINE) or not re.search(
        r"^format:", text, re.MULTILINE
    ):
        return None
    name = _NAME_LINE.search(text)
    compat = _COMPAT_LINE.search(text)
    known = {lv.value for lv in CompatibilityLevel}
    said = compat.group(1) if compat and compat.group(1) in known else "BACKWARD"
    lvl = level or CompatibilityLevel(said)
    return Entry(name.group(1) if name else rel, rel, "unchanged", DiffResult(lvl, True))


def _old_contract(text: str | None, rel: str) -> Contract | None:
    if text is None:
        return None
    try:
        return read_contract(text, f"{rel} (baseline)")
    except ContractFileError:
        return None  # a broken baseline file: treat the contract as added


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("contract file is not UTF-8 text", str(path)) from None


def _entry(
    rel: str,
    old: Contract | None,
    new: Contract | None,
    same_text: bool,
    new_text: str | None,
    level: CompatibilityLevel | None,
) -> Entry:
    if new is None:
        assert old is not None
        return Entry(old.name, rel, "removed", catalog_result("contract-removed", old, level))
    lines = LineIndex(new_text or "").line
    if old is None:
        return Entry(new.name, rel, "added", catalog_result("contract-added", new, level), lines)
    if same_text:
        return Entry(new.name, rel, "unchanged", DiffResult(level or new.compatibility, True))
    result = diff_sides(Side.of_contract(old, rel), Side.of_contract(new, rel), level)
    return Entry(new.name, rel, "changed", result, lines)


def catalog_result(
    rule_id: str, contract: Contract, level: CompatibilityLevel | None
) -> DiffResult:
    """A result holding one catalog finding (contract added or removed)."""
    findings = list(RULES_BY_ID[rule_id].check(contract.name))
    return DiffResult(level or contract.compatibility, True, findings)


def compare_with_history(
    contracts: Iterable[tuple[str, Contract, str]],
    previous: Callable[[Contract], list[Contract]],
    level: CompatibilityLevel | None = None,
) -> list[Entry]:
    """Diff each ``(file, contract, text)`` with its registered versions (oldest first)."""
    entries: list[Entry] = []
    for rel, contract, text in contracts:
        history = previous(contract)
        lines = LineIndex(text).line
        if not history:
            result = catalog_result("contract-added", contract, level)
            entries.append(Entry(contract.name, rel, "added", result, lines))
            continue
        sides = [Side.of_contract(c, f"{rel} (registered v{i + 1})") for i, c in enumerate(history)]
        result = diff_sides(sides[-1], Side.of_contract(contract, rel), level, history=sides)
        entries.append(Entry(contract.name, rel, "changed", result, lines))
    return entries
