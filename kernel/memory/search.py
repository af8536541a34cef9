"""Which remembered facts answer a question, best first.

No model here: facts are ranked by the meaningful words they share with the
question, then by a few topics (food, home, work, family, ...) so that "what
does the user eat?" finds "I'm vegetarian" although no word is shared, and
rapidfuzz's similarity breaks ties. Every fact is returned — an agent holding
`memory:read` may read all of them — but the relevant ones come first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz

from dreamer.kernel.memory.text import content_stems, normalize, stem


class HasText(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def text(self) -> str: ...


# Stems that put a fact or a question on a topic.
_TOPIC_WORDS: dict[str, str] = {
    "food": """eat ate food dinner lunch breakfast supper meal diet cook cooking recipe cuisine dish snack vegetarian
        vegan pescatarian pescetarian meat pork beef lamb chicken fish seafood shellfish egg dairy milk cheese gluten
        lactose nut peanut allergic allergy intolerant intolerance kosher halal keto paleo spicy sweet drink alcohol
        wine beer coffee tea favourite favorite taste""",
    "home": "live home house flat apartment city town country address located based neighbourhood neighborhood from move",
    "work": "work job office employer company colleague profession career boss",
    "family": """wife husband partner spouse son daughter child children kid baby mother mom mum father dad parent
        brother sister family pet dog cat""",
    "health": "allergic allergy intolerant intolerance doctor medication medicine health condition diabetic asthma",
    "time": "birthday anniversary morning evening night weekend wake sleep schedule",
}
TOPICS: dict[str, frozenset[str]] = {
    topic: frozenset(stem(w) for w in words.split()) for topic, words in _TOPIC_WORDS.items()
}


@dataclass(frozen=True)
class Ranked:
    fact: HasText
    score: float


def topics_of(stems: set[str]) -> set[str]:
    return {topic for topic, words in TOPICS.items() if stems & words}


def score(question: str, fact: str) -> float:
    """How well `fact` answers `question`: shared words count most, a shared topic
    next, and string similarity (0..0.2) only orders otherwise equal facts."""
    asked, known = content_stems(question), content_stems(fact)
    shared = len(asked & known) / max(1, len(asked))
    topical = 0.5 if topics_of(asked) & topics_of(known) else 0.0
    similar = fuzz.token_set_ratio(normalize(question), normalize(fact)) / 500
    return shared + topical + similar


def rank(question: str, facts: Sequence[HasText], limit: int | None = None) -> list[Ranked]:
    """The facts, most relevant first; among equals the newest (highest id) first."""
    ranked = [Ranked(f, score(question, f.text)) for f in facts]
    ranked.sort(key=lambda r: (-r.score, -r.fact.id))
    return ranked if limit is None else ranked[:limit]


def find(said: str, facts: Sequence[HasText]) -> list[HasText]:
    """The facts `said` names, for "forget that I live in Lyon": the fact with the same
    wording if there is one, else the facts nearest to it that are nearly it or
    contain all its words and not many more (several when they tie, so the caller
    can ask which). "I eat" does not name "I don't eat pork"."""
    wanted = normalize(said)
    exact = [f for f in facts if normalize(f.text) == wanted]
    if exact or not wanted:
        return exact
    words = content_stems(said)
    near: list[tuple[float, HasText]] = []
    for fact in facts:
        similarity = fuzz.token_sort_ratio(wanted, normalize(fact.text))
        known = content_stems(fact.text)
        covered = bool(words) and words <= known and 2 * len(words) >= len(known)
        if similarity >= 85 or covered:
            near.append((similarity, fact))
    best = max((s for s, _ in near), default=None)
    return [f for s, f in near if s == best]
