"""A message read against a vocabulary: its words in canonical form, with typo alternatives."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreamer.sidekick.planner.language.dates import DATE_WORDS, TEMPORAL
from dreamer.sidekick.planner.language.vocabulary import MAX_PHRASE, Lexicon
from dreamer.sidekick.planner.language.slots import Reading, SlotType, read
from dreamer.sidekick.planner.language.text import prepare, tokenize

FILLER_TOKEN_WEIGHT = 0.15
PRONOUN_TOKEN_WEIGHT = 0.4  # "anything", "it": they stand for something, but say little
TYPO_SIMILARITY = {1: 0.88, 2: 0.75}
MAX_WORDS = 60  # words beyond this are not read: no request is that long


@dataclass(slots=True)
class Tok:
    canon: str  # the canonical form ("grocery" for "shopping")
    alts: dict[str, float]  # canonical forms this word may be, with similarity (typos < 1)
    fix: str  # the surface word, spelling corrected towards known words (what date parsers read)
    start: int
    end: int
    kind: str
    sep: str
    weight: float  # how much leaving this word unexplained costs
    temporal: bool = False  # a word that by itself names a day or time ("friday", "3pm")


@dataclass
class Request:
    text: str
    toks: list[Tok]
    lex: Lexicon
    now: datetime
    _readings: dict[tuple[str, int, int], tuple[Any, float] | None] = field(default_factory=dict)
    _tables: dict[str, list[list[tuple[int, float]]]] = field(default_factory=dict)
    frames: dict[tuple[int, int, int], Any] = field(default_factory=dict)  # match._Frame per (tool, a, b)

    def span_text(self, a: int, b: int) -> str:
        return self.text[self.toks[a].start : self.toks[b - 1].end] if b > a else ""

    def read(self, slot: SlotType, a: int, b: int) -> tuple[Any, float] | None:
        """The value toks[a:b] give a slot of this type (cached: many patterns ask the same)."""
        key = (slot.key, a, b)
        if key not in self._readings:
            toks = self.toks[a:b]
            reading = Reading([t.fix for t in toks], self.span_text(a, b), [t.kind for t in toks], self.now)
            try:
                self._readings[key] = read(slot, reading)
            except (ValueError, OverflowError):  # a date past year 9999, a number too big to be one
                self._readings[key] = None
        return self._readings[key]


    def table(self, slot: SlotType) -> list[list[tuple[int, float]]]:
        """For each end j, the starts k (latest first) where toks[k:j] reads as this slot type, with quality."""
        found = self._tables.get(slot.key)
        if found is None:
            found = [[] for _ in range(len(self.toks) + 1)]
            for j in range(1, len(self.toks) + 1):
                row = found[j]
                for k in range(j - 1, -1, -1):
                    got = self.read(slot, k, j)
                    if got is not None:
                        row.append((k, got[1]))
            self._tables[slot.key] = found
        return found


def read_request(text: str, lex: Lexicon, now: datetime) -> Request:
    text = prepare(text)
    words = tokenize(text)[:MAX_WORDS]
    lemmas = [lex.lemma(w.low) if w.kind == "word" else w.low for w in words]
    toks: list[Tok] = []
    i = 0
    while i < len(words):
        merged = False
        for size in range(min(MAX_PHRASE, len(words) - i), 1, -1):
            if any(w.kind != "word" for w in words[i : i + size]) or any(w.sep for w in words[i : i + size - 1]):
                continue
            head = lex.phrases.get(tuple(lemmas[i : i + size]))
            if head:
                first, last = words[i], words[i + size - 1]
                toks.append(Tok(head, {head: 1.0}, " ".join(w.low for w in words[i : i + size]),
                                first.start, last.end, "word", last.sep, 1.0))
                i += size
                merged = True
                break
        if merged:
            continue
        w = words[i]
        canon = lex.single.get(lemmas[i], lemmas[i]) if w.kind == "word" else w.low
        alts = {canon: 1.0}
        fix = canon if canon in DATE_WORDS else w.low
        if w.kind == "word" and not lex.is_known(w.low):
            typo = lex.spell(w.low.replace("'", ""))
            if typo is not None:
                choice, distance = typo
                alt = lex.canon_word(choice)
                alts.setdefault(alt, TYPO_SIMILARITY.get(distance, 0.7))
                fix = choice
        weight = FILLER_TOKEN_WEIGHT if canon in lex.fillers else PRONOUN_TOKEN_WEIGHT if canon in lex.pronouns else 1.0
        temporal = w.kind in ("time", "date") or fix in TEMPORAL
        toks.append(Tok(canon, alts, fix, w.start, w.end, w.kind, w.sep, weight, temporal))
        i += 1
    return Request(text, toks, lex, now)
