"""Notes: short texts and saved articles, tagged, searchable, in the agent's own database.

Times are stored in UTC and shown in the user's timezone. Articles keep a
short summary: written by the model when the agent holds the optional `llm`
grant and a model answers, made from the article's own sentences otherwise.
An article given without its text is fetched through the kernel when the
optional `net:*` grant allows; when it cannot be, the address and title are
kept with a note saying so, and the user can save it again with the text.
"""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from typing import Any
from urllib.parse import urlsplit

from dreamer.sdk import CallError, Context, NotAvailable, function

from . import clean, store
from .page import FetchFailed, from_fetch
from .summary import clip, summarize

MAX_RESULTS = 100
# Both inside one invocation's time limit (30 s by default), with room for the rest.
FETCH_TIMEOUT_S = 15.0
SUMMARY_MAX_TOKENS = 300
MAX_NOTES = 100_000  # a notebook larger than this is a runaway loop, not a person writing
PREVIEW_CHARS = 500


def _zone(name: str | None) -> tuple[tzinfo, str]:
    """The user's timezone and its name; UTC when it is unset or unknown on this machine."""
    if name:
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(name), name
        except (KeyError, ValueError, OSError, ImportError):  # ZoneInfoNotFoundError is a KeyError
            pass
    return timezone.utc, "UTC"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _local(stamp: str | None, tz: tzinfo) -> str | None:
    if not stamp:
        return None
    return datetime.fromisoformat(stamp).astimezone(tz).isoformat(timespec="minutes")


def _shown(note: store.Note, tz: tzinfo, *, full: bool) -> dict[str, Any]:
    """A note as callers see it. `text` is the note itself, or an article's summary."""
    text = note.body if note.kind == "note" else (note.summary or "")
    out: dict[str, Any] = {
        "id": note.id,
        "kind": note.kind,
        "title": note.title,
        "text": text if full else clip(text, PREVIEW_CHARS),
        "tags": note.tags,
        "url": note.url,
        "saved_at": note.saved_at,
        "saved_local": _local(note.saved_at, tz),
    }
    if note.kind == "article":
        out["summary_source"] = note.summary_source
        out["has_text"] = bool(note.body)
    return out


def _ready(ctx: Context) -> tuple[bool, tzinfo, str]:
    fts = store.ensure_schema(ctx.db)
    tz, tz_name = _zone(getattr(ctx.user, "timezone", None))
    return fts, tz, tz_name


def _room_for_one_more(ctx: Context) -> None:
    if store.count(ctx.db) >= MAX_NOTES:
        raise clean.BadRequest(f"The notebook holds its limit of {MAX_NOTES:,} notes; nothing more can be saved.")


@function(
    exported=True,
    undo="delete",
    undo_args={"note_id": "result.id"},
    reply=['Saved your note: "{text}".'],
    examples=[
        "save a note {text}",
        "note to self[:] {text}",
        "note that {text}",
        "take a note {text}",
        "make a note that {text}",
        "jot down {text}",
        "write down {text}",
        "add a note {text}",
        "save a note {text} tagged {tags}",
        "note {text} with the tags {tags}",
        "save {text} in my notes",
        "(remember|record|keep) in my notes [that] {text}",
        "remember (that|this)[:] {text}",
        "(put|write|add) in my notes [that] {text}",
    ],
)
def save(ctx: Context, text: str, tags: list[str] = []) -> dict:  # noqa: B006 - read, never changed
    """Save a note, optionally with tags.

    Tags are single words ("work", "to-read"); hashtags in the text (#errands)
    become tags too. Returns the new note's id, its text and its tags.
    """
    return _add_note(ctx, text, tags)


def _add_note(ctx: Context, text: str, tags: list[str]) -> dict:
    """Save a plain note with these tags (and its hashtags), and return it as callers see it."""
    body = clean.note_text(text)
    wanted = clean.tags(tags, body)
    fts, tz, tz_name = _ready(ctx)
    _room_for_one_more(ctx)
    note_id = store.add(ctx.db, fts, kind="note", body=body, tags=wanted, saved_at=_now())
    ctx.log("saved a note", id=note_id, chars=len(body), tags=len(wanted))
    note = store.get(ctx.db, note_id)
    assert note is not None  # just inserted in this transaction
    return {**_shown(note, tz, full=True), "timezone": tz_name}


@function(
    exported=True,
    reads=True,
    reply=['Your notes about "{query}":{notes.*.text:lines}', '{!notes}I found no notes about "{query}".'],
    examples=[
        "find my notes about {query}",
        "search my notes for {query}",
        "what did I write about {query}",
        "do I have notes on {query}",
        "look up {query} in my notes",
        "notes about {query}",
        "find {query} in my notes",
        "show my top {limit} notes about {query}",
        "what notes do I have (about|on) {query}",
        "show [me] [my] notes (about|on) {query}",
        "look in my notes for {query}",
        # what the user kept, asked after: "what did I save about the boiler", "what have I got saved on the landlord"
        "what did I (save|note|jot down|keep) (about|on|for) {query}",
        "(pull up|bring up|find) what I (wrote|noted|saved|jotted down) (on|about) {query}",
        "what (have|do) I (got|have) (saved|noted) (about|on) {query}",
    ],
)
def search(ctx: Context, query: str, limit: int = 10) -> dict:
    """Search notes and saved articles, best matches first, each with a snippet.

    Words are matched in any form ("meetings" finds "meeting") in titles, text,
    tags and addresses; a word written as #tag keeps only notes with that tag.
    Matched words are marked **like this** in the snippets. At most `limit`
    matches (1 to 100) come back; a higher score is a better match.
    """
    wanted = clean.query(query)
    most = clean.limit(limit, MAX_RESULTS)
    parsed = store.parse_query(wanted)
    if parsed.empty:
        raise clean.BadRequest(f"{wanted!r} has no words to search for; try a word such as 'dentist' or a tag such as '#work'.")
    fts, tz, tz_name = _ready(ctx)
    found = store.search(ctx.db, fts, parsed, most)
    ctx.log("searched notes", matches=len(found), method="fts5" if fts else "like")
    return {
        "query": wanted,
        "notes": [{**_shown(n, tz, full=False), "snippet": n.snippet, "score": n.score} for n in found],
        "count": len(found),
        "method": "fts5" if fts else "like",
        "timezone": tz_name,
    }


@function(
    exported=True,
    reads=True,
    reply=["Your latest notes:{notes.*.text:lines}", "{!notes}You have no notes yet."],
    examples=[
        "show my recent notes",
        "my last {limit} notes",
        "what did I note recently",
        "show my notes",
        "list my latest notes",
        "show my last {limit} notes",
        "what are my newest notes",
        "what did I (save|write down) recently",
        "[show] [me] the notes I (made|wrote|saved) (last|lately|recently)",
    ],
)
def recent(ctx: Context, limit: int = 10) -> dict:
    """The most recently saved notes and articles, newest first (limit: 1 to 100)."""
    most = clean.limit(limit, MAX_RESULTS)
    _, tz, tz_name = _ready(ctx)
    notes = store.recent(ctx.db, most)
    return {"notes": [_shown(n, tz, full=False) for n in notes], "count": len(notes), "timezone": tz_name}


@function(
    exported=True,
    undo="save",
    undo_args={"text": "result.text", "tags": "result.tags"},
    undo_when="result.restorable",
    reply=['Deleted the note "{text}".'],
    examples=["delete note {note_id}", "(delete|remove) [my] note [number] {note_id}"],
)
def delete(ctx: Context, note_id: int) -> dict:
    """Delete one note or saved article by its id. Returns what was deleted, so it can be saved again."""
    if isinstance(note_id, bool) or not isinstance(note_id, int) or note_id < 1:
        raise clean.BadRequest("Give the id of the note to delete, a whole number such as 3.")
    fts, tz, tz_name = _ready(ctx)
    note = store.get(ctx.db, note_id)
    if note is None:
        raise clean.BadRequest(f"There is no note {note_id}; 'show my notes' lists them with their ids.")
    store.delete(ctx.db, fts, note_id)
    ctx.log("deleted a note", id=note_id)
    # An article is saved again from its address, not its text: undo restores plain notes only.
    return {**_shown(note, tz, full=True), "deleted": True, "restorable": note.kind == "note", "timezone": tz_name}


def _fetch(ctx: Context, url: str) -> tuple[str | None, str | None, str | None]:
    """(title, text, problem): the page through the kernel, or why it could not be had."""
    try:
        page = from_fetch(ctx.fetch(url, timeout=FETCH_TIMEOUT_S))
    except NotAvailable:
        return None, None, "fetching web pages is not available here yet (not_available)"
    except CallError as exc:
        if exc.kind == "permission_denied":
            return None, None, "the notes agent may not fetch web pages: grant it net:* to allow it (permission_denied)"
        return None, None, f"fetching it failed ({exc.kind}): {clip(exc.message, 200)}"
    except FetchFailed as exc:
        return None, None, f"{exc} ({urlsplit(url).hostname})"
    return page.title, page.text, None


def _ask_model(ctx: Context):
    def ask(prompt: str) -> Any:
        try:
            return ctx.llm(prompt, variant="fast", max_tokens=SUMMARY_MAX_TOKENS)
        except (NotAvailable, CallError) as exc:
            # No grant, no model configured, budget spent, or the gateway failed: the extractive summary will do.
            ctx.log("no model summary", level="debug", kind=exc.kind)
            return None

    return ask


def _title_for(url: str, text: str | None) -> str:
    first_line = (text or "").strip().split("\n", 1)[0]
    if first_line and len(first_line) <= 120:
        return first_line
    parts = urlsplit(url)
    return clip(f"{parts.hostname}{parts.path if parts.path not in ('', '/') else ''}", clean.MAX_TITLE_CHARS)


@function(
    exported=True,
    undo="delete",
    undo_args={"note_id": "result.id"},
    undo_when="result.added",  # saving an address already saved updates it: nothing new to take away
    reply=["Saved the article {title}: {summary}", "Saved the article {url}."],
    examples=[
        "save this article {url}",
        "save the article {url}",
        "save {url} for later",
        "read later {url}",
        "bookmark {url}",
        "clip {url}",
        "keep this article {url}",
        "save the article {title} at {url}",
        "save {url} as {title}",
        # read-it-later apps' words (Pocket, Instapaper): a reading list is where articles wait
        "(add|put|save) {url} (to|on|in) my (reading list|read later list|read-later list)",
        "save {url} to read later", "(I want to|I'd like to|let me) read {url} later", "(pocket|instapaper) {url}",
        # kept to read somewhere: "keep this one for me to read on the train <url>"
        "keep [this|this one|this article] [for me] to read (later|on the train|on the bus|tonight) {url}",
        "keep {url} [for me] to read (later|on the train|on the bus|tonight)",
    ],
)
def save_article(ctx: Context, url: str, title: str | None = None, text: str | None = None) -> dict:
    """Save an article by its address, with a short summary, so it can be found later.

    Give the text to keep it as it is; without it the page is fetched when the
    agent may (grant net:*). If it cannot be fetched, the address and title are
    saved anyway with a note saying why. Saving the same address again updates
    that article instead of adding a second one. The summary is written by the
    model when the agent holds the llm grant and a model is configured, and is
    made from the article's own key sentences otherwise.
    """
    address = clean.url(url)
    given_title = clean.title(title)
    given_text = clean.article_text(text)
    fts, tz, tz_name = _ready(ctx)
    existing = store.by_url(ctx.db, address)

    fetched = False
    problem: str | None = None
    page_title: str | None = None
    body = given_text
    if body is None:
        page_title, body, problem = _fetch(ctx, address)
        fetched = body is not None
    if body is None and existing is not None and existing.body:
        body, problem = existing.body, None  # keep the text saved before rather than losing it

    summary: str | None = None
    how: str | None = None
    if body:
        summary, how = summarize(body, given_title or page_title, _ask_model(ctx))
    final_title = given_title or page_title or (existing.title if existing else None) or _title_for(address, body)
    stamp = _now()
    if existing is None:
        _room_for_one_more(ctx)
        note_id = store.add(
            ctx.db, fts, kind="article", body=body or "", tags=[], saved_at=stamp, title=final_title,
            summary=summary, summary_source=how, url=address,
        )
    else:
        note_id = existing.id
        store.update_article(
            ctx.db, fts, note_id, title=final_title, body=body or "", summary=summary, summary_source=how, updated_at=stamp,
        )
    ctx.log("saved an article", id=note_id, fetched=fetched, summary=how, updated=existing is not None)
    note = store.get(ctx.db, note_id)
    assert note is not None
    return {
        **_shown(note, tz, full=True),
        "summary": summary,
        "fetched": fetched,
        "updated": existing is not None,
        "added": existing is None,
        "note": f"The text could not be fetched: {problem}." if problem else None,
        "timezone": tz_name,
    }


# A to-do list is notes tagged "todo": they are searchable like any note, and a to-do that is
# done is taken off the list (deleted, restorable by undo), as a paper list is crossed out.
TODO_TAG = "todo"
_TODO_LIST = "(to-do|todo|task|tasks) list"


@function(
    exported=True,
    undo="delete",
    undo_args={"note_id": "result.id"},
    reply=['Added "{text}" to your to-do list.'],
    examples=[
        f"(add|put) {{text}} (to|on) my {_TODO_LIST}",
        f"(add|put) {{text}} (to|on) the {_TODO_LIST}",
        "(add|create|new) [a] (task|to-do|todo)[:] {text}",
        "add a (task|to-do|todo) to {text}",
        "I (have|need) to {text}, (put|add) it (on|to) my (to-do|todo|task|tasks) [list]",
        "(to-do|todo|task)[:] {text}",
        "(add|put) {text} (to|on) my (to-do|todo|to do)",
        "remind me to do {text}",
        f"write {{text}} on my {_TODO_LIST}",
    ],
)
def add_todo(ctx: Context, text: str) -> dict:
    """Add a task to your to-do list (a note tagged todo)."""
    return _add_note(ctx, text, [TODO_TAG])


@function(
    exported=True,
    reads=True,
    reply=["Your to-do list:{todos.*.text:lines}", "{!todos}Your to-do list is empty."],
    examples=[
        f"what's on my {_TODO_LIST}",
        f"(show|read) [me] my {_TODO_LIST}",
        "what (tasks|to-dos|todos) do I have",
        "what do I (have|need) to do",
        "my (tasks|to-dos|todos)",
        "what's left to do",
        "(list|show) [me] my (tasks|to-dos|todos)",
        "anything on my (to-do|todo) list",
        "do I have any (tasks|to-dos|todos)",
        "what do I (have|need) to get done",
        "what have I got [left] to do",
    ],
)
def todos(ctx: Context) -> dict:
    """The tasks on your to-do list, oldest first."""
    fts, tz, tz_name = _ready(ctx)
    found = store.search(ctx.db, fts, store.parse_query(f"#{TODO_TAG}"), MAX_RESULTS)
    found.sort(key=lambda n: n.id)
    return {"todos": [_shown(n, tz, full=False) for n in found], "count": len(found), "timezone": tz_name}


@function(
    exported=True,
    undo="add_todo",
    undo_args={"text": "result.text"},
    reply=['Done: "{text}" is off your to-do list.'],
    examples=[
        "(mark|tick|check) [off] {text} [as] (done|finished|complete)",
        "(tick|check|cross) {text} off [my] (to-do|todo|task|tasks) list",
        f"(remove|delete) {{text}} from my {_TODO_LIST}",
        "I (did|finished|have done) {text}",
        "{text} (is|are) done",
        "done with {text}",
        "(finished|completed) {text}",
        # to-do apps' words (Todoist, Things): the task named after its kind
        "(complete|close|finish) [the] (task|to-do|todo) {text}",
    ],
)
def finish_todo(ctx: Context, text: str) -> dict:
    """Take a done task off your to-do list; the task is found by its words."""
    wanted = clean.query(text)
    fts, tz, tz_name = _ready(ctx)
    listed = store.search(ctx.db, fts, store.parse_query(f"#{TODO_TAG}"), MAX_RESULTS)
    words = set(store.parse_query(wanted).terms)
    scored = sorted(((len(words & set(store.parse_query(n.body or "").terms)), n) for n in listed),
                    key=lambda pair: (-pair[0], pair[1].id))
    if not scored or scored[0][0] == 0:
        raise clean.BadRequest(f"Nothing on your to-do list matches {wanted!r}; 'show my to-do list' lists what is on it.")
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        raise clean.BadRequest(f"More than one task matches {wanted!r}; say more of its words.")
    note = scored[0][1]
    store.delete(ctx.db, fts, note.id)
    return {**_shown(note, tz, full=True), "deleted": True, "timezone": tz_name}
