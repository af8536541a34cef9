"""A follow-up and an undo in the web chat, in a real browser against a real kernel."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, chromium_missing
from kernelproc import KernelProc, start_kernel

why = chromium_missing()
# A kernel of its own and a second user with the starters: slow to set up on a busy machine.
pytestmark = [pytest.mark.skipif(why is not None, reason=why or ""), pytest.mark.timeout(600)]

PASSWORD = "another long enough password"


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str, object]]:
    from playwright.sync_api import sync_playwright

    k = start_kernel(tmp_path_factory.mktemp("home"), wait_s=300)
    try:
        with k.client() as admin:
            token = admin.post("/v1/users", json={"name": "cleo"}).json()["token"]
            assert admin.put("/v1/users/cleo/password", json={"password": PASSWORD}).status_code == 200
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(base_url=k.url, viewport={"width": 1280, "height": 860})
            context.set_default_timeout(60_000)
            page = context.new_page()
            page.goto("/")
            page.fill("input[name=name]", "cleo")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_selector("#composer")
            yield k, token, page
            context.close()
            browser.close()
    finally:
        k.stop()


def say(page: object, text: str) -> object:
    answers = page.locator(".msg.assistant")  # type: ignore[attr-defined]
    before = answers.count()
    page.fill("#message", text)  # type: ignore[attr-defined]
    page.press("#message", "Enter")  # type: ignore[attr-defined]
    answer = answers.nth(before)
    page.wait_for_function("() => !document.getElementById('send').disabled")  # type: ignore[attr-defined]
    return answer


def groceries(k: KernelProc, token: str) -> list[str]:
    with k.client(token) as c:
        return c.post("/v1/agents/grocery/functions/list_items", json={"args": {}}).json()["result"]["items"]


def test_a_follow_up_then_an_undo_in_the_web_chat(signed_in: tuple[KernelProc, str, object]) -> None:
    k, token, page = signed_in
    say(page, "add milk to my grocery list").locator("li.call").wait_for(state="attached")  # type: ignore[attr-defined]
    more = say(page, "and bread too")
    more.locator("li.call").wait_for(state="attached")  # type: ignore[attr-defined]
    assert more.locator(".fn").text_content() == "grocery.add_items"  # type: ignore[attr-defined]
    assert more.locator(".bubble").inner_text().strip() == "Added bread to your grocery list."  # type: ignore[attr-defined]
    assert groceries(k, token) == ["milk", "bread"]
    undone = say(page, "undo that")
    undone.locator("li.call").wait_for(state="attached")  # type: ignore[attr-defined]
    assert undone.locator(".fn").text_content() == "grocery.remove_items"  # type: ignore[attr-defined]
    assert "Undone. Removed bread" in undone.locator(".bubble").inner_text()  # type: ignore[attr-defined]
    assert groceries(k, token) == ["milk"]
