"""One message read against the conversation: an answer to the open question, small talk,
"undo that", a follow-up, a phrasing the user taught, or a new request for the planner.

An open question is answered only by a message that is an answer: yes or no in its
many forms, a number or an option's words, a value of the missing parameter. A message
that is a request of its own ("put cheese on the grocery list" while "which did you mean"
is open) is a new request: the question is dropped, and the reply says so in one clause.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from dreamer.sidekick.dialogue.followups import follow_up
from dreamer.sidekick.dialogue.smalltalk import not_understood, small_talk
from dreamer.sidekick.dialogue.state import DialogueState, label
from dreamer.sidekick.dialogue.undo import is_undo, plan_undo
from dreamer.sidekick.planner.base import Clarification, FunctionFacts, PartialPlan, Plan, PlanContext, Step, Tool
from dreamer.sidekick.planner.dialog import CANCEL, _is_no, _is_yes, advance, option_words, resume, said_words
from dreamer.sidekick.planner.language.lexicon import FILLERS, ORDINALS, PRONOUNS, UNITS
from dreamer.sidekick.planner.language.text import fold, plural_strip, prepare, tokenize

DROPPED = "I've dropped the earlier question."
ANSWER_WORDS = frozenset(
    "yes yeah yep yup sure ok okay fine no nope nah not do go ahead it please thanks thank you number option choice "
    "one the that this first second third last other wait stop cancel never mind right correct".split()
)
MAX_MISSING_ANSWER_WORDS = 4  # a longer message that plans as a request of its own is one
# "Never mind, what's on my calendar today": a dismissal, a break, then a request of its own.
# The dismissal drops the open question (or, with none open, says nothing); the rest is read
# as any message. Only a break (comma, dash, stop) separates them: "forget the milk" is a request.
# "No, wait, keep it" is no dismissal: it answers the question (no).
DISMISSAL = re.compile(
    r"^\s*(?:(?:oh|ah|ok|okay|hmm|um|uh|no|wait|sorry|actually),?\s+)?"
    r"(?:never ?mind(?: that)?|forget (?:it|that|about it|about that)|scratch that|cancel that)"
    r"\s*(?:[,;:.!]|\s-+|\s–)\s*(?P<rest>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# With no question open these take back the last call ("scratch that, add oat milk"): not stripped.
UNDOING = re.compile(r"^\s*(?:\w+,?\s+)?(?:scratch|cancel) that\b", re.IGNORECASE)
# "Remove it", "delete that" straight after a call that added something: that call, reversed.
# "Delete that note", "cancel that event": the noun must name what the last call made.
REMOVE_IT = re.compile(r"^\s*(?:please\s+)?(?:remove|delete|drop|cancel)\s+(?:it|that|them|those|this)(?:\s+(?P<noun>[a-z]+))?"
                       r"(?:\s+(?:again|please|now))?(?:\s+(?:please|now))?\s*[.!]*$", re.IGNORECASE)
# "How do I make the first one": a value that points at an entry of the list just shown.
ORDINAL_REF = re.compile(r"^(?:the\s+)?(?:(?P<word>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)|"
                         r"(?:number\s+|no\.?\s*)(?P<num>\d{1,2}))(?:\s+(?:one|recipe|note|item|event|idea|entry))?$",
                         re.IGNORECASE)

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
    if pending is not None:
        return _with_question(text, tools, context, state, pending, plan, learned, avoid)
    return _fresh(text, tools, context, state, plan, learned, avoid=avoid)


def _with_question(
    text: str, tools: Sequence[Tool], context: PlanContext, state: DialogueState, pending: Clarification,
    plan: PlanFn | None, learned: LookupFn, avoid: AvoidFn,
) -> Understood:
    dismissed = DISMISSAL.match(text)
    if dismissed is not None and _words(dismissed.group("rest")):
        fresh = _fresh(dismissed.group("rest"), tools, context, state, plan, learned)
        return replace(fresh, dropped_question=True)
    try:
        answered = resume(pending, text, context)
    except (ValueError, KeyError, IndexError, TypeError):
        answered = None  # a stored question this Sidekick cannot read
    if answered is not None and (CANCEL.match(text.strip()) or _bare_answer(pending, text)):
        return Understood(answered, "answer", picked=_picked(pending, answered))
    fresh = _fresh(text, tools, context, state, plan, learned, question_open=True, avoid=avoid)
    own_request = fresh.how in ("undo", "followup", "learned", "model") or (
        fresh.how == "planner" and fresh.plan is not None and (fresh.plan.steps or fresh.plan.pending is not None)
        and not fresh.plan.unmatched
    )
    if answered is not None and pending.kind == "missing" and len(_words(text)) <= MAX_MISSING_ANSWER_WORDS:
        own_request = False  # "tomorrow at 5pm" answering "when?" is the answer, whatever else it could mean
    if own_request:
        return replace(fresh, dropped_question=True)
    if answered is not None:
        return Understood(answered, "answer", picked=_picked(pending, answered))
    if fresh.how == "smalltalk":
        return replace(fresh, keep_pending=True)
    return replace(fresh, dropped_question=True)


def _fresh(
    text: str, tools: Sequence[Tool], context: PlanContext, state: DialogueState, plan: PlanFn | None,
    learned: LookupFn, question_open: bool = False, avoid: AvoidFn = _nothing_avoided,
) -> Understood:
    dismissed = DISMISSAL.match(text)
    if dismissed is not None and _words(dismissed.group("rest")) and not UNDOING.match(text):
        text = dismissed.group("rest")  # nothing is open to drop: the request is what follows
    chat = small_talk(text, tools)
    if chat is not None:
        return Understood(Plan(reply=chat), "smalltalk")
    if is_undo(text) or _removes_last(text, state, tools):
        undo = plan_undo(state, tools)
        if undo.step is None:
            return Understood(Plan(reply=undo.reason), "undo")
        index = next(i for i, r in enumerate(state.calls) if r is undo.record)
        return Understood(_settled((undo.step,), tools, context), "undo", undo_of=index)
    replan = (lambda words: plan(words, tools, context)) if plan is not None else None
    follow = follow_up(text, state, tools, context.local_now(), replan)
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
    planned = _pointed(plan(text, tools, context), state)
    if planned.unmatched:
        if not _words(text):
            return Understood(Plan(reply="I didn't catch a request there; say what you would like done, or ask "
                                        "\"what can you do\".", unmatched=True), "planner")
        return Understood(Plan(reply=not_understood(text), unmatched=True), "planner")
    return Understood(planned, "planner")


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
    known: set[str] = set()
    for option in pending.options:
        known |= option_words(option)
    extra = [w for w in words if w not in ANSWER_WORDS and w not in FILLERS and w not in PRONOUNS
             and w not in ORDINALS and w not in UNITS and not w.isdigit() and not said_words([w]) <= known
             and plural_strip(fold(w)) not in known]
    return not extra


def _words(text: str) -> list[str]:
    return [w.low for w in tokenize(prepare(text)) if w.kind in ("word", "num", "ord")]
