"""The eval report page in a real headless Chromium: no console error, no request, no script
(the browser as the playground test has it: tests/chromium.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alloy.eval._html import render

from ..chromium import needs_chromium, open_page
from .report_data import synthetic_report
from .test_report_page import CASES, answering, read_invoice

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture
def page() -> Iterator[Any]:
    with open_page() as page:
        yield page


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
