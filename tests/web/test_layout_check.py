"""The browser tests' layout check (browser_kit.LAYOUT_JS) on pages made to fail it: it must
flag what a person would meet (a too-wide item hidden by a list that scrolls up and down, a
page wider than the screen, a control under another) and pass what is laid out right."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, LAYOUT_JS, chromium_missing

why = chromium_missing()
pytestmark = [pytest.mark.skipif(why is not None, reason=why or ""), pytest.mark.timeout(120)]

LIST = """<!doctype html><html><body style="margin:0">
<ul id="messages" style="height:300px; overflow-y:auto; width:300px; margin:0; padding:0">{items}</ul>
</body></html>"""


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 390, "height": 844})
        yield context.new_page()
        context.close()
        browser.close()


def problems(page: Any, html: str) -> list[str]:
    page.set_content(html)
    return page.evaluate(LAYOUT_JS)


@pytest.mark.parametrize("item", [
    '<li><div class="bubble" style="width:500px">a bubble wider than its list</div></li>',
    '<li><span style="white-space:nowrap">' + "word" * 40 + "</span></li>",
    '<li><table><tr><td>' + "x" * 90 + "</td></tr></table></li>",
])
def test_a_too_wide_item_in_a_list_that_scrolls_up_and_down_is_flagged(page: Any, item: str) -> None:
    found = problems(page, LIST.format(items="<li>fine</li>" + item))
    assert found and "ul#messages" in found[0] and "only scrolls up and down" in found[0], found


def test_a_list_clipping_sideways_still_hides_nothing_too_wide(page: Any) -> None:
    clipped = LIST.replace("overflow-y:auto", "overflow-y:auto; overflow-x:hidden")
    found = problems(page, clipped.format(items='<li><div style="width:500px">clipped away</div></li>'))
    assert found and "overflow-x hidden" in found[0], found


def test_what_fits_passes_and_code_may_scroll_sideways(page: Any) -> None:
    items = ("<li>short</li>" * 40 + '<li><pre style="overflow:auto">' + "x" * 300 + "</pre></li>"
             + '<li style="overflow-wrap:anywhere">' + "y" * 300 + "</li>")
    assert problems(page, LIST.format(items=items)) == []


def test_a_page_wider_than_the_screen_and_a_covered_button_are_flagged(page: Any) -> None:
    wide = problems(page, '<body><div style="width:600px">wide</div></body>')
    assert any("the page is" in p for p in wide) and any("div" in p and "reaches" in p for p in wide), wide
    covered = problems(page, '<body><button id="b">Go</button>'
                             '<div style="position:fixed; inset:0; background:white">over it</div></body>')
    assert any("button#b" in p and "is under" in p for p in covered), covered
