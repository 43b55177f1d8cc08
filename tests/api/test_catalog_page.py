"""The catalog in a real headless browser (Debian's chromium driven by Python playwright) against
a real ``cdc-contracts serve``: what a person looking up a table's contract sees and does.

Screenshots of the index, a contract and a diff at 1280 and 390 px are saved under the test
run's temporary directory (the path is printed; set CDC_CONTRACTS_ARTIFACTS to choose it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from api_server import Server, start_keyed_server, stop_server
from catalog_seed import EVOLVING, seed

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
WIDTHS = (1280, 390)
PAGES = {
    "index": "/",
    "contract": f"/catalog/{EVOLVING}",
    "diff": f"/catalog/{EVOLVING}/diff?old=2&new=3",
}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"
)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A service with the seeded catalog: sample contracts, three versions, two broken files."""
    tmp = tmp_path_factory.mktemp("catalog")
    directory = tmp / "contracts"
    directory.mkdir()
    server = start_keyed_server(tmp, directory)
    try:
        seed(server.url, directory)
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield launched
        launched.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    yield tab
    context.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("CDC_CONTRACTS_ARTIFACTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("catalog-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\ncatalog screenshots: {folder}")
    return folder


# --- every page, both widths ----------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(PAGES))
def test_page_fits_without_horizontal_scroll_and_is_screenshotted(
    browser: Any, catalog: Server, artifacts: Path, name: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    tab = context.new_page()
    try:
        tab.goto(catalog.url + PAGES[name])
        scroll, client = tab.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert scroll <= client, f"{name} at {width}px scrolls sideways ({scroll} > {client})"
        target = artifacts / f"{name}-{width}.png"
        tab.screenshot(path=str(target), full_page=True)
        assert target.stat().st_size > 10_000
        print(f"screenshot: {target}")
    finally:
        context.close()


def test_no_request_leaves_the_machine(page: Any, catalog: Server) -> None:
    """The pages and the API docs load only from the service itself."""
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    for path in PAGES.values():
        page.goto(catalog.url + path, wait_until="networkidle")
    page.goto(catalog.url + "/docs", wait_until="networkidle")
    page.wait_for_selector(".swagger-ui .opblock", timeout=20_000)  # the UI rendered the spec
    outside = [
        u
        for u in requested
        if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).hostname not in LOCAL_HOSTS
    ]
    assert not outside, outside
    assert any(u.endswith("/api-docs/swagger-ui-bundle.js") for u in requested)


# --- the index ----------------------------------------------------------------------------------


def _visible_names(page: Any) -> list[str]:
    return page.locator("#contracts tr.contract:visible a.name").all_inner_texts()


def test_index_lists_problems_first_and_every_contract(page: Any, catalog: Server) -> None:
    page.goto(catalog.url + "/")
    problems = page.locator("#problems")
    assert problems.is_visible()
    assert "2 contracts could not be read" in problems.inner_text()
    assert "broken.yaml" in problems.inner_text() and "typo.yaml" in problems.inner_text()
    table_top = page.locator("#contracts").bounding_box()["y"]
    assert problems.bounding_box()["y"] < table_top  # above the list, not folded away
    names = _visible_names(page)
    assert EVOLVING in names and "files.orders" in names
    assert names == sorted(names, key=str.lower)
    row = page.locator(f"#contracts tr.contract[data-name='{EVOLVING}']")
    text = row.inner_text()
    assert "team-checkout" in text and "Orders placed in the web shop" in text
    assert row.get_attribute("data-versions") == "3"


def test_index_search_filter_and_sort(page: Any, catalog: Server) -> None:
    page.goto(catalog.url + "/")
    total = page.locator("#contracts tr.contract").count()
    page.fill("#search", "checkout.ord")
    assert _visible_names(page) == [EVOLVING]
    assert page.inner_text("#count") == "1"
    page.fill("#search", "")
    page.select_option("#filter-format", "canal-json")
    assert set(_visible_names(page)) == {"canal.shop.orders", "inventory.products2"}
    page.select_option("#filter-owner", "team-catalog")
    assert set(_visible_names(page)) == {"canal.shop.orders", "inventory.products2"}
    page.select_option("#filter-format", "")
    page.select_option("#filter-owner", "")
    assert len(_visible_names(page)) == total
    page.click("button.sort[data-key=versions]")
    page.click("button.sort[data-key=versions]")  # descending
    assert _visible_names(page)[0] == EVOLVING
    header = page.locator("th:has(button.sort[data-key=versions])")
    assert header.get_attribute("aria-sort") == "descending"


def test_index_search_works_without_script(browser: Any, catalog: Server) -> None:
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    try:
        tab.goto(catalog.url + "/?q=team-catalog")
        assert set(_visible_names(tab)) == {"canal.shop.orders", "inventory.products2"}
    finally:
        context.close()


# --- a contract -------------------------------------------------------------------------------


def test_contract_page_leads_with_the_column_table(page: Any, catalog: Server) -> None:
    page.goto(catalog.url + f"/catalog/{EVOLVING}")
    assert page.inner_text("#contract-name") == EVOLVING
    headers = page.locator("#columns thead th").all_inner_texts()
    assert [h.lower() for h in headers] == [
        "column",
        "connect type",
        "avro type",
        "spark type",
        "nullable",
        "key",
        "default",
        "doc",
    ]
    amount = page.locator("#columns tbody tr", has=page.locator("th code", has_text="amount"))
    cells = amount.locator("td").all_inner_texts()
    assert cells[0].split() == ["bytes", "Decimal(10,3)"]
    assert cells[1] == "bytes · decimal(10,3)" and cells[2] == "decimal(10,3)"
    assert cells[3] == "yes"
    key = page.locator("#columns tbody tr", has=page.locator("th code", has_text="id"))
    assert "key" in key.locator("td").nth(4).inner_text()
    coupon = page.locator("#columns tbody tr", has=page.locator("th code", has_text="coupon"))
    assert "Promotion code" in coupon.inner_text()
    # the envelope's fields (op, source, ...) are folded away below the columns
    envelope = page.locator("#envelope")
    assert envelope.get_attribute("open") is None
    assert not page.locator("#envelope table").is_visible()
    envelope.locator("summary").click()
    assert "source" in page.locator("#envelope table").inner_text()


def test_versions_show_subjects_ids_and_findings(page: Any, catalog: Server) -> None:
    page.goto(catalog.url + f"/catalog/{EVOLVING}")
    steps = page.locator("#timeline > li")
    assert steps.count() == 3
    newest = steps.nth(0)
    assert newest.get_attribute("id") == "v3"
    text = newest.inner_text()
    assert f"{EVOLVING}-value" in text and "schema id" in text
    assert "breaking" in text and "Column amount changed decimal scale from 2 to 3." in text
    middle = steps.nth(1).inner_text()
    assert "Column coupon was added" in middle
    assert "First version" in steps.nth(2).inner_text()
    steps.nth(0).locator("a", has_text="diff v2 → v3").click()
    assert "v2 → v3" in page.inner_text("h1")


def test_every_rendering_has_a_copy_button_and_wraps(browser: Any, catalog: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=catalog.url)
    tab = context.new_page()
    try:
        tab.goto(catalog.url + f"/catalog/{EVOLVING}")
        titles = tab.locator("details.rendering summary").all_inner_texts()
        assert titles == [
            "Spark DDL (row)",
            "PySpark StructType (row)",
            "Avro value schema (as registered)",
            "Avro key schema",
            "Connect JSON (value)",
        ]
        for details in tab.locator("details.rendering").all():
            if details.get_attribute("open") is None:
                details.locator("summary").click()
            assert details.locator("button.copy").count() == 1
        ddl = tab.locator("#code-spark-ddl")
        assert "`amount` DECIMAL(10,3)" in ddl.inner_text()
        assert (
            tab.eval_on_selector(
                "#code-spark-ddl", "e => getComputedStyle(e.parentElement).whiteSpace"
            )
            == "pre-wrap"
        )
        box = tab.locator("#r-spark-ddl pre").bounding_box()
        assert box["width"] <= 1280  # the one-line DDL wraps instead of running off the page
        assert "StructField('amount', DecimalType(10, 3), True)" in tab.inner_text("#code-pyspark")
        tab.click("#r-spark-ddl button.copy")
        tab.wait_for_function("document.getElementById('copy-status').textContent.length > 0")
        copied = tab.evaluate("navigator.clipboard.readText()")
        assert copied == ddl.inner_text()
    finally:
        context.close()


# --- a diff -----------------------------------------------------------------------------------


def test_diff_leads_with_findings_then_only_changed_columns(page: Any, catalog: Server) -> None:
    page.goto(catalog.url + f"/catalog/{EVOLVING}/diff?old=2&new=3")
    assert "Breaking change" in page.inner_text("#verdict")
    findings = page.locator("#findings li").all_inner_texts()
    assert any("decimal scale from 2 to 3" in f for f in findings)
    order = page.evaluate(
        "[...document.querySelectorAll('#findings, #side-by-side')].map(e => e.id)"
    )
    assert order == ["findings", "side-by-side"]
    changed = page.locator("#side-by-side .col-change h3 code").all_inner_texts()
    assert changed == ["amount", "note"]
    amount = page.locator("#side-by-side .col-change.finding-breaking")
    assert "amount" in amount.inner_text()
    differing = amount.locator(".side.new .differs dt").all_inner_texts()
    assert set(differing) == {"Connect", "Avro", "Spark"}
    assert page.locator("#unchanged").get_attribute("open") is None
    assert "6 unchanged columns" in page.inner_text("#unchanged summary")


@pytest.mark.parametrize(("width", "side_by_side"), [(1280, True), (390, False)])
def test_diff_sides_are_side_by_side_on_wide_screens_only(
    browser: Any, catalog: Server, width: int, side_by_side: bool
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    tab = context.new_page()
    try:
        tab.goto(catalog.url + f"/catalog/{EVOLVING}/diff?old=2&new=3")
        old = tab.locator(".col-change").first.locator(".side.old").bounding_box()
        new = tab.locator(".col-change").first.locator(".side.new").bounding_box()
        assert (abs(old["y"] - new["y"]) < 2) is side_by_side
        assert new["x"] + new["width"] <= width
    finally:
        context.close()


def test_compare_form_opens_the_diff(page: Any, catalog: Server) -> None:
    page.goto(catalog.url + f"/catalog/{EVOLVING}")
    page.select_option("#diff-old", "1")
    page.click("#diff-form button")
    assert "v1 → v3" in page.inner_text("h1")


def test_unknown_contract_page_is_a_404(catalog: Server) -> None:
    response = httpx.get(f"{catalog.url}/catalog/no.such", timeout=10)
    assert response.status_code == 404 and "no contract named" in response.text


# --- keyboard and basic accessibility ---------------------------------------------------------


def test_keyboard_reaches_search_filters_and_a_contract(page: Any, catalog: Server) -> None:
    page.goto(catalog.url + "/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    focused: list[str] = []
    for _ in range(12):
        page.keyboard.press("Tab")
        focused.append(page.evaluate("document.activeElement.id || document.activeElement.tagName"))
        if focused[-1] == "search":
            break
    assert focused[-1] == "search", focused
    page.keyboard.type("checkout")
    for _ in range(12):  # on through the filters and the sort buttons to the first contract
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('name')"):
            break
    assert page.evaluate("document.activeElement.textContent") == EVOLVING
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # focus is visible
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/catalog/{EVOLVING}")
    assert page.inner_text("#contract-name") == EVOLVING


#: in-page check: every form control has a label, every button a name, every image an alt
LABELS_JS = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('input, select, textarea')) {
    const labelled = (el.id && document.querySelector(`label[for="${el.id}"]`))
      || el.getAttribute('aria-label') || el.closest('label');
    if (!labelled) bad.push(el.outerHTML.slice(0, 80));
  }
  for (const el of document.querySelectorAll('button, a[href]')) {
    if (!(el.getAttribute('aria-label') || el.textContent.trim())) bad.push(el.outerHTML.slice(0, 80));
  }
  for (const el of document.querySelectorAll('img')) if (!el.hasAttribute('alt')) bad.push(el.outerHTML);
  if (!document.documentElement.lang) bad.push('html without lang');
  if (document.querySelectorAll('h1').length !== 1) bad.push('not exactly one h1');
  return bad;
}"""

#: in-page check: WCAG contrast of every visible text against its effective background
CONTRAST_JS = """() => {
  const parse = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const bad = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || !el.offsetParent) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || el.closest('.visually-hidden, .skip')) continue;
    const fg = parse(style.color).slice(0, 3);
    const [a, b] = [lum(fg), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) bad.push(`${ratio.toFixed(2)} ${node.textContent.trim().slice(0, 40)}`);
  }
  return bad;
}"""


@pytest.mark.parametrize("name", list(PAGES))
def test_labels_names_and_contrast(page: Any, catalog: Server, name: str) -> None:
    page.goto(catalog.url + PAGES[name])
    for details in page.locator("details").all():  # folded text counts too
        details.evaluate("d => d.open = true")
    assert page.evaluate(LABELS_JS) == []
    assert page.evaluate(CONTRAST_JS) == []


def test_the_accessibility_checks_can_fail(page: Any) -> None:
    """The two in-page checks above flag what they look for (so a pass means something)."""
    page.set_content(
        '<html lang="en"><body><h1>t</h1><p style="color:#bbb">faint text</p>'
        '<input id="q"><button></button></body></html>'
    )
    assert any("faint text" in found for found in page.evaluate(CONTRAST_JS))
    assert len(page.evaluate(LABELS_JS)) == 2
