"""``cdc-contracts catalog build``: the catalog as static pages from a git repository of contracts
(each commit that changed a file is a version), browsed from ``file://`` in headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from api_server import ORDERS
from clirun import run
from test_catalog_page import CHROMIUM, LAUNCH_ARGS

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "ci",
    "GIT_AUTHOR_EMAIL": "ci@example.com",
    "GIT_COMMITTER_NAME": "ci",
    "GIT_COMMITTER_EMAIL": "ci@example.com",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **GIT_ENV})


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with one contract in three commits (v2 adds a column, v3 changes a
    decimal's scale) and one uncommitted change, plus a second contract and a broken file."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("repo")
    contracts = root / "data-contracts"
    contracts.mkdir()
    _git(root, "init", "-q")
    data = yaml.safe_load(ORDERS.read_text())
    path = contracts / "orders.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "orders")
    data["columns"].append({"field": "coupon", "type": "string", "optional": True})
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    _git(root, "commit", "-qam", "coupon")
    data["columns"][2]["parameters"]["scale"] = "3"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    _git(root, "commit", "-qam", "scale")
    data["description"] = "Orders, one row per order."
    path.write_text(yaml.safe_dump(data, sort_keys=False))  # not committed
    other = dict(yaml.safe_load(ORDERS.read_text()), name="other.orders", topic="other.orders")
    (contracts / "other.yaml").write_text(yaml.safe_dump(other, sort_keys=False))
    return root


def test_build_writes_every_version_and_consecutive_diffs(repo: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = run("catalog", "build", repo / "data-contracts", "-o", site)
    code, err = result.code, result.err
    assert code == 0, err
    assert "catalog of 2 contracts (5 versions, " in err
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    name = "pgserver1.public.orders"
    assert {
        "index.html",
        f"catalog/{name}/index.html",
        *(f"catalog/{name}/v{n}.html" for n in (1, 2, 3, 4)),
        *(f"catalog/{name}/diff-{a}-{a + 1}.html" for a in (1, 2, 3)),
        "catalog/other.orders/index.html",
    } <= pages
    assert (site / ".nojekyll").exists() and (site / "static" / "catalog.css").exists()
    latest = (site / f"catalog/{name}/index.html").read_text()
    assert "uncommitted" in latest and "Orders, one row per order." in latest
    assert 'href="../../static/catalog.css"' in latest  # relative: works under any sub-path
    diff = (site / f"catalog/{name}/diff-2-3.html").read_text()
    assert "Column amount changed decimal scale from 2 to 3." in diff


def test_an_unreadable_contract_is_listed_and_exits_1(repo: Path, tmp_path: Path) -> None:
    broken = repo / "data-contracts" / "broken.yaml"
    broken.write_text("name: broken\nformat: debezium-json\ntopix: x\n")
    try:
        result = run("catalog", "build", repo / "data-contracts", "-o", tmp_path / "site")
        code, err = result.code, result.err
    finally:
        broken.unlink()
    assert code == 1
    assert "error: " in err and "broken.yaml" in err
    index = (tmp_path / "site" / "index.html").read_text()
    assert "1 contract could not be read" in index and "broken.yaml" in index


def test_output_must_be_new_or_empty(repo: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "keep.txt").write_text("x")
    result = run("catalog", "build", repo / "data-contracts", "-o", site)
    code, err = result.code, result.err
    assert code == 2 and "--overwrite" in err
    result = run("catalog", "build", repo / "data-contracts", "-o", site, "--overwrite")
    code, _ = result.code, result.err
    assert code == 0 and not (site / "keep.txt").exists()
    result = run("catalog", "build", repo / "nowhere", "-o", tmp_path / "other")
    code, err = result.code, result.err
    assert code == 2 and "no such directory" in err


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_site_browses_from_files_with_nothing_from_elsewhere(
    repo: Path, tmp_path: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    site = tmp_path / "site"
    assert run("catalog", "build", repo / "data-contracts", "-o", site).code == 0
    requested: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        tab: Any = browser.new_page()
        tab.on("request", lambda r: requested.append(r.url))
        tab.goto((site / "index.html").as_uri())
        tab.fill("#search", "other")
        assert tab.locator("#contracts tr.contract:visible").count() == 1
        tab.fill("#search", "")
        tab.click("text=pgserver1.public.orders")
        assert tab.inner_text("#contract-name") == "pgserver1.public.orders"
        assert tab.locator("#timeline > li").count() == 4
        tab.click("#v3 >> text=diff v2 → v3")
        assert "v2 → v3" in tab.inner_text("h1")
        assert "Breaking change" in tab.inner_text("#verdict")
        tab.click("nav.crumbs >> text=Contracts")
        assert tab.url.endswith("/index.html")
        browser.close()
    assert all(urlsplit(u).scheme == "file" for u in requested), requested
