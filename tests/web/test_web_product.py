"""The web app as a person with a week of history uses it, in a real browser at two widths
(1280 px in the light theme, 390 px in the dark one): signing in, chat with a follow-up, a
confirmation approved from the keyboard, a clarification's choices, history searched and
deleted, an install review, a gallery search, a revoke, an agent's data, the activity and a
run's detail with its permission decisions, the feed's grant offer for a background run refused
a permission, a watch asked for in the chat that offers its grant at once, a brand-new user's
empty pages, the 404 page. Every page is checked for horizontal overflow (also inside lists that
scroll), for controls hidden under others (elementFromPoint), for console errors, and with
axe-core (contrast, labels, names). Each width's tests stand on their own.

Screenshots: ${DREAMER_ARTIFACTS:-/tmp/dreamer-artifacts}/web/<width>/<page>.png (CI keeps them)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_kit import AXE_JS, CHROMIUM, CHROMIUM_ARGS, LAYOUT_JS, VENDOR, chromium_missing, screenshots
from kernelproc import KernelProc, start_gallery, start_kernel, write_bundle

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
HERALD = '''
from dreamer.sdk import Context, function


@function(exported=True)
def shout(ctx: Context, text: str) -> dict:
    """Post an urgent message to the feed."""
    return {"id": ctx.post(text, priority="urgent")}
'''
WIDTHS = {"1280": ({"width": 1280, "height": 860}, "light"), "390": ({"width": 390, "height": 844}, "dark")}
PASSWORD = "a long enough password"
# A gallery listing whose description is long enough to wrap on a phone.
LISTED = "Greets people by name, in any of forty languages, and remembers how each person likes to be greeted."
GREETER = '''
from dreamer.sdk import Context, function


@function(exported=True)
def hello(ctx: Context, name: str) -> dict:
    """Greet someone by name."""
    return {"reply": f"Hello, {name}"}
'''
FAILING = '''
from dreamer.sdk import Context, function


@function(exported=True, examples=["open the {door} door"])
def open_door(ctx: Context, door: str) -> dict:
    """Open a door of the house."""
    raise ValueError(f"the {door} door is stuck\\nTraceback (most recent call last):\\n  File \\"x\\"")
'''


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
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
    root = tmp_path_factory.mktemp("product")
    gallery, gallery_url = start_gallery(root)
    # Installing the six starters takes a few seconds on a quiet machine, minutes on a crowded one.
    k = start_kernel(root / "home", {"DREAMER_GALLERIES": gallery_url, "DREAMER_CONFIG_DIR": str(root / "config")},
                     wait_s=240)
    assert "Logged in" in k.cli("login", gallery_url, "--name", "acme").stdout
    listed = write_bundle(root, "greeter", GREETER)
    manifest = listed / "agent.yaml"
    manifest.write_text(manifest.read_text().replace("description: A test agent.", f"description: {LISTED}")
                        .replace("publisher: tests", "publisher: acme"))
    published = k.cli("publish", str(listed))
    assert published.returncode == 0, published.stdout + published.stderr
    site = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    with k.client() as c:
        me = c.get("/v1/me").json()["name"]
        assert c.put(f"/v1/users/{me}/password", json={"password": PASSWORD}).status_code == 200  # signed in by form
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
    k.me = me  # type: ignore[attr-defined]
    yield k
    site.shutdown()
    k.stop()
    gallery.terminate()
    gallery.wait(20)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Visit:
    """One width's browser tab, with the checks every page must pass."""

    def __init__(self, browser: Any, kernel: KernelProc, width: str, name: str, shots: str = "") -> None:
        viewport, scheme = WIDTHS[width]
        # bypass_csp: only so axe can be injected; the pages' own scripts obey the CSP as always.
        self.context = browser.new_context(base_url=kernel.url, viewport=viewport, color_scheme=scheme, bypass_csp=True)
        self.context.set_default_timeout(30_000)
        self.page = self.context.new_page()
        self.width = width
        self.errors: list[str] = []
        self.expect_404: str | None = None
        self.page.on("console", self._console)
        # Requests in flight but the feed's event stream, which every page keeps open: `settle` waits for none.
        self.inflight: set[Any] = set()
        self.page.on("request", lambda r: None if "/v1/feed/stream" in r.url else self.inflight.add(r))
        self.page.on("requestfinished", lambda r: self.inflight.discard(r))
        self.page.on("requestfailed", lambda r: self.inflight.discard(r))
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.shots = screenshots(width)
        self.prefix = shots  # another user's pages: their own file names
        self.sign_in(name)

    def sign_in(self, name: str) -> None:
        """Through the sign-in form, as a person does (the page itself is checked first)."""
        page = self.page
        page.goto("/login")
        assert page.title() == "Sign in · dreamer"
        self.check("login")
        page.fill("input[name=name]", name)
        page.fill("input[name=password]", PASSWORD)
        page.click("form button[type=submit]")
        page.wait_for_url(lambda url: "/login" not in url)

    def _console(self, message: Any) -> None:
        if message.type != "error":
            return
        if self.expect_404 and "404" in message.text and message.location.get("url", "").endswith(self.expect_404):
            return  # the 404 page itself, asked for on purpose
        self.errors.append(f"console: {message.text} at {message.location.get('url')}")

    def settle(self) -> None:
        """Playwright's "networkidle" (no request for half a second) but for the feed's event
        stream, which never ends; and the page's first read of the feed has been shown."""
        self.page.wait_for_load_state("load")
        self.page.wait_for_function("() => document.documentElement.dataset.feed !== 'reading'")
        quiet = 0
        for _ in range(300):  # 30 s at most, like the other waits
            quiet = quiet + 1 if not self.inflight else 0
            if quiet >= 5:
                return
            self.page.wait_for_timeout(100)  # Playwright delivers the request events meanwhile
        raise AssertionError(f"requests still open: {[r.url for r in self.inflight]}")

    def check(self, name: str) -> None:
        """The page as it stands: no overflow, nothing covered, no console errors, axe clean; then its screenshot."""
        self.settle()
        self.page.screenshot(path=str(self.shots / f"{self.prefix}{name}.png"))
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
    v = Visit(browser, kernel, request.param, kernel.me)  # type: ignore[attr-defined]
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
    visit.settle()  # the urgent-post notice has had its chance to push the list down
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
    page.wait_for_function("() => document.querySelectorAll('#history-list li').length > 30 || document.getElementById('toast').textContent",
                           timeout=15_000)
    assert page.inner_text("#toast") == ""
    assert history.locator("li").count() == min(total, 60)  # the next page joins the list, nothing twice
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        matching = [r["id"] for r in c.get("/v1/conversations", params={"q": "rosemary", "limit": 30}).json()]
    assert 6 <= len(matching) < 33  # 32 seeded turns, one in five about rosemary (and answers that list it)
    page.fill("#history-q", "rosemary")
    page.press("#history-q", "Enter")
    page.wait_for_function(f"() => document.querySelectorAll('#history-list li').length === {len(matching)}")
    shown = page.eval_on_selector_all("#history-list li a", "as => as.map(a => a.getAttribute('href').split('/').pop())")
    assert shown == matching  # the search's answer, newest first
    found = len(matching)
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        before = len(c.get("/v1/conversations", params={"q": "rosemary", "limit": 500}).json())
        oldest = history.locator("li").last  # not the open conversation (deleting that one goes to a new chat)
        gone = oldest.locator("a").get_attribute("href").split("/")[-1]
        oldest.locator("button.forget").click()
        page.locator("#history-list .sure button", has_text="Delete").click()
        page.wait_for_function(f"() => document.querySelectorAll('#history-list li').length === {found - 1}")
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
    page.wait_for_function("() => document.querySelectorAll('.msg.assistant').length === 2 && !document.getElementById('send').disabled")
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


def test_a_placeholder_description_reads_no_description_yet(visit: Visit, tmp_path: Path) -> None:
    """The scaffold's placeholder (a bundle built from `dreamer init` as it was, or a gallery
    listing published with it) is not shown as if it were the agent's own words."""
    from dreamer.sdk.templates import PLACEHOLDER_DESCRIPTION

    page, name = visit.page, f"blank{visit.width}"
    folder = write_bundle(tmp_path, name, PEEK.replace("peek", "look"))
    manifest = folder / "agent.yaml"
    manifest.write_text(manifest.read_text().replace("description: A test agent.", f"description: {PLACEHOLDER_DESCRIPTION}"))
    archive = tmp_path / f"{name}.tar.gz"
    archive.write_bytes(pack(folder))
    page.goto("/install")
    page.set_input_files("#bundle", str(archive))
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#review:not([hidden])")
    assert page.inner_text("#r-desc") == "No description yet"
    assert PLACEHOLDER_DESCRIPTION not in page.inner_text("main")
    page.click("#approve")
    page.wait_for_url(f"**/agents/{name}")
    assert "No description yet" in page.inner_text("main") and PLACEHOLDER_DESCRIPTION not in page.inner_text("main")
    page.goto("/agents")
    card = page.locator("article.agent", has=page.locator(f"a[href='/agents/{name}']"))
    assert "No description yet" in card.inner_text()
    visit.check("agents-placeholder")


def test_activity_reads_as_what_happened_and_opens_a_run(visit: Visit) -> None:
    page = visit.page
    page.goto("/activity")
    sentences = page.locator(".runs .sentence").all_inner_texts()
    assert len(sentences) == 25 and page.is_visible(".pager >> text=Older")  # paged
    assert any(s.startswith("Grocery added ") and s.endswith(" to your grocery list.") for s in sentences)  # what happened
    assert not any(s.startswith("Sidekick asked grocery to add items") for s in sentences)  # not what was asked
    assert not any("functions.call" in s for s in sentences)
    assert page.inner_text("#chain") == ""  # the chain is checked on demand, not on every load
    page.click("#verify-chain")
    page.wait_for_function("() => document.getElementById('chain').textContent.startsWith('chain verified')")
    visit.check("activity")
    page.click("details.card > summary")  # the latest permission decisions, in words
    decisions = page.locator(".audit-list li .said").all_inner_texts()
    assert len(decisions) == 20 and not [d for d in decisions if "functions.call" in d or "agent:" in d], decisions
    assert any(" ran grocery's “" in d for d in decisions), decisions
    link = page.locator(".audit-list li a").first
    target = link.get_attribute("href")
    link.click()  # one click from a decision to its run, where its decisions are listed
    page.wait_for_url(f"**{target}")
    assert target.endswith("#audit") and page.locator("#audit + .audit-list li").count() >= 1
    visit.check("run-decisions")
    page.goto("/activity")
    page.select_option("select[name=agent]", "grocery")
    page.select_option("select[name=outcome]", "succeeded")
    page.click(".filters button[type=submit]")
    page.wait_for_url("**/activity?agent=grocery&outcome=succeeded")
    shown = page.locator(".runs > li > .run")
    assert shown.count() > 0
    assert all(t == "done" for t in page.locator(".runs > li > .run .status-tag").all_inner_texts())
    assert set(page.eval_on_selector_all(".runs .run", "rows => rows.map(r => r.dataset.agent)")) == {"grocery"}
    page.click(".pager >> text=Older")
    page.wait_for_url("**page=2**")
    assert "agent=grocery" in page.url  # the filter holds across pages
    page.locator(".runs .sentence").first.click()
    page.wait_for_selector(".spans li")
    assert page.title().startswith("grocery.")
    visit.check("activity-detail")


def test_activity_groups_a_conversation_and_a_run_with_the_calls_it_made(visit: Visit, kernel: KernelProc) -> None:
    page, w = visit.page, visit.width
    with kernel.client() as c:
        first = c.post("/v1/chat", json={"message": f"add basil{w} to my grocery list", "stream": False}).json()
        conversation = first["conversation_id"]
        c.post("/v1/chat", json={"message": f"add thyme{w} to my grocery list", "conversation_id": conversation,
                                 "stream": False}).raise_for_status()
        c.post("/v1/chat", json={"message": f"add sage{w} to my grocery list", "stream": False}).raise_for_status()
        planned = c.post("/v1/agents/recipes/functions/plan_dinner", json={"args": {"day": "2031-03-0" + w[0]}})
        assert planned.status_code == 200, planned.text
    page.goto("/activity")
    # The two runs of one conversation under one heading, though another chat ran between them.
    chat = page.locator(f".run-group[data-conversation='{conversation}']")
    assert chat.count() == 1
    assert f"add basil{w} to my grocery list" in chat.locator(".group-title").inner_text()
    said = chat.locator(".sentence").all_inner_texts()
    assert said == [f"Grocery added thyme{w} to your grocery list.", f"Grocery added basil{w} to your grocery list."], said
    chat.locator(".group-title a").click()
    page.wait_for_url(f"**/chat/{conversation}")
    page.goto("/activity")
    # The dinner plan with the grocery call it made nested under it, read as what happened.
    plan = page.locator(".runs > li", has=page.locator(".run[data-agent=recipes] > .sentence", has_text="Dinner for")).first
    assert plan.locator(".run[data-agent=recipes] > .sentence").first.inner_text().startswith("Recipes: Dinner for ")
    call = plan.locator("ul.calls .run.call[data-agent=grocery] .sentence")
    assert call.count() == 1
    assert call.inner_text().startswith("Recipes added ") or call.inner_text().startswith("Grocery: Already on your list"), \
        call.inner_text()
    visit.check("activity-grouped")
    # The filters still hold: only succeeded grocery runs, each group's rows included.
    page.goto("/activity?agent=grocery&outcome=succeeded")
    assert set(page.eval_on_selector_all(".runs .run", "rows => rows.map(r => r.dataset.agent)")) == {"grocery"}
    assert page.locator(f".run-group[data-conversation='{conversation}'] .sentence").count() == 2
    earlier = page.locator(".group-title", has_text="Calls made by")  # the plan is filtered out; its call is not
    assert earlier.count() >= 1


def test_a_background_run_refused_a_grant_reaches_the_feed_with_a_grant_button(visit: Visit, kernel: KernelProc) -> None:
    page = visit.page
    scope = "net:127.0.0.1"
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        # This width finds the grant missing, whatever ran before it (the other width grants it too).
        c.delete("/v1/agents/watch/grants", params={"scope": scope})
        assert scope not in c.get("/v1/agents/watch").json()["grants"]
        page.goto("/agents")
        notice = page.locator(".notice")  # an urgent post raises a notice on any page this browser has not seen
        notice.wait_for()
        assert "watch" in notice.inner_text() and scope in notice.inner_text()
        visit.check("notice")
        notice.locator("a", has_text="Open the feed").click()
        page.wait_for_url("**/feed**")
        post = page.locator(".post.urgent").first
        assert f"dreamer grant watch {scope}" in post.inner_text()
        visit.check("feed")
        page.goto("/activity")
        assert page.locator(".notice").count() == 0  # seen on the feed: not raised again
        page.goto("/feed")
        offer = page.locator(".post.urgent .offer").first
        offer.locator("button", has_text=f"Grant {scope} to watch").click()
        offer.locator(".tag.ok").wait_for()
        assert scope in c.get("/v1/agents/watch").json()["grants"]
        visit.check("feed-granted")


def test_an_urgent_post_raises_a_notice_in_the_open_page_without_polling(
    visit: Visit, kernel: KernelProc, tmp_path: Path
) -> None:
    page, name = visit.page, f"herald{visit.width}"
    done = kernel.cli("install", str(write_bundle(tmp_path, name, HERALD, required=["notify"])), "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    feed_requests: list[str] = []
    page.on("request", lambda r: feed_requests.append(r.url) if "/v1/feed" in r.url else None)
    page.goto("/agents")
    visit.settle()
    assert page.locator(".notice").count() == 0  # every urgent post so far was seen on the feed
    page.wait_for_function("() => document.documentElement.dataset.feed === 'listening'")
    said = f"The oven is still on ({visit.width} px)"
    with kernel.client() as c:
        assert c.post(f"/v1/agents/{name}/functions/shout", json={"args": {"text": said}}).status_code == 200
    notice = page.locator(".notice", has_text=said)
    notice.wait_for()  # pushed down the open stream
    reads = [u for u in feed_requests if "/v1/feed/stream" not in u]
    streams = [u for u in feed_requests if "/v1/feed/stream" in u]
    assert len(reads) == 1 and len(streams) == 1, feed_requests  # one read on arrival, one stream: no polling
    visit.check("notice-pushed")
    notice.locator("button", has_text="Dismiss").click()
    assert page.locator(".notice").count() == 0
    page.reload()
    visit.settle()
    assert page.locator(".notice").count() == 0  # dismissed is seen: not raised again
    with kernel.client() as c:  # the other width's tests find the feed as they left it
        assert c.delete("/v1/feed", params={"agent": name}).json() == {"deleted": 1}


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
    page.goto("/learned")  # what Sidekick learned (issue 20): laid out and accessible like the rest
    visit.check("learned")


def test_a_long_unbroken_word_stays_inside_the_chat(visit: Visit) -> None:
    """A word with no break point wraps inside its bubble, its call's sentence and its details
    instead of widening the messages sideways (LAYOUT_JS flags a too-wide item inside the
    messages even though the list scrolls). Not a web address: Sidekick reads one as a page to
    keep, never a thing on a grocery list, and asks which agent is meant."""
    page = visit.page
    word = "Rindfleischetikettierungsueberwachungsaufgabenuebertragungsgesetz" + "x" * 30 + visit.width
    page.goto("/")
    answer = visit.say(f"add {word} to my grocery list")
    answer.locator("details.details > summary").click()
    answer.locator("li.call details > summary").click()  # the arguments and the result, unfolded
    visit.check("chat-long-word")


def test_an_agents_own_data_is_a_readable_table(visit: Visit) -> None:
    page = visit.page
    page.goto("/agents/grocery/data")
    assert page.locator("table").count() >= 1
    visit.check("agent-data")


def test_a_gallery_search_lays_out_on_any_width(visit: Visit) -> None:
    page = visit.page
    page.goto("/install")
    field, button = page.locator("#gallery-q"), page.locator("#gallery-form button[type=submit]")
    a, b = field.bounding_box(), button.bounding_box()
    assert a and b and abs(a["y"] - b["y"]) < 4 and b["x"] > a["x"]  # the button beside its field, not under it
    page.fill("#gallery-q", "greet")
    page.press("#gallery-q", "Enter")
    hit = page.locator(".gallery-hit").first
    hit.wait_for()
    assert "greeter" in hit.inner_text() and LISTED in hit.inner_text()
    visit.check("install-gallery")


def test_a_clarification_offers_its_choices_as_real_buttons(visit: Visit, kernel: KernelProc) -> None:
    page = visit.page
    with kernel.client() as c:  # what Sidekick learned from the other width's pick would answer without asking
        for learned in c.get("/v1/learned").json()["examples"]:
            c.delete(f"/v1/learned/{learned['id']}").raise_for_status()
    page.goto("/")
    answer = visit.say("add bread")  # the grocery list or the calendar: Sidekick asks
    chips = answer.locator(".ask button")
    assert chips.count() >= 2
    looks = chips.evaluate_all("bs => bs.map(b => [b.disabled, getComputedStyle(b).opacity])")
    assert all(not disabled and float(opacity) == 1 for disabled, opacity in looks), looks  # not greyed out
    assert chips.first.evaluate("e => e === document.activeElement")  # the keyboard is on the first choice
    assert _visible_in(page, ".ask", "#messages") and _visible_in(page, "#composer", "body")
    visit.check("chat-clarification")
    answer.locator(".ask button", has_text="grocery list").click()
    page.wait_for_function("() => document.querySelectorAll('.msg.assistant').length === 2 && !document.getElementById('send').disabled")
    assert page.locator(".msg.assistant").last.locator(".fn").text_content() == "grocery.add_items"
    assert answer.locator(".ask.answered").count() == 1


def test_a_watch_asked_for_in_the_chat_offers_its_grant_at_once(visit: Visit, kernel: KernelProc) -> None:
    page, host = visit.page, f"w{visit.width}.example.org"
    page.goto("/")
    answer = visit.say(f"watch https://{host}/courses for enrollment")
    said = answer.locator(".bubble").inner_text()
    assert f"it needs net:{host}" in said and f"dreamer grant watch net:{host}" in said, said
    offer = answer.locator(f".offer[data-scope='net:{host}']")
    visit.check("chat-grant-offer")
    offer.locator("button", has_text=f"Grant net:{host} to watch").click()
    offer.locator(".tag.ok").wait_for()
    with httpx.Client(base_url=kernel.url, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
        assert f"net:{host}" in c.get("/v1/agents/watch").json()["grants"]
        c.post("/v1/agents/watch/functions/remove_watch",
               json={"args": {"watch_id": answer.locator(".result").evaluate("e => JSON.parse(e.textContent).id")}})


def test_a_failed_call_reads_as_a_sentence_in_the_chat_the_activity_and_the_run(
    visit: Visit, kernel: KernelProc, tmp_path: Path
) -> None:
    """An agent's ValueError (with a traceback in its message) is one sentence wherever it is shown;
    the run page keeps the agent's report word for word where its result would be."""
    page, name = visit.page, "doors"
    done = kernel.cli("install", str(write_bundle(tmp_path, name, FAILING)), "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        page.goto("/")
        answer = visit.say("open the front door")
        answer.locator("details.details > summary").click()
        why = answer.locator(".why")
        assert why.inner_text() == "The front door is stuck.", why.inner_text()
        for shown in (answer.inner_text(), page.locator(".msg.assistant").last.inner_text()):
            assert not any(w in shown for w in ("ValueError", "Traceback", "raised", "open_door raised"))
        page.reload()
        stored = page.locator(".msg.assistant").last
        stored.locator("details.details > summary").click()
        assert stored.locator(".why").inner_text() == "The front door is stuck."  # as the live answer said it
        run = stored.locator("a.trace").get_attribute("href")
        page.goto(f"/activity?agent={name}")
        assert page.locator(".runs .alert.error").first.inner_text() == "The front door is stuck."
        visit.check("activity-failed")
        page.goto(run)
        assert page.locator(".alert.error").inner_text() == "The front door is stuck."
        reported = page.locator("section", has=page.locator("h2", has_text="What it reported")).locator("pre")
        assert "ValueError" in reported.inner_text()  # the agent's report word for word, for whoever debugs
        assert page.locator("#audit + .audit-list li").first.inner_text().startswith(f"Allowed Sidekick ran {name}'s “open door”")
        visit.check("run-failed")
    finally:
        kernel.cli("uninstall", name, "--yes")


def test_a_new_users_empty_pages_lead_somewhere_that_works(browser: Any, kernel: KernelProc, tab: Visit) -> None:
    """Someone who has just been given an account: nothing has run, nothing was posted, nothing
    learned; each empty page says what will show up there and leads on, and the feed's
    suggestion (watch a page) works, its grant offered at once. Then someone with no agents."""
    width = tab.width
    fresh, bare = f"fresh{width}", f"bare{width}"
    with kernel.client() as c:
        for user in (fresh, bare):
            assert c.post("/v1/users", json={"name": user}).status_code == 201
            assert c.put(f"/v1/users/{user}/password", json={"password": PASSWORD}).status_code == 200
        for agent in c.get("/v1/agents", headers={"X-Dreamer-User": bare}).json():
            c.delete(f"/v1/agents/{agent['name']}", headers={"X-Dreamer-User": bare}).raise_for_status()
        # The watch starter checks its pages every half hour ("*/30"): a run at :00 or :30 between this
        # account's making and the activity page's check made that page not empty. The user pauses it, as
        # anyone may, so nothing runs until they ask.
        c.patch("/v1/agents/watch/triggers/check", json={"paused": True},
                headers={"X-Dreamer-User": fresh}).raise_for_status()
    v = Visit(browser, kernel, width, fresh, shots="new-user-")
    try:
        page = v.page
        for path, words in (("/activity", "Nothing has run yet"), ("/learned", "Nothing learned yet"),
                            ("/feed", "Nothing here yet")):
            page.goto(path)
            assert words in page.inner_text("main")
            v.check(path.strip("/") + "-empty")
        page.click("text=Ask Sidekick to watch a page")
        page.wait_for_url("**/?say=**")
        assert page.input_value("#message") == "watch https://example.com for enrollment"
        page.press("#message", "Enter")
        page.wait_for_function("() => !document.getElementById('send').disabled && !document.querySelector('.bubble.streaming')")
        offer = page.locator(".msg.assistant .offer[data-scope='net:example.com']")
        offer.locator("button").click()
        offer.locator(".tag.ok").wait_for()
        with kernel.client() as c:
            assert "net:example.com" in c.get("/v1/agents/watch", headers={"X-Dreamer-User": fresh}).json()["grants"]
        v.check("watch-granted")
    finally:
        v.close()
    v = Visit(browser, kernel, width, bare, shots="no-agents-")
    try:
        page = v.page
        page.goto("/")
        assert "No agents are installed yet" in page.inner_text("#messages")
        v.check("chat-empty")
        for path, words in (("/agents", "No agents yet"), ("/permissions", "Nothing to manage yet")):
            page.goto(path)
            assert words in page.inner_text("main")
            v.check(path.strip("/") + "-empty")
        page.click("main a.button.primary")  # "Install an agent"
        page.wait_for_url("**/install")
    finally:
        v.close()
