"""A message read against a vocabulary: its words in canonical form, with typo alternatives."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreamer.sidekick.planner.language.dates import DATE_WORDS, MONTHS, TEMPORAL, WEEKDAYS, spoken_spans
from dreamer.sidekick.planner.language.english import is_english_word
from dreamer.sidekick.planner.language.lexicon import (
    FILLERS,
    OPENING_VERBS,
    PRONOUNS,
    QUESTION_AUXILIARIES,
    QUESTION_SUBJECTS,
    QUESTION_WORDS,
    VERB_HEADS,
)
from dreamer.sidekick.planner.language.slots import (
    MAX_ITEM_WORDS,
    SQL_OPENERS,
    Reading,
    SlotType,
    match_choice,
    read,
)
from dreamer.sidekick.planner.language.text import prepare, quoted_spans, tokenize
from dreamer.sidekick.planner.language.vocabulary import MAX_PHRASE, Lexicon

FILLER_TOKEN_WEIGHT = 0.15
PRONOUN_TOKEN_WEIGHT = 0.4  # "anything", "it": they stand for something, but say little
TYPO_SIMILARITY = {1: 0.88, 2: 0.75}
_OBJECTS = frozenset({"it", "this", "that", "them", "these", "those"})
# Words beyond this are not matched (the cost of fitting grows with the square of the length);
# a free-text value that runs up to the last word read takes the rest of the message.
MAX_WORDS = 60
FITS_PER_MESSAGE = 150  # an everyday request needs 10 to 60; word salad must not cost seconds
MAX_TYPICAL_WORDS = 3  # a typical value of a text parameter ("middle eastern") is never longer
UNTYPICAL = 0.4  # the quality of a text value unlike every typical value its parameter lists
URL_ITEM = 0.2  # the quality of a list item that holds a web address: a page, not a thing to get
MAX_TYPED_WORDS = 8  # a day, time, number, address or choice is never longer ("the day after tomorrow at 3pm")


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
    quote: int = 0  # which quoted stretch of the message the word is in (0: none)


MIN_TEMPORAL_SLIP = 5  # letters: a shorter word read as a slip of a day or time word would invent a date


@dataclass
class Request:
    text: str
    toks: list[Tok]
    lex: Lexicon
    now: datetime
    cut: bool = False  # the message had more than MAX_WORDS words
    asks: bool = False  # it opens as a question (lexicon.QUESTION_WORDS)
    fits_left: int = FITS_PER_MESSAGE  # pattern fits this message may still cost (engine.candidates)
    quotes: list[tuple[int, int]] = field(default_factory=list)  # quoted stretches of `text`
    _readings: dict[tuple[str, int, int], tuple[Any, float] | None] = field(default_factory=dict)
    _tables: dict[str, list[list[tuple[int, float]]]] = field(default_factory=dict)
    frames: dict[tuple[int, int, int], Any] = field(default_factory=dict)  # match._Frame per (tool, a, b)

    def span_text(self, a: int, b: int) -> str:
        """What the user wrote from word a to word b-1, with the quotes around quoted words."""
        if b <= a:
            return ""
        start, end = self.toks[a].start, self.toks[b - 1].end
        if self.toks[a].quote:
            start = min(start, self.quotes[self.toks[a].quote - 1][0])
        if self.toks[b - 1].quote:
            end = max(end, self.quotes[self.toks[b - 1].quote - 1][1])
        return self.text[start:end]

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
            if slot.kind == "text" or (slot.kind == "list" and slot.item == "text"):
                found = self._free_table(slot.kind == "list")
                if slot.kind == "text" and slot.choices:
                    found = self._typical(found, slot.choices)
            elif slot.kind == "sql":
                found = self._sql_table(slot)
            else:
                found = [[] for _ in range(len(self.toks) + 1)]
                for j in range(1, len(self.toks) + 1):
                    row = found[j]
                    for k in range(j - 1, max(j - MAX_TYPED_WORDS, 0) - 1, -1):
                        got = self.read(slot, k, j)
                        if got is not None:
                            row.append((k, got[1]))
            self._tables[slot.key] = found
        return found

    def _sql_table(self, slot: SlotType) -> list[list[tuple[int, float]]]:
        """table() for a query: longer than any other typed value, so read from each SELECT or WITH
        to every later end (a message holds a handful of such words: O(n) spans each)."""
        found: list[list[tuple[int, float]]] = [[] for _ in range(len(self.toks) + 1)]
        for k, tok in enumerate(self.toks):
            if tok.fix.casefold() not in SQL_OPENERS:
                continue
            for j in range(k + 2, len(self.toks) + 1):
                got = self.read(slot, k, j)
                if got is not None:
                    found[j].insert(0, (k, got[1]))
        return found

    def _typical(self, rows: list[list[tuple[int, float]]], choices: tuple[str, ...]) -> list[list[tuple[int, float]]]:
        """A text parameter's table where words unlike all its typical values (its schema's
        `examples`: cuisines, diets) are a doubtful value: "notes about" is no cuisine."""
        out: list[list[tuple[int, float]]] = []
        for j, row in enumerate(rows):
            kept = []
            for k, q in row:
                words = [self.text[t.start:t.end].lower() for t in self.toks[k:j] if t.canon not in FILLERS]
                like = len(words) <= MAX_TYPICAL_WORDS and match_choice(" ".join(words), choices) is not None
                kept.append((k, q if like else q * UNTYPICAL))
            out.append(kept)
        return out

    def _free_table(self, is_list: bool) -> list[list[tuple[int, float]]]:
        """table() for free text and lists of things, from the words alone, in O(n²).

        Reading every span's text (read()) would cost O(n³); the quality rules are
        those of slots.read: nothing but small words is no value; nothing but "it",
        "them" or small words is a poor one (0.2, or 0.5 for an item of a list);
        a list item longer than MAX_ITEM_WORDS words is a doubtful one (0.6).
        """
        n = len(self.toks)
        rows: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
        fix = [t.fix for t in self.toks]
        small = [w in FILLERS for w in fix]
        weak = [w in PRONOUNS or w in FILLERS for w in fix]
        joins = [t.kind == "word" and t.fix in ("and", "plus") for t in self.toks]
        # A web address is a page to keep or watch, never a thing on a list ("add https://... to my reading list").
        addr = [t.kind == "url" for t in self.toks]
        for k in range(n):
            content = False
            all_weak = True
            quality = 1.0  # of the items already closed (lists)
            length = 0  # words of the current item (lists)
            pronoun_only = True
            url = False  # the current item holds a web address (lists)
            for j in range(k + 1, n + 1):
                i = j - 1
                if is_list and (joins[i] or (i > k and self.toks[i - 1].sep in (",", ";"))):
                    if length:  # the item before this "and" or comma is complete
                        quality = min(quality, _item_quality(length, pronoun_only, url))
                    length, pronoun_only, url = 0, True, False
                    if joins[i]:
                        if content:
                            rows[j].append((k, quality))
                        continue
                content = content or not small[i]
                all_weak = all_weak and weak[i]
                url = url or addr[i]
                if not small[i]:
                    length += 1
                    pronoun_only = pronoun_only and fix[i] in PRONOUNS and length == 1
                if not content:
                    continue
                if is_list:
                    q = min(quality, _item_quality(length, pronoun_only, url)) if length else quality
                else:
                    q = 0.2 if all_weak else 1.0
                rows[j].append((k, q))
        for row in rows:
            row.reverse()  # latest start first, as align() expects
        return rows


def _weight(canon: str, lex: Lexicon) -> float:
    """How much leaving the word unexplained costs: little for "the", "please", "it"."""
    if canon in lex.fillers:
        return FILLER_TOKEN_WEIGHT
    return PRONOUN_TOKEN_WEIGHT if canon in lex.pronouns else 1.0


def _item_quality(length: int, pronoun_only: bool, url: bool = False) -> float:
    if url:
        return URL_ITEM
    if pronoun_only:
        return 0.5
    return 0.6 if length > MAX_ITEM_WORDS else 1.0


def _slip_target(lex: Lexicon, word: str) -> bool:
    """A word a real word may be a slip of: a small word ("wit" for "with") or a verb ("bread" for "read"),
    never another thing's name. (Verbs stay for now: the held-out conversations written by others ask for
    "add bread" to be a choice between lists, and "bread" is one only as a slip of "read".)"""
    canon = lex.canon_word(word)
    return canon in lex.fillers or canon in lex.generic or canon in VERB_HEADS


def read_request(text: str, lex: Lexicon, now: datetime) -> Request:
    text = prepare(text)
    words = tokenize(text)
    cut = len(words) > MAX_WORDS
    words = words[:MAX_WORDS]
    lemmas = [lex.lemma(w.low) if w.kind == "word" else w.low for w in words]
    toks: list[Tok] = []
    i = 0
    while i < len(words):
        merged = False
        # A phrasal verb around a pronoun: "jot this down", "take them off", "cross it off".
        if i + 2 < len(words) and lemmas[i + 1] in _OBJECTS and not words[i].sep and not words[i + 1].sep:
            head = lex.phrases.get((lemmas[i], lemmas[i + 2]))
            if head and words[i + 2].kind == "word":
                toks.append(Tok(head, {head: 1.0}, f"{words[i].low} {words[i + 2].low}",
                                words[i].start, words[i + 2].end, "word", words[i + 2].sep, _weight(head, lex)))
                i += 3
                continue
        for size in range(min(MAX_PHRASE, len(words) - i), 1, -1):
            if any(w.kind != "word" for w in words[i : i + size]) or any(w.sep for w in words[i : i + size - 1]):
                continue
            head = lex.phrases.get(tuple(lemmas[i : i + size]))
            if head:
                first, last = words[i], words[i + size - 1]
                toks.append(Tok(head, {head: 1.0}, " ".join(w.low for w in words[i : i + size]),
                                first.start, last.end, "word", last.sep, _weight(head, lex)))
                i += size
                merged = True
                break
        if merged:
            continue
        w = words[i]
        canon = lex.single.get(lemmas[i], lemmas[i]) if w.kind == "word" else w.low
        alts = {canon: 1.0}
        verb = OPENING_VERBS.get(canon) if not toks and w.kind == "word" else None
        if verb is not None:
            alts[lex.canon_word(verb)] = 1.0
        fix = canon if canon in DATE_WORDS else w.low
        if w.kind == "word" and not lex.is_known(w.low):
            typo = lex.spell(w.low.replace("'", ""))
            # A word of English is meant as written ("tea" is no "team"), unless what it may be a slip of is a
            # small word or a verb (_slip_target): a word read as another thing's name changes what is talked about.
            if typo is not None and is_english_word(w.low) and not _slip_target(lex, typo[0]):
                typo = None
            if typo is not None and len(w.low) < MIN_TEMPORAL_SLIP and (typo[0] in TEMPORAL or typo[0] in DATE_WORDS):
                typo = None  # a short word is no slip of a time ("bee hoon" is no "bee noon"): it would set a date

            if typo is not None:
                choice, distance = typo
                alt = lex.canon_word(choice)
                alts.setdefault(alt, TYPO_SIMILARITY.get(distance, 0.7))
                fix = choice
        weight = _weight(canon, lex)
        # A bare number after "at" is a time of day ("tomorrow at 9"), as dates._clock reads it.
        temporal = w.kind in ("time", "date", "ord") or fix in TEMPORAL or (
            w.kind == "num" and i > 0 and words[i - 1].low in ("at", "@") and not words[i - 1].sep)
        toks.append(Tok(canon, alts, fix, w.start, w.end, w.kind, w.sep, weight, temporal))
        i += 1
    # Words inside one pair of quotes belong together: no request starts inside them.
    quotes = quoted_spans(text)
    for n, (qs, qe) in enumerate(quotes, 1):
        for t in toks:
            if qs <= t.start and t.end <= qe:
                t.quote = n
    # "march 25", "the 3rd of may": a month is a date word next to a day number ("march" and
    # "may" alone are too often ordinary words to count).
    for i, t in enumerate(toks):
        if t.fix not in MONTHS:
            continue
        days = [k for k in (i - 1, i + 1, i - 2) if 0 <= k < len(toks) and toks[k].kind in ("num", "ord")]
        if days:
            t.temporal = True
            for k in days:
                toks[k].temporal = True
    # "cal: dentist fri 10am", "smoko sat 9am", "on thu": a weekday's short name ("sat", "sun" and "wed" are
    # ordinary words too) is a day next to a time of day or after a word that opens a day.
    for i, t in enumerate(toks):
        if t.temporal or t.fix not in WEEKDAYS:
            continue
        before = toks[i - 1].fix if i > 0 else ""
        after = toks[i + 1] if i + 1 < len(toks) else None
        if before in _OPENS_DAY or (after is not None and (after.kind == "time" or (
                after.fix in ("at", "@") and i + 2 < len(toks) and toks[i + 2].kind in ("time", "num")))):
            t.temporal = True
    # "in two days", "half past seven": time words together, though none is one alone.
    for a, b in spoken_spans([t.fix for t in toks]):
        for t in toks[a:b]:
            t.temporal = True
    return Request(text, toks, lex, now, cut, asks=asks_question([t.fix for t in toks[:2]]) or (
        text.rstrip().endswith("?") and bool(toks) and toks[0].fix in QUESTION_AUXILIARIES), quotes=quotes)


def asks_question(first: list[str]) -> bool:
    """Words that open a question: a question word, or an auxiliary and a person ("do I", "are there")."""
    if not first:
        return False
    if first[0].split()[0] in QUESTION_WORDS:  # "how long", one word of the lexicon, opens with "how"
        return True
    if len(first) > 1 and first[0] in _BE and first[1] in _DETERMINED:
        return True  # "is the dentist on my calendar", "are the eggs on the list" ("do the dishes" commands)
    return len(first) > 1 and first[0] in QUESTION_AUXILIARIES and first[1] in QUESTION_SUBJECTS


_BE = frozenset({"is", "are", "was", "were"})
# Words after which a weekday's short name is a day: "on sat", "this thu", "every wed", "till fri".
_OPENS_DAY = frozenset({"on", "this", "next", "coming", "every", "till", "until", "by", "from", "before", "after"})
_DETERMINED = frozenset({"the", "a", "an", "our", "your", "this", "that", "these", "those", "his", "her", "their"})
