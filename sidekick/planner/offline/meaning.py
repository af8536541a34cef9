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
from dreamer.sidekick.planner.language.lexicon import QUESTION_WORDS
from dreamer.sidekick.planner.language.outside import asked_of_another
from dreamer.sidekick.planner.offline.index import Index, ToolInfo
from dreamer.sidekick.planner.offline.match import Match
from dreamer.sidekick.planner.offline.request import Request
from dreamer.sidekick.planner.offline.semantic import Closeness

SEM_WEIGHT = 0.12  # how much a difference in closeness moves a fit's score
SEM_NEUTRAL = 0.4  # closeness that leaves a score as it is
CLEAN_LEFT = 0.3  # a fit leaving less than this weight of words unexplained explains the request (match.Match.clean)
OUTSIDE_GAP = 0.25  # closer to OUTSIDE than to the fitted function by this much: not for these agents,
STRONG_FIT = 0.95  # ... unless the words fit at least this well,
OUTSIDE_GAP_ANY = 0.55  # ... and by this much even then
NEWCOMER = 0.1  # what a later-installed agent pays where an established one fits too
ESTABLISHED_AFTER = timedelta(minutes=10)  # installed this much earlier: established
RESCUE_CLOSENESS = 0.6  # no template fits: a function this close by meaning is tried alone,
RESCUE_LEAD = 0.1  # ... when it is this much closer than any other function
# A fit too weak to offer on words alone is taken when meaning points at the same function:
AGREE_FIT = 0.35  # the words fit it at least this well (after re-scoring by meaning),
AGREE_LEAD = 0.08  # ... better than any other function's words by this much,
AGREE_CLOSENESS = 0.3  # ... and it is the closest function by meaning, at least this close
GUESS_CLOSENESS = 0.35  # a doubtful fit ("did you mean ...?") needs at least this closeness
# A generic fit (generic_veto) is dropped when the rest of the request is this close to a domain
# no agent serves, and closer to it than to the function by VETO_GAP; or closer to another
# agent's function than to this one by VETO_GAP_AGENT (agents share words, so a wider margin).
VETO_CLOSENESS = 0.45
VETO_GAP = 0.2
VETO_GAP_AGENT = 0.45
AGENT_OWN_MAX = 0.15  # ... when the rest says next to nothing of this function ("dinner party" may be an event)
NAMED_CLOSENESS = 0.1  # ... or one of its words names such a domain, and it is at least this close
_SPEAKERS = frozenset({"i", "we", "you", "me", "us"})
DIFFERENT_THING = (
    "I'm not sure what you'd like me to do there: none of your agents does quite that. Say \"what can you "
    "do?\" to hear what they can."
)
OUT_OF_SCOPE = (
    "None of your agents can do that. Say \"what can you do?\" to hear what they can, or look in the gallery "
    "(`dreamer gallery`) for an agent that does."
)


def generic(req: Request, m: Match, info: ToolInfo | None = None) -> bool:
    """The fit's template words, as the user wrote them, are all words any domain uses.

    "book {title} for {start}" fitted to "book a hotel in Rome": "book" is such a word
    (lexicon.GENERIC_WORDS), so the fit rests on its slot alone; "add {items} to my grocery
    list" does not. A word matched only as a likely typo ("wake" as "make") is not the
    user's word, and counts for nothing. A web address the fit took says what the request is
    about as plainly as a word would ("track https://... for vacancies").
    """
    if info is not None and any(info.slots[name].kind == "url" for name in m.missing if name in info.slots) \
            and not any(t.kind == "url" for t in req.toks):
        return True  # a fit whose web address the message nowhere holds ("alert me if it rains") rests on its words
    if info is not None and any(info.slots[name].kind == "url" for name in m.spans if name in info.slots):
        return False
    # A phrase read as a generic word's synonym ("tell me" as "show") is as generic as the word.
    return not any(req.toks[pos].alts.get(canon, 0.0) >= 1.0 and canon not in req.lex.fillers
                   and req.lex.lemma(req.toks[pos].fix) not in req.lex.generic and canon not in req.lex.generic
                   for pos, canon in m.said)


def names_a_domain(req: Request, k: int, names: frozenset[str]) -> bool:
    """Word k of the request is one of `names`, as read or as written: a word no example knows may have been
    read as a slip of one that is ("timer" as "time"), yet the user wrote the name."""
    tok = req.toks[k]
    return tok.canon in names or req.lex.canon_word(req.text[tok.start:tok.end].casefold()) in names


def rest_of_request(info: ToolInfo, req: Request, m: Match) -> list[int]:
    """The words of the fitted span that say what it is about (positions in req.toks): neither the
    template's own words, nor fillers, nor a typed value (a day, a time, a number says nothing of
    the domain)."""
    taken = {pos for pos, canon in m.said if req.toks[pos].alts.get(canon, 0.0) >= 1.0}
    for name, (a, b) in m.spans.items():
        slot = info.slots.get(name)
        if slot is not None and slot.kind not in ("text", "list"):
            taken.update(range(a, b))
    return [k for k in range(m.a, m.b) if k not in taken and req.toks[k].canon not in req.lex.fillers]


_ASKED_OF_ANOTHER = asked_of_another()
_WILL_AUX = frozenset({"do", "does", "will", "would", "should", "shall", "gonna"})


def _asks_if_needed(req: Request) -> bool:
    """The request asks whether the speaker needs something: "do I need ...", "will we need ..."."""
    words = [t.fix.casefold() for t in req.toks[:3]]
    return len(words) == 3 and words[0] in _WILL_AUX and words[1] in _SUBJECTS and words[2] == "need"


def _lists_things(info: ToolInfo, m: Match) -> bool:
    """The fit fills a list parameter: a list of things."""
    return any(info.slots[name].kind == "list" for name in m.spans if name in info.slots)


def generic_veto(index: Index, req: Request, m: Match, tools: Sequence[Tool]) -> str | None:
    """Why meaning overrules a generic fit, if it does: "outside" or "agent"; None when it stands.

    A generic fit ("buy {items}", "put {items} on", "book {title}", "how many people
    {question}") is taken only when the rest of the request is not clearly about something
    else: a domain no agent serves (language.outside: "tickets for the concert", "a hotel in
    Rome"), or, by a wider margin, another agent's function ("are coming to dinner on friday").
    A word that names such a domain outright ("flight", "taxi") needs less of the meaning.
    """
    info = index.tools[m.tool]
    if not generic(req, m, info):
        return None
    rest = rest_of_request(info, req, m)
    if not rest:
        return None
    near = Closeness(" ".join(req.text[req.toks[k].start:req.toks[k].end] for k in rest), tools)
    if not near.ok:
        return None
    own = near.by_tool[m.tool]
    # A list of things to get may hold any goods ("light bulbs", "a lamp"): only a domain of
    # services (flights, tickets, rides) speaks against it.
    # ("do I need an umbrella", "will I need sunnies this arvo" ask the forecast: asked whether it is needed, a
    # thing is no longer just goods to buy)
    asked = _asks_if_needed(req) and any(
        req.toks[k].canon in _ASKED_OF_ANOTHER or req.toks[k].fix.casefold() in _ASKED_OF_ANOTHER for k in rest)
    things = _lists_things(info, m) and not asked
    names, there = (index.outside_services, near.outside_services) if things else (index.outside_words, near.outside)
    named = any(names_a_domain(req, k, names) for k in rest)
    if named and there >= NAMED_CLOSENESS and (there > own or asked):
        return "outside"
    if there >= VETO_CLOSENESS and there - own >= VETO_GAP:
        return "outside"
    other = max((v for n, v in enumerate(near.by_tool) if tools[n].agent != info.tool.agent), default=0.0)
    if other - own >= VETO_GAP_AGENT and own < AGENT_OWN_MAX:
        return "agent"
    if any(word not in req.lex.generic for word in m.missed) and own < max(near.outside, other):
        # The fit found only the template's generic words and missed its own ("who has the most
        # [salary]"): it stands only where meaning, too, puts the rest nearer this function.
        return "outside" if near.outside >= other else "agent"
    return None


# Auxiliaries by tense: a question asked with a past one is about what happened; a template that asks with
# a present one ("when is my {title}") looks ahead in the user's own data.
_PAST_AUX = frozenset({"did", "was", "were"})
_PRESENT_AUX = frozenset({"is", "are", "do", "does", "am"})
# Whose it is: the user's own past is theirs to ask of their agents ("did I buy milk", "when was my last appt").
_THE_USERS = frozenset({"i", "we", "my", "our", "me", "us", "you", "your", "i've", "we've", "i'd", "we'd"})
_SUBJECTS = frozenset({"i", "we"})
# How a thing turned out, said last in a question about it: "did the Swans win", "did it rain".
_OUTCOMES = frozenset({"win", "lose", "draw", "score", "play", "happen", "land", "arrive", "rain", "snow", "pass", "crash"})


def tense_veto(req: Request, m: Match) -> bool:
    """The fit reads a question about the past of someone else's world as the template's present or
    statement ("when was the Opera House built" as "when is {title}", "did the Swans win" as "i did {text}").

    The request opens (after its question word) with a past auxiliary that the template does not say -- it
    says a present one, or opens with "I" / "we" and the request puts the verb first, as a question does --
    and nothing in it is the user's own (no "I", "my", "we" ...)."""
    toks = req.toks
    k = next((n for n, t in enumerate(toks[:2]) if t.fix.casefold() not in QUESTION_WORDS), None)
    if k is None or k >= len(toks) - 1 or toks[k].fix.casefold() not in _PAST_AUX:
        return False
    if any(t.fix.casefold() in _THE_USERS for t in toks[k + 1:]):
        return False  # ("what were the notes I saved lately": the user's own)
    if k == 1 and not m.pattern.asks:
        return True  # a statement's template ("{text} done") answers no question about the past ("when was X finished")
    said = dict(m.said)
    if k in said and said[k] not in _PRESENT_AUX:
        # the template says the past auxiliary itself: wrong only as a statement of the user's ("i did {text}")
        # that the request puts as a question, verb first
        # ("did the laundry" is texting's "I did the laundry": only a question mark or a verb of how a thing
        # turned out after what it is about says it asks)
        first = next((e for e in m.pattern.elems if not e.optional and not e.slot), None)
        return first is not None and bool(set(first.canons) & _SUBJECTS) and bool(set(m.missed) & _SUBJECTS) and (
            req.text.rstrip().endswith("?") or toks[-1].fix.casefold() in _OUTCOMES)
    return bool(set(m.missed) & _PRESENT_AUX) or said.get(k) in _PRESENT_AUX


def outside(index: Index, req: Request, top: Match, closeness: Closeness) -> bool:
    """The request is of a kind none of the installed functions serves (goods on a list of things
    to get are such a list's: "buy light bulbs"). A fit whose own words name what the function
    is about ("save a note ...") is overruled only by a wide margin."""
    if not closeness.ok:
        return False
    there = closeness.outside_services if _lists_things(index.tools[top.tool], top) else closeness.outside
    gap = there - closeness.by_tool[top.tool]
    return (gap > OUTSIDE_GAP and top.score < STRONG_FIT and generic(req, top, index.tools[top.tool])) \
        or gap > OUTSIDE_GAP_ANY


def rescore(ranked: Sequence[Match], closeness: Closeness, tools: Sequence[Tool], floor: float,
            sure: float = 1.0, margin: float = 0.0) -> list[Match]:
    """The fits with meaning and seniority folded into their scores, best first.

    Meaning re-orders fits; it does not by itself un-make a sure one. A fit that explains every
    word, scores `sure` on words and leads every other function by `margin` keeps `sure`:
    "need garlic, ginger" reads as food, and food is near recipes, yet nothing but the grocery
    list's words fit it (out-of-scope requests are caught by `outside` and `generic_veto`).
    """
    if not ranked:
        return []
    out = list(ranked)
    if closeness.ok:
        best = max(ranked, key=lambda m: m.score)
        # ... and the fit found a word of its template besides who speaks ("im bored" fits "I need {items}" on "I")
        lone = best.unexplained < CLEAN_LEFT and best.score >= sure and any(
            canon not in _SPEAKERS for _, canon in best.said) and all(
            m.score <= best.score - margin for m in ranked if m is not best)
        out = [replace(m, score=min(1.0, max(0.0, m.score + SEM_WEIGHT * (closeness.by_tool[m.tool] - SEM_NEUTRAL),
                                              sure if (lone and m is best) else 0.0)))
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


def agreeing(ranked: Sequence[Match], closeness: Closeness) -> Match | None:
    """The weak fit that meaning independently picks too, if there is one.

    Two weak signals that agree are stronger than either: "list groceries" fits the
    grocery list's "show my grocery list" only partly, and is by meaning closest to
    that same function. Either alone could be wrong; both pointing at one function
    seldom are. A fit meaning does not pick, or a message closer to OUTSIDE, is left.
    """
    if not ranked or not closeness.ok:
        return None
    top = ranked[0]
    if top.score < AGREE_FIT:
        return None
    if len(ranked) > 1 and ranked[1].score > top.score - AGREE_LEAD:
        return None
    best, value, _ = closeness.best()
    if best != top.tool or value < AGREE_CLOSENESS or closeness.outside >= value:
        return None
    return top


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
