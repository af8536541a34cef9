"""Short summaries of saved articles.

Two ways, one result: a model-written summary when the caller can get one, and
otherwise an extractive one made here — the three sentences whose words the
article uses most, in their original order. No SDK in this module: the model is
reached through a plain callable, so both paths can be checked on their own.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

MAX_SENTENCES = 3
MAX_SUMMARY_CHARS = 600
# The model sees the beginning of long articles only: enough for a summary, bounded cost.
MAX_PROMPT_TEXT = 12_000
MAX_MODEL_SUMMARY_CHARS = 1_200
MIN_SENTENCE_WORDS = 4

STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves one two also may might must shall said says s t
    """.split()
)

_ABBREVIATIONS = ("mr.", "mrs.", "ms.", "dr.", "prof.", "st.", "vs.", "e.g.", "i.e.", "etc.", "no.", "fig.", "inc.", "jr.", "sr.")
# A sentence ends at . ! ? or … (maybe followed by a closing quote or bracket) before
# white space and something that can start a sentence.
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9À-ÖØ-Þ])")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def sentences(text: str) -> list[str]:
    """The text's sentences, in order; paragraphs and lines never run together."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=\s*[-*•]\s)", text):
        block = " ".join(block.split())
        if not block:
            continue
        pieces = _BOUNDARY.split(block)
        merged: list[str] = []
        for piece in pieces:
            # "Dr. Smith" is not two sentences.
            if merged and merged[-1].casefold().endswith(_ABBREVIATIONS):
                merged[-1] = f"{merged[-1]} {piece}"
            else:
                merged.append(piece)
        out.extend(p.strip() for p in merged if p.strip())
    return out


def words(text: str) -> list[str]:
    return [w.replace("’", "'") for w in _WORD.findall(text.casefold())]


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 1]


def clip(text: str, most: int) -> str:
    """At most `most` characters, cut at a word boundary with an ellipsis."""
    if len(text) <= most:
        return text
    cut = text[: most - 1].rsplit(" ", 1)[0].rstrip(",;:-—– ")
    return (cut or text[: most - 1]) + "…"


def extractive(text: str, title: str | None = None, *, keep: int = MAX_SENTENCES, most: int = MAX_SUMMARY_CHARS) -> str:
    """The `keep` sentences that carry the article's most frequent words, in their original order.

    A sentence scores the sum of its content words' frequencies (words of the
    title count double), divided by the square root of its length so neither
    long nor short sentences win by size alone. The lead sentence gets a small
    bonus: articles tend to say what they are about first.
    """
    found = sentences(text)
    if not found:
        return ""
    if len(found) <= keep:
        return clip(" ".join(found), most)
    freq = Counter(content_words(text))
    if not freq:
        return clip(" ".join(found[:keep]), most)
    top = max(freq.values())
    in_title = set(content_words(title or ""))
    long_enough = [i for i, s in enumerate(found) if len(words(s)) >= MIN_SENTENCE_WORDS] or list(range(len(found)))

    def score(i: int) -> float:
        own = content_words(found[i])
        if not own:
            return 0.0
        total = sum(freq[w] / top * (2.0 if w in in_title else 1.0) for w in own)
        return total / math.sqrt(len(own)) * (1.15 if i == 0 else 1.0)

    ranked = sorted(long_enough, key=lambda i: (-score(i), i))
    chosen: list[int] = []
    used = 0
    for i in ranked:
        extra = len(found[i]) + (1 if chosen else 0)
        if used + extra <= most:
            chosen.append(i)
            used += extra
        if len(chosen) == keep:
            break
    if not chosen:  # even the best sentence is longer than the cap
        return clip(found[ranked[0]], most)
    return " ".join(found[i] for i in sorted(chosen))


def prompt(text: str, title: str | None) -> str:
    heading = f"Title: {title}\n" if title else ""
    return (
        "Summarize this article in at most three sentences of plain text, for someone deciding "
        "whether to read it. Say what it is about and its main point; no preamble, no lists.\n\n"
        f"{heading}Article:\n{clip(text, MAX_PROMPT_TEXT)}"
    )


def model_text(answer: Any) -> str | None:
    """The summary text in a model's answer, whatever shape the gateway returns it in."""
    if isinstance(answer, dict):
        answer = next((answer[k] for k in ("text", "summary", "content", "output") if isinstance(answer.get(k), str)), None)
    elif not isinstance(answer, str):
        answer = getattr(answer, "text", None)
    if not isinstance(answer, str):
        return None
    cleaned = " ".join(answer.split())
    return clip(cleaned, MAX_MODEL_SUMMARY_CHARS) if cleaned else None


def summarize(text: str, title: str | None, ask_model: Callable[[str], Any] | None) -> tuple[str, str]:
    """(summary, how): how is "model" when `ask_model` answered usefully, else "extractive".

    `ask_model` returns None when no model can be had (not granted, none
    configured); then, as for an empty answer, the extractive summary is used.
    """
    if ask_model is not None:
        made = model_text(ask_model(prompt(text, title)))
        if made:
            return made, "model"
    return extractive(text, title), "extractive"
