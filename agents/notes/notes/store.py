"""The notes table, its tags and its full-text index, in the agent's own SQLite database.

Search uses SQLite's FTS5 (porter stemming, accents ignored, BM25 ranking with
titles weighing most). A Python whose SQLite lacks FTS5 still searches: the
fallback finds notes with LIKE and ranks them here, with the same result shape.
Plain functions over a connection; no SDK in this module.
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass, field

from .summary import STOPWORDS, clip

SNIPPET_WORDS = 16
SNIPPET_CHARS = 160
# Column weights for BM25: a word in the title says more than one in a long body.
WEIGHTS = {"title": 5.0, "body": 1.0, "tags": 3.0, "url": 1.0}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('note', 'article')),
    title TEXT,
    body TEXT NOT NULL,          -- the note, or the article's full text ('' if it could not be fetched)
    summary TEXT,                -- articles only
    summary_source TEXT,         -- 'model' or 'extractive'
    url TEXT UNIQUE,             -- articles only
    saved_at TEXT NOT NULL,      -- UTC, ISO 8601
    updated_at TEXT
);
CREATE TABLE IF NOT EXISTS note_tags (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (note_id, tag)
);
CREATE INDEX IF NOT EXISTS note_tags_by_tag ON note_tags(tag);
"""
_FTS = "CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(title, body, tags, url, tokenize = 'porter unicode61 remove_diacritics 2')"


@dataclass
class Note:
    id: int
    kind: str
    title: str | None
    body: str
    summary: str | None
    summary_source: str | None
    url: str | None
    saved_at: str
    updated_at: str | None
    tags: list[str] = field(default_factory=list)
    snippet: str | None = None
    score: float | None = None


@dataclass(frozen=True)
class Query:
    """What a search asks for: words to match and tags every match must carry."""

    terms: list[str]
    tags: list[str]

    @property
    def empty(self) -> bool:
        return not self.terms and not self.tags


def parse_query(text: str) -> Query:
    """'#work budget meeting' -> terms [budget, meeting], tags [work]; stop words drop out unless nothing else is left."""
    tags = [t.casefold() for t in re.findall(r"(?<![\w#])#([^\W_][\w-]*)", text)]
    rest = re.sub(r"(?<![\w#])#[^\W_][\w-]*", " ", text)
    words = [w for w in re.findall(r"[^\W_]+", rest.casefold())]
    terms = [w for w in words if w not in STOPWORDS] or words
    return Query(terms=list(dict.fromkeys(terms)), tags=list(dict.fromkeys(tags)))


def ensure_schema(db: sqlite3.Connection) -> bool:
    """Create the tables; True when this SQLite has FTS5 and the index exists."""
    # executescript() would COMMIT the invocation's open transaction; run statement by statement instead.
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    had_index = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'notes_fts'").fetchone() is not None
    try:
        db.execute(_FTS)
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower():
            return False
        raise
    if not had_index:
        # Notes saved where SQLite had no FTS5 (the data folder moved) get indexed now.
        for (note_id,) in db.execute("SELECT id FROM notes").fetchall():
            _index(db, note_id, True)
    return True


def _index(db: sqlite3.Connection, note_id: int, fts: bool) -> None:
    if not fts:
        return
    row = db.execute("SELECT title, body, url FROM notes WHERE id = ?", (note_id,)).fetchone()
    tags = " ".join(tags_of(db, [note_id]).get(note_id, []))
    db.execute("DELETE FROM notes_fts WHERE rowid = ?", (note_id,))
    db.execute(
        "INSERT INTO notes_fts (rowid, title, body, tags, url) VALUES (?, ?, ?, ?, ?)",
        (note_id, row["title"] or "", row["body"], tags, row["url"] or ""),
    )


def add(
    db: sqlite3.Connection,
    fts: bool,
    *,
    kind: str,
    body: str,
    tags: list[str],
    saved_at: str,
    title: str | None = None,
    summary: str | None = None,
    summary_source: str | None = None,
    url: str | None = None,
) -> int:
    cur = db.execute(
        "INSERT INTO notes (kind, title, body, summary, summary_source, url, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (kind, title, body, summary, summary_source, url, saved_at),
    )
    note_id = int(cur.lastrowid or 0)
    db.executemany("INSERT INTO note_tags (note_id, tag) VALUES (?, ?)", [(note_id, tag) for tag in tags])
    _index(db, note_id, fts)
    return note_id


def delete(db: sqlite3.Connection, fts: bool, note_id: int) -> None:
    db.execute("DELETE FROM note_tags WHERE note_id = ?", (note_id,))
    if fts:
        db.execute("DELETE FROM notes_fts WHERE rowid = ?", (note_id,))
    db.execute("DELETE FROM notes WHERE id = ?", (note_id,))


def update_article(
    db: sqlite3.Connection,
    fts: bool,
    note_id: int,
    *,
    title: str | None,
    body: str,
    summary: str | None,
    summary_source: str | None,
    updated_at: str,
) -> None:
    db.execute(
        "UPDATE notes SET title = ?, body = ?, summary = ?, summary_source = ?, updated_at = ? WHERE id = ?",
        (title, body, summary, summary_source, updated_at, note_id),
    )
    _index(db, note_id, fts)


def tags_of(db: sqlite3.Connection, ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in db.execute(f"SELECT note_id, tag FROM note_tags WHERE note_id IN ({marks}) ORDER BY rowid", chunk):
            out.setdefault(row["note_id"], []).append(row["tag"])
    return out


def _notes(db: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[Note]:
    tags = tags_of(db, [row["id"] for row in rows])
    keys = ("id", "kind", "title", "body", "summary", "summary_source", "url", "saved_at", "updated_at")
    notes = []
    for row in rows:
        note = Note(**{k: row[k] for k in keys}, tags=tags.get(row["id"], []))
        if "snip" in row.keys():
            note.snippet = row["snip"]
        if "score" in row.keys():
            note.score = row["score"]
        notes.append(note)
    return notes


def get(db: sqlite3.Connection, note_id: int) -> Note | None:
    rows = db.execute("SELECT * FROM notes WHERE id = ?", (note_id,)).fetchall()
    return _notes(db, rows)[0] if rows else None


def by_url(db: sqlite3.Connection, url: str) -> Note | None:
    rows = db.execute("SELECT * FROM notes WHERE url = ?", (url,)).fetchall()
    return _notes(db, rows)[0] if rows else None


def recent(db: sqlite3.Connection, limit: int) -> list[Note]:
    # By id, not by clock: the order notes were saved in, even if the clock jumps.
    return _notes(db, db.execute("SELECT * FROM notes ORDER BY id DESC LIMIT ?", (limit,)).fetchall())


def count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM notes").fetchone()[0])


def _tag_filter(tags: list[str], column: str) -> tuple[str, list[str]]:
    sql = "".join(f" AND {column} IN (SELECT note_id FROM note_tags WHERE tag = ?)" for _ in tags)
    return sql, list(tags)


def search(db: sqlite3.Connection, fts: bool, query: Query, limit: int) -> list[Note]:
    if not query.terms:
        return _tagged(db, query.tags, limit)
    return _search_fts(db, query, limit) if fts else _search_like(db, query, limit)


def _tagged(db: sqlite3.Connection, tags: list[str], limit: int) -> list[Note]:
    where, params = _tag_filter(tags, "id")
    rows = db.execute(f"SELECT * FROM notes WHERE 1 = 1{where} ORDER BY id DESC LIMIT ?", (*params, limit)).fetchall()
    notes = _notes(db, rows)
    for note in notes:
        note.snippet = clip(" ".join((note.summary or note.body or note.title or note.url or "").split()), SNIPPET_CHARS)
    return notes


def _search_fts(db: sqlite3.Connection, query: Query, limit: int) -> list[Note]:
    # Every term quoted: the user's words are matched, never read as FTS5 syntax (NEAR, *, column:).
    match = " OR ".join(f'"{term}"' for term in query.terms)
    weights = ", ".join(str(w) for w in WEIGHTS.values())
    where, params = _tag_filter(query.tags, "n.id")
    rows = db.execute(
        f"""
        SELECT n.*, -bm25(notes_fts, {weights}) AS score,
               snippet(notes_fts, -1, '**', '**', '…', {SNIPPET_WORDS}) AS snip
        FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
        WHERE notes_fts MATCH ?{where}
        ORDER BY bm25(notes_fts, {weights}), n.id DESC
        LIMIT ?
        """,
        (match, *params, limit),
    ).fetchall()
    notes = _notes(db, rows)
    for note in notes:
        note.score = round(note.score or 0.0, 4)
        note.snippet = " ".join((note.snippet or "").split())
    return notes


def _stem(term: str) -> str:
    """A crude stem for the fallback, so "meetings" finds "meeting"."""
    for suffix in ("ies", "ing", "es", "ed", "s"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            return term[: -len(suffix)]
    return term


def _search_like(db: sqlite3.Connection, query: Query, limit: int) -> list[Note]:
    """Without FTS5: LIKE finds candidates, then each is scored like BM25's rough cousin.

    A term scores its column weight times 1 + log(occurrences), so a note that
    matches more of the words, or matches them in its title, ranks higher.
    LIKE ignores case for ASCII letters only; that is this fallback's limit.
    """
    stems = [_stem(t) for t in query.terms]
    patterns = {stem: re.compile(r"(?<!\w)" + re.escape(stem), re.IGNORECASE) for stem in stems}
    any_term = " OR ".join("(coalesce(n.title, '') || ' ' || n.body || ' ' || coalesce(n.url, '')) LIKE ? ESCAPE '\\'" for _ in stems)
    tag_any = " OR ".join("n.id IN (SELECT note_id FROM note_tags WHERE tag LIKE ? ESCAPE '\\')" for _ in stems)
    likes = ["%" + s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for s in stems]
    where, params = _tag_filter(query.tags, "n.id")
    rows = db.execute(f"SELECT n.* FROM notes n WHERE (({any_term}) OR ({tag_any})){where}", (*likes, *likes, *params)).fetchall()
    scored: list[tuple[float, int, Note]] = []
    for note in _notes(db, rows):
        fields = {"title": note.title or "", "body": note.body, "tags": " ".join(note.tags), "url": note.url or ""}
        score = 0.0
        for pattern in patterns.values():
            for name, text in fields.items():
                hits = len(pattern.findall(text))
                if hits:
                    score += WEIGHTS[name] * (1.0 + math.log(hits))
        if score > 0:
            note.score = round(score, 4)
            note.snippet = _snippet(note, stems)
            scored.append((-score, -note.id, note))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [note for _, _, note in scored[:limit]]


def _snippet(note: Note, stems: list[str]) -> str:
    """A window of text around the first match, the matched words in **bold** as FTS5's snippet does."""
    alternatives = "|".join(re.escape(stem) for stem in sorted(set(stems), key=len, reverse=True))
    word = re.compile(rf"(?<!\w)(?:{alternatives})\w*", re.IGNORECASE)
    for text in (note.body, note.title or "", note.url or ""):
        text = " ".join(text.split())
        found = word.search(text)
        if found is None:
            continue
        start = max(0, found.start() - SNIPPET_CHARS // 3)
        if start:
            start = text.rfind(" ", 0, start) + 1
        window = text[start : start + SNIPPET_CHARS]
        cut = start + SNIPPET_CHARS < len(text)
        if cut and " " in window:
            window = window.rsplit(" ", 1)[0]
        window = word.sub(lambda m: f"**{m.group(0)}**", window)
        return ("…" if start else "") + window + ("…" if cut else "")
    return clip(" ".join((note.summary or note.body).split()), SNIPPET_CHARS)
