"""Corrections: the user says the last answer was wrong, and what they meant.

"no, I meant my calendar" right after a wrong call (or a miss) names where the earlier
words should have gone: the earlier words are planned again among the named agent's
functions, leaving out the function that was wrong. What the user meant then runs, and
Sidekick keeps the pair as a personal example (kernel/learned/examples.py), with the
wrong function demoted for those words.

A rephrasing right after a miss ("add oat milk to my grocery list" after "grab some oat
milk" fitted nothing) teaches the same without a "no": `rephrases` says when the second
message is the first one said again (they share a word that carries meaning).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from dreamer.sidekick.planner.base import Plan, PlanContext, Tool
from dreamer.sidekick.planner.language.lexicon import FILLERS, PRONOUNS
from dreamer.sidekick.planner.language.text import fold, plural_strip, prepare, tokenize

PlanFn = Callable[[str, Sequence[Tool], PlanContext], Plan]

_LEAD = r"(?:no|nope|nah|not that(?: one)?|wrong(?: one)?|oops|sorry|actually|wait)"
# At most two lead words, each optional and each a fixed alternation: nothing here backtracks far.
MEANT = re.compile(
    rf"^\s*(?:{_LEAD}[\s,.!;:-]+)?(?:{_LEAD}[\s,.!;:-]+)?"
    r"(?:i\s+(?:meant|mean|wanted|said)|what\s+i\s+meant\s+was|meant)\b[\s,.:;-]*(?P<rest>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# "no, my calendar": only words that say the answer was wrong ("oops, take that off" is an undo,
# "actually make that oat milk" a follow-up).
NOT_THAT = re.compile(r"^\s*(?:no|nope|nah|not that(?: one)?|wrong(?: one)?)\s*[,.!;:-]+\s*(?P<rest>\S.*)$",
                      re.IGNORECASE | re.DOTALL)
# Words that only point at a place ("the grocery list", "my notes app"), besides the agent's name.
POINTING = frozenset("list app agent one thing place page".split())
_PLAIN = frozenset("a an the my our your to on in into of for with and or it me i is are be please".split())


def correction(text: str, question_open: bool = False) -> str | None:
    """What the user says they meant ("my calendar"), when the message is a correction.

    While a question is open, "no, ..." is its answer ("no, cancel"): only "I meant ..." corrects."""
    text = text.replace("’", "'")
    found = MEANT.match(text) or (None if question_open else NOT_THAT.match(text))
    if found is None:
        return None
    rest = found.group("rest").strip(" .!")
    return rest or None


def says_meant(text: str) -> bool:
    """The correction says "I meant": it is one whatever else the words could be read as."""
    return MEANT.match(text.replace("’", "'")) is not None


def meant(
    rest: str, said: str, wrong: set[str], tools: Sequence[Tool], context: PlanContext, plan: PlanFn,
    after_miss: bool = False,
) -> Plan | None:
    """The plan for what the user meant by `said`, told `rest`; None when nothing fits.

    `rest` is either a request of its own ("add oat milk to my grocery list", "show my
    notes"): it is planned as it stands, over every function (saying the same function
    again corrects only its values); or it only points at where the words belong ("my
    calendar", "the notes"): `said` is planned again among that agent's functions, without
    the ones that were wrong."""
    usable = [t for t in tools if t.name not in wrong]
    named = _agents_named(rest, tools)
    pointer = not (_content(rest) - _name_words(named) - POINTING)
    if not pointer or after_miss:
        alone = plan(rest, tools, context)
        if _acts(alone):
            return alone
    if not usable:
        return None
    if not named:
        fallback = plan(rest, usable, context)
        first = fallback.steps[0] if fallback.steps else None
        if first is None or not _fits(fallback):
            return None
        named = {first.agent}
    again = plan(said, [t for t in usable if t.agent in named], context)
    if _fits(again):
        return again
    alone = plan(rest, usable, context)
    return alone if _fits(alone) else None


def rephrases(first: str, second: str) -> bool:
    """Whether `second` says `first` again: they share a word that carries meaning."""
    return bool(_content(first) & _content(second))


def _acts(planned: Plan) -> bool:
    return not planned.unmatched and bool(planned.steps) and planned.pending is None


def _fits(planned: Plan) -> bool:
    return not planned.unmatched and bool(planned.steps or planned.pending is not None)


def _agents_named(rest: str, tools: Sequence[Tool]) -> set[str]:
    words = _content(rest)
    return {t.agent for t in tools if _name_words({t.agent}) & words}


def _name_words(agents: set[str]) -> set[str]:
    return {plural_strip(fold(w)) for a in agents for w in re.split(r"[_\-\s]+", a.lower()) if w}


def _content(text: str) -> set[str]:
    return {plural_strip(fold(w.low)) for w in tokenize(prepare(text))
            if w.kind == "word" and len(w.low) > 2 and w.low not in FILLERS and w.low not in PRONOUNS
            and w.low not in _PLAIN}
