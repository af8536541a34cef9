"""Matching what people type against the values in the data: misspellings, near matches, codes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils

MIN_SCORE = 72.0
TIE = 6.0  # candidates within this many points of the best one are all plausible


@dataclass(frozen=True)
class Match:
    code: str
    name: str  # the most common spelling
    score: float


def rank_values(search: str, values: Sequence[str], limit: int = 10) -> list[tuple[str, float]]:
    """Values most like `search`, best first (misspellings included)."""
    found = process.extract(search, [str(v) for v in values], scorer=fuzz.WRatio, processor=utils.default_process,
                            limit=limit, score_cutoff=55)
    return [(value, round(score, 1)) for value, score, _ in found]


def match_names(phrase: str, names_by_code: Mapping[str, Sequence[str]]) -> list[Match]:
    """The codes whose names fit `phrase`: one when it is clear, several when it is not, none when nothing fits."""
    said = utils.default_process(phrase)
    if not said:
        return []
    scored: list[Match] = []
    for code, names in names_by_code.items():
        if said == utils.default_process(code):
            return [Match(code, names[0] if names else code, 100.0)]
        best = 0.0
        for name in names:
            low = utils.default_process(name)
            # Every word said appears in the name ("operations" in "IT Operations"), allowing typos.
            best = max(best, fuzz.token_set_ratio(said, low), fuzz.ratio(said, low))
        if best >= MIN_SCORE:
            scored.append(Match(code, names[0] if names else code, float(best)))
    if not scored:
        return []
    scored.sort(key=lambda m: (-m.score, m.code))
    top = scored[0].score
    return [m for m in scored if m.score >= top - TIE]
