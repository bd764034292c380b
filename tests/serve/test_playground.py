"""The playground page in a real headless Chromium: it lists the commands, builds a form from
a command's signature, runs it, shows the typed result and the stream as it arrives.

Debian's chromium is driven by Playwright (never ``playwright install``: the project's own
set-up installs the browser with ``make chromium``). The test skips, saying why, only when no
Chromium is installed.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alloy import command
from alloy.serve import ServeConfig

from ..chromium import needs_chromium, open_page
from .served import Mood, Review

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium
WIDTH, HEIGHT = 1200, 900


@pytest.fixture
def page() -> Iterator[Any]:
    with open_page(WIDTH, HEIGHT) as page:
        yield page


def png_size_and_colours(data: bytes) -> tuple[int, int, int]:
    """Width, height and the number of distinct pixel values of a PNG (8-bit RGB or RGBA)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    chunks, position = [], 8
    while position < len(data):
        length = struct.unpack(">I", data[position : position + 4])[0]
        kind = data[position + 4 : position + 8]
        if kind == b"IDAT":
            chunks.append(data[position + 8 : position + 8 + length])
        position += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    channels = {2: 3, 6: 4}[colour]
    assert depth == 8
    stride = width * channels + 1
    # Filtered bytes, sampled per row: enough to tell a blank page from a drawn one.
    distinct = {raw[row * stride + 1 : (row + 1) * stride : 97] for row in range(0, height, 7)}
    return width, height, len(distinct)


def test_the_playground_runs_a_command_and_shows_its_result(
    start: Any, offline: None, page: Any, tmp_path: Path
) -> None:
    url = start()
    page.goto(url + "/")
    buttons = page.locator("#commands button")
    buttons.first.wait_for()
    assert buttons.all_inner_texts() == ["echo", "review", "guarded", "guarded_review"]
    page.get_by_role("button", name="review", exact=True).click()
    # The form follows the signature: product (text, required), strict (a checkbox), limit.
    assert page.locator("#arg-product").evaluate("e => e.tagName") == "TEXTAREA"
    assert page.locator("#arg-strict").get_attribute("type") == "checkbox"
    assert page.locator("#arg-limit").input_value() == "5"
    page.fill("#arg-product", "a cast-iron kettle")
    page.click("#run")
    result = page.locator("#result")
    result.filter(has_text='"stars"').wait_for()
    shown = result.inner_text()
    assert '"title"' in shown and '"mood"' in shown
    shot = tmp_path / "playground.png"
    page.screenshot(path=str(shot), full_page=False)
    width, height, distinct = png_size_and_colours(shot.read_bytes())
    assert (width, height) == (WIDTH, HEIGHT)
    assert distinct > 20  # not a blank page


def test_the_playground_shows_the_stream(start: Any, offline: None, page: Any) -> None:
    url = start()
    page.goto(url + "/")
    page.locator("#commands button").first.wait_for()
    page.get_by_role("button", name="echo", exact=True).click()
    page.fill("#arg-name", "Ada Lovelace")
    page.click("#stream")
    page.locator("#stream-output").filter(has_text="Ada Lovelace").wait_for()
    page.locator("#result").filter(has_text="Ada Lovelace").wait_for()
    assert "[alloy offline model]" in page.locator("#stream-output").inner_text()


def test_the_playground_shows_a_rail_block(start: Any, offline: None, page: Any) -> None:
    url = start()
    page.goto(url + "/")
    page.locator("#commands button").first.wait_for()
    page.get_by_role("button", name="guarded", exact=True).click()
    page.fill("#arg-text", "my password is swordfish")
    page.click("#run")
    page.locator("#result.error").filter(has_text="403").wait_for()
    assert "no_passwords" in page.locator("#result").inner_text()


def test_the_docs_page_renders_from_this_server_alone(start: Any, offline: None, page: Any) -> None:
    """Swagger UI draws every route, and every request the page makes goes to the server."""
    url = start(config=ServeConfig.create(api_keys=["docs-key"]))
    requested: list[str] = []
    refused: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.on(
        "console",
        lambda message: refused.append(message.text) if message.type == "error" else None,
    )
    page.goto(url + "/docs")
    page.locator(".opblock").first.wait_for()
    assert page.locator(".opblock").count() >= 10
    assert page.locator("button.authorize").count() == 1  # the bearer keys are declared
    page.wait_for_load_state("networkidle")
    assert requested and all(r.startswith(url + "/") for r in requested), requested
    assert refused == []  # nothing blocked by the page's Content-Security-Policy


@command(output=list[Review], retries=0)
def shortlist(product: str, mood: Mood = Mood.CALM) -> str:
    """Reviews of a product in one mood."""
    return f"Three {mood.value} reviews of {product}"


def test_the_form_names_the_choices_and_the_title_has_no_module_paths(
    start: Any, offline: None, page: Any
) -> None:
    url = start(objects={"shortlist": shortlist})
    page.goto(url + "/")
    page.get_by_role("button", name="shortlist", exact=True).click()
    assert page.locator("#title").inner_text() == "shortlist → list[Review]"
    assert page.locator("label[for=arg-mood]").inner_text() == "mood (one of: calm, angry)"
    assert page.locator("#arg-mood").evaluate("e => e.tagName") == "SELECT"
    assert page.locator("#arg-mood").input_value() == '"calm"'  # the default is chosen
    assert page.locator("#api-key").get_attribute("type") == "password"
    page.fill("#arg-product", "a kettle")
    page.select_option("#arg-mood", '"angry"')
    page.click("#run")
    page.locator("#result").filter(has_text='"stars"').wait_for()
