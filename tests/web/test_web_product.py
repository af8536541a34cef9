"""The web app as a person with a week of history uses it, in a real browser at two widths
(1280 px in the light theme, 390 px in the dark one): chat with a follow-up, a confirmation
approved from the keyboard, history searched and deleted, an install review, a revoke, the
activity and a run's detail, the feed's grant offer for a background run refused a
permission, the 404 page. Every page is checked for horizontal overflow, for controls hidden
under others (elementFromPoint), for console errors, and with axe-core (contrast, labels, names).

Screenshots: tests/web/screenshots/<width>/<page>.png (or $DREAMER_ARTIFACTS/screenshots/...)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_kit import AXE_JS, CHROMIUM, CHROMIUM_ARGS, LAYOUT_JS, SCREENSHOTS, VENDOR, chromium_missing
from kernelproc import KernelProc, start_kernel, write_bundle

from dreamer.contracts.archive import pack

why = chromium_missing()
# The first test also seeds the week of history; axe reads every node of every page.
pytestmark = [pytest.mark.skipif(why is not None, reason=why or ""), pytest.mark.timeout(600)]

PEEK = '''
from dreamer.sdk import Context, function


@function(exported=True)
def peek(ctx: Context) -> dict:
    """Read the grocery list through the kernel."""
    return ctx.call("grocery", "list_items")
'''
WIDTHS = {"1280": ({"width": 1280, "height": 860}, "light"), "390": ({"width": 390, "height": 844}, "dark")}


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        body = b"<html><body><p>Enrollment opens soon.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    """A kernel with a week of history: 32 conversations spread over seven days, one of them
    long, and a watch on a loopback page whose host was never granted."""
    # Installing the six starters takes a few seconds on a quiet machine, minutes on a crowded one.
    k = start_kernel(tmp_path_factory.mktemp("product") / "home", wait_s=240)
    site = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    with k.client() as c:
        said = ["add rosemary to my grocery list", "what's on my calendar tomorrow", "what's on my grocery list",
                "add eggs and bread to my grocery list", "show my notes"]
        for i in range(32):
            c.post("/v1/chat", json={"message": said[i % len(said)], "stream": False}).raise_for_status()
        long = c.post("/v1/chat", json={"message": "what's on my grocery list", "stream": False}).json()["conversation_id"]
        for i in range(7):
            c.post("/v1/chat", json={"message": f"add item{i} to my grocery list", "conversation_id": long,
                                     "stream": False}).raise_for_status()
        url = f"http://127.0.0.1:{site.server_address[1]}/"
        assert c.post("/v1/agents/watch/functions/add_watch", json={"args": {"url": url, "what": "enrollment"}}).status_code == 200
        assert c.post("/v1/agents/watch/triggers/check/run").status_code == 202
    db = sqlite3.connect(k.home / "kernel.db")
    with db:  # a week of use: the older conversations were last used on earlier days
        rows = [r[0] for r in db.execute("SELECT id FROM conversations ORDER BY updated_at")]
        for n, conv in enumerate(rows[:-1]):
            db.execute("UPDATE conversations SET updated_at = datetime('now', ?) WHERE id = ?",
                       (f"-{(len(rows) - n) * 4} hours", conv))
    db.close()
    k.long_conversation = long  # type: ignore[attr-defined]
    k.site = url  # type: ignore[attr-defined]
    yield k
    site.shutdown()
    k.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Visit:
    """One width's browser tab, with the checks every page must pass."""

    def __init__(self, browser: Any, kernel: KernelProc, width: str) -> None:
        viewport, scheme = WIDTHS[width]
        # bypass_csp: only so axe can be injected; the pages' own scripts obey the CSP as always.
        self.context = browser.new_context(base_url=kernel.url, viewport=viewport, color_scheme=scheme, bypass_csp=True)
        self.context.set_default_timeout(30_000)
        self.page = self.context.new_page()
        self.width = width
        self.errors: list[str] = []
        self.expect_404: str | None = None
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        root = Path(os.environ["DREAMER_ARTIFACTS"]) / "screenshots" if os.environ.get("DREAMER_ARTIFACTS") else SCREENSHOTS
        self.shots = root / width
        self.shots.mkdir(parents=True, exist_ok=True)

    def _console(self, message: Any) -> None:
        if message.type != "error":
            return
        if self.expect_404 and "404" in message.text and message.location.get("url", "").endswith(self.expect_404):
            return  # the 404 page itself, asked for on purpose
        self.errors.append(f"console: {message.text} at {message.location.get('url')}")

    def check(self, name: str) -> None:
        """The page as it stands: no overflow, nothing covered, no console errors, axe clean; then its screenshot."""
        self.page.wait_for_load_state("networkidle")
        self.page.screenshot(path=str(self.shots / f"{name}.png"))
        problems = self.page.evaluate(LAYOUT_JS)
        assert problems == [], f"{name} at {self.width}px: {problems[:8]}"
        if not self.page.evaluate("typeof axe !== 'undefined'"):
            self.page.add_script_tag(path=str(VENDOR / "axe.min.js"))
        violations = self.page.evaluate(AXE_JS)
        assert violations == [], f"{name} at {self.width}px: {violations}"
        assert self.errors == [], f"{name} at {self.width}px: {self.errors}"

    def say(self, text: str) -> Any:
        answers = self.page.locator(".msg.assistant")
        before = answers.count()
        self.page.fill("#message", text)
        self.page.press("#message", "Enter")
        self.page.wait_for_function("() => !document.getElementById('send').disabled && "
                                    "!document.querySelector('.bubble.streaming')")
        return answers.nth(before)

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module", params=list(WIDTHS))
def tab(request: pytest.FixtureRequest, browser: Any, kernel: KernelProc) -> Iterator[Visit]:
    v = Visit(browser, kernel, request.param)
    yield v
    v.close()


@pytest.fixture
def visit(tab: Visit) -> Visit:
    tab.errors.clear()  # one test's failure is not the next one's
    return tab


def _visible_in(page: Any, selector: str, container: str) -> bool:
    return page.evaluate("""([s, c]) => { const r = document.querySelector(s).getBoundingClientRect(),
        box = document.querySelector(c).getBoundingClientRect();
        return r.height > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.bottom <= innerHeight; }""",
                         [selector, container])


def test_chat_history_scrolls_on_its_own_and_the_newest_message_is_in_view(visit: Visit, kernel: KernelProc) -> None:
    page = visit.page
    page.goto(f"/chat/{kernel.long_conversation}")  # type: ignore[attr-defined]
    page.wait_for_load_state("networkidle")  # the urgent-post notice has had its chance to push the list down
    assert page.evaluate("scrollY") == 0
    assert page.evaluate("document.scrollingElement.scrollHeight <= innerHeight + 1")  # the page itself never scrolls
    assert _visible_in(page, ".msg:last-child", "#messages")  # the newest message, on arrival
    assert "item6" in page.locator(".msg.user").last.inner_text()
    assert _visible_in(page, "#composer", "body")
    visit.check("chat-long-conversation")
    if visit.width == "390":
        assert not page.is_visible("#history")
        page.click("#history-toggle")
        assert page.is_visible("#history-q")
    history = page.locator("#history-list")
    assert page.evaluate("(() => { const h = document.getElementById('history-list'); return h.scrollHeight > h.clientHeight; })()")
    days = page.eval_on_selector_all("#history-list h3", "hs => hs.map(h => h.textContent)")
    assert days[0] == "Today" and len(days) >= 4  # grouped by day over the week
    assert history.locator("li").count() == 30
    visit.check("chat-history")
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        total = len(c.get("/v1/conversations", params={"limit": 500}).json())
    assert total > 30  # (the other width's run adds its own)
    page.click("#history-list .more")
    page.wait_for_function("document.querySelectorAll('#history-list li').length > 30 || document.getElementById('toast').textContent",
                           timeout=15_000)
    assert page.inner_text("#toast") == ""
    assert history.locator("li").count() == min(total, 60)  # the next page joins the list, nothing twice
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        matching = [r["id"] for r in c.get("/v1/conversations", params={"q": "rosemary", "limit": 30}).json()]
    assert 6 <= len(matching) < 33  # 32 seeded turns, one in five about rosemary (and answers that list it)
    page.fill("#history-q", "rosemary")
    page.press("#history-q", "Enter")
    page.wait_for_function(f"document.querySelectorAll('#history-list li').length === {len(matching)}")
    shown = page.eval_on_selector_all("#history-list li a", "as => as.map(a => a.getAttribute('href').split('/').pop())")
    assert shown == matching  # the search's answer, newest first
    found = len(matching)
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        before = len(c.get("/v1/conversations", params={"q": "rosemary", "limit": 500}).json())
        oldest = history.locator("li").last  # not the open conversation (deleting that one goes to a new chat)
        gone = oldest.locator("a").get_attribute("href").split("/")[-1]
        oldest.locator("button.forget").click()
        page.locator("#history-list .sure button", has_text="Delete").click()
        page.wait_for_function(f"document.querySelectorAll('#history-list li').length === {found - 1}")
        assert len(c.get("/v1/conversations", params={"q": "rosemary", "limit": 500}).json()) == before - 1
        assert c.get(f"/v1/conversations/{gone}").status_code == 404


def test_chat_with_a_follow_up_reads_sentence_first(visit: Visit) -> None:
    page = visit.page
    page.goto("/")
    assert page.title() == "Chat · dreamer"
    visit.check("chat-new")
    answer = visit.say("add milk to my grocery list")
    assert "/chat/conv_" in page.url
    first = page.url
    assert answer.locator(":scope > *").first.evaluate("e => e.classList.contains('bubble')")  # the sentence first
    assert "milk" in answer.locator(".bubble").inner_text().lower()
    details = answer.locator("details.details")
    assert details.get_attribute("open") is None  # folded
    assert details.locator("> summary").inner_text() == "Details: 1 call to grocery"
    details.locator("> summary").click()
    call = details.locator("li.call")
    assert call.locator(".fn").inner_text() == "grocery.add_items" and "ok" in (call.get_attribute("class") or "")
    assert "Asked grocery to add items: milk" in call.inner_text()
    assert call.locator("a.trace").get_attribute("href").startswith("/activity/")
    follow = visit.say("what's on my grocery list")
    assert page.url == first  # the same conversation
    assert page.locator(".msg").count() == 4
    assert follow.locator(".fn").text_content() == "grocery.list_items"
    visit.check("chat-answer")
    page.reload()  # the same cards come back from the stored conversation
    assert page.locator("details.details > summary").first.inner_text() == "Details: 1 call to grocery"
    assert page.locator(".history-list a[aria-current]").count() == 1
    visit.check("chat-reloaded")


def test_a_confirmation_is_buttons_reachable_from_the_keyboard(visit: Visit, kernel: KernelProc) -> None:
    page = visit.page
    page.goto("/")
    answer = visit.say("clear my grocery list")
    ask = answer.locator(".ask")
    approve = ask.locator("button", has_text="Approve")
    assert ask.locator("button", has_text="Decline").is_visible()
    assert answer.locator("li.call").count() == 0  # nothing ran before the yes
    text = answer.inner_text().lower()
    assert "yes / no" not in text
    question = ask.locator("p").inner_text()
    assert answer.inner_text().count(question) == 1  # asked once, not in the bubble and the box
    assert approve.evaluate("e => e === document.activeElement")  # the keyboard is already on Approve
    assert _visible_in(page, ".ask", "#messages") and _visible_in(page, "#composer", "body")
    visit.check("chat-confirmation")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelectorAll('.msg.assistant').length === 2 && !document.getElementById('send').disabled")
    assert page.locator(".msg.assistant").last.locator(".fn").text_content() == "grocery.clear"
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        assert c.post("/v1/agents/grocery/functions/list_items", json={"args": {}}).json()["result"]["items"] == []
    page.reload()
    assert page.locator(".ask").count() == 0  # answered: no buttons come back
    visit.check("chat-confirmed")


def test_install_review_then_revoke(visit: Visit, kernel: KernelProc, tmp_path: Path) -> None:
    page = visit.page
    name = f"peeker{visit.width}"
    folder = write_bundle(tmp_path, name, PEEK, required=["agent:grocery.list_items"], optional=["notify"])
    archive = tmp_path / f"{name}.tar.gz"
    archive.write_bytes(pack(folder))
    page.goto("/install")
    assert "dreamer build" not in page.inner_text("main")
    visit.check("install")
    page.set_input_files("#bundle", str(archive))
    assert page.inner_text("#chosen") == archive.name
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#review:not([hidden])")
    assert not page.is_visible("#upload")  # the review is the centre of the page
    assert "call the grocery agent's list_items function" in page.inner_text("#review").lower()
    visit.check("install-review")
    page.click("#approve")
    page.wait_for_url(f"**/agents/{name}")
    visit.check("agent")
    page.goto("/permissions")
    row = page.locator(f"tr[data-agent={name}][data-scope='agent:grocery.list_items']")
    row.locator("button[data-action=revoke]").click()
    row.locator("button[data-action=grant]").wait_for()
    visit.check("permissions")
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        assert "agent:grocery.list_items" not in c.get(f"/v1/agents/{name}").json()["grants"]
    page.goto("/agents")
    visit.check("agents")


def test_activity_reads_as_what_happened_and_opens_a_run(visit: Visit) -> None:
    page = visit.page
    page.goto("/activity")
    sentences = page.locator(".runs .sentence").all_inner_texts()
    assert len(sentences) == 25 and page.is_visible(".pager >> text=Older")  # paged
    assert any(s.startswith("Sidekick asked grocery to add items") for s in sentences)
    assert not any("functions.call" in s for s in sentences)
    assert page.inner_text("#chain") == ""  # the chain is checked on demand, not on every load
    page.click("#verify-chain")
    page.wait_for_function("document.getElementById('chain').textContent.startsWith('chain verified')")
    visit.check("activity")
    page.select_option("select[name=agent]", "grocery")
    page.select_option("select[name=outcome]", "succeeded")
    page.click(".filters button[type=submit]")
    page.wait_for_url("**/activity?agent=grocery&outcome=succeeded")
    shown = page.locator(".runs > li > .run")
    assert shown.count() > 0
    assert all(t == "done" for t in page.locator(".runs > li > .run .status-tag").all_inner_texts())
    assert all(" grocery " in s for s in page.locator(".runs > li > .run .sentence").all_inner_texts())
    page.click(".pager >> text=Older")
    page.wait_for_url("**page=2**")
    assert "agent=grocery" in page.url  # the filter holds across pages
    page.locator(".runs .sentence").first.click()
    page.wait_for_selector(".spans li")
    assert page.title().startswith("grocery.")
    visit.check("activity-detail")


def test_a_background_run_refused_a_grant_reaches_the_feed_with_a_grant_button(visit: Visit, kernel: KernelProc) -> None:
    page = visit.page
    scope = "net:127.0.0.1"
    page.goto("/agents")
    notice = page.locator(".notice")  # an urgent post raises a notice on any page
    if visit.width == "1280":
        notice.wait_for()
        assert "watch" in notice.inner_text() and scope in notice.inner_text()
        visit.check("notice")
        notice.locator("a", has_text="Open the feed").click()
        page.wait_for_url("**/feed**")
    else:
        page.goto("/feed")
    post = page.locator(".post.urgent").first
    assert f"dreamer grant watch {scope}" in post.inner_text()
    visit.check("feed")
    page.goto("/activity")
    assert page.locator(".notice").count() == 0  # seen on the feed: not raised again
    page.goto("/feed")
    offer = page.locator(".post.urgent .offer").first
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        if visit.width == "1280":
            assert scope not in c.get("/v1/agents/watch").json()["grants"]
            offer.locator("button", has_text=f"Grant {scope} to watch").click()
            offer.locator(".tag.ok").wait_for()
            assert scope in c.get("/v1/agents/watch").json()["grants"]
        else:
            assert scope in c.get("/v1/agents/watch").json()["grants"]  # granted at the other width already
    visit.check("feed-granted")


def test_a_missing_page_says_so_in_words(visit: Visit) -> None:
    page = visit.page
    visit.expect_404 = "/no/such/page"
    page.goto("/no/such/page")
    assert page.title() == "We couldn't find that page · dreamer"
    assert "<nav" in page.content()  # still signed in, still navigable
    visit.check("404")
    visit.expect_404 = None
    icon = page.request.get("/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg")
    if visit.width == "390":
        page.click(".top .menu")
        assert page.is_visible(".top nav >> text=Activity")
        visit.check("menu-open")
    page.goto("/account")
    visit.check("account")
