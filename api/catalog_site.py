"""The catalog as static pages (``cdc-contracts catalog build DIR -o site/``), for GitHub Pages.

A directory of contract files in a git repository has its history in git: each commit that
changed a contract file is a version of that contract (dated, with its short hash), and an
uncommitted change is the newest. Outside git each file is one version. The pages are the served
catalog's templates rendered with relative links, so the site works from any sub-path and from
``file://``; nothing is loaded from another host.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from api.catalog_pages import (
    ContractView,
    VersionView,
    contract_context,
    diff_context,
    index_context,
)
from contracts.errors import ContractsError, InputError

TEMPLATE_DIR: Final = Path(__file__).parent / "templates"
STATIC_DIR: Final = Path(__file__).parent / "static"
STATIC_FILES: Final = ("catalog.css", "catalog.js")


@dataclass
class Site:
    """What a build wrote and what it could not read."""

    pages: list[Path] = field(default_factory=list)
    contracts: int = 0
    versions: int = 0
    problems: list[str] = field(default_factory=list)


# --- gathering contracts and their history ----------------------------------------------------


def _git(args: list[str], cwd: Path) -> str | None:
    """git's output, or None when git is missing or says no (not a repository...)."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _history(path: Path, root: Path | None) -> list[tuple[str, str, str]]:
    """(commit, ISO date, short hash) of each commit that changed ``path``, oldest first."""
    if root is None:
        return []
    rel = path.resolve().relative_to(root).as_posix()
    found = _git(["log", "--reverse", "--format=%H%x09%cI%x09%h", "--", rel], root)
    return [tuple(line.split("\t")) for line in (found or "").splitlines() if line]  # type: ignore[misc]


def _version_of(text: bytes, source: str, number: int, **about: Any) -> VersionView:
    from contracts.diff.catalog import load_bytes

    try:
        contract = load_bytes(text, source).contract
    except ContractsError as err:
        return VersionView(number, None, problem=err.one_line(), **about)
    return VersionView(number, contract, **about)


def contract_views(directory: Path) -> tuple[list[ContractView], list[str]]:
    """Every contract file under ``directory`` with its versions, and the files that could not
    be read (as ``file:line: what``)."""
    from contracts.diff.catalog import CONTRACT_SUFFIXES

    top = _git(["rev-parse", "--show-toplevel"], directory)
    root = Path(top.strip()).resolve() if top else None
    views: dict[str, ContractView] = {}
    problems: list[str] = []
    files = sorted(
        p
        for p in directory.rglob("*")
        if p.suffix in CONTRACT_SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(directory).parts)
        and p.name != "cdc-contracts.yaml"
    )
    for path in files:
        shown = str(path)
        versions = _versions(path, shown, root)
        latest = versions[-1]
        if latest.contract is None:
            problems.append(latest.problem or f"{shown}: cannot be read")
            continue
        name = latest.contract.name
        if name in views:
            problems.append(f"{shown}: contract {name!r} is defined twice; skipped")
            continue
        views[name] = ContractView(name, "git" if root else "directory", tuple(versions), shown)
    return [views[n] for n in sorted(views, key=str.lower)], problems


def _versions(path: Path, shown: str, root: Path | None) -> list[VersionView]:
    versions: list[VersionView] = []
    last: bytes | None = None
    rel = path.resolve().relative_to(root).as_posix() if root else ""
    for commit, date, short in _history(path, root):
        assert root is not None
        blob = subprocess.run(
            ["git", "show", f"{commit}:{rel}"], cwd=root, capture_output=True, check=False
        )
        if blob.returncode != 0 or blob.stdout == last:
            continue  # a commit that only renamed it, or changed nothing in it
        last = blob.stdout
        versions.append(
            _version_of(blob.stdout, f"{shown}@{short}", len(versions) + 1, date=date, label=short)
        )
    current = path.read_bytes()
    if current != last:
        stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
        label = "uncommitted" if versions else None
        versions.append(_version_of(current, shown, len(versions) + 1, date=stamp, label=label))
    return versions


# --- writing pages ------------------------------------------------------------------------------


def static_link(page: str) -> Callable[..., str]:
    """Links relative to ``page`` (a path under the site root, e.g. ``catalog/x/v2.html``)."""
    up = "../" * page.count("/")

    def link(kind: str, **at: Any) -> str:
        name = at.get("name", "")
        target = {
            "index": "index.html",
            "contract": f"catalog/{name}/index.html",
            "version": f"catalog/{name}/v{at.get('version')}.html",
            "diff": f"catalog/{name}/diff-{at.get('old')}-{at.get('new')}.html",
            "static": f"static/{at.get('path')}",
        }.get(kind)
        if target is None:
            raise ValueError(f"no static page for {kind!r}")
        return up + target

    return link


def build_site(directory: Path, output: Path) -> Site:
    """Write the catalog of the contracts under ``directory`` into ``output`` (which the caller
    has checked: new, or empty)."""
    import jinja2

    if not directory.is_dir():
        raise InputError(
            "no such directory" if not directory.exists() else "not a directory", str(directory)
        )
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
    )
    views, problems = contract_views(directory)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    site = Site(contracts=len(views), problems=problems)

    def write(page: str, template: str, context: dict[str, Any]) -> None:
        html = env.get_template(template).render(
            link=static_link(page), served=False, generated=generated, **context
        )
        target = output / page
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
        site.pages.append(target)

    output.mkdir(parents=True, exist_ok=True)
    write("index.html", "index.html", index_context(views, problems, ""))
    for view in views:
        base = f"catalog/{view.name}"
        readable = [v for v in view.versions if v.contract is not None]
        site.versions += len(view.versions)
        write(f"{base}/index.html", "contract.html", contract_context(view, view.latest))
        for version in readable:
            write(
                f"{base}/v{version.number}.html", "contract.html", contract_context(view, version)
            )
        for old, new in itertools.pairwise(readable):
            write(
                f"{base}/diff-{old.number}-{new.number}.html",
                "diff.html",
                diff_context(view, old, new),
            )
    (output / "static").mkdir(exist_ok=True)
    for name in STATIC_FILES:
        shutil.copyfile(STATIC_DIR / name, output / "static" / name)
    (output / ".nojekyll").write_text("")  # GitHub Pages: serve the files as they are
    return site
