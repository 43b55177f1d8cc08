"""The catalog page in a real headless browser (Debian's chromium driven by Python playwright)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml
from api_server import API_KEY, ORDERS, Server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"
)


@pytest.fixture(scope="module")
def page(server: Server) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        tab = browser.new_page()
        tab.set_default_timeout(10_000)
        yield tab
        browser.close()


@pytest.fixture(scope="module")
def two_versions(server: Server) -> str:
    """A registered contract with a second version that changes a decimal's scale."""
    name = "ui.orders"
    data = yaml.safe_load(ORDERS.read_text())
    data.update(name=name, topic="ui.orders", compatibility="NONE")
    headers = {"X-API-Key": API_KEY, "Content-Type": "application/yaml"}
    with server.client() as c:
        assert (
            c.put(f"/contracts/{name}", content=yaml.safe_dump(data), headers=headers).status_code
            == 201
        )
        data["columns"][2]["parameters"]["scale"] = "3"
        data["columns"].append({"field": "coupon", "type": "string", "optional": True})
        r = c.put(f"/contracts/{name}", content=yaml.safe_dump(data), headers=headers)
        assert r.status_code == 201, r.text
    return name


def test_search_filters_as_you_type(page: Any, server: Server, two_versions: str) -> None:
    page.goto(server.url + "/")
    rows = page.locator("#contracts tr.contract")
    assert rows.count() >= 2
    page.fill("#search", "ui.ord")
    assert page.locator("#contracts tr.contract:visible").count() == 1
    assert page.inner_text("#count") == "1"
    page.fill("#search", "")
    assert page.locator("#contracts tr.contract:visible").count() == rows.count()


def test_server_side_search_without_script(page: Any, server: Server, two_versions: str) -> None:
    page.goto(server.url + "/?q=pgserver1")
    names = page.locator("#contracts tr.contract td:first-child").all_inner_texts()
    assert names == ["pgserver1.public.orders"]


def test_detail_shows_versions_and_renderings(page: Any, server: Server, two_versions: str) -> None:
    page.goto(server.url + "/")
    page.click(f"text={two_versions}")
    assert page.inner_text("#contract-name") == two_versions
    assert page.locator("#versions li").all_inner_texts() == ["v1", "v2"]
    assert "coupon" in page.inner_text("#contract-yaml")
    assert '"type": "record"' in page.inner_text("#rendering")
    page.click("#render-tabs >> text=spark-ddl")
    page.click("#render-tabs >> text=row")
    assert "customer" in page.inner_text("#rendering")
    page.click("#versions >> text=v1")
    assert "coupon" not in page.inner_text("#contract-yaml")


def test_side_by_side_diff_highlights_findings(
    page: Any, server: Server, two_versions: str
) -> None:
    page.goto(f"{server.url}/catalog/{two_versions}")
    page.click("#diff-form button")
    assert "v1 → v2" in page.inner_text("h1")
    findings = page.locator("#findings li").all_inner_texts()
    assert any("amount" in f for f in findings)
    highlighted = page.locator("#side-by-side tr[class*='finding-']")
    assert highlighted.count() >= 1
    assert "amount" in highlighted.first.inner_text()
    added = page.locator("#side-by-side tr.added td.new").all_inner_texts()
    assert any("coupon" in a for a in added)


def test_unknown_contract_page_is_a_404(server: Server) -> None:
    response = httpx.get(f"{server.url}/catalog/no.such", timeout=10)
    assert response.status_code == 404 and "no contract named" in response.text
