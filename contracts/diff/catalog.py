"""Comparing a directory of contract files with a baseline (a git ref, or a registry).

The current side is the working tree (:func:`worktree_texts`) or the git index
(:func:`staged_texts`, what a commit would record); :func:`git_baseline` reads every contract
file under the directory as it was at a git ref. Each side is read in one ``git cat-file
--batch`` call. :func:`compare_catalog` diffs each current contract with the baseline's
contract of the same name, wherever its file is, and reports added and removed contracts;
:func:`compare_with_history` diffs each file with the versions a registry holds.

Every ``*.yaml``/``*.yml`` file under the directory must be a contract: a file that does not
load is an error naming its line (``check`` exits 2), never a silently skipped or "removed"
contract. A baseline file that does not load is an error naming the ref, unless the file is gone
now, which is reported as a note (:attr:`CatalogResult.skipped`).
"""

from __future__ import annotations

import posixpath
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from contracts.config import CONFIG_NAME
from contracts.contract import CompatibilityLevel, Contract
from contracts.diff.engine import effective_level
from contracts.diff.loading import LineIndex, LoadedContract, load_contract_text, read_contract
from contracts.diff.model import DiffResult
from contracts.diff.report import Entry
from contracts.diff.side import Side
from contracts.diff.verdict import (
    ExceptionPolicy,
    FailOn,
    catalog_result,
    contract_verdict,
    removed_verdict,
)
from contracts.errors import ContractFileError, ContractsError, InputError

__all__ = [
    "CONTRACT_SUFFIXES",
    "CatalogResult",
    "GitBaseline",
    "LineIndex",
    "catalog_result",
    "compare_catalog",
    "compare_with_history",
    "git_baseline",
    "read_contract",
    "staged_texts",
    "worktree_texts",
]

CONTRACT_SUFFIXES: Final = (".yaml", ".yml")
_SYMLINK: Final = b"120000"
_GITLINK: Final = b"160000"


def _is_contract_path(rel: str) -> bool:
    """A ``*.yaml``/``*.yml`` path outside hidden directories (``.github/``, ``.cdc-contracts/``),
    and not the project configuration (``cdc-contracts.yaml``)."""
    parts = rel.split("/")
    return (
        rel.endswith(CONTRACT_SUFFIXES)
        and parts[-1] != CONFIG_NAME
        and not any(part.startswith(".") for part in parts)
    )


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
class GitRepo:
    """The repository holding a directory: its root, and the directory relative to it."""

    root: Path
    prefix: str  # "contracts/" (empty for the root itself)


def git_repo(directory: str | Path) -> GitRepo:
    d = Path(directory).resolve()
    if not d.is_dir():
        raise InputError("not a directory" if d.exists() else "no such directory", str(directory))
    root = Path(_git(["rev-parse", "--show-toplevel"], d).decode().strip())
    prefix = _git(["rev-parse", "--show-prefix"], d).decode().strip()
    return GitRepo(root, prefix)


@dataclass(frozen=True, slots=True)
class GitBaseline:
    """Contract files under a directory at a git ref: paths relative to the repository root."""

    root: Path
    prefix: str
    ref: str
    texts: Mapping[str, bytes]


def git_baseline(
    directory: str | Path, ref: str, want: Callable[[str], bool] | None = None
) -> GitBaseline:
    """Every ``*.yaml``/``*.yml`` file under ``directory`` as it was at ``ref`` (``want``:
    which paths, relative to the repository root, to read instead)."""
    want = want or _is_contract_path
    repo = git_repo(directory)
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repo.root)
    except InputError:
        raise InputError(
            f"git ref {ref!r} is not a commit in {repo.root} (a branch, tag or commit; in CI, "
            "fetch it first, e.g. actions/checkout with fetch-depth: 0)",
            f"--against git:{ref}",
        ) from None
    listing = _git(["ls-tree", "-r", "-z", ref, "--", repo.prefix or "."], repo.root)
    objects: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    for record in listing.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        fields = meta.split()
        rel = path.decode("utf-8", errors="replace")
        if len(fields) == 3 and fields[1] == b"blob" and want(rel):
            (links if fields[0] == _SYMLINK else objects).append((rel, fields[2].decode()))
    texts = _cat_blobs(repo.root, objects)
    texts.update(_linked_texts(repo.root, ref, links))
    return GitBaseline(repo.root, repo.prefix, ref, texts)


def _linked_texts(root: Path, ref: str, links: list[tuple[str, str]]) -> dict[str, bytes]:
    """The files that symbolic links at ``ref`` point to, as they were at ``ref`` (the link's
    own blob holds only the target's path; the worktree and the index sides read the file).
    A link whose target is not in the tree at ``ref`` is left out."""
    if not links:
        return {}
    targets = _cat_blobs(root, links)
    wanted: list[tuple[str, str]] = []
    for rel, _ in links:
        target = targets[rel].decode("utf-8", errors="replace")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        if not resolved.startswith("../") and not posixpath.isabs(target):
            wanted.append((rel, f"{ref}:{resolved}"))
    return _cat_blobs(root, wanted, missing_ok=True)


def _cat_blobs(
    root: Path, objects: list[tuple[str, str]], *, missing_ok: bool = False
) -> dict[str, bytes]:
    """Blob contents by path, in one ``git cat-file --batch`` run (``objects``: path, object
    name: a blob id or ``REF:path``); ``missing_ok``: an object git does not have is left out."""
    if not objects:
        return {}
    request = "".join(f"{oid}\n" for _, oid in objects).encode()
    out = _git(["cat-file", "--batch"], root, stdin=request)
    texts: dict[str, bytes] = {}
    pos = 0
    for rel, _ in objects:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if missing_ok and header[-1:] == [b"missing"]:
            continue
        if len(header) < 3 or header[1] != b"blob":
            raise InputError(f"git cat-file could not read {rel}", str(root))
        size = int(header[2])
        texts[rel] = out[pos : pos + size]
        pos += size + 1
    return texts


def staged_texts(
    directory: str | Path, want: Callable[[str], bool] | None = None
) -> tuple[GitRepo, dict[str, bytes]]:
    """Every contract file under ``directory`` as staged in the git index (what a commit records);
    ``want`` picks other paths (relative to the repository root) instead.

    Files deleted from the index are absent; untracked and unstaged changes are not seen.
    """
    want = want or _is_contract_path
    repo = git_repo(directory)
    listing = _git(["ls-files", "--stage", "-z", "--", repo.prefix or "."], repo.root)
    objects: list[tuple[str, str]] = []
    links: dict[str, bytes] = {}
    for record in listing.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        fields = meta.split()
        rel = path.decode("utf-8", errors="replace")
        if len(fields) != 3 or not want(rel):
            continue
        mode, oid, stage = fields
        if stage != b"0":
            raise InputError("the file is unmerged in the index: resolve the conflict first", rel)
        if mode == _GITLINK:
            continue  # a submodule, not a file
        if mode == _SYMLINK:  # the blob holds the link target: read the file it points to
            links[rel] = _read_bytes(repo.root / rel)
            continue
        objects.append((rel, oid.decode()))
    texts = _cat_blobs(repo.root, objects)
    texts.update(links)
    return repo, dict(sorted(texts.items()))


def worktree_texts(directory: str | Path, root: Path) -> dict[str, bytes]:
    """Contract files under ``directory`` in the working tree, keyed by path relative to ``root``."""
    d = Path(directory).resolve()
    out: dict[str, bytes] = {}
    for p in sorted(d.rglob("*")):
        if p.suffix not in CONTRACT_SUFFIXES:
            continue
        rel = p.relative_to(root).as_posix()
        if _is_contract_path(rel) and p.is_file():
            out[rel] = _read_bytes(p)
    return out


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", str(path)) from None


# --- loading -----------------------------------------------------------------------------------


def load_bytes(data: bytes, source: str) -> LoadedContract:
    """A contract from a file's bytes; errors are located at ``source``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ContractFileError("contract file is not UTF-8 text", f"{source}:{line}") from None
    return load_contract_text(text, source)


# --- comparing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CatalogResult:
    """The entries of a ``check`` run, and notes on files not reported as entries.

    A note (one line, printed by every renderer) is written for a file that is gone now and
    whose baseline did not load as a contract, so it cannot be reported as a removed contract.
    """

    entries: list[Entry]
    skipped: list[str]


def compare_catalog(
    current: Mapping[str, bytes | str | Path],
    baseline: Mapping[str, bytes | str],
    level: CompatibilityLevel | None = None,
    baseline_name: str = "the baseline",
    baseline_prefix: str | None = None,
    *,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
    default_level: CompatibilityLevel | None = None,
    baseline_default_level: CompatibilityLevel | None = None,
) -> CatalogResult:
    """Diff each current contract with the baseline's contract of the same name (a contract's
    identity; its file may have moved); report added and removed contracts.

    Keys are paths (relative to the repository root); values are file contents (a ``Path`` is
    read). ``baseline_name`` (``git:origin/main``) and ``baseline_prefix`` (``origin/main``,
    located as ``origin/main:contracts/x.yaml:3``) name the baseline in errors. Each contract
    is judged by :func:`~contracts.diff.verdict.contract_verdict` against its baseline.

    Raises :class:`~contracts.errors.ContractFileError` for a current file that is not a
    contract, for a baseline file that is not one while the current file exists, and for two
    files of one side naming the same contract.
    ``default_level`` is the level of contracts that set none (the project configuration's);
    ``baseline_default_level`` the baseline configuration's (default: the same).
    """
    judge = _Judge(level, fail_on, exceptions, default_level, baseline_default_level)
    now = {rel: _as_bytes(text) for rel, text in current.items()}
    then = {rel: _as_bytes(text) for rel, text in baseline.items()}
    news = _Named("")
    for rel in sorted(now):
        news.add(rel, load_bytes(now[rel], rel), rel)
    olds = _Named(f" at {baseline_name}")
    skipped: list[str] = []
    for rel in sorted(then):
        where = f"{baseline_prefix}:{rel}" if baseline_prefix else f"{rel} ({baseline_name})"
        if now.get(rel) == then[rel]:  # the same bytes at the same path: one parse serves both
            olds.add(rel, news.at_path[rel], where)
            continue
        try:
            loaded = load_bytes(then[rel], where)
        except ContractsError as err:
            if rel in now:
                raise ContractFileError(
                    f"{rel} cannot be compared with {baseline_name}, where it does not load "
                    f"as a contract: {err.what} (compare with a ref where it loads)",
                    err.where,
                ) from None
            skipped.append(
                f"{rel}: removed; it was not a contract at {baseline_name} "
                f"({err.one_line()}), so it is not reported as a removed contract"
            )
            continue
        olds.add(rel, loaded, where)
    entries: list[Entry] = []
    for name in sorted(
        set(news.by_name) | set(olds.by_name), key=lambda n: _file_of(n, news, olds)
    ):
        new, old = news.by_name.get(name), olds.by_name.get(name)
        if new is not None and old is not None and now[new[0]] == then[old[0]]:
            loaded = new[1]
            if judge.same_level(loaded.contract):  # unchanged (perhaps moved)
                lvl = effective_level(loaded.contract, level, default_level)
                entries.append(Entry(name, new[0], "unchanged", DiffResult(lvl, True)))
                continue
        rel = new[0] if new is not None else old[0] if old is not None else name
        entries.append(_entry(rel, old and old[1], new and new[1], judge))
    return CatalogResult(entries, skipped)


class _Named:
    """The contracts of one side by name (their identity: subjects, exceptions, the API), each
    with its file; two files of one side naming the same contract are an error."""

    def __init__(self, side: str) -> None:
        self.side = side
        self.by_name: dict[str, tuple[str, LoadedContract]] = {}
        self.at_path: dict[str, LoadedContract] = {}

    def add(self, rel: str, loaded: LoadedContract, where: str) -> None:
        name = loaded.contract.name
        first = self.by_name.get(name)
        if first is not None:
            raise ContractFileError(
                f"contract name {name!r} is also the name of {first[0]}{self.side}: a "
                "contract's name is its identity (its subjects, its exceptions), so each "
                "file must name another contract",
                where,
            )
        self.by_name[name] = (rel, loaded)
        self.at_path[rel] = loaded


def _file_of(name: str, news: _Named, olds: _Named) -> str:
    found = news.by_name.get(name) or olds.by_name.get(name)
    return found[0] if found is not None else name


def _as_bytes(value: bytes | str | Path) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, Path):
        return _read_bytes(value)
    return value.encode("utf-8")


@dataclass(frozen=True, slots=True)
class _Judge:
    """How ``check`` judges each contract: the level, ``--fail-on`` and the exceptions."""

    level: CompatibilityLevel | None
    fail_on: FailOn
    exceptions: ExceptionPolicy | None
    default_level: CompatibilityLevel | None = None
    baseline_default: CompatibilityLevel | None = None

    def baseline_level(self, old: Contract) -> CompatibilityLevel:
        """The level ``old`` was held at: its own, else the baseline configuration's default."""
        return effective_level(old, None, self.baseline_default or self.default_level)

    def same_level(self, contract: Contract) -> bool:
        """Whether the contract's level is the same on both sides (the configurations' default
        levels may differ)."""
        return self.baseline_level(contract) == effective_level(contract, None, self.default_level)

    def entry(
        self,
        rel: str,
        loaded: LoadedContract,
        history: Sequence[Side],
        versions: Sequence[int] | None = None,
        baseline_level: CompatibilityLevel | None = None,
    ) -> Entry:
        found = contract_verdict(
            loaded.contract,
            history,
            level=self.level,
            fail_on=self.fail_on,
            exceptions=self.exceptions,
            versions=versions,
            source=rel,
            default_level=self.default_level,
            baseline_level=baseline_level,
        )
        lines = loaded.lines.line if found.status != "unchanged" else None
        return Entry(found.name, rel, found.status, found.result, lines, found)


def _entry(
    rel: str, old: LoadedContract | None, new: LoadedContract | None, judge: _Judge
) -> Entry:
    if new is None:
        assert old is not None
        gone = old.contract
        lvl = effective_level(gone, judge.level, judge.baseline_default or judge.default_level)
        found = removed_verdict(gone, lvl, fail_on=judge.fail_on, exceptions=judge.exceptions)
        return Entry(gone.name, rel, "removed", found.result, verdict=found)
    if old is None:
        return judge.entry(rel, new, [])
    history = [Side.of_contract(old.contract, rel)]
    return judge.entry(rel, new, history, baseline_level=judge.baseline_level(old.contract))


def compare_with_history(
    contracts: Iterable[tuple[str, LoadedContract]],
    previous: Callable[[Contract], Sequence[tuple[int, Side]]],
    level: CompatibilityLevel | None = None,
    *,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
    default_level: CompatibilityLevel | None = None,
    registered_level: Callable[[Contract], CompatibilityLevel | None] | None = None,
) -> list[Entry]:
    """Judge each ``(file, contract)`` against its registered versions (``previous``: version
    numbers and sides, oldest first), by :func:`~contracts.diff.verdict.contract_verdict`, at
    the level the registry holds the subject at (``registered_level``; default: the latest
    registered contract's).

    A contract equal to its latest registered version is ``unchanged``; a version registered
    without a contract (by another tool) takes part as its Avro schema.
    """
    judge = _Judge(level, fail_on, exceptions, default_level)
    entries: list[Entry] = []
    for rel, loaded in contracts:
        found = previous(loaded.contract)
        sides = [side for _, side in found]
        held = registered_level(loaded.contract) if registered_level and found else None
        numbers = [number for number, _ in found]
        entries.append(judge.entry(rel, loaded, sides, numbers, held))
    return entries
