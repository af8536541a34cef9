"""The web app in a real browser against a real kernel: sign-in and CSRF, chat (a call's
card, a clarification answered by a button, a confirmation approved), the install review
with an optional scope switched off, and a revoke that the next call feels.

Screenshots of each step land in the test's tmp folder (look at them when changing pages)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, chromium_missing
from kernelproc import KernelProc, start_kernel, write_bundle

from dreamer.contracts.archive import pack

why = chromium_missing()
# The first test also waits for the kernel, minutes on a crowded machine.
pytestmark = [pytest.mark.skipif(why is not None, reason=why or ""), pytest.mark.timeout(400)]

PASSWORD = "a long enough password"
PEEK = '''
from dreamer.sdk import Context, function


@function(exported=True)
def peek(ctx: Context) -> dict:
    """Read the grocery list through the kernel."""
    return ctx.call("grocery", "list_items")
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str]]:
    k = start_kernel(tmp_path_factory.mktemp("home"), wait_s=240)  # a crowded machine starts it slowly
    with k.client() as admin:
        token = admin.post("/v1/users", json={"name": "ann"}).json()["token"]
        assert admin.put("/v1/users/ann/password", json={"password": PASSWORD}).status_code == 200
    yield k, token
    k.stop()


@pytest.fixture(scope="module")
def page(kernel: tuple[KernelProc, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    shots = tmp_path_factory.mktemp("screens")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=kernel[0].url, viewport={"width": 1280, "height": 860})
        context.set_default_timeout(30_000)
        pg = context.new_page()
        pg.shots = shots  # type: ignore[attr-defined]
        yield pg
        context.close()
        browser.close()


def shot(page: object, name: str) -> None:
    page.screenshot(path=str(page.shots / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def ann(kernel: tuple[KernelProc, str]) -> httpx.Client:
    return kernel[0].client(kernel[1])


def say(page: object, text: str) -> object:
    """Send a message; return the assistant's answer once its stream is done."""
    answers = page.locator(".msg.assistant")  # type: ignore[attr-defined]
    before = answers.count()
    page.fill("#message", text)  # type: ignore[attr-defined]
    page.press("#message", "Enter")  # type: ignore[attr-defined]
    answer = answers.nth(before)
    page.wait_for_function("() => !document.getElementById('send').disabled")  # type: ignore[attr-defined]
    return answer


def test_sign_in_with_a_password_and_a_forged_form_is_refused(page: object, kernel: tuple[KernelProc, str]) -> None:
    page.goto("/")  # type: ignore[attr-defined]
    assert "/login" in page.url  # two users: nobody is signed in automatically  # type: ignore[attr-defined]
    page.fill("input[name=name]", "ann")  # type: ignore[attr-defined]
    page.fill("input[name=password]", "not it at all")  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    assert "do not match" in page.inner_text(".alert")  # type: ignore[attr-defined]
    page.fill("input[name=name]", "ann")  # type: ignore[attr-defined]
    page.fill("input[name=password]", PASSWORD)  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_selector("#composer")  # type: ignore[attr-defined]
    assert page.inner_text(".who .name") == "ann"  # type: ignore[attr-defined]
    cookie = next(c for c in page.context.cookies() if c["name"] == "dreamer_session")  # type: ignore[attr-defined]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie").find("dreamer_session") < 0  # type: ignore[attr-defined]
    shot(page, "01-chat-empty")

    # A form posted without the session's token (as a forged one would be) is refused, and the session lives on.
    page.evaluate("""() => {
        const f = document.createElement('form'); f.method = 'post'; f.action = '/logout';
        document.body.append(f); f.submit(); }""")  # type: ignore[attr-defined]
    page.wait_for_selector("text=Not signed out")  # type: ignore[attr-defined]
    status = page.evaluate("""async () => (await fetch('/v1/agents/grocery/functions/clear',
        {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{"args": {}}'})).status""")  # type: ignore[attr-defined]
    assert status == 403
    page.goto("/")  # type: ignore[attr-defined]
    assert "/login" not in page.url  # type: ignore[attr-defined]


def test_chat_calls_grocery_and_shows_the_card(page: object, kernel: tuple[KernelProc, str]) -> None:
    page.goto("/")  # type: ignore[attr-defined]
    assert page.is_visible("#offline-banner")  # type: ignore[attr-defined]
    answer = say(page, "add milk to my grocery list")
    answer.locator("details.details > summary").click()
    card = answer.locator("li.call")
    assert card.locator(".fn").inner_text() == "grocery.add_items"
    assert "ok" in (card.get_attribute("class") or "")
    card.locator("summary").click()
    assert "milk" in card.locator(".args").inner_text().lower()
    assert "milk" in answer.locator(".bubble").inner_text().lower()
    shot(page, "02-chat-card")
    assert "/chat/conv_" in page.url  # type: ignore[attr-defined]
    # The conversation persists: reloading shows the same card from history.
    page.reload()  # type: ignore[attr-defined]
    assert page.locator("li.call .fn").first.text_content() == "grocery.add_items"  # type: ignore[attr-defined]
    with ann(kernel) as c:
        assert "milk" in json.dumps(c.post("/v1/agents/grocery/functions/list_items", json={"args": {}}).json()).lower()


def test_clarification_answered_by_a_button(page: object) -> None:
    page.goto("/")  # type: ignore[attr-defined]
    answer = say(page, "add bread")  # the grocery list or the calendar: Sidekick asks
    choices = answer.locator(".ask button")
    assert choices.count() >= 2
    shot(page, "03-clarification")
    grocery = answer.locator(".ask button", has_text="grocery list")
    grocery.click()
    page.wait_for_function("() => !document.getElementById('send').disabled")  # type: ignore[attr-defined]
    last = page.locator(".msg.assistant").last  # type: ignore[attr-defined]
    last.locator("li.call").wait_for(state="attached")
    assert last.locator(".fn").text_content() == "grocery.add_items"


def test_confirmation_approved(page: object, kernel: tuple[KernelProc, str]) -> None:
    page.goto("/")  # type: ignore[attr-defined]
    answer = say(page, "clear my grocery list")
    assert answer.locator("li.call").count() == 0  # nothing ran before the yes
    approve = answer.locator(".ask button", has_text="Approve")
    assert answer.locator(".ask button", has_text="Decline").is_visible()
    shot(page, "04-confirmation")
    approve.click()
    page.wait_for_function("() => !document.getElementById('send').disabled")  # type: ignore[attr-defined]
    last = page.locator(".msg.assistant").last  # type: ignore[attr-defined]
    assert last.locator(".fn").text_content() == "grocery.clear"
    with ann(kernel) as c:
        assert c.post("/v1/agents/grocery/functions/list_items", json={"args": {}}).json()["result"]["items"] == []


def test_install_review_with_an_optional_scope_off_then_revoke(
    page: object, kernel: tuple[KernelProc, str], tmp_path: Path
) -> None:
    folder = write_bundle(tmp_path, "peeker", PEEK, required=["agent:grocery.list_items"],
                          optional=["net:api.example.com", "notify"])
    archive = tmp_path / "peeker.tar.gz"
    archive.write_bytes(pack(folder))
    page.goto("/install")  # type: ignore[attr-defined]
    page.set_input_files("#bundle", str(archive))  # type: ignore[attr-defined]
    page.click("#upload-form button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_selector("#review:not([hidden])")  # type: ignore[attr-defined]
    review = page.inner_text("#review").lower()  # type: ignore[attr-defined]
    assert "published by tests" in review and "call the grocery agent's list_items function" in review
    assert "internet to api.example.com" in review and "high risk" in review
    with ann(kernel) as c:
        assert c.get("/v1/agents/peeker").status_code == 404  # nothing installed, nothing granted before Approve
    # Optional switches start off: net stays off, notify is turned on.
    switch = page.locator("input[data-scope='net:api.example.com']")  # type: ignore[attr-defined]
    assert not switch.is_checked()
    notify = page.locator("input[data-scope='notify']")  # type: ignore[attr-defined]
    assert not notify.is_checked()
    notify.click()
    assert notify.is_checked()
    shot(page, "05-install-review")
    page.click("#approve")  # type: ignore[attr-defined]
    page.wait_for_url("**/agents/peeker")  # type: ignore[attr-defined]
    shot(page, "06-agent")
    with ann(kernel) as c:
        assert sorted(c.get("/v1/agents/peeker").json()["grants"]) == ["agent:grocery.list_items", "notify"]
        assert c.post("/v1/agents/peeker/functions/peek", json={"args": {}}).status_code == 200

    page.goto("/permissions")  # type: ignore[attr-defined]
    row = page.locator("tr[data-agent=peeker][data-scope='agent:grocery.list_items']")  # type: ignore[attr-defined]
    assert "just now" in row.inner_text() or "min ago" in row.inner_text()  # last used, from the audit log
    row.locator("button[data-action=revoke]").click()
    row.locator("button[data-action=grant]").wait_for()
    shot(page, "07-permissions")
    with ann(kernel) as c:
        refused = c.post("/v1/agents/peeker/functions/peek", json={"args": {}})
        assert refused.status_code >= 400
        assert refused.json()["error"]["code"] in ("permission_denied", "agent_error"), refused.text
        assert "agent:grocery" in refused.json()["error"]["message"]

    # The refusal shows in Activity, and its trace opens.
    page.goto("/activity")  # type: ignore[attr-defined]
    page.click("#verify-chain")  # type: ignore[attr-defined]
    page.wait_for_function("() => document.getElementById('chain').textContent.startsWith('chain verified')")  # type: ignore[attr-defined]
    page.locator("a", has_text="asked peeker to peek").first.click()  # type: ignore[attr-defined]
    page.wait_for_selector(".spans li")  # type: ignore[attr-defined]
    assert "failed" in page.inner_text(".status-tag")  # type: ignore[attr-defined]
    # The refusal in words (its code, permission_denied, is no longer printed beside it).
    assert "has not granted agent:grocery.list_items" in page.inner_text(".alert.error")  # type: ignore[attr-defined]
    shot(page, "08-trace")


def test_upgrade_review_shows_only_what_changed(page: object, kernel: tuple[KernelProc, str], tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, "peeker", PEEK, required=["agent:grocery.list_items"],
                          optional=["net:api.example.com", "notify", "memory:read"], version="0.2.0")
    archive = tmp_path / "peeker-0.2.0.tar.gz"
    archive.write_bytes(pack(folder))
    page.goto("/install")  # type: ignore[attr-defined]
    page.set_input_files("#bundle", str(archive))  # type: ignore[attr-defined]
    page.click("#upload-form button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_selector("#review:not([hidden])")  # type: ignore[attr-defined]
    assert "Upgrade from 0.1.0 to 0.2.0" in page.inner_text("#r-upgrade")  # type: ignore[attr-defined]
    asked = [page.locator("#r-scopes code").nth(i).inner_text()  # type: ignore[attr-defined]
             for i in range(page.locator("#r-scopes code").count())]  # type: ignore[attr-defined]
    assert asked == ["memory:read"]  # only the new scope is asked about
    shot(page, "09-upgrade-review")
    page.click("#decline")  # type: ignore[attr-defined]
    with ann(kernel) as c:
        assert c.get("/v1/agents/peeker").json()["version"] == "0.1.0"  # declined: nothing changed


def test_cli_sets_a_password_and_ends_the_browser_sessions(kernel: tuple[KernelProc, str]) -> None:
    k, token = kernel
    with ann(kernel) as c:
        c.put("/v1/users/ann/password", json={"password": PASSWORD})  # whatever ran before
    done = k.cli("users", "passwd", "ann", "--password-stdin", "--json", token=token, input="another password\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["password_set"] is True
    short = k.cli("users", "passwd", "ann", "--password-stdin", token=token, input="short\n")
    assert short.returncode != 0 and "at least 8" in short.stderr
    with ann(kernel) as c:
        assert c.get("/v1/sessions").json() == []  # a new password signs every browser out
        assert c.put("/v1/users/ann/password", json={"password": PASSWORD}).status_code == 200
