"""Requests that name the agent they are for: "ask notes who Mia's teacher is", "tell the grocery
app to add pecans", "use the recipes agent to find something with tofu".

The name says where to look, so the rest is read against that agent's functions alone; what
is left once the address is taken off is an ordinary request ("add pecans", "who Mia's
teacher is", "my to-dos"). Only an agent the user has opens such an address, and only the
verbs people use to hand work to someone: "ask the grocery list for ..." is the same thing,
"the grocery list is long" is not an address at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dreamer.sidekick.planner.language.embedded import in_question_order

_OPENING = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+|go\s+(?:and\s+)?)?(?P<verb>ask|tell|use|get|have|check with|let)\s+"
    r"(?:the\s+|my\s+|your\s+)?(?P<name>[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)"
    r"(?:\s+(?:app|agent|bot|assistant|list|thing|one))?\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# How the rest opens after the name, and what it becomes: "to add pecans" is "add pecans",
# "for my to-dos" is "show my to-dos", "what we need" stays a question.
_SUFFIX = re.compile(r"^(?:app|agent|bot|assistant|list|thing|one)\b\s*", re.IGNORECASE)
_TO = re.compile(r"^(?:,\s*)?(?:to|and|:|-)\s*", re.IGNORECASE)
_FOR = re.compile(r"^(?:,\s*)?for\s+", re.IGNORECASE)
_QUESTION = re.compile(r"^(?:,\s*)?(?:what|who|whom|where|when|which|how|whether|if|about)\b", re.IGNORECASE)
MAX_CHARS = 400


@dataclass(frozen=True)
class Addressed:
    agent: str
    rest: str
    question: bool  # "ask notes who Mia's teacher is" asks to be told, so only reading functions fit


def _names(agents: Iterable[str]) -> dict[str, str]:
    """The words a user may call each agent by: its name, the name with spaces for dashes, and
    the singular or plural of a one-word name ("note", "recipe", "groceries")."""
    found: dict[str, str] = {}
    for agent in agents:
        name = agent.casefold()
        spoken = name.replace("-", " ").replace("_", " ")
        for said in {name, spoken, spoken.rstrip("s"), spoken + "s", spoken.removesuffix("y") + "ies"}:
            if said and said not in found:
                found[said] = agent
    return found


def addressed_to(text: str, agents: Iterable[str]) -> Addressed | None:
    """The agent a request names and the request without the address, or None."""
    if len(text) > MAX_CHARS:
        return None
    m = _OPENING.match(text.strip())
    if m is None:
        return None
    names = _names(agents)
    words = m.group("name").casefold().split()
    rest = m.group("rest")
    agent = names.get(" ".join(words))
    if agent is None and len(words) == 2:
        # "ask notes what ...": the second word belongs to the rest, not the name.
        agent = names.get(words[0])
        rest = m.group("name").split(None, 1)[1] + (" " + rest if rest else "")
    if agent is None:
        return None
    rest = _SUFFIX.sub("", rest.strip(), count=1)
    verb = m.group("verb").casefold()
    question = False
    if verb in ("get", "have", "let") and not _TO.match(rest):
        return None  # "get the recipe for pancakes" names a recipe, not an agent: only "get X to ..." hands over
    if _TO.match(rest):
        rest = _TO.sub("", rest, count=1)
    elif _FOR.match(rest):
        rest = "show " + _FOR.sub("", rest, count=1)
    elif _QUESTION.match(rest):
        rest, question = in_question_order(rest.lstrip(" ,")), True
    elif verb not in ("ask", "check with"):
        return None  # "use the grocery list more": no request handed over
    rest = rest.strip(" ,.")
    return Addressed(agent, rest, question) if rest else None


# What a question asks about, without its question words: "who Mia's teacher is" → "Mia's teacher",
# "what I have on landlord" → "landlord", "what did I save about the boiler" → "the boiler".
_ASKING = re.compile(
    r"^(?:what|who|whom|where|when|which|how|whether|if)(?:'s|s)?\s+"
    r"(?:(?:do|does|did|is|are|was|were|have|has)\s+)?(?:(?:i|we|you|my)\s+)?"
    r"(?:(?:have|got|know|saved?|wrote|written|noted|keep|kept)\s+)?(?:(?:on|about|for|of|re)\s+)?",
    re.IGNORECASE,
)
_TRAILING_VERBS = frozenset({"is", "are", "was", "were"})


def topic(question: str) -> str:
    """What a question is about, for a function that searches by words."""
    words = _ASKING.sub("", question.strip(" ?.!"), count=1).split()
    if len(words) > 1 and words[-1].casefold() in _TRAILING_VERBS:
        words.pop()  # (split, not a regex: "\s+is$" backtracks on long runs of spaces)
    return " ".join(words) or question.strip(" ?.!")
