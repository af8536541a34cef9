"""Feedback and learning in the web app, in a real browser against a real kernel: a
correction in the chat changes the next routing of the same words for that user only;
thumbs up/down on an answer and on an activity row reach the rewards; the learned page
lists and forgets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, chromium_missing
from kernelproc import KernelProc, start_kernel

why = chromium_missing()
pytestmark = [pytest.mark.skipif(why is not None, reason=why or ""), pytest.mark.timeout(600)]

PASSWORD = "another long enough password"
WRONG = "my notes please"  # misread today: asks for the text of a new note


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str, str, Any]]:
    from playwright.sync_api import sync_playwright

    k = start_kernel(tmp_path_factory.mktemp("home"), wait_s=300)
    try:
        with k.client() as admin:
            token = admin.post("/v1/users", json={"name": "cleo"}).json()["token"]
            other = admin.post("/v1/users", json={"name": "dora"}).json()["token"]
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
            yield k, token, other, page
            context.close()
            browser.close()
    finally:
        k.stop()


def say(page: Any, text: str) -> Any:
    answers = page.locator(".msg.assistant")
    before = answers.count()
    page.fill("#message", text)
    page.press("#message", "Enter")
    answer = answers.nth(before)
    page.wait_for_function("() => !document.getElementById('send').disabled")
    return answer


def last_calls(k: KernelProc, token: str, page: Any) -> list[str]:
    conversation = page.url.rstrip("/").rsplit("/", 1)[-1]
    with k.client(token) as c:
        messages = c.get(f"/v1/conversations/{conversation}").json()["messages"]
    data = [m for m in messages if m["role"] == "assistant"][-1]["data"]
    return [f"{x['agent']}.{x['function']}" for x in data.get("calls") or []]


def api_calls(k: KernelProc, token: str, text: str) -> list[str]:
    with k.client(token) as c:
        done = c.post("/v1/chat", json={"message": text, "stream": False}).json()
    return [f"{x['agent']}.{x['function']}" for x in done["calls"]]


def test_a_correction_in_the_web_chat_changes_the_next_routing_for_that_user_only(
    signed_in: tuple[KernelProc, str, str, Any],
) -> None:
    k, token, other, page = signed_in
    asked = say(page, WRONG)
    assert "what text" in asked.inner_text().lower()
    assert api_calls(k, other, WRONG) == []  # dora's Sidekick does the same today
    say(page, "no, I meant show my notes")
    assert last_calls(k, token, page) == ["notes.recent"]
    page.goto("/")
    page.wait_for_selector("#composer")
    say(page, WRONG)
    assert last_calls(k, token, page) == ["notes.recent"]  # from the next message on
    assert api_calls(k, other, WRONG) == []  # another user is unaffected

    page.goto("/learned")
    rows = page.locator("tr[data-example]")
    assert rows.count() == 2
    assert "never asks notes.save" in page.locator("tr[data-kind=avoid]").inner_text()
    page.locator("tr[data-kind=prefer] button[data-action=forget]").click()
    page.wait_for_function("() => document.querySelectorAll('tr[data-example]').length === 1")
    with k.client(token) as c:
        assert [x["kind"] for x in c.get("/v1/learned").json()["examples"]] == ["avoid"]
    page.click("button[data-action=learning]")
    page.wait_for_selector("button[data-learning=false]")
    with k.client(token) as c:
        assert c.get("/v1/learned/settings").json() == {"learning": False}


def test_thumbs_on_a_chat_answer_and_an_activity_row_reach_the_rewards(
    signed_in: tuple[KernelProc, str, str, Any],
) -> None:
    k, token, _, page = signed_in
    page.goto("/")
    page.wait_for_selector("#composer")
    answer = say(page, "add rye bread to my grocery list")
    answer.locator(".rate button[data-rate=down]").click()
    page.wait_for_selector(".msg.assistant .rate button[data-rate=down][aria-pressed=true]")
    page.fill(".rate-note input", "I meant the bakery list")
    page.click(".rate-note button[type=submit]")
    page.wait_for_function("() => !document.querySelector('.rate-note')")
    conversation = page.url.rstrip("/").rsplit("/", 1)[-1]
    with k.client(token) as c:
        messages = c.get(f"/v1/conversations/{conversation}").json()["messages"]
        run = messages[-1]["data"]["calls"][0]["invocation_id"]
        rewards = c.get(f"/v1/invocations/{run}").json()["rewards"]
    assert [(r["source"], r["value"], r["note"]) for r in rewards] == [("user", -1.0, "I meant the bakery list")]
    page.reload()  # the rating shows after a reload too
    page.wait_for_selector(".msg.assistant .rate button[data-rate=down][aria-pressed=true]")

    page.goto("/activity")
    row = page.locator(f".rate[data-target='{run}']")
    row.locator("button[data-rate=up]").click()
    page.wait_for_selector(f".rate[data-target='{run}'] button[data-rate=up][aria-pressed=true]")
    with k.client(token) as c:
        rewards = c.get(f"/v1/invocations/{run}").json()["rewards"]
    assert sorted((r["source"], r["value"]) for r in rewards) == [("user", -1.0), ("user", 1.0)]
    page.reload()
    page.wait_for_selector(f".rate[data-target='{run}'] button[data-rate=up][aria-pressed=true]")
    page.goto(f"/activity/{run}")  # the run's own page: the rating pressed, the rewards listed
    page.wait_for_selector(".heading .rate button[data-rate=up][aria-pressed=true]")
    assert "from you (“I meant the bakery list”)" in page.locator("p.rewards").inner_text()
