"""A real headless Chromium for the tests that open a page in a browser (the serve playground,
the eval report).

Debian's chromium is driven by Playwright: never ``playwright install``, the project's own set-up
installs the browser with ``make chromium``. A test module skips, saying why, only when no
Chromium is installed (``pytestmark = needs_chromium``) or Playwright is missing
(``pytest.importorskip("playwright.sync_api")`` before importing this).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

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

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="no Chromium at /usr/bin/chromium: run `make chromium` (apt-get install chromium)",
)


@contextmanager
def open_page(width: int = 1200, height: int = 900) -> Iterator[Any]:
    """A fresh page of a fresh browser, closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
