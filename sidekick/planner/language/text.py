"""Splitting a message into words, and the light stemming both templates and requests get.

Every word keeps its place in the original text, so a slot's value is what the
user wrote ("2 liters of Milk"), never the normalised form used for matching.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from dreamer.sidekick.planner.language.lexicon import CONTRACTIONS, SHORTHANDS, TO_BEFORE

MAX_TEXT_CHARS = 2000  # longer messages are cut: a request is a sentence or three, not a document

_TLDS = "com|org|net|io|dev|ai|co|uk|de|fr|nl|eu|edu|gov|app|me|info|news|blog|xyz|tv|us|ca|au|ly|gl"
_TOKEN = re.compile(
    rf"""
    (?P<url>(?:https?://|www\.)[^\s<>"']+|[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:{_TLDS})(?:/[^\s<>"']*)?(?![\w.]))
  | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
  | (?P<date>\d{{4}}-\d{{2}}-\d{{2}})
  | (?P<time>\d{{1,2}}(?::\d{{2}})?\s?(?:a\.?m\.?|p\.?m\.?)(?![a-z])|\d{{1,2}}:\d{{2}})
  | (?P<ord>\d{{1,2}}(?:st|nd|rd|th)(?![a-z]))
  | (?P<num>\d+(?:[.,]\d+)?)
  | (?P<tag>\#[^\W_][\w-]*)
  | (?P<word>[^\W\d_]+(?:['-][^\W\d_]+)*)
  | (?P<amp>[&+])
  | (?P<sep>[,;:.!?]+|\s[-–—]+\s|[()"\[\]{{}}])
    """,
    re.IGNORECASE | re.VERBOSE,
)
_URL_TAIL = ".,;:!?)"


@dataclass(slots=True)
class Word:
    """One word of the message: its casefolded form, its kind and where it stands."""

    low: str
    start: int
    end: int
    kind: str  # word | num | url | email | date | time | ord | tag
    sep: str = ""  # the punctuation right after this word, if any


def prepare(text: str) -> str:
    """The message as the planner reads it: NFKC, straight apostrophes, bounded length."""
    text = unicodedata.normalize("NFKC", text)[:MAX_TEXT_CHARS]
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")


def tokenize(text: str) -> list[Word]:
    """Words of `text` (already `prepare`d) with contractions expanded; punctuation marks the word before it."""
    words: list[Word] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "word"
        start, end = m.span()
        raw = m.group()
        if kind == "sep":
            if words and not words[-1].sep:
                words[-1].sep = raw.strip() or "-"
            continue
        if kind == "amp":
            words.append(Word("and", start, end, "word"))
            continue
        if kind == "url":
            stripped = raw.rstrip(_URL_TAIL)
            end = start + len(stripped)
            words.append(Word(stripped, start, end, "url"))
            if len(stripped) < len(raw) and raw[len(stripped):].strip(")"):
                words[-1].sep = raw[len(stripped):][0]
            continue
        low = raw.casefold()
        if kind == "word":
            words.extend(_expand(low, start, end))
            continue
        words.append(Word(low.replace(" ", ""), start, end, kind))
    return _compounds(_to_words(words))


def _to_words(words: list[Word]) -> list[Word]:
    """ "2 the list", "2 my calendar": the number 2 said as "to" (texting), between a word and a determiner."""
    for i in range(1, len(words) - 1):
        w = words[i]
        if (w.kind == "num" and w.low == "2" and not w.sep and not words[i - 1].sep
                and words[i - 1].kind == "word" and words[i + 1].low in TO_BEFORE):
            w.low, w.kind = "to", "word"
    return words


def _compounds(words: list[Word]) -> list[Word]:
    """ "To do list" is the compound "to-do list", however it is spelled: as two words it would be
    "to" and "do", small words any phrase may leave out."""
    out: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i]
        if (i + 2 < len(words) and w.low == "to" and words[i + 1].low == "do" and words[i + 2].low in ("list", "lists")
                and not w.sep and w.kind == words[i + 1].kind == "word"):
            joined = Word("to-do", w.start, words[i + 1].end, "word")
            joined.sep = words[i + 1].sep
            out.append(joined)
            i += 2
            continue
        out.append(w)
        i += 1
    return out


def _expand(low: str, start: int, end: int) -> list[Word]:
    if low in CONTRACTIONS:
        return [Word(part, start, end, "word") for part in CONTRACTIONS[low]]
    if low in SHORTHANDS:
        return [Word(part, start, end, "word") for part in SHORTHANDS[low]]
    if low.endswith("'s") and len(low) > 2:
        # A possessive ("friday's dinner"): the owner is the word, the 's is a filler.
        return [Word(low[:-2], start, end - 2, "word"), Word("s", end - 2, end, "word")]
    if low.endswith("'") and len(low) > 1:
        return [Word(low[:-1], start, end - 1, "word")]
    return [Word(low, start, end, "word")]


def plural_strip(word: str) -> str:
    """The singular of a regular English plural; other words unchanged."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zes", "oes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return word[:-1]
    return word


_VOWELS = set("aeiou")


def verb_candidates(word: str) -> list[str]:
    """Base forms a word may have if it is an -ing or -ed form ("planning" -> "plan")."""
    out: list[str] = []
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            if not any(ch in _VOWELS for ch in stem):
                continue
            out.append(stem)
            out.append(stem + "e")
            if len(stem) > 2 and stem[-1] == stem[-2]:
                out.append(stem[:-1])
            if stem.endswith("i"):
                out.append(stem[:-1] + "y")  # tried -> try
    return out


_QUOTED = re.compile(r"\"[^\"]+\"|“[^”]+”|(?<![\w'])'[^']+'(?![\w'])")


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Where the message quotes something ("add 'x and y' to the list"): (start, end) offsets."""
    return [m.span() for m in _QUOTED.finditer(text)]


def fold(word: str) -> str:
    """The form a word is compared in: no hyphens or apostrophes ("to-do" and "todo" meet)."""
    return word.replace("-", "").replace("'", "")


def made_of(words: list[str], phrases: frozenset[str]) -> bool:
    """Whether `words` are wholly a run of `phrases` ("no thanks", "yes please do").

    A word-level check in O(words x longest phrase), in place of regular expressions
    like `^(?:(?:no|no thanks|thanks)\\s*)+$`, which can read a run of phrases in
    exponentially many ways and stall the kernel on a long message of them.
    """
    if not words:
        return False
    longest = max((p.count(" ") + 1 for p in phrases), default=0)
    reachable = [True] + [False] * len(words)
    for i in range(len(words)):
        if not reachable[i]:
            continue
        for size in range(1, min(longest, len(words) - i) + 1):
            if " ".join(words[i : i + size]) in phrases:
                reachable[i + size] = True
    return reachable[-1]
