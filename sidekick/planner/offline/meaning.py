"""Where meaning overrides the templates' word counts: out-of-scope requests, near ties, no fit.

The template fit (match.py) is exact about words and values but blind to what a
request is about; the semantic closeness (semantic.py) is the reverse. They are
combined here, in three places only:

- a message much closer by meaning to everyday requests of other kinds (OUTSIDE)
  than to the function its words fit makes no call, unless the words fit that
  function almost perfectly (a weather agent's own example);
- fits are re-scored by meaning (a small weight, so that a domain word or a
  specific template still decides, and a catch-all "add {text}" does not win on
  words alone), and an agent the user installed later than another pays
  NEWCOMER on a part where the established one also fits: on a near tie the
  established agent keeps its phrases, and the newer one wins only when it is
  clearly more specific;
- when no template fits, a function the message is clearly closest to by
  meaning is tried alone, its values read from the words as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from dreamer.sidekick.planner.base import Tool
from dreamer.sidekick.planner.offline.match import Match
from dreamer.sidekick.planner.offline.semantic import Closeness

SEM_WEIGHT = 0.12  # how much a difference in closeness moves a fit's score
SEM_NEUTRAL = 0.4  # closeness that leaves a score as it is
OUTSIDE_GAP = 0.25  # closer to OUTSIDE than to the fitted function by this much: not for these agents,
STRONG_FIT = 0.95  # ... unless the words fit at least this well,
OUTSIDE_GAP_ANY = 0.55  # ... and by this much even then
NEWCOMER = 0.1  # what a later-installed agent pays where an established one fits too
ESTABLISHED_AFTER = timedelta(minutes=10)  # installed this much earlier: established
RESCUE_CLOSENESS = 0.6  # no template fits: a function this close by meaning is tried alone,
RESCUE_LEAD = 0.1  # ... when it is this much closer than any other function
GUESS_CLOSENESS = 0.35  # a doubtful fit ("did you mean ...?") needs at least this closeness
OUT_OF_SCOPE = (
    "None of your agents can do that. Say \"what can you do?\" to hear what they can, or look in the gallery "
    "(`dreamer gallery`) for an agent that does."
)


def outside(top: Match, closeness: Closeness) -> bool:
    """The request is of a kind none of the installed functions serves."""
    if not closeness.ok:
        return False
    gap = closeness.outside - closeness.by_tool[top.tool]
    return (gap > OUTSIDE_GAP and top.score < STRONG_FIT) or gap > OUTSIDE_GAP_ANY


def rescore(ranked: Sequence[Match], closeness: Closeness, tools: Sequence[Tool], floor: float) -> list[Match]:
    """The fits with meaning and seniority folded into their scores, best first."""
    if not ranked:
        return []
    out = list(ranked)
    if closeness.ok:
        out = [replace(m, score=min(1.0, max(0.0, m.score + SEM_WEIGHT * (closeness.by_tool[m.tool] - SEM_NEUTRAL))))
               for m in out]
    fitting = [m for m in out if m.score >= floor]
    established = [_installed(tools[m.tool]) for m in fitting]
    if len({tools[m.tool].agent for m in fitting}) > 1 and any(established):
        oldest = min((t for t in established if t is not None), default=None)
        if oldest is not None:
            out = [
                replace(m, score=m.score - NEWCOMER) if _newer(tools[m.tool], oldest) else m
                for m in out
            ]
    return sorted(out, key=lambda m: m.score, reverse=True)


def senior_by_meaning(ranked: Sequence[Match], closeness: Closeness, tools: Sequence[Tool]) -> int | None:
    """An established function clearly closer by meaning than the newcomer whose words fit best.

    "list all my notes" fits a new agent's "list all {text}" word for word; by meaning it is
    the notes agent's. The newcomer then does not take the phrase on words alone.
    """
    if not ranked or not closeness.ok:
        return None
    leader = tools[ranked[0].tool]
    dates = [d for d in (_installed(t) for t in tools) if d is not None]
    if not dates or not _newer(leader, min(dates)):
        return None
    best, value, _ = closeness.best()
    if best < 0 or tools[best].agent == leader.agent or _newer(tools[best], min(dates)):
        return None
    if value < RESCUE_CLOSENESS or value - closeness.by_tool[ranked[0].tool] < RESCUE_LEAD:
        return None
    return best


def rescue_tool(closeness: Closeness) -> int | None:
    """The one function a message that no template fits is clearly about, if there is one."""
    if not closeness.ok:
        return None
    best, value, second = closeness.best()
    if best < 0 or value < RESCUE_CLOSENESS or value - second < RESCUE_LEAD:
        return None
    if closeness.outside >= value:
        return None
    return best


def _installed(tool: Tool) -> datetime | None:
    if not tool.installed_at:
        return None
    try:
        return datetime.fromisoformat(tool.installed_at)
    except ValueError:
        return None


def _newer(tool: Tool, oldest: datetime) -> bool:
    when = _installed(tool)
    if when is None:
        return False
    try:
        return when - oldest >= ESTABLISHED_AFTER
    except TypeError:  # one aware, one naive: compare as written
        return when.replace(tzinfo=None) - oldest.replace(tzinfo=None) >= ESTABLISHED_AFTER
