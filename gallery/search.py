"""Search over the gallery's packages: name, title, description, function descriptions and examples.

Ranking is rapidfuzz over words, per field with weights, rather than SQLite FTS5 and
PostgreSQL tsvector: one code path that ranks the same on both backends, tolerant of
typos ("grocry") the way the offline planner is, and a self-hosted gallery's catalogue
(hundreds to a few thousand packages) is small enough to rank in memory per query.
A public-scale gallery would put FTS5/tsvector behind this same `rank` as a prefilter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz, process

_WORD = re.compile(r"[a-z0-9]+")
# field -> weight: a hit in the name counts most, one in an example least.
WEIGHTS = {"name": 4.0, "title": 3.0, "description": 2.0, "functions": 1.5, "examples": 1.0}
MIN_WORD_SCORE = 80.0


@dataclass(frozen=True)
class Document:
    name: str
    fields: dict[str, set[str]]


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def document(name: str, manifest: dict[str, Any], functions: list[dict[str, Any]]) -> Document:
    fn_text = " ".join(f"{f.get('name', '')} {f.get('description', '')}" for f in functions)
    examples = " ".join(str(e) for f in functions for e in f.get("examples", []))
    return Document(
        name,
        {
            "name": words(name.replace("-", " ")) | {name},
            "title": words(str(manifest.get("title", ""))),
            "description": words(str(manifest.get("description", ""))),
            "functions": words(fn_text),
            "examples": words(examples),
        },
    )


def _term_scores(term: str, vocabulary: list[str]) -> dict[str, float]:
    """Every word of the catalogue that matches the term, with its score (rapidfuzz's C loop)."""
    scores = {word: score for word, score, _ in
              process.extract(term, vocabulary, scorer=fuzz.ratio, score_cutoff=MIN_WORD_SCORE, limit=None)}
    if len(term) >= 3:
        # A prefix is what people type while searching ("groc" for "grocery").
        for word in vocabulary:
            if word.startswith(term) and scores.get(word, 0.0) < 95.0:
                scores[word] = 95.0
    return scores


def rank(query: str, documents: list[Document]) -> list[tuple[str, float]]:
    """(name, score) best first; every word of the query must match some field of a result."""
    terms = words(query)
    if not terms:
        return [(d.name, 0.0) for d in sorted(documents, key=lambda d: d.name)]
    vocabulary = sorted(set().union(*(field for d in documents for field in d.fields.values())))
    matches = {term: _term_scores(term, vocabulary) for term in terms}
    results = []
    for doc in documents:
        total = 0.0
        for term in terms:
            scores = matches[term]
            best = 0.0
            for field_name, field in doc.fields.items():
                hit = field & scores.keys()
                if hit:
                    best = max(best, max(scores[w] for w in hit) * WEIGHTS[field_name])
            if best == 0.0:
                break
            total += best
        else:
            results.append((doc.name, round(total / len(terms), 2)))
    results.sort(key=lambda pair: (-pair[1], pair[0]))
    return results
