"""One message read against the conversation: an answer to the open question, small talk,
"undo that", a follow-up, a phrasing the user taught, or a new request for the planner.

An open question is answered only by a message that is an answer: yes or no in its
many forms, a number or an option's words, a value of the missing parameter. A message
that is a request of its own ("put cheese on the grocery list" while "which did you mean"
is open) is a new request: the question is dropped, and the reply says so in one clause.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from dreamer.sidekick.dialogue.answers import answer_kind
from dreamer.sidekick.dialogue.followups import follow_up, known_entities, removes_looked_up
from dreamer.sidekick.dialogue.rephrase import offered_value, ordered, rephrase, thinking, without_pause, without_reason
from dreamer.sidekick.dialogue.references import resolve_plan
from dreamer.sidekick.dialogue.smalltalk import not_understood, small_talk
from dreamer.sidekick.dialogue.state import CallRecord, DialogueState, label
from dreamer.sidekick.dialogue.undo import REMORSE, UndoPlan, is_undo, plan_redo, plan_undo, puts_back
from dreamer.sidekick.planner.base import (
    Clarification, FunctionFacts, PartialPlan, Plan, PlanContext, Step, Tool, takes_whole_request,
)
from dreamer.sidekick.planner.dialog import (
    CANCEL, TIME_ANSWER_WORDS, _is_no, _is_yes, advance, option_words, resume, said_words,
)
from dreamer.sidekick.planner.language.lexicon import FILLERS, ORDINALS, PRONOUNS, UNITS
from dreamer.sidekick.planner.language.text import fold, plural_strip, prepare, tokenize
from dreamer.sidekick.planner.language.spoken import as_written
from dreamer.sidekick.planner.language.values import without_vocative

DROPPED = "I've dropped the earlier question."
ANSWER_WORDS = frozenset(
    "yes yeah yep yup sure ok okay fine no nope nah not do go ahead it please thanks thank you number option choice "
    "one the that this first second third last other wait stop cancel never mind right correct".split()
)
MAX_MISSING_ANSWER_WORDS = 4
QUESTION_WORDS = frozenset("what what's whats when where how who which show tell".split())  # a longer message that plans as a request of its own is one
# "Never mind, what's on my calendar today": a dismissal, a break, then a request of its own.
# The dismissal drops the open question (or, with none open, says nothing); the rest is read
# as any message. Only a break (comma, dash, stop) separates them: "forget the milk" is a request.
# "No, wait, keep it" is no dismissal: it answers the question (no).
DISMISSAL = re.compile(
    r"^\s*(?:(?:oh|ah|eh|meh|aw|ach|ok|okay|hmm|um|uh|no|nah|wait|sorry|actually|oh well),?\s+){0,2}"
    r"(?:never ?mind(?: that)?|nvm|forget (?:it|that|about it|about that)|scratch that|cancel that"
    r"|leave it|skip (?:it|that)|doesn't matter|does not matter|no matter)"
    r"\s*(?:[,;:.!]|\s-+|\s–)\s*(?P<rest>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# With no question open these take back the last call ("scratch that, add oat milk"): not stripped.
UNDOING = re.compile(r"^\s*(?:\w+,?\s+)?(?:scratch|cancel) that\b", re.IGNORECASE)
# "Remove it", "delete that" straight after a call that added something: that call, reversed.
# "Delete that note", "cancel that event": the noun must name what the last call made.
REMOVE_IT = re.compile(r"^\s*(?:(?:actually|oops|wait|ok|okay|no),?\s+)?(?:please\s+)?(?:remove|delete|drop|cancel|bin|ditch|scrap)\s+"
                       r"(?:it|that|them|those|this|both(?: of them)?|them both|all of them|them all)"
                       r"(?:\s+(?!again\b|please\b|now\b|too\b)(?P<noun>[a-z]+))?"
                       r"(?:\s+(?:again|please|now))?(?:\s+(?:please|now))?\s*[.!]*$", re.IGNORECASE)
# "How do I make the first one": a value that points at an entry of the list just shown.
ORDINAL_REF = re.compile(r"^(?:the\s+)?(?:(?P<word>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)|"
                         r"(?:number\s+|no\.?\s*)(?P<num>\d{1,2}))(?:\s+(?:one|recipe|note|item|event|idea|entry))?$",
                         re.IGNORECASE)

# Words that offer a value in answer to "when?" or "which items?": "let's say", "make it", "how about".
ANSWER_LEAD = re.compile(
    r"^\s*(?:(?:um|uh|hmm|well|ok|okay|oh),?\s+)?(?:let'?s (?:say|do|go with|make it)|say|make it|make that|how about|"
    r"what about|maybe|perhaps|probably|i think|i guess|ideally|let'?s try|try|put it (?:on|at|for)|schedule it (?:for|on|at)|"
    r"it'?s|it is|it should be|go with|do|for|on|at)\s+(?P<rest>[^?!]{1,120}?)\s*[?!.]*$",
    re.IGNORECASE,
)
# (text, tools, context) -> Plan: the planner for a message read as a new request.
PlanFn = Callable[[str, Sequence[Tool], PlanContext], Plan]
# phrase -> [(agent, function, args)] this user taught, strongest first.
LookupFn = Callable[[str], Sequence[tuple[str, str, dict]]]
# phrase -> the functions ("agent.function") this user said were wrong for it.
AvoidFn = Callable[[str], set[str]]


def _nothing_avoided(text: str) -> set[str]:
    return set()


@dataclass(frozen=True)
class Understood:
    plan: Plan | None  # None: let the model-driven planner take the message
    how: str  # "answer" | "smalltalk" | "undo" | "followup" | "learned" | "planner" | "model" | "corrected"
    dropped_question: bool = False
    keep_pending: bool = False  # small talk while a question is open: it stays open
    picked: tuple[Step, tuple[Step, ...]] | None = None  # (the option picked, those passed over)
    undo_of: int | None = None  # index in state.calls of the call being undone
    extras: dict = field(default_factory=dict)


def understand(
    text: str, tools: Sequence[Tool], context: PlanContext, state: DialogueState, pending: Clarification | None,
    plan: PlanFn | None, learned: LookupFn, avoid: AvoidFn = _nothing_avoided,
) -> Understood:
    """How to handle `text`. `plan` is None while a model plans new requests; the planner
    never sees the functions `avoid` names for this phrasing (the user corrected them)."""
    text = as_written(text)  # "um, and bread comma butter too": dictation read as typed, by every reader below
    text = without_vocative(text)  # "throw cornmeal on there too, hon": "hon" is who it is said to
    if pending is not None:
        return _with_question(text, tools, context, state, pending, plan, learned, avoid)
    return _fresh(text, tools, context, state, plan, learned, avoid=avoid)


_NO_THEN = re.compile(r"^\W*(?:no|nope|nah|not that one|not that)\W+", re.IGNORECASE)


def _with_question(
    text: str, tools: Sequence[Tool], context: PlanContext, state: DialogueState, pending: Clarification,
    plan: PlanFn | None, learned: LookupFn, avoid: AvoidFn,
) -> Understood:
    dismissed = DISMISSAL.match(text)
    if dismissed is not None and _words(dismissed.group("rest")):
        fresh = _fresh(dismissed.group("rest"), tools, context, state, plan, learned)
        return replace(fresh, dropped_question=True)
    if thinking(text):
        # "hmm, let me think", "good question", "uh": no answer yet, and no request either.
        return Understood(Plan(reply="Take your time; the question is still open."), "smalltalk", keep_pending=True)
    # Yes or no in other words ("hmm, no", "yes I'm sure", "no, I still need it"): read as the
    # plain word, so the question's own reading of yes and no applies.
    kind = answer_kind(text)
    if kind == "yes" and pending.kind != "confirm":
        kind = None  # "sure" to "which did you mean?" picks nothing (resume reads a lone option's yes)
    if kind == "no" and pending.kind == "choose":
        # "no, calendar": no to the guess shown first, and which one instead
        other = _NO_THEN.sub("", text, count=1).strip()
        try:
            chosen = resume(pending, other, context) if other and other != text.strip() else None
        except (ValueError, KeyError, IndexError, TypeError):
            chosen = None
        if chosen is not None and chosen.steps:
            return Understood(chosen, "answer", picked=_picked(pending, chosen))
    try:
        answered = resume(pending, kind or text, context)
    except (ValueError, KeyError, IndexError, TypeError):
        answered = None  # a stored question this Sidekick cannot read
    if answered is not None and kind is not None:
        return Understood(answered, "answer", picked=_picked(pending, answered))
    offered = offered_value(text) if pending.kind == "missing" and answered is None else text
    if offered != text:
        # "uh, next monday at 3pm", "friday at 9 works": the value without the words around it.
        try:
            answered_plain = resume(pending, offered, context)
        except (ValueError, KeyError, IndexError, TypeError):
            answered_plain = None
        if answered_plain is not None and _bare_answer(pending, offered):
            return Understood(answered_plain, "answer")
    lead = ANSWER_LEAD.match(offered) if pending.kind == "missing" and answered is None else None
    if lead is not None and lead.group("rest"):
        # "let's say tomorrow at 10am", "make it friday at 2pm": the value after words that offer it.
        try:
            offered = resume(pending, lead.group("rest"), context)
        except (ValueError, KeyError, IndexError, TypeError):
            offered = None
        if offered is not None:
            return Understood(offered, "answer")
    if answered is not None and (CANCEL.match(text.strip()) or _bare_answer(pending, text)):
        return Understood(answered, "answer", picked=_picked(pending, answered))
    fresh = _fresh(text, tools, context, state, plan, learned, question_open=True, avoid=avoid,
                   pending_agents=tuple(s.agent for s in pending.partial.steps))
    own_request = fresh.how in ("undo", "followup", "learned", "model") or (
        fresh.how == "planner" and fresh.plan is not None and (fresh.plan.steps or fresh.plan.pending is not None)
        and not fresh.plan.unmatched
    )
    if answered is not None and pending.kind == "missing" and len(_words(text)) <= MAX_MISSING_ANSWER_WORDS:
        own_request = False  # "tomorrow at 5pm" answering "when?" is the answer, whatever else it could mean
    if own_request and answered is not None and pending.kind == "choose" and _same_question(fresh, pending, tools):
        # "IT operations please" to "which operations?": read as a question for the same whole-question
        # function, it is only the answer said with the question's own words
        own_request = False
    if own_request:
        return replace(fresh, dropped_question=True)
    if answered is not None:
        return Understood(answered, "answer", picked=_picked(pending, answered))
    if fresh.how == "smalltalk":
        return replace(fresh, keep_pending=True)
    return replace(fresh, dropped_question=True)


def _same_question(fresh: Understood, pending: Clarification, tools: Sequence[Tool]) -> bool:
    """The fresh reading calls only the function the open question is about, one that takes the
    user's whole question (the HR explorer): a fragment of that question, not a request of its own."""
    asked = {s.name for s in pending.partial.steps}
    by_name = {t.name: t for t in tools}
    steps = fresh.plan.steps if fresh.plan is not None else ()
    return bool(steps) and all(
        s.name in asked and s.name in by_name and any(takes_whole_request(by_name[s.name].properties, n) for n in by_name[s.name].properties)
        for s in steps)


def _fresh(
    text: str, tools: Sequence[Tool], context: PlanContext, state: DialogueState, plan: PlanFn | None,
    learned: LookupFn, question_open: bool = False, avoid: AvoidFn = _nothing_avoided,
    pending_agents: tuple[str, ...] = (),
) -> Understood:
    dismissed = DISMISSAL.match(text)
    if dismissed is not None and _words(dismissed.group("rest")) and not UNDOING.match(text):
        text = dismissed.group("rest")  # nothing is open to drop: the request is what follows
    text = without_reason(text)  # "remove the sugar, we have some": the request without why
    tail = _pointing_tail(text, state) if state.calls else None
    if tail is not None:
        # "ok renewed the passport, tick it off": what happened, then the last thing pointed at and ticked off
        alone = _fresh(tail, tools, context, state, plan, learned, question_open, avoid, pending_agents)
        known = known_entities(state)
        if alone.plan is not None and alone.plan.steps and alone.plan.pending is None and not alone.plan.unmatched and (
                not known or all(step.agent == known[0][0] for step in alone.plan.steps)):
            return alone  # (kept only where it went to the agent whose entry was pointed at last)
    chat = small_talk(text, tools)
    if chat is not None:
        return Understood(Plan(reply=chat), "smalltalk")
    said = rephrase(text)  # the dialogue's readers see the plain form; the planner the words as said
    redo = plan_redo(said, state, tools)
    if redo is not None and redo.step is not None:
        return Understood(_settled((redo.step,), tools, context), "followup", extras={"kind": "redo"})
    pointing = _pointing_piece(said)
    looked_up = removes_looked_up(pointing, state, tools) if pointing is not None else None
    if looked_up is not None:
        return Understood(_settled((looked_up,), tools, context), "followup", extras={"kind": "remove"})
    if is_undo(said) or _removes_last(said, state, tools) or puts_back(said, state, tools):
        undo = plan_undo(state, tools)
        if undo.step is None:
            return Understood(Plan(reply=undo.reason), "undo")
        index = next(i for i, r in enumerate(state.calls) if r is undo.record)
        return Understood(_settled((undo.step,), tools, context), "undo", undo_of=index)
    replan = (lambda words: plan(words, tools, context)) if plan is not None else None
    follow = follow_up(said, state, tools, context.local_now(), replan)
    if follow is not None:
        if not follow.steps:
            return Understood(Plan(reply=follow.reply or "Done."), "followup")
        return Understood(_settled(follow.steps, tools, context), "followup", extras={"kind": follow.kind})
    avoided = avoid(text)
    if avoided:
        tools = [t for t in tools if t.name not in avoided]
    taught = _learned(text, tools, context, learned, plan)
    if taught is not None:
        return Understood(taught, "learned")
    if plan is None:
        return Understood(None, "model")
    text = _unwrapped(text)
    aimed = _aimed_at_last(text, state, tools, context, plan, pending_agents)
    planned = aimed or _recent(_pointed(plan(text, tools, context), state), state, pending_agents)
    if aimed is None:
        planned = _about_last(text, planned, state, tools, context, plan, pending_agents) or planned
    planned = resolve_plan(planned, text, state, tools, lambda steps: _settled(steps, tools, context))
    inverse = _inverse_meant(text, planned, state, tools)
    if inverse is not None:
        # "stop watching it" after a watch was added: the added call's declared inverse, as an undo.
        index = next(i for i, r in enumerate(state.calls) if r is inverse.record)
        assert inverse.step is not None
        return Understood(_settled((inverse.step,), tools, context), "undo", undo_of=index)
    if planned.unmatched:
        asked_for = ordered(text)
        again = plan(f"i need {asked_for}", tools, context) if asked_for else None
        if again is not None and again.steps and again.pending is None and not again.unmatched:
            return Understood(again, "planner")  # "milk pls": a thing named with please is asked for
        if not _words(text):
            return Understood(Plan(reply="I didn't catch a request there; say what you would like done, or ask "
                                        "\"what can you do\".", unmatched=True), "planner")
        return Understood(Plan(reply=not_understood(text), unmatched=True), "planner")
    return Understood(planned, "planner")


# The last clause of a message, when it ticks off or takes away something pointed at ("tick it off", "mark
# that done", "take them off"); one fixed alternation after a few fixed leads, nothing repeated.
_POINTING_TAIL = re.compile(r"^(?:(?:so|and|pls|please|you can|can you|now)\s)?(?:(?:tick|check|cross|strike|take|knock)"
                            r"\s(?:it|that|this|them|those)\s(?:off|out)|mark\s(?:it|that|this|them|those)\s(?:as\s)?"
                            r"(?:done|complete|completed|finished)|(?:remove|delete)\s(?:it|that|this|them|those))"
                            r"(?:\s(?:please|pls|now|then|too))?[.!]?$", re.IGNORECASE)
_PUTTING_WORDS = frozenset({"add", "put", "buy", "get", "need", "needs", "out", "outta", "low"})
MAX_CALLS_NAMED = 5  # the last calls whose words a clause may name
_TAIL_VERBS = frozenset({"tick", "check", "cross", "strike", "take", "knock", "mark", "remove", "delete"})
_SMALL = frozenset({"the", "and", "for", "got", "all", "now", "done", "just", "that", "this", "with"})


def _pointing_tail(text: str, state: DialogueState) -> str | None:
    """The last clause, when it only ticks off or takes away what it points at and the clauses before
    it put nothing anywhere ("we ran out of eggs, add it" is no such message: its "it" is the eggs); the
    entry the clauses before name, where they name one the conversation holds ("got the bread, tick it
    off" after a list: the bread, not the whole list), is what it points at."""
    clauses = [c.strip() for c in text.split(",") if c.strip()]
    m = _POINTING_TAIL.match(clauses[-1]) if len(clauses) >= 2 else None
    if m is None:
        return None
    before = {w.strip(".!?").casefold() for c in clauses[:-1] for w in c.split()}
    if before & _PUTTING_WORDS:
        return None
    # (the entries shown or put in a list, and the words the last calls were given: a to-do's text)
    held = [label(e) for _, e in known_entities(state)] + [
        v for record in state.calls[-MAX_CALLS_NAMED:] for v in record.args.values() if isinstance(v, str)]
    named = {h for h in held if {w.casefold() for w in h.split() if len(w) > 2} & before - _SMALL}
    if len(named) > 1:
        return None
    if not named:
        return clauses[-1]
    thing = named.pop()
    verb = next(w.casefold() for w in clauses[-1].split() if w.casefold() in _TAIL_VERBS)
    if verb == "mark":
        return f"mark {thing} as done"
    return f"{verb} {thing}" if verb in ("remove", "delete") else f"{verb} off {thing}"


def _inverse_meant(text: str, planned: Plan, state: DialogueState, tools: Sequence[Tool]) -> UndoPlan | None:
    """ "Stop watching it", "unsave that" straight after a call: planned (or asked about, its value
    missing) as that call's declared inverse with the pronoun for its value, it is that call undone."""
    words = _words(text)
    if not words or len(words) > MAX_POINTING_WORDS or not set(words) & {"it", "that", "them", "those", "this"}:
        return None
    steps = planned.steps or (planned.pending.partial.steps if planned.pending is not None else ())
    if len(steps) != 1 or planned.unmatched:
        return None
    undo = plan_undo(state, tools)
    if undo.step is None or undo.record is None or undo.step.name != steps[0].name:
        return None
    if planned.pending is None and any(undo.step.args.get(k) != v for k, v in steps[0].args.items()):
        return None  # a value of its own names another entry
    return undo


def _removes_last(text: str, state: DialogueState, tools: Sequence[Tool]) -> bool:
    """ "Remove it" / "delete that note" straight after a call its function can reverse, naming what it made."""
    m = REMOVE_IT.match(text)
    if m is None:
        return False
    for record in reversed(state.calls):
        if record.is_undo or record.undone:
            continue
        if record.undo in (None, False):
            return False
        noun = m.group("noun")
        if noun is None:
            return True
        tool = next((t for t in tools if t.name == record.name), None)
        named = f"{record.agent} {record.function} {tool.summary if tool else ''}".replace("_", " ").casefold()
        return plural_strip(noun.casefold()) in {plural_strip(w) for w in re.findall(r"[a-z]+", named)}
    return False


# Words around a request that are not part of it: "actually, what's on my calendar today?",
# "hmm, show me my notes instead". Two lead words at most; each a fixed word, so nothing backtracks.
_LEAD_WORDS = r"(?:actually|hmm|hm|ok|okay|wait|so|well|oh|um|uh|right|alright|no|nope|nah|sorry|then)"
# A greeting before a request: "good morning, please put milk on my shopping list".
_GREETING = r"(?:good (?:morning|afternoon|evening)|hi|hello|hey|morning)[\s,.!;:-]+"
LEAD = re.compile(rf"^\s*(?:{_GREETING})?(?:{_LEAD_WORDS}[\s,.!;:-]+(?:{_LEAD_WORDS}[\s,.!;:-]+)?)?(?=\w)",
                  re.IGNORECASE)
_TRAILING = frozenset({"instead", "first", "then"})
# "add eggs to it", "put bread on it too": the place is the one just talked about. Starts at a word
# boundary, so a run of spaces is never scanned from each of its positions.
TO_IT = re.compile(r"\b(?:to|on|onto|in|into)\s(?:it|that|this|there|that list|the same list)\b(?!')", re.IGNORECASE)
MAX_UNWRAP_CHARS = 300  # requests with words around them are short


def _points_to_remove(text: str) -> bool:
    """ "Cancel it", "delete that" with no noun of its own."""
    m = REMOVE_IT.match(text)
    return m is not None and m.group("noun") is None


def _pointing_piece(text: str) -> str | None:
    """The clause that says "cancel it" with no noun, alone or beside reasons only ("bin it, I'm better")."""
    if _points_to_remove(text):
        return text
    first, comma, rest = text.partition(",")
    if comma and _points_to_remove(first) and all(REMORSE.match(p) for p in rest.split(",") if p.strip()):
        return first
    return None


MAX_POINTING_WORDS = 6  # "mark it as done", "check that off": short messages whose object is a pronoun


def _about_last(text: str, planned: Plan, state: DialogueState, tools: Sequence[Tool], context: PlanContext,
                plan: PlanFn, pending_agents: tuple[str, ...] = ()) -> Plan | None:
    """ "Check it off" right after adding a to-do: "it" is what the last call was about, so the message
    is planned among that agent's functions when planning it among all of them left a question open or
    found nothing. A plan that stands on its own is kept ("add eggs", then "what's on my calendar")."""
    words = _words(text)
    # ("on there" points at the place as "on it" does: "what all's on there now")
    if not words or len(words) > MAX_POINTING_WORDS or not set(words) & {"it", "that", "them", "those", "this", "there"}:
        return None
    if planned.steps and planned.pending is None and not planned.unmatched:
        return None
    last = next((r for r in reversed(state.calls) if not r.is_undo and not r.undone), None)
    if pending_agents:  # "wait, what's on it?" while clearing the list was being confirmed: that list
        mine = [t for t in tools if t.agent == pending_agents[0]]
        again = plan(_named(text, pending_agents[0]), mine, context)
        if again.steps and again.pending is None and not again.unmatched:
            return again
    if last is None:
        return None
    mine = [t for t in tools if t.agent == last.agent]
    again = plan(text, mine, context)
    if again.steps and again.pending is None and not again.unmatched:
        return again
    taking_off = _taking_off_last(planned, last, mine, tools)
    if taking_off is not None or planned.steps or planned.pending is not None:
        return taking_off
    # Nothing matched at all: "what's on it now?" read as "what's on grocery now?".
    again = plan(_named(text, last.agent), mine, context)
    return again if again.steps and again.pending is None and not again.unmatched else None


def _named(text: str, agent: str) -> str:
    """`text` with its pronoun replaced by the agent's name: the place the user is talking about."""
    return " ".join(agent.replace("-", " ") if w.casefold().strip("?!.,") in ("it", "that", "this", "there") else w
                    for w in text.split())


def _taking_off_last(planned: Plan, last: CallRecord, mine: Sequence[Tool], tools: Sequence[Tool]) -> Plan | None:
    """ "Check it off" after adding a to-do, planned as the grocery remover: "it" is the to-do, so the
    function of the last call's agent that takes off what the last call added (its declared
    inverse's counterpart: finish_todo undoes to add_todo) is meant, with the last call's values."""
    steps = planned.steps or (planned.pending.partial.steps if planned.pending is not None else ())
    by_name = {t.name: t for t in tools}
    first = by_name.get(steps[0].name) if steps else None
    if first is None or first.agent == last.agent or not isinstance(first.undo, Mapping):
        return None
    takers = [t for t in mine if isinstance(t.undo, Mapping) and t.undo.get("function") == last.function]
    if len(takers) != 1:
        return None
    taker = takers[0]
    args = {n: last.args[n] for n in taker.required if n in last.args}
    if len(args) != len(taker.required):
        return None
    return Plan(steps=(Step(taker.agent, taker.function, args),))


def _unwrapped(text: str) -> str:
    """The request without lead words ("actually, ...") and a trailing "instead" / "first"."""
    if len(text) > MAX_UNWRAP_CHARS:
        return text
    text = without_pause(text)  # "hold on, what's on my list first"
    lead = LEAD.match(text)
    out = text[lead.end():] if lead is not None else text
    body = out.rstrip(" .!?")
    end = out[len(body):].strip()
    words = body.split()
    if len(words) > 2 and words[-1].casefold() == "please":
        words = words[:-1]
    if len(words) > 2 and words[-1].casefold() in _TRAILING:
        out = " ".join(words[:-1]).rstrip(",") + end
    return out if out.strip() else text


def _aimed_at_last(text: str, state: DialogueState, tools: Sequence[Tool], context: PlanContext,
                   plan: PlanFn, pending_agents: tuple[str, ...]) -> Plan | None:
    """ "add eggs to it" right after the grocery list: the request planned among that agent's functions."""
    if len(text) > MAX_UNWRAP_CHARS or TO_IT.search(text) is None:
        return None
    agent = next(iter([*pending_agents, *(r.agent for r in reversed(state.calls) if not r.is_undo)]), None)
    if agent is None:
        return None
    mine = [t for t in tools if t.agent == agent]
    planned = plan(" ".join(TO_IT.sub(" ", text).split()), mine, context)
    return planned if planned.steps and planned.pending is None and not planned.unmatched else None


def _recent(planned: Plan, state: DialogueState, pending_agents: tuple[str, ...] = ()) -> Plan:
    """ "Which did you mean?" settled by the conversation: when exactly one option belongs to the agent
    the user was just talking to (the last call's, or the open question's), that one is meant
    ("add milk to my grocery list", then "could you also add tea" is the grocery list again)."""
    question = planned.pending
    if question is None or question.kind != "choose" or len(question.options) < 2:
        return planned
    recent = [*pending_agents, *(r.agent for r in reversed(state.calls) if not r.is_undo)][:1]
    if not recent:
        return planned
    mine = [i for i, o in enumerate(question.options, 1) if o.step.agent == recent[0]]
    if len(mine) != 1:
        return planned
    try:
        chosen = resume(question, str(mine[0]))
    except (ValueError, KeyError, IndexError, TypeError):
        return planned
    return chosen if chosen is not None else planned


def _pointed(plan: Plan, state: DialogueState) -> Plan:
    """The plan with "the first one" (a value naming an entry of the list just shown) replaced by that entry."""
    shown = state.shown
    if shown is None or not shown.entities or not plan.steps:
        return plan
    steps = []
    for step in plan.steps:
        args = dict(step.args)
        for key, value in step.args.items():
            m = ORDINAL_REF.match(value.strip()) if isinstance(value, str) else None
            if m is None or step.agent != shown.agent:
                continue
            word = (m.group("word") or "").lower()
            n = len(shown.entities) if word == "last" else ORDINALS.get(word) or int(m.group("num") or 0)
            if 1 <= n <= len(shown.entities):
                entity = shown.entities[n - 1]
                args[key] = entity[key] if isinstance(entity, dict) and key in entity else label(entity)
        steps.append(replace(step, args=args))
    return replace(plan, steps=tuple(steps))


def _learned(text: str, tools: Sequence[Tool], context: PlanContext, learned: LookupFn, plan: PlanFn | None) -> Plan | None:
    """The function this user taught for this phrasing, with arguments read afresh when the planner offers it."""
    taught = learned(text)
    if not taught:
        return None
    agent, function, args = taught[0]
    name = f"{agent}.{function}"
    if not any(t.name == name for t in tools):
        return None
    planned = plan(text, tools, context) if plan is not None else None
    if planned is not None and planned.pending is not None and planned.pending.kind == "choose":
        for option in planned.pending.options:
            if option.step.name == name:
                partial = planned.pending.partial
                steps = list(partial.steps)
                choices = list(partial.choices) + [()] * (len(steps) - len(partial.choices))
                steps[partial.index], choices[partial.index] = option.step, ()
                return advance(replace(partial, steps=tuple(steps), choices=tuple(choices)))
    if planned is not None and planned.steps and planned.pending is None and planned.steps[0].name == name:
        return planned
    return _settled((Step(agent, function, dict(args)),), tools, context)


def _settled(steps: Sequence[Step], tools: Sequence[Tool], context: PlanContext) -> Plan:
    """Steps known exactly, put through the usual questions: a confirm=True function is asked about first."""
    by_name = {t.name: t for t in tools}
    facts = {s.name: FunctionFacts.of(by_name[s.name]) for s in steps if s.name in by_name}
    partial = PartialPlan(steps=tuple(steps), choices=tuple(() for _ in steps), facts=facts,
                          now=context.local_now().isoformat(), timezone=context.timezone)
    return advance(partial)


def _picked(pending: Clarification, answered: Plan) -> tuple[Step, tuple[Step, ...]] | None:
    """The option the user chose from several functions, and the ones passed over (for learning)."""
    if pending.kind != "choose" or len(pending.options) < 2:
        return None
    index = pending.partial.index
    if index >= len(answered.steps) and answered.pending is None:
        return None
    steps = answered.steps if answered.steps else (answered.pending.partial.steps if answered.pending else ())
    if index >= len(steps):
        return None
    chosen = steps[index]
    others = tuple(o.step for o in pending.options if o.step.name != chosen.name)
    if len(others) == len(pending.options):
        return None
    if not others:
        return None  # every option was the same function (an agent's own question): nothing to learn
    return chosen, others


def _bare_answer(pending: Clarification, text: str) -> bool:
    """Nothing but an answer: yes/no words, a number or ordinal, or words of an option."""
    words = _words(text)
    if not words:
        return True
    if _is_yes(words) or _is_no(words):
        return True
    if pending.kind == "missing":
        return True  # resume() read a value of the parameter's type; the caller weighs length
    if set(words) & QUESTION_WORDS:
        return False  # "wait, what's on my shopping list?" asks something of its own
    known: set[str] = set()
    for option in pending.options:
        known |= option_words(option)
    extra = [w for w in words if w not in ANSWER_WORDS and w not in FILLERS and w not in PRONOUNS
             and w not in ORDINALS and w not in UNITS and w not in TIME_ANSWER_WORDS and not w.isdigit()
             and not said_words([w]) <= known
             and plural_strip(fold(w)) not in known]
    return not extra


def _words(text: str) -> list[str]:
    return [w.low for w in tokenize(prepare(text)) if w.kind in ("word", "num", "ord")]
