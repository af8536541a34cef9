"""The codebase index: BM25 over chunks, refreshed by content hash, kept in the agent's data.

Hand-written rather than `bm25s`: bm25s builds one sparse matrix over the whole
corpus and has no way to drop or add one document, so a one-file change would
mean re-building the matrix (and it brings numpy and scipy into every worker).
Here the postings are dicts {term: {chunk id: count}}, so a changed file costs
the removal and re-adding of its own chunks.

Persistence: one SQLite file per workspace in /data/coder, a row per file with
its hash, size, mtime and its chunks' term counts. A warm worker keeps the
index in memory; a new worker loads the rows (no file is read or parsed again
unless its size or mtime changed and then its hash did).
"""

from __future__ import annotations

import heapq
import json
import math
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .chunks import chunk_file, terms
from .workspace import ToolError, Workspace, sha256, state_dir

K1 = 1.2
B = 0.75
MAX_FILE_BYTES = 1024 * 1024  # larger files are not indexed (generated code, data)
RESCAN_S = 2.0  # a search re-walks the workspace at most this often; edits refresh their file at once
SCHEMA = 1


@dataclass
class Doc:
    path: str
    name: str
    kind: str
    start: int
    end: int
    length: int


@dataclass
class Index:
    ws: Workspace
    docs: dict[int, Doc] = field(default_factory=dict)
    postings: dict[str, dict[int, int]] = field(default_factory=dict)
    files: dict[str, tuple[str, int, int, list[int]]] = field(default_factory=dict)  # path -> (hash, size, mtime_ns, doc ids)
    total_length: int = 0
    next_id: int = 0
    scanned_at: float = 0.0
    db: sqlite3.Connection | None = None
    # Parallel tool calls of one turn may search at once: one refresh or query at a time.
    lock: threading.RLock = field(default_factory=threading.RLock)

    # -- persistence ------------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        return state_dir() / f"index-{self.ws.key}.sqlite"

    def _open(self) -> sqlite3.Connection:
        if self.db is None:
            self.db = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA:
                self.db.execute("DROP TABLE IF EXISTS files")
                self.db.execute("CREATE TABLE files (path TEXT PRIMARY KEY, hash TEXT, size INTEGER, mtime_ns INTEGER, chunks TEXT)")
                self.db.execute(f"PRAGMA user_version={SCHEMA}")
        return self.db

    def load(self) -> None:
        for path, digest, size, mtime_ns, chunks in self._open().execute("SELECT path, hash, size, mtime_ns, chunks FROM files"):
            self._add(path, digest, size, mtime_ns, json.loads(chunks))

    # -- in-memory postings ---------------------------------------------------------------

    def _add(self, path: str, digest: str, size: int, mtime_ns: int, chunks: list) -> None:
        ids = []
        for name, kind, start, end, counts in chunks:
            doc_id = self.next_id
            self.next_id += 1
            length = sum(counts.values())
            self.docs[doc_id] = Doc(path, name, kind, start, end, length)
            self.total_length += length
            for term, count in counts.items():
                self.postings.setdefault(term, {})[doc_id] = count
            ids.append(doc_id)
        self.files[path] = (digest, size, mtime_ns, ids)

    def _remove(self, path: str) -> None:
        entry = self.files.pop(path, None)
        if entry is None:
            return
        for doc_id in entry[3]:
            doc = self.docs.pop(doc_id)
            self.total_length -= doc.length
        dropped = set(entry[3])
        # Only the terms of the dropped chunks can hold their ids; find them through
        # the stored counts rather than scanning every posting list.
        for term in self._terms_of(path):
            posting = self.postings.get(term)
            if posting is None:
                continue
            for doc_id in dropped & posting.keys():
                del posting[doc_id]
            if not posting:
                del self.postings[term]

    def _terms_of(self, path: str) -> set[str]:
        row = self._open().execute("SELECT chunks FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return set(self.postings)  # not stored: look everywhere
        return {term for chunk in json.loads(row[0]) for term in chunk[4]}

    # -- refresh ----------------------------------------------------------------------------

    def refresh(self, force: bool = False) -> dict:
        """Bring the index up to date with the workspace: files added, changed (by hash) or gone."""
        with self.lock:
            return self._refresh(force)

    def _refresh(self, force: bool) -> dict:
        now = time.monotonic()
        if not force and now - self.scanned_at < RESCAN_S:
            return {"checked": 0, "changed": 0, "removed": 0}
        files, cut = self.ws.walk()
        seen: set[str] = set()
        changed = 0
        db = self._open()
        db.execute("BEGIN")
        try:
            for path in files:
                rel = self.ws.rel(path)
                seen.add(rel)
                changed += self._refresh_file(path, rel)
            gone = [rel for rel in self.files if rel not in seen]
            for rel in gone:
                self._remove(rel)
                db.execute("DELETE FROM files WHERE path = ?", (rel,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self.scanned_at = time.monotonic()
        return {"checked": len(files), "changed": changed, "removed": len(gone), "truncated": cut}

    def _refresh_file(self, path: Path, rel: str) -> int:
        try:
            stat = path.stat()
        except OSError:
            return 0
        known = self.files.get(rel)
        if known is not None and known[1] == stat.st_size and known[2] == stat.st_mtime_ns:
            return 0
        if stat.st_size > MAX_FILE_BYTES:
            data = b""
        else:
            try:
                data = path.read_bytes()
            except OSError:
                return 0
        digest = sha256(data)
        if known is not None and known[0] == digest:
            self.files[rel] = (digest, stat.st_size, stat.st_mtime_ns, known[3])
            self._open().execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (stat.st_size, stat.st_mtime_ns, rel))
            return 0
        chunks: list = []
        if data and b"\0" not in data[:8192]:
            text = data.decode("utf-8", "replace")
            chunks = [[c.name, c.kind, c.start, c.end, dict(counts)] for c, counts in chunk_file(rel, text)]
        if known is not None:
            self._remove(rel)
        self._add(rel, digest, stat.st_size, stat.st_mtime_ns, chunks)
        self._open().execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                             (rel, digest, stat.st_size, stat.st_mtime_ns, json.dumps(chunks)))
        return 1

    def update(self, rel: str) -> None:
        """One file changed (the agent wrote it): refresh only that file, now."""
        with self.lock:
            self._update(rel)

    def _update(self, rel: str) -> None:
        path = self.ws.root / rel
        db = self._open()
        if path.is_file():
            self._refresh_file(path, rel)
        elif rel in self.files:
            self._remove(rel)
            db.execute("DELETE FROM files WHERE path = ?", (rel,))

    # -- query ------------------------------------------------------------------------------

    def query(self, text: str, k: int = 10) -> list[tuple[float, Doc]]:
        with self.lock:
            return self._query(text, k)

    def _query(self, text: str, k: int) -> list[tuple[float, Doc]]:
        wanted = Counter(terms(text))
        if not wanted or not self.docs:
            return []
        n = len(self.docs)
        avgdl = self.total_length / n if n else 1.0
        scores: dict[int, float] = {}
        for term in wanted:
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc_id, tf in posting.items():
                norm = K1 * (1 - B + B * self.docs[doc_id].length / avgdl)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
        best = heapq.nlargest(k, scores.items(), key=lambda item: item[1])
        return [(score, self.docs[doc_id]) for doc_id, score in best]


_OPEN: dict[str, Index] = {}
_OPENING = threading.Lock()


def index_for(ws: Workspace) -> Index:
    """The workspace's index, kept in memory for as long as the worker lives."""
    with _OPENING:
        index = _OPEN.get(ws.key)
        if index is None:
            index = Index(ws)
            index.load()
            _OPEN[ws.key] = index
        return index


def forget(ws: Workspace) -> None:
    with _OPENING:
        index = _OPEN.pop(ws.key, None)
    if index is not None and index.db is not None:
        index.db.close()


def search(ws: Workspace, query: str, k: int = 10) -> dict:
    if not isinstance(query, str) or not query.strip():
        raise ToolError("invalid_argument", "give words to search for, such as a function name or what the code does")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 100:
        raise ToolError("invalid_argument", "k is how many results to return, from 1 to 100")
    index = index_for(ws)
    refreshed = index.refresh()
    results = []
    for score, doc in index.query(query, k):
        results.append({"path": doc.path, "name": doc.name, "kind": doc.kind, "lines": [doc.start, doc.end],
                        "score": round(score, 3), "preview": _preview(ws, doc)})
    return {"results": results, "indexed_files": len(index.files), "refreshed": refreshed}


def _preview(ws: Workspace, doc: Doc, lines: int = 6) -> str:
    try:
        with open(ws.root / doc.path, encoding="utf-8", errors="replace") as handle:
            out = []
            for number, line in enumerate(handle, 1):
                if number >= doc.start:
                    out.append(f"{number}\t{line.rstrip()[:200]}")
                if number >= min(doc.end, doc.start + lines - 1):
                    break
        return "\n".join(out)
    except OSError:
        return ""


def touch(ws: Workspace, rel: str) -> None:
    """Called after an edit or write: keep an open index exact without a re-walk."""
    index = _OPEN.get(ws.key)
    if index is not None:
        index.update(rel)
