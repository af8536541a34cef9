"""Watch: pages checked on a schedule, a post when the watched words appear or change.

State per watch, in the agent's own database: whether the words were on the page
at the last check and the line they were on (or, with no words, a digest of the
page's text). A post is made when the words appear (absent or unknown before),
when the line they are on changes, or, with no words, when the text changes. A
failed check is kept as the watch's last error and posts nothing.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from dreamer.sdk import CallError, Context, InvalidArgument, function

from .page import digest, passage, readable

MAX_WATCHES = 200
FETCH_TIMEOUT_S = 10.0
MAX_PAGE_BYTES = 2 * 1024 * 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS watches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    url TEXT NOT NULL,
    what TEXT NOT NULL,
    found INTEGER,            -- 1 / 0 at the last good check, NULL before the first
    seen TEXT,                -- the line holding the words, or the page digest when no words
    checked_at TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (url, what)
)
"""


class BadRequest(InvalidArgument, ValueError):
    """Input a function refuses: the caller gets kind invalid_argument and this one sentence."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _db(ctx: Context) -> Any:
    ctx.db.execute(_SCHEMA)
    return ctx.db


def _row(r: Any) -> dict[str, Any]:
    return {
        "id": r["id"], "url": r["url"], "what": r["what"],
        "found": None if r["found"] is None else bool(r["found"]), "seen": r["seen"],
        "checked_at": r["checked_at"], "last_error": r["last_error"],
    }


@function(
    exported=True,
    undo="remove_watch",
    undo_args={"watch_id": "result.id"},
    reply=['{!needs_grant}Watching {url} for "{what}"; I will post to your feed when it shows up.',
           "{!needs_grant}{!what}Watching {url}; I will post to your feed when it changes.",
           # Told at once, not found out by a failed check half an hour later (nobody sees those).
           "I added {url} to your watches, but I may not read it yet: it needs {needs_grant}. "
           "Grant it with `{grant_command}`; until then every check of it fails."],
    examples=["(watch|track) {url} for {what}", "(tell|alert|notify|ping) me when {url} says {what}", "watch {url}",
              "watch the page {url} for {what}",
              # how people ask to be told of a change: the words first or the page first
              "(tell|alert|notify|ping) me (when|if) {url} (says|mentions|has|shows|lists) {what}",
              "(watch|keep an eye out) for {what} on {url}",
              "(alert|notify|ping) me (when|if) {what} (appears|shows up|is) on {url}",
              "(alert|notify|ping) me (when|if) {url} changes", "track changes (on|to) {url}"],
)
def add_watch(ctx: Context, url: str, what: str = "") -> dict:
    """Watch a web page and post to the feed when the given words appear on it or their
    line changes (with no words: when the page's text changes). Checked on a schedule;
    needs a net grant for the page's host (`dreamer grant watch net:HOST`): without one the
    result names it in `needs_grant`."""
    url, what = url.strip(), " ".join(what.split())
    if not url.lower().startswith(("http://", "https://")):
        raise BadRequest("The page's address must start with http:// or https://.")
    if len(url) > 2000 or len(what) > 200:
        raise BadRequest("The address may have at most 2000 characters and the words at most 200.")
    scope = _scope(url)
    try:
        granted = ctx.granted(scope)
    except CallError as exc:
        if exc.kind != "invalid_argument":
            raise
        raise BadRequest(f"{url[:80]} names a host no grant can name, so it cannot be watched.") from None
    db = _db(ctx)
    if db.execute("SELECT count(*) FROM watches").fetchone()[0] >= MAX_WATCHES:
        raise BadRequest(f"At most {MAX_WATCHES} pages can be watched; stop watching one first.")
    db.execute("INSERT OR IGNORE INTO watches (url, what, created_at) VALUES (?, ?, ?)", (url, what, _now()))
    row = _row(db.execute("SELECT * FROM watches WHERE url = ? AND what = ?", (url, what)).fetchone())
    if not granted:  # said now, with the command; the web app turns `needs_grant` into a Grant button
        row |= {"needs_grant": scope, "grant_command": f"dreamer grant watch {scope}"}
    return row


def _scope(url: str) -> str:
    """The grant fetching `url` needs, named as the kernel names it (kernel/net/policy.py):
    `net:HOST` for any port, the host lower-case and in its ASCII (IDNA) form; an IPv6
    address needs `net:*`, since a scope cannot spell one."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        host = None
    if not host:
        raise BadRequest(f"{url[:80]} names no host to watch.")
    if ":" in host:
        return "net:*"
    try:
        return "net:" + host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return "net:" + host.lower()


@function(
    exported=True,
    reads=True,
    reply=["You are watching:{items.*.url:lines}", "{!items}You are not watching any pages."],
    examples=["what pages am I watching", "list my watches", "(list|show) the pages you are watching",
              "(list|show) my watched pages",
              "(what|which) (pages|sites|websites) (am I|are you) (tracking|monitoring|keeping an eye on) [right now|now]"],
)
def list_watches(ctx: Context) -> list:
    """The watched pages, with what was found at the last check."""
    return [_row(r) for r in _db(ctx).execute("SELECT * FROM watches ORDER BY id")]


@function(
    exported=True,
    undo="add_watch",
    undo_args={"url": "result.url", "what": "result.what"},
    reply=['Stopped watching {url} for "{what}".', "{!what}Stopped watching {url}."],
    examples=["stop watching {watch_id}",
              "(stop watching|unwatch|stop tracking|stop monitoring) [page|site|watch] [number] {watch_id}",
              "(remove|delete|cancel|drop) [my] watch [number] {watch_id}",
              "(quit|stop|cease) (tracking|watching|monitoring) [page|site|watch] [number] {watch_id}"],
)
def remove_watch(ctx: Context, watch_id: int) -> dict:
    """Stop watching a page, by the number "list my watches" shows for it."""
    db = _db(ctx)
    row = db.execute("SELECT * FROM watches WHERE id = ?", (watch_id,)).fetchone()
    if row is None:
        raise BadRequest(f"There is no watch number {watch_id}; \"list my watches\" shows their numbers.")
    db.execute("DELETE FROM watches WHERE id = ?", (watch_id,))
    return {"removed": watch_id, "url": row["url"], "what": row["what"]}


@function(
    exported=True,
    undo=False,
    reply=["Checked your watched pages: {posted} new posts in your feed, {errors} pages could not be read."],
    examples=["check my watched pages now",
              "(refresh|recheck) [all] [my|the] (watches|watched pages|watched sites)",
              "check for (changes|updates) [on my watched pages] now", "run [the] [page] checks now",
              "check (all|every one of) the (pages|sites|websites) you (watch|are watching|track|are tracking) [right now|now]"],
)
def check_now(ctx: Context) -> dict:
    """Check every watched page now instead of waiting for the schedule."""
    return _check_all(ctx)


@function(sidekick=False)  # the schedule's own call: nothing a person asks for by name
def check_watches(ctx: Context, fired: dict | None = None) -> dict:
    """The scheduled check (the `check` cron trigger)."""
    return _check_all(ctx)


def _check_all(ctx: Context) -> dict:
    db = _db(ctx)
    posted, errors = 0, 0
    for row in db.execute("SELECT * FROM watches ORDER BY id").fetchall():
        try:
            response = ctx.fetch(row["url"], timeout=FETCH_TIMEOUT_S, max_bytes=MAX_PAGE_BYTES)
            if response.status >= 400:
                raise CallError("fetch_failed", f"the page answered HTTP {response.status}")
            text = readable(response.text, response.headers.get("content-type", ""))
        except CallError as exc:
            errors += 1
            ctx.log(f"watch {row['id']}: {exc}", level="warning")
            db.execute("UPDATE watches SET last_error = ?, checked_at = ? WHERE id = ?", (str(exc)[:500], _now(), row["id"]))
            continue
        message = _news(row, text)
        found, seen = _state(row["what"], text)
        db.execute(
            "UPDATE watches SET found = ?, seen = ?, checked_at = ?, last_error = NULL WHERE id = ?",
            (found, seen, _now(), row["id"]),
        )
        if message:
            ctx.post(message, attachments=[{"url": row["url"], "watch": row["id"]}])
            posted += 1
    return {"posted": posted, "errors": errors}


def _state(what: str, text: str) -> tuple[int | None, str]:
    if not what:
        return None, digest(text)
    line = passage(text, what)
    return (1, line) if line is not None else (0, "")


def _news(row: Any, text: str) -> str | None:
    """What to post about this check, or None."""
    what, url = row["what"], row["url"]
    found, seen = _state(what, text)
    if not what:
        if row["seen"] is not None and row["seen"] != seen:
            return f"{url} changed."
        return None
    if not found:
        return None
    if not row["found"]:
        return f"“{what}” is on {url} now: {seen}"
    if row["seen"] != seen:
        return f"What {url} says about “{what}” changed: {seen}"
    return None
