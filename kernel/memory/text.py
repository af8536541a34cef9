"""The wording of a fact: what may be stored, when two facts are the same, and the
words that carry its meaning (for ranking facts against a question)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.text import storable_text

MAX_FACT_CHARS = 1000

# Contractions are expanded before comparing, so "I'm vegetarian" and
# "I am vegetarian" are one fact.
_CONTRACTIONS: tuple[tuple[str, str], ...] = (
    (r"\bcan't\b", "cannot"),
    (r"\bwon't\b", "will not"),
    (r"\bshan't\b", "shall not"),
    (r"\bi'm\b", "i am"),
    (r"n't\b", " not"),
    (r"'re\b", " are"),
    (r"'ve\b", " have"),
    (r"'ll\b", " will"),
    (r"'d\b", " would"),
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")

STOPWORDS: frozenset[str] = frozenset(
    """a an the and or but if of to in on at by for with about from into over under as is am are was were be been
    being do does did done have has had having i me my mine myself you your yours we our us they them their he him
    his she her it its this that these those what which who whom whose when where why how there here so very
    can could would should will shall may might must just also than then too user users s""".split()
)


def clean_fact(text: object) -> str:
    """The fact as it will be stored (whitespace collapsed), or invalid_argument saying why not."""
    if not isinstance(text, str):
        raise DreamerError("invalid_argument", "a fact must be text")
    cleaned = storable_text(" ".join(text.split()))
    if not cleaned:
        raise DreamerError("invalid_argument", "the fact is empty; say what to remember")
    if len(cleaned) > MAX_FACT_CHARS:
        raise DreamerError(
            "invalid_argument", f"a fact can be at most {MAX_FACT_CHARS} characters long (this one has {len(cleaned)})"
        )
    return cleaned


def normalize(text: str) -> str:
    """Lower case, plain apostrophes, contractions spelled out, punctuation gone."""
    folded = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'").casefold()
    for pattern, replacement in _CONTRACTIONS:
        folded = re.sub(pattern, replacement, folded)
    return " ".join(_WORD.findall(folded))


def fact_key(text: str) -> str:
    """What makes two facts the same fact: the sha256 of the normalized wording."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def stem(word: str) -> str:
    """A crude English stem, enough that "allergies" meets "allergy" and "living" meets "live"."""
    if len(word) <= 3:
        return word
    if word.endswith("'s"):
        word = word[:-2]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def content_stems(text: str) -> set[str]:
    """The stems of the words that carry meaning (no "the", "I", "is")."""
    return {stem(w) for w in normalize(text).split() if w not in STOPWORDS and not w.isdigit()}
