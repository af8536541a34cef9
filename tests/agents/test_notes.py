"""The notes agent, run for real in the SDK worker; its search, summary and page reading checked on their own too."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from agent_worker import Worker, WorkerFailed

from dreamer.agents.bundles import starter_bundles
from dreamer.agents.notes.notes import page, store, summary
from dreamer.agents.notes.notes.server import _fetch
from dreamer.sdk import CallError, NotAvailable
from dreamer.sdk.fetch import Response

NOTES = next(b for b in starter_bundles() if b.name == "notes")
PARIS = {"id": 1, "name": "me", "timezone": "Europe/Paris"}

ARTICLE = (
    "Sourdough bread needs only flour, water and salt, yet the starter does the real work. "
    "A healthy starter doubles within eight hours of feeding. "
    "The weather was pleasant on the day I first baked. "
    "Feeding the starter flour and water every day keeps the starter active and the bread light. "
    "My neighbour owns a red bicycle. "
    "Bakers judge a starter by how fast it rises after feeding, since a slow starter makes dense bread."
)


@pytest.fixture
def notes(start_worker: Callable[..., Worker], tmp_path: Path) -> Worker:
    return start_worker(NOTES, "notes.server", "notes", tmp_path / "notes-data")


def refused(worker: Worker, function: str, args: dict) -> str:
    with pytest.raises(WorkerFailed) as err:
        worker.invoke(function, args)
    assert err.value.kind == "invalid_argument", err.value.error
    message = err.value.message
    assert message.strip() and "\n" not in message and "Traceback" not in message and "Error" not in message
    return message


def test_describe_matches_the_contract(notes: Worker) -> None:
    specs = notes.describe()
    assert set(specs) == {"save", "search", "recent", "save_article", "delete", "add_todo", "todos", "finish_todo"}
    assert specs["save"]["undo"] == {"function": "delete", "args": {"note_id": "result.id"}, "when": None}
    assert specs["delete"]["undo"]["function"] == "save"
    assert all(s["exported"] and not s["confirm"] and not s["background"] and s["description"] for s in specs.values()), specs
    save = specs["save"]["parameters"]
    assert save["required"] == ["text"] and save["properties"]["tags"]["default"] == []
    assert specs["recent"]["parameters"]["properties"]["limit"]["default"] == 10
    article = specs["save_article"]["parameters"]
    assert article["required"] == ["url"] and set(article["properties"]) == {"url", "title", "text"}
    assert "save a note {text}" in specs["save"]["examples"]
    assert "find my notes about {query}" in specs["search"]["examples"]
    assert "save this article {url}" in specs["save_article"]["examples"]
    assert any("{tags}" in e for e in specs["save"]["examples"])
    assert any("{limit}" in e for e in specs["recent"]["examples"])
    assert all(len(s["examples"]) >= 7 for name, s in specs.items() if name != "delete")


def test_save_returns_the_note_with_its_tags_and_both_times(notes: Worker) -> None:
    saved = notes.invoke("save", {"text": "  Call the bank about the loan #Errands ", "tags": ["#Money", "money", " "]}, user=PARIS)
    assert saved["id"] == 1 and saved["kind"] == "note"
    assert saved["text"] == "Call the bank about the loan #Errands"
    assert saved["tags"] == ["money", "errands"]  # given tags first, then hashtags; each once, lower case
    assert saved["timezone"] == "Europe/Paris"
    utc = datetime.fromisoformat(saved["saved_at"].replace("Z", "+00:00"))
    local = datetime.fromisoformat(saved["saved_local"])
    assert saved["saved_at"].endswith("Z") and utc.utcoffset().total_seconds() == 0
    assert local == utc.replace(second=0)  # the same moment, shown on the user's clock
    assert local.utcoffset() == utc.astimezone(ZoneInfo("Europe/Paris")).utcoffset()
    assert notes.invoke("save", {"text": "second"})["id"] == 2
    assert any(log["message"] == "saved a note" for log in notes.logs)


def test_notes_live_in_the_agents_own_database_with_an_index(
    start_worker: Callable[..., Worker], tmp_path: Path
) -> None:
    data = tmp_path / "notes-data"
    first = start_worker(NOTES, "notes.server", "notes", data)
    first.invoke("save", {"text": "Pick up the dry cleaning", "tags": ["errands"]})
    first.stop()
    db = sqlite3.connect(data / "agent.db")
    assert db.execute("SELECT id, kind, body FROM notes").fetchall() == [(1, "note", "Pick up the dry cleaning")]
    assert db.execute("SELECT note_id, tag FROM note_tags").fetchall() == [(1, "errands")]
    assert db.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'cleaning'").fetchall() == [(1,)]
    again = start_worker(NOTES, "notes.server", "notes", data)
    assert [n["text"] for n in again.invoke("recent")["notes"]] == ["Pick up the dry cleaning"]


def test_search_ranks_matches_and_marks_them_in_snippets(notes: Worker) -> None:
    notes.invoke("save", {"text": "Dentist appointment moved to Friday; the dentist wants new x-rays"})
    notes.invoke("save", {"text": "Ask the dentist about the bill"})
    notes.invoke("save", {"text": "Book a table for Ann's birthday", "tags": ["family"]})
    notes.invoke("save", {"text": "Weekly meetings with the design team", "tags": ["work"]})
    out = notes.invoke("search", {"query": "dentist appointment"})
    assert out["method"] == "fts5" and out["query"] == "dentist appointment"
    assert [n["id"] for n in out["notes"]] == [1, 2] and out["count"] == 2
    assert out["notes"][0]["score"] > out["notes"][1]["score"]
    assert "**Dentist**" in out["notes"][0]["snippet"] and "**appointment**" in out["notes"][0]["snippet"]
    assert set(out["notes"][0]) >= {"id", "kind", "title", "text", "tags", "saved_at", "saved_local", "snippet", "score"}
    # other forms of a word, tags and accents
    assert [n["id"] for n in notes.invoke("search", {"query": "meeting"})["notes"]] == [4]
    assert [n["id"] for n in notes.invoke("search", {"query": "birthdays"})["notes"]] == [3]
    assert [n["id"] for n in notes.invoke("search", {"query": "family"})["notes"]] == [3]
    assert [n["id"] for n in notes.invoke("search", {"query": "déntist bill"})["notes"]][0] == 2
    nothing = notes.invoke("search", {"query": "unicorn"})
    assert nothing["notes"] == [] and nothing["count"] == 0


def test_a_hashtag_in_the_query_keeps_only_notes_with_that_tag(notes: Worker) -> None:
    notes.invoke("save", {"text": "Budget review on Monday", "tags": ["work"]})
    notes.invoke("save", {"text": "Budget for the holiday", "tags": ["home"]})
    notes.invoke("save", {"text": "Plan the offsite #work"})
    assert [n["id"] for n in notes.invoke("search", {"query": "budget #work"})["notes"]] == [1]
    tagged = notes.invoke("search", {"query": "#work"})
    assert [n["id"] for n in tagged["notes"]] == [3, 1]  # newest first when only tags are asked for
    assert tagged["notes"][0]["snippet"] == "Plan the offsite #work"
    assert notes.invoke("search", {"query": "#nothing"})["count"] == 0


# One worker for a whole table: starting one per case would be most of the run time.
HOSTILE_QUERIES = ['"', "NEAR(budget review)", "title:budget", "budget*", "AND OR NOT", "-budget", "{budget}", "'); DROP TABLE notes; --"]


def test_search_reads_the_users_words_never_query_syntax(notes: Worker) -> None:
    notes.invoke("save", {"text": "Budget review on Monday"})
    for query in HOSTILE_QUERIES:
        try:
            out = notes.invoke("search", {"query": query})
        except WorkerFailed as failed:
            assert failed.kind == "invalid_argument" and "no words" in failed.message, (query, failed.error)
            continue
        assert out["count"] == (1 if "budget" in query.casefold() else 0), query
    assert notes.invoke("recent")["count"] == 1


def test_recent_is_newest_first_and_limited(notes: Worker) -> None:
    for i in range(12):
        notes.invoke("save", {"text": f"note number {i}"})
    default = notes.invoke("recent")
    assert default["count"] == 10
    assert [n["text"] for n in default["notes"]] == [f"note number {i}" for i in range(11, 1, -1)]
    assert [n["id"] for n in notes.invoke("recent", {"limit": 3})["notes"]] == [12, 11, 10]
    assert notes.invoke("recent", {"limit": 100})["count"] == 12


def test_recent_and_search_refuse_a_limit_out_of_range(notes: Worker) -> None:
    for limit in (0, 101, -5):
        assert "between 1 and 100" in refused(notes, "recent", {"limit": limit})
        assert "between 1 and 100" in refused(notes, "search", {"query": "x", "limit": limit})


BAD_NOTES = [
        ({"text": ""}, "the note is empty"),
        ({"text": " \n\t "}, "the note is empty"),
        ({"text": "x" * 100_000}, "at most 20,000 characters"),
        ({"text": "bell\x07"}, "control characters"),
        ({"text": "nul\x00byte"}, "control characters"),
        ({"text": "half a \ud800 pair"}, "not valid text"),
        ({"text": "ok", "tags": ["two words"]}, "not usable"),
        ({"text": "ok", "tags": ["x" * 41]}, "not usable"),
        ({"text": "ok", "tags": [f"t{i}" for i in range(21)]}, "at most 20 tags"),
]


def test_bad_notes_are_refused_with_one_sentence_and_nothing_is_saved(notes: Worker) -> None:
    for args, words in BAD_NOTES:
        assert words in refused(notes, "save", args), args
    assert notes.invoke("recent")["count"] == 0


def test_the_size_refusal_says_how_long_the_note_was(notes: Worker) -> None:
    message = refused(notes, "save", {"text": "x" * 100_000})
    assert "100,000" in message and "save_article" in message


def test_bad_searches_are_refused(notes: Worker) -> None:
    for query, words in [("   ", "Say what to search for"), ("x" * 201, "at most 200"), ("?!", "no words")]:
        assert words in refused(notes, "search", {"query": query}), query


def test_save_article_with_text_keeps_an_extractive_summary_and_is_searchable(notes: Worker) -> None:
    saved = notes.invoke(
        "save_article", {"url": "https://Example.com/bread#comments", "title": "Sourdough basics", "text": ARTICLE}
    )
    assert saved["kind"] == "article" and saved["url"] == "https://example.com/bread"
    assert saved["title"] == "Sourdough basics" and saved["fetched"] is False and saved["note"] is None
    # No model here (no llm gateway answers), so the agent's own summary is used.
    assert saved["summary_source"] == "extractive" and saved["summary"] == saved["text"]
    assert saved["summary"] == summary.extractive(ARTICLE, "Sourdough basics")
    assert "bicycle" not in saved["summary"] and "weather" not in saved["summary"]
    assert saved["summary"].count(".") == 3 and saved["has_text"] is True
    found = notes.invoke("search", {"query": "bicycle"})  # the whole text is indexed, not just the summary
    assert [n["id"] for n in found["notes"]] == [saved["id"]] and "**bicycle**" in found["notes"][0]["snippet"]
    assert notes.invoke("search", {"query": "sourdough"})["notes"][0]["title"] == "Sourdough basics"


def test_saving_an_article_again_updates_it(notes: Worker) -> None:
    first = notes.invoke("save_article", {"url": "https://example.com/bread", "text": ARTICLE})
    assert first["updated"] is False and first["title"]
    again = notes.invoke("save_article", {"url": "https://example.com/bread#top", "title": "Bread"})
    assert again["id"] == first["id"] and again["updated"] is True
    assert again["title"] == "Bread" and again["has_text"] is True  # the text saved before is kept
    assert again["note"] is None
    assert notes.invoke("recent")["count"] == 1


def test_an_article_that_cannot_be_fetched_is_kept_by_address_and_title(notes: Worker) -> None:
    # Answered the way the kernel answers a syscall the agent holds no grant for.
    def deny(method: str, params: dict) -> object:
        raise WorkerFailed({"code": -32000, "message": "notes may not reach example.com", "data": {"kind": "permission_denied"}})

    notes.syscalls["net.fetch"] = deny
    saved = notes.invoke("save_article", {"url": "example.com/later", "title": "Read me later"})
    assert saved["url"] == "https://example.com/later" and saved["title"] == "Read me later"
    assert saved["fetched"] is False and saved["has_text"] is False and saved["summary"] is None
    assert saved["note"].startswith("The text could not be fetched:") and saved["note"].endswith(".")
    assert "permission_denied" in saved["note"] and "grant it net:*" in saved["note"]
    found = notes.invoke("search", {"query": "later"})
    assert [n["id"] for n in found["notes"]] == [saved["id"]]
    untitled = notes.invoke("save_article", {"url": "https://news.example.org/2026/story"})
    assert untitled["title"] == "news.example.org/2026/story"


BAD_ADDRESSES = [
        ("", "Give the article's address"),
        ("ftp://example.com/file", "not a web address"),
        ("javascript:alert(1)", "not a web address"),
        ("https://", "not a web address"),
        ("https://example.com:port/", "not a web address I can read"),
        ("https://exa mple.com", "cannot contain spaces"),
        ("https://example.com/" + "a" * 2100, "at most 2,000"),
]


def test_bad_addresses_are_refused(notes: Worker) -> None:
    for url, words in BAD_ADDRESSES:
        assert words in refused(notes, "save_article", {"url": url}), url
    assert notes.invoke("recent")["count"] == 0


def test_an_oversized_article_text_is_refused(notes: Worker) -> None:
    assert "at most 200,000" in refused(notes, "save_article", {"url": "https://example.com", "text": "x " * 100_001})


def test_an_unknown_timezone_shows_utc(notes: Worker) -> None:
    for tz in ("Not/AZone", "../../etc/passwd"):
        saved = notes.invoke("save", {"text": "anything"}, user={"id": 1, "name": "me", "timezone": tz})
        assert saved["timezone"] == "UTC" and saved["saved_local"].endswith("+00:00"), tz


def _answer(status: int, body: str, content_type: str = "text/html; charset=utf-8") -> Callable[[str, dict], object]:
    """A net.fetch syscall answered as the kernel answers it."""

    def serve(method: str, params: dict) -> object:
        return {"status": status, "headers": {"content-type": content_type}, "body": body, "url": params["url"], "elapsed_ms": 3}

    return serve


def test_an_article_without_text_is_fetched_through_the_kernel(notes: Worker) -> None:
    asked: list[dict] = []
    html = f"<html><head><title>Bread at home</title><script>x()</script></head><body><p>{ARTICLE}</p></body></html>"
    page_answer = _answer(200, html)

    def serve(method: str, params: dict) -> object:
        asked.append(params)
        return page_answer(method, params)

    notes.syscalls["net.fetch"] = serve
    saved = notes.invoke("save_article", {"url": "https://example.com/bread"})
    assert [(p["url"], p["method"]) for p in asked] == [("https://example.com/bread", "GET")]
    assert asked[0]["timeout"] <= 15  # leaves room inside the invocation's own time limit
    assert saved["fetched"] is True and saved["note"] is None and saved["has_text"] is True
    assert saved["title"] == "Bread at home"  # from the page, since none was given
    assert saved["summary"] == summary.extractive(ARTICLE, "Bread at home")
    assert notes.invoke("search", {"query": "bicycle"})["count"] == 1
    notes.syscalls["net.fetch"] = _answer(404, "<html><body>Not found</body></html>")
    missing = notes.invoke("save_article", {"url": "https://example.com/gone", "title": "Gone"})
    assert missing["fetched"] is False and missing["note"] == (
        "The text could not be fetched: the site answered with status 404 (example.com)."
    )


def test_the_summary_is_the_models_when_a_model_answers(notes: Worker) -> None:
    prompts: list[dict] = []

    def model(method: str, params: dict) -> object:
        prompts.append(params)
        return {"text": " Keeping a sourdough starter alive, in short. ", "model": "test", "usage": {}}

    notes.syscalls["llm.complete"] = model
    saved = notes.invoke("save_article", {"url": "https://example.com/bread", "title": "Sourdough", "text": ARTICLE})
    assert saved["summary_source"] == "model" and saved["summary"] == "Keeping a sourdough starter alive, in short."
    assert saved["text"] == saved["summary"]
    assert len(prompts) == 1 and "Title: Sourdough" in prompts[0]["prompt"] and ARTICLE in prompts[0]["prompt"]
    assert prompts[0]["variant"] == "fast"

    def spent(method: str, params: dict) -> object:
        raise WorkerFailed({"code": -32000, "message": "the monthly model budget is spent", "data": {"kind": "budget_exceeded"}})

    notes.syscalls["llm.complete"] = spent
    again = notes.invoke("save_article", {"url": "https://example.com/bread", "text": ARTICLE})
    assert again["summary_source"] == "extractive" and again["summary"] == summary.extractive(ARTICLE, "Sourdough")


# ---- the parts on their own ----------------------------------------------------------------


class _Ctx:
    """Just enough of a Context for _fetch: its fetch member."""

    def __init__(self, fetch: Callable[[str], object]) -> None:
        self.fetch = lambda url, **options: fetch(url)


def test_fetch_problems_become_a_reason_not_a_failure() -> None:
    def denied(url: str) -> object:
        raise CallError("permission_denied", "notes may not reach example.com")

    def missing(url: str) -> object:
        raise NotAvailable("ctx.fetch is not available yet")

    def timeout(url: str) -> object:
        raise CallError("timeout", "example.com did not answer")

    assert "grant it net:*" in _fetch(_Ctx(denied), "https://example.com")[2]  # type: ignore[arg-type]
    assert "not_available" in _fetch(_Ctx(missing), "https://example.com")[2]  # type: ignore[arg-type]
    assert "timeout" in _fetch(_Ctx(timeout), "https://example.com")[2]  # type: ignore[arg-type]
    gone = _fetch(_Ctx(lambda url: {"status": 404, "text": "not here"}), "https://example.com/x")  # type: ignore[arg-type]
    assert gone == (None, None, "the site answered with status 404 (example.com)")
    html = "<html><head><title>Bread</title></head><body><p>Knead it.</p></body></html>"
    assert _fetch(_Ctx(lambda url: {"status": 200, "text": html}), "https://example.com")[:2] == ("Bread", "Knead it.")  # type: ignore[arg-type]


def test_pages_are_read_as_a_person_would() -> None:
    html = """<html><head><title> Sourdough &amp; you </title><style>p {color: red}</style></head>
    <body><nav>Home | About</nav><article><h1>Sourdough</h1><p>Feed the <b>starter</b> daily.</p>
    <script>alert("x")</script><p>Bake at 250&deg;C.</p></article><footer>© 2026</footer></body></html>"""
    got = page.from_html(html)
    assert got.title == "Sourdough & you"
    assert got.text == "Sourdough\n\nFeed the starter daily.\n\nBake at 250°C."
    assert page.from_fetch({"status": 200, "headers": {"Content-Type": "text/html"}, "body": html.encode()}).title == "Sourdough & you"
    assert page.from_fetch("plain words\x00 here").text == "plain words here"
    # What ctx.fetch really returns: a Response, its text decoded with the charset the server declared.
    latin = Response(200, {"content-type": "text/html; charset=iso-8859-1"}, "<title>Café</title><p>Crème brûlée</p>".encode("latin-1"), "https://x.fr")
    assert page.from_fetch(latin) == page.Page(title="Café", text="Crème brûlée")
    assert page.from_fetch(Response(200, {"content-type": "text/plain"}, b"Just text.", "https://x.fr")).text == "Just text."
    with pytest.raises(page.FetchFailed, match="status 503"):
        page.from_fetch(Response(503, {}, b"busy", "https://x.fr"))
    for bad, why in [
        ({"status": 500, "text": "oops"}, "status 500"),
        ({"status": 200, "text": "   "}, "empty"),
        ({"status": 200, "headers": {"content-type": "application/pdf"}, "body": b"%PDF-1.7"}, "application/pdf"),
        ({"status": 200, "text": "<html><script>only()</script></html>"}, "no readable text"),
    ]:
        with pytest.raises(page.FetchFailed, match=why):
            page.from_fetch(bad)


def test_extractive_summary_keeps_the_key_sentences_in_order() -> None:
    made = summary.extractive(ARTICLE, "Sourdough basics")
    kept = summary.sentences(made)
    assert len(kept) == 3
    order = [summary.sentences(ARTICLE).index(s) for s in kept]
    assert order == sorted(order)
    assert all("starter" in s for s in kept)
    assert len(summary.extractive(ARTICLE * 40, None)) <= summary.MAX_SUMMARY_CHARS
    assert summary.extractive("One line only.") == "One line only."
    assert summary.extractive("") == ""
    long_sentence = "word " * 400 + "end."
    assert summary.extractive(long_sentence + " Short one here too. And another one here. Plus a fourth one.").endswith(("…", "."))


def test_sentences_survive_abbreviations_and_lines() -> None:
    text = "Dr. Smith arrived at 9. She said hello!\n\nNew paragraph without a stop\n- a list item"
    assert summary.sentences(text) == ["Dr. Smith arrived at 9.", "She said hello!", "New paragraph without a stop", "- a list item"]


def test_a_model_summary_is_used_when_one_answers_and_the_extractive_one_otherwise() -> None:
    prompts: list[str] = []

    def model(prompt: str) -> object:
        prompts.append(prompt)
        return "  A short guide to keeping a sourdough starter healthy.  "

    assert summary.summarize(ARTICLE, "Sourdough", model) == ("A short guide to keeping a sourdough starter healthy.", "model")
    assert "Title: Sourdough" in prompts[0] and ARTICLE in prompts[0]
    assert summary.summarize(ARTICLE, None, lambda p: {"text": "From a dict."}) == ("From a dict.", "model")
    extractive = (summary.extractive(ARTICLE, None), "extractive")
    assert summary.summarize(ARTICLE, None, lambda p: None) == extractive  # no model: not granted or not configured
    assert summary.summarize(ARTICLE, None, lambda p: "   ") == extractive
    assert summary.summarize(ARTICLE, None, None) == extractive
    assert len(summary.prompt("x " * 50_000, None)) < summary.MAX_PROMPT_TEXT + 500


# ---- search without FTS5 ----------------------------------------------------------------------


def _fill(db: sqlite3.Connection, fts: bool) -> None:
    rows = [
        ("Dentist appointment moved to Friday; the dentist wants new x-rays", ["health"]),
        ("Ask the dentist about the bill", []),
        ("Weekly meetings with the design team", ["work"]),
        ("Budget review", ["work"]),
    ]
    for body, tags in rows:
        store.add(db, fts, kind="note", body=body, tags=tags, saved_at="2026-01-01T00:00:00Z")


@pytest.mark.parametrize("fts", [True, False])
def test_both_search_paths_rank_the_same_way(fts: bool) -> None:
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    assert store.ensure_schema(db) is True  # this Python's SQLite has FTS5; fts=False plays the one without
    _fill(db, fts)
    ids = lambda q: [n.id for n in store.search(db, fts, store.parse_query(q), 10)]  # noqa: E731
    assert ids("dentist appointment") == [1, 2]
    assert ids("meetings") == [3]
    assert ids("#work") == [4, 3]
    assert ids("review #work") == [4]
    assert ids("health") == [1]  # a tag is searchable as a word
    assert ids("zebra") == []
    hit = store.search(db, fts, store.parse_query("bill"), 10)[0]
    assert "**bill**" in (hit.snippet or "") and (hit.score or 0) > 0


def test_notes_saved_without_fts5_are_indexed_once_it_is_there() -> None:
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    store.ensure_schema(db)
    db.execute("DROP TABLE notes_fts")  # as a database made where SQLite had no FTS5 would be
    _fill(db, False)
    assert store.ensure_schema(db) is True
    assert [n.id for n in store.search(db, True, store.parse_query("dentist"), 10)] == [1, 2]
    assert db.execute("SELECT count(*) FROM notes_fts").fetchone()[0] == 4


def test_the_fallback_marks_words_in_a_window_of_long_text() -> None:
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    store.ensure_schema(db)
    body = "filler " * 100 + "the quarterly budget is due" + " filler" * 100
    store.add(db, False, kind="note", body=body, tags=[], saved_at="2026-01-01T00:00:00Z")
    snippet = store.search(db, False, store.parse_query("budgets"), 5)[0].snippet or ""
    assert "**budget**" in snippet and snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet) <= store.SNIPPET_CHARS + 2 + len("****")


def test_a_query_is_split_into_words_and_tags() -> None:
    assert store.parse_query("The #Work budget, the plan!") == store.Query(terms=["budget", "plan"], tags=["work"])
    assert store.parse_query("the") == store.Query(terms=["the"], tags=[])  # only stop words: keep them
    assert store.parse_query("?!").empty


def test_delete_removes_a_note_from_search_and_returns_its_text(notes: Worker) -> None:
    saved = notes.invoke("save", {"text": "the wifi password is hunter2 #home"}, user=PARIS)
    assert notes.invoke("search", {"query": "wifi"}, user=PARIS)["count"] == 1
    gone = notes.invoke("delete", {"note_id": saved["id"]}, user=PARIS)
    assert gone["text"] == saved["text"] and gone["tags"] == ["home"] and gone["restorable"] is True
    assert notes.invoke("search", {"query": "wifi"}, user=PARIS)["count"] == 0
    assert notes.invoke("recent", {}, user=PARIS)["count"] == 0
    assert "no note" in refused(notes, "delete", {"note_id": saved["id"]})


def test_a_to_do_list_is_notes_tagged_todo_taken_off_when_done(notes: Worker) -> None:
    specs = notes.describe()
    assert specs["add_todo"]["undo"]["function"] == "delete" and specs["finish_todo"]["undo"]["function"] == "add_todo"
    first = notes.invoke("add_todo", {"text": "renew the passport"}, user=PARIS)
    notes.invoke("add_todo", {"text": "call the bank about the card"}, user=PARIS)
    notes.invoke("save", {"text": "the bank opens at nine"}, user=PARIS)  # a plain note is no task
    assert first["tags"] == ["todo"]
    listed = notes.invoke("todos", {}, user=PARIS)
    assert [t["text"] for t in listed["todos"]] == ["renew the passport", "call the bank about the card"]
    done = notes.invoke("finish_todo", {"text": "the bank call"}, user=PARIS)
    assert done["text"] == "call the bank about the card" and done["deleted"] is True
    assert [t["text"] for t in notes.invoke("todos", {}, user=PARIS)["todos"]] == ["renew the passport"]
    assert notes.invoke("search", {"query": "bank"}, user=PARIS)["count"] == 1  # the plain note stays
    assert "nothing on your to-do list" in refused(notes, "finish_todo", {"text": "walk the dog"}).lower()
    notes.invoke("add_todo", {"text": "renew the car insurance"}, user=PARIS)
    assert "more than one" in refused(notes, "finish_todo", {"text": "renew"}).lower()
