"""The eval report page in a real headless Chromium: no console error, no request, no script.

Debian's chromium is driven by Playwright, as the playground test does (never ``playwright
install``: ``make chromium`` installs the browser). Skips, saying why, only when no Chromium is
installed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alloy.eval._html import render

from .report_data import synthetic_report
from .test_report_page import CASES, answering, read_invoice

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="no Chromium at /usr/bin/chromium: run `make chromium` (apt-get install chromium)",
)


@pytest.fixture
def page() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser.new_page(viewport={"width": 1200, "height": 900})
        finally:
            browser.close()


def test_the_report_renders_in_chromium_with_no_console_error(page: Any, tmp_path: Path) -> None:
    report = synthetic_report(cases=30, models={"mini": 0.85, "haiku": 0.95, "sonnet": 0.97})
    path = tmp_path / "report.html"
    path.write_text(render(report), encoding="utf-8")
    problems: list[str] = []
    requested: list[str] = []
    page.on(
        "console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "dialog", lambda dialog: (problems.append("dialog: " + dialog.message), dialog.dismiss())
    )
    page.on("request", lambda request: requested.append(request.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    # Open every diff, so the hostile case data is laid out too.
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    charts = page.locator("svg")
    assert charts.count() == 3 + 1 + 9  # bars, cost, heatmap; forest; 3 enums x 3 models
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 30
    assert page.locator("svg rect").count() > 100
    assert page.locator("script").count() == 0  # the untrusted <script> stayed text
    assert '<script>alert("x")</script>' in page.locator("body").inner_text()
    page.locator('details[id^="case-"]').first.scroll_into_view_if_needed()
    # And the page of a real eval (two scripted models), saved by Report.save.
    real = read_invoice.eval(CASES, models={"good": answering(6), "poor": answering(2)})
    saved = real.save(tmp_path / "real.html")
    page.goto(saved.as_uri())
    page.wait_for_load_state("load")
    assert page.locator("svg").count() >= 5
    assert problems == []
    assert requested == [path.as_uri(), saved.as_uri()]
