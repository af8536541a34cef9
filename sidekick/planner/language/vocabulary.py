"""The vocabulary of one tool list: stemming, synonyms and spelling correction against it.

Stemming is deliberately light (plurals always; -ing/-ed only when the base form
is a word some template or the lexicon uses), because the same function must
turn "adding" and "add", "notes" and "note" into one form without ever merging
unrelated words ("note" and "not").
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from rapidfuzz import process
from rapidfuzz.distance import OSA

from dreamer.sidekick.planner.language import dates
from dreamer.sidekick.planner.language.lexicon import (
    FILLERS,
    GENERIC_WORDS,
    NEGATIONS,
    ORDINALS,
    PRONOUNS,
    SPLIT_WORDS,
    SYNONYMS,
    TENS,
    UNITS,
)
from dreamer.sidekick.planner.language.text import fold, plural_strip, verb_candidates

MAX_PHRASE = 3
_BUILTIN: tuple[str, ...] = tuple(
    sorted(
        FILLERS | NEGATIONS | PRONOUNS | SPLIT_WORDS | dates.DATE_WORDS
        | set(UNITS) | set(TENS) | set(ORDINALS)
        | {w for group in SYNONYMS for member in group for w in member.split()}
    )
)


def _inflections(word: str) -> tuple[str, ...]:
    """The -ing and -ed forms of a one-word verb ("watch": watching, watched; "save": saving, saved)."""
    if " " in word or not word.isalpha() or len(word) < 3:
        return ()
    stem = word[:-1] if word.endswith("e") else word
    doubled = word + word[-1] if len(word) <= 4 and word[-1] not in "aeiouwy" and word[-2] in "aeiou" else word
    return tuple(dict.fromkeys((stem + "ing", stem + "ed", doubled + "ing", doubled + "ed")))


class Lexicon:
    """Word forms known to a tool list, and the canonical form of any word."""

    def __init__(self, template_words: Iterable[str] = ()) -> None:
        surface = {fold(w) for w in template_words if w} | {fold(w) for w in _BUILTIN}
        self.known: frozenset[str] = frozenset(plural_strip(w) for w in surface)
        self.single: dict[str, str] = {}
        self.phrases: dict[tuple[str, ...], str] = {}
        for group in SYNONYMS:
            head = self.lemma(group[0])
            for member in group:
                key = tuple(self.lemma(w) for w in member.split())
                if len(key) == 1:
                    if key[0] != head:
                        self.single.setdefault(key[0], head)
                    # A form a template uses as written ("what pages am I watching") is not stemmed,
                    # so its synonyms' forms must meet it there: "monitoring" is "watching".
                    for form in _inflections(member):
                        if form in self.known and form != head:
                            self.single.setdefault(form, head)
                else:
                    self.phrases.setdefault(key, head)
        # Typos are corrected towards words of at least four letters: shorter ones
        # are one keystroke from too many others ("ad" could be "add" or "and").
        # Nor towards a shortened day name ("tubes" is one letter from "tues"): a typo of a day is of
        # its whole name ("wendsday"), and a thing's name must never turn into a date.
        self._choices: list[str] = sorted(w for w in surface if len(w) >= 4 and w.isalpha()
                                          and not (w in dates.WEEKDAYS and len(w) < 6))
        self.fillers: frozenset[str] = frozenset(self.canon_word(w) for w in FILLERS)
        self.negations: frozenset[str] = frozenset(self.canon_word(w) for w in NEGATIONS)
        self.pronouns: frozenset[str] = frozenset(self.canon_word(w) for w in PRONOUNS)
        self.split_words: frozenset[str] = frozenset(self.canon_word(w) for w in SPLIT_WORDS)
        # By the word's own base form, not its synonym group's head: "make" is generic, "cook" is not,
        # though "make" reads as "cook" when matching.
        self.generic: frozenset[str] = self.fillers | frozenset(self.lemma(w) for w in GENERIC_WORDS)
        self.spell = lru_cache(maxsize=4096)(self._spell)

    def lemma(self, word: str) -> str:
        """The base form used for comparison ("planning" -> "plan", "groceries" -> "grocery")."""
        folded = fold(word)
        base = plural_strip(folded)
        if base in self.known or not folded.isalpha():
            return base
        for candidate in verb_candidates(folded):
            if candidate in self.known:
                # "shoping" is "shopping" misspelt, not "shop": the form with the consonant doubled is
                # a word of its own meaning ("shopping" reads as grocery), and the writer meant it.
                suffix = folded[len(candidate):] if folded.startswith(candidate) else ""
                doubled = candidate + candidate[-1] + suffix if suffix in ("ing", "ed") else ""
                if doubled and doubled in self.single:
                    return doubled
                return candidate
            if plural_strip(candidate) in self.known:
                return plural_strip(candidate)
        return base

    def canon_word(self, word: str) -> str:
        base = self.lemma(word)
        return self.single.get(base, base)

    def is_known(self, word: str) -> bool:
        return self.lemma(word) in self.known

    def _spell(self, word: str) -> tuple[str, int] | None:
        """The known word `word` is most likely a typo of, and the edit distance; None when none is close.

        Three-letter words are corrected only by one missing letter ("pln" -> "plan"):
        any other edit of so short a word lands on too many real words.
        """
        if len(word) < 3 or not word.isalpha():
            return None
        limit = 1 if len(word) < 7 else 2
        found = process.extractOne(word, self._choices, scorer=OSA.distance, score_cutoff=limit)
        if found is None:
            return None
        choice, distance, _ = found
        if distance == 0 or (len(word) == 3 and len(choice) != 4):
            return None
        return choice, int(distance)
