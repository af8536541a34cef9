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

from dreamer.sidekick.planner.language.lexicon import DETERMINERS, TASK_VERBS, TASK_VERBS_BEFORE_DETERMINER
from dreamer.sidekick.planner.offline.index import Index, Pattern
from dreamer.sidekick.planner.offline.match import Match, align
from dreamer.sidekick.planner.offline.request import Request

WRITES_IN_QUESTION = 0.85  # a question fitted to a function that changes something, through a statement
DOMAIN_SHARE = 0.75  # a word most of whose example patterns are one agent's is that agent's
TYPICAL_GAIN = 0.08  # the request says a typical value of one of the function's parameters
READER_FLOOR = 0.4  # a reading function of the same agent fitting at least this well takes the writer's place
# ... one that needs nothing shows all of the agent's things, so it answers "is X on the list?" even when its
# own words barely fit ("are the eggs on the list": the list shown says whether they are)
WHOLE_READER_FLOOR = 0.25
# Meaning and words both pick the one function: a fit at least this good (short of ACCEPT) is acted on.
AGREED_FLOOR = 0.5
KIND_FIT = 0.5  # another kind of the same thing is offered when its own words fit at least this well (unnamed_kind)


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
        floor = READER_FLOOR if tool.required else WHOLE_READER_FLOOR
        if tool.reads and tool.agent in lifted and m.score >= floor and not m.missing:
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
    tasks = [m for m in options if _task_in_text(index, m)]
    if tasks and len(tasks) < len(options) and any(_in_a_list(index, m) for m in options if m not in tasks):
        # "tick off defrost the turkey": a list of things holds what is named; a chore is done.
        return tasks
    if recent_agent in agents:
        return [m for m in options if index.tools[m.tool].tool.agent == recent_agent]
    listed = [m for m in options if _several_things(index, m)]
    if listed and all(m in listed or m.missing for m in options):
        # "add cucumbers and dill": several things read as a list of things, while the other reading
        # (an event titled "cucumbers and dill") still lacks a value the user did not give (its time).
        return listed
    return list(options)


def _task_in_text(index: Index, m: Match) -> bool:
    """The fit's free-text value opens with a verb of a chore ("defrost the turkey")."""
    slots = index.tools[m.tool].slots
    return any(slots[n].kind == "text" and isinstance(v, str) and opens_with_task(v)
               for n, v in m.args.items() if n in slots)


def _in_a_list(index: Index, m: Match) -> bool:
    """The fit puts a chore into a list of things."""
    slots = index.tools[m.tool].slots
    return any(slots[n].kind == "list" and isinstance(v, list) and any(isinstance(x, str) and opens_with_task(x) for x in v)
               for n, v in m.args.items() if n in slots)


_CHORE_WORDS = frozenset({"to-do", "todo", "task", "tasks", "chore", "chores", "todos", "to-dos"})


def holds_chores(index: Index, name: str) -> bool:
    """The function keeps chores: its examples speak of a to-do or task list."""
    return any(index.tools[p.tool].tool.name == name and any(set(e.canons) & _CHORE_WORDS for e in p.elems)
               for p in index.patterns)


def opens_with_task(value: str) -> bool:
    """The value opens with a verb of a chore ("defrost the turkey"), not a thing's name."""
    words = value.casefold().split()
    return len(words) >= 2 and (words[0] in TASK_VERBS or (
        words[0] in TASK_VERBS_BEFORE_DETERMINER and (words[1] in DETERMINERS or words[1].endswith("'s"))))


def _several_things(index: Index, m: Match) -> bool:
    """The fit puts two or more things in a list parameter, and lacks nothing."""
    slots = index.tools[m.tool].slots
    return not m.missing and any(slots[n].kind == "list" and isinstance(v, list) and len(v) >= 2
                                 for n, v in m.args.items() if n in slots)


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


def _qualified_heads(index: Index, p: Pattern, required: bool) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(qualifier words, head words) of the pattern's literal pairs "<qualifier> <head>" ("[grocery|shopping] list",
    "(to-do|todo|task) list"), the qualifier optional or required as asked. A qualifier is a choice of
    content words, or one that is no filler ("my list" is no kind of list)."""
    out = []
    for e, h in zip(p.elems, p.elems[1:]):
        if not e.slot and not h.slot and not h.optional and e.optional != required \
                and _content(index, e.canons) and _content(index, h.canons):
            out.append((e.canons, h.canons))
    return out


def _content(index: Index, canons: tuple[str, ...]) -> bool:
    """Words that name a thing or a kind: no small word, pronoun or generic verb ("my list", "show it")."""
    lex = index.lex
    return not any(c in lex.fillers or c in lex.pronouns or c in lex.generic for c in canons)


def unnamed_kind(index: Index, req: Request, options: Sequence[Match], recent_agent: str | None,
                 alone: bool = True) -> list[Match]:
    """The options, with another agent's function added when the message names a thing only by a head
    word two agents share and says neither's qualifier.

    "what's on my list" fits the grocery list's "show [my] [grocery|shopping] list" with its qualifier
    left out; the to-do list's "what's on my (to-do|todo) list" needs its own. Which list is meant, the
    message does not say: the user chooses (unless they were just working with one of the agents).
    """
    if len(options) != 1 or not alone:  # "add apples; show the list": that list
        return list(options)
    top = options[0]
    own = index.tools[top.tool].tool
    if not own.reads or recent_agent == own.agent:  # "add eggs to my list": what is added says which list; what is read does not
        return list(options)
    said = {canon for _, canon in top.said}
    words = {alt for t in req.toks for alt in t.alts}  # the whole message: "add eggs to the shopping list, then ..."
    # The head words the function qualifies in its examples ("what's on my grocery list"), said with none of
    # the qualifiers it gives them.
    qualifiers: dict[str, set[str]] = {}
    for p in index.patterns:
        if p.tool == top.tool:
            for required in (False, True):
                for q, hs in _qualified_heads(index, p, required):
                    for h in hs:
                        qualifiers.setdefault(h, set()).update(q)
    heads = {h for h, qs in qualifiers.items() if h in said and not qs & words}
    if not heads:
        return list(options)
    found: dict[int, Match] = {}
    for p in index.patterns:
        tool = index.tools[p.tool].tool
        if tool.agent == own.agent or tool.reads != own.reads:
            continue
        if not any(set(hs) & heads and not set(q) & words for q, hs in _qualified_heads(index, p, required=True)):
            continue
        m = align(index, req, p, top.a, top.b)
        if m is None or m.missing or m.score < KIND_FIT:
            continue
        if p.tool not in found or m.score > found[p.tool].score:
            found[p.tool] = m
    if len(found) != 1:
        return list(options)
    other = replace(next(iter(found.values())), score=top.score)
    if recent_agent == index.tools[other.tool].tool.agent:
        return [other]  # the list the user was just working with
    return [top, other]


FOLLOW_WHOLE = 0.9  # a fit this good says itself which agent it is for
FOLLOW_FIT = 0.4  # the recent agent's reading function fits at least this well ...
FOLLOW_GAP = 0.3  # ... and no further behind the other agent's fit than this


def follows_recent(index: Index, req: Request, options: Sequence[Match], recent_agent: str | None) -> list[Match]:
    """A question that names none of an agent's own things ("what's left?", "anything else on there?")
    asks about what the user was just working with: the recent agent's reading function that fits it
    nearly as well (FOLLOW_GAP, nothing missing) takes the place of another agent's lone reading fit,
    unless that fit is whole ("what's left to do" says which list)."""
    if recent_agent is None or len(options) != 1:
        return list(options)
    top = options[0]
    own = index.tools[top.tool].tool
    if own.agent == recent_agent or not own.reads or top.score >= FOLLOW_WHOLE or domain_words(
            index, req, own.agent, top.a, top.b):
        return list(options)
    best: Match | None = None
    for p in index.patterns:
        tool = index.tools[p.tool].tool
        if tool.agent != recent_agent or not tool.reads:
            continue
        m = align(index, req, p, top.a, top.b)
        if m is not None and not m.missing and m.score >= max(FOLLOW_FIT, top.score - FOLLOW_GAP) and (
                best is None or m.score > best.score):
            best = m
    return [replace(best, score=top.score)] if best is not None else list(options)


TIMED_FIT = 0.4  # a fit of the timed agent's function this good (its verb said) takes a list fit's place
TIMED_LEAD = 0.1  # ... and the list fit falls this far behind it (more than a near tie: no question)


def _clock(req: Request, a: int, b: int) -> bool:
    """toks[a:b] say a time of day ("3pm", "at noon", "at 9"), not only a day."""
    toks = req.toks
    return any(t.temporal and (t.kind == "time" or (k > 0 and toks[k - 1].fix in ("at", "@")))
               for k, t in enumerate(toks[a:b], a))


def timed_things(index: Index, req: Request, ranked: Sequence[Match], pool: Sequence[Match] = ()) -> list[Match]:
    """A list of things holds no time of day: "delete choir practice monday at 3pm" is no grocery item.

    When the best fit puts a time of day into a list of things, and a function of an agent that keeps
    times (one of its functions takes a day or a moment) fits with the request's own verb, that
    function's fit (from `pool`, the fits before any veto, else `ranked`) comes first, at the list fit's score."""
    if not ranked:
        return list(ranked)
    top = ranked[0]
    info = index.tools[top.tool]
    listed = [span for n, span in top.spans.items() if n in info.slots and info.slots[n].kind == "list" and _clock(req, *span)]
    if not listed:
        return list(ranked)
    timed = {i.tool.agent for i in index.tools if i.has_time}
    verb = req.toks[top.a].canon
    for m in pool or ranked[1:]:
        tool = index.tools[m.tool].tool
        if tool.agent in timed and tool.agent != info.tool.agent and m.score >= TIMED_FIT \
                and any(pos == top.a and canon == verb for pos, canon in m.said):
            rest = [replace(r, score=r.score - TIMED_LEAD) if r is top else r for r in ranked if r.tool != m.tool]
            # What the user named is what the list took ("lunch with Sam friday at noon"), not the part a
            # template of the other function found room for ("[my appointment with] Sam ..."); the day and
            # time come off it later (values.without_when).
            texts = [n for n in m.spans if index.tools[m.tool].slots.get(n) and index.tools[m.tool].slots[n].kind == "text"]
            if len(texts) == 1:
                m = replace(m, args={**m.args, texts[0]: req.span_text(*listed[0])}, spans={**m.spans, texts[0]: listed[0]})
            return sorted([replace(m, score=top.score), *rest], key=lambda r: r.score, reverse=True)
    return list(ranked)
