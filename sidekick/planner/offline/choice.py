"""Settling a choice between fits before asking the user: questions, domain words, the last agent.

The engine offers "which did you mean?" when two functions fit about equally well.
A person would not ask in three cases, and neither does the planner:

- a question ("do I have anything on my shopping list", "am I busy today") asks to
  read: a function that only reads beats one that writes, unless the writing
  function's own example opens as a question too ("what's for dinner tomorrow");
- the message says words of one agent's domain and none of the other's ("add almond
  milk to my list for the supermarket": list, supermarket are grocery words; nothing
  says calendar) — a bare "add bread" says neither, and still asks;
- the user was just working with one of the agents (context.recent_agent): "add bread"
  right after the grocery list goes on the grocery list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dreamer.sidekick.planner.offline.index import Index
from dreamer.sidekick.planner.offline.match import Match
from dreamer.sidekick.planner.offline.request import Request

WRITES_IN_QUESTION = 0.85  # a question fitted to a function that changes something, through a statement
DOMAIN_SHARE = 0.75  # a word most of whose example patterns are one agent's is that agent's
TYPICAL_GAIN = 0.08  # the request says a typical value of one of the function's parameters
READER_FLOOR = 0.4  # a reading function of the same agent fitting at least this well takes the writer's place
# Meaning and words both pick the one function: a fit at least this good (short of ACCEPT) is acted on.
AGREED_FLOOR = 0.5


def prefer_reading(index: Index, req: Request, ranked: Sequence[Match]) -> list[Match]:
    """In a question, fits to writing functions through statement templates weigh less."""
    if not req.asks:
        return list(ranked)
    out: list[Match] = []
    lifted: dict[str, float] = {}  # agent -> the best score of its writing functions fitted to a question
    for m in ranked:
        tool = index.tools[m.tool].tool
        if tool.reads or m.pattern.asks:
            out.append(m)
        else:
            out.append(replace(m, score=m.score * WRITES_IN_QUESTION))
            lifted[tool.agent] = max(lifted.get(tool.agent, 0.0), m.score)
    # "do I have anything on my shopping list" fits the grocery list's "{items} on my shopping list"
    # best: the question is about that agent's things, and its reading function is what answers it.
    for n, m in enumerate(out):
        tool = index.tools[m.tool].tool
        if tool.reads and tool.agent in lifted and m.score >= READER_FLOOR and not m.missing:
            out[n] = replace(m, score=max(m.score, lifted.pop(tool.agent)))
    return sorted(out, key=lambda m: m.score, reverse=True)


def typical_values(index: Index, req: Request, ranked: Sequence[Match]) -> list[Match]:
    """Fits to a function one of whose parameters' typical values the request says ("thai", "vegan")
    gain TYPICAL_GAIN: a cuisine or a diet is as much a word of that function's domain as any."""
    said = " " + " ".join(t.fix for t in req.toks) + " "
    out = []
    for m in ranked:
        info = index.tools[m.tool]
        if any(slot.kind == "text" and any(f" {c.casefold()} " in said for c in slot.choices)
               for slot in info.slots.values()):
            m = replace(m, score=min(1.0, m.score + TYPICAL_GAIN))
        out.append(m)
    return sorted(out, key=lambda m: m.score, reverse=True)


def domain_words(index: Index, req: Request, agent: str, a: int, b: int) -> set[str]:
    """The message's words in toks[a:b] that are this agent's: most of the example patterns using
    them are its own (DOMAIN_SHARE). No generic or small words. "cook" is the recipes agent's
    though "make a note" reads as "cook a note" once."""
    out: set[str] = set()
    for t in req.toks[a:b]:
        if t.weight < 1.0 or t.canon in index.lex.generic or index.lex.lemma(t.fix) in index.lex.generic:
            continue
        by_agent = index.word_agents.get(t.canon)
        if by_agent and by_agent.get(agent, 0) >= DOMAIN_SHARE * sum(by_agent.values()):
            out.add(t.canon)
    return out


def settle(index: Index, req: Request, options: Sequence[Match], recent_agent: str | None) -> list[Match]:
    """The options left once domain words and the last agent used have had their say."""
    agents = {index.tools[m.tool].tool.agent for m in options}
    if len(agents) < 2:
        return list(options)
    a, b = options[0].a, options[0].b
    spoken = {agent for agent in agents if domain_words(index, req, agent, a, b)}
    if len(spoken) == 1:
        return [m for m in options if index.tools[m.tool].tool.agent in spoken]
    if recent_agent in agents:
        return [m for m in options if index.tools[m.tool].tool.agent == recent_agent]
    return list(options)


# Values a message either holds or plainly does not: a web address, a query as written.
_SAID_OR_NOT = ("url", "sql")


def without_absent_values(index: Index, req: Request, options: Sequence[Match]) -> list[Match]:
    """The options left once those missing a web address (or a query) that the message nowhere holds
    are dropped, when another option is left: "save this as a note: ..." has no address, so it is
    not save_article's, however its words fit."""
    kinds = {t.kind for t in req.toks}

    def absent(m: Match) -> bool:
        slots = index.tools[m.tool].slots
        return any(slots[n].kind in _SAID_OR_NOT and not (slots[n].kind == "url" and "url" in kinds)
                   for n in m.missing if n in slots)

    kept = [m for m in options if not absent(m)]
    return kept if kept else list(options)
