"""Settling a plan: which question to ask next, and reading the user's answer.

`advance(partial)` walks the steps from `partial.index`: a step with several
candidate functions asks the user to choose; a step missing a required
parameter asks for it; when every step is settled, steps of functions marked
`confirm` are put to the user in one yes/no question. Only then does the plan
come back without `pending`.

`resume(pending, text)` reads the next message as the answer: "2", "the second
one", "the grocery one" for a choice; a value of the parameter's type for a
missing one ("milk and eggs", "next friday"); yes or no for a confirmation.
"cancel" / "never mind" drops the request. A message that is no answer gives
None, and the caller plans it as a new request. Both planners can use this.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from dreamer.sidekick.planner.base import (
    Clarification,
    FunctionFacts,
    Option,
    PartialPlan,
    Plan,
    PlanContext,
    Step,
    addressed,
)
from dreamer.sidekick.planner.language.lexicon import FILLERS, ORDINALS, PRONOUNS, UNITS
from dreamer.sidekick.planner.language.slots import Reading, SlotType, read, slot_type
from dreamer.sidekick.planner.language.text import fold, made_of, plural_strip, prepare, tokenize
from dreamer.sidekick.planner.language.vocabulary import Lexicon

# Answers made wholly of these phrases (made_of: a word-level check; the regular expressions
# this replaces, `^(?:(?:yes|...)\s*)+$`, backtracked exponentially on a long run of them).
_YES = frozenset({
    "yes", "yeah", "yea", "yep", "yup", "y", "sure", "ok", "okay", "k", "confirm", "confirmed", "correct", "right",
    "absolutely", "definitely", "certainly", "of course", "go ahead", "go for it", "do it", "please do", "proceed",
    "fine", "alright", "all right", "sounds good", "that is right", "that is it", "that one", "affirmative", "please",
    "thanks", "thank you", "yes do it", "sounds great", "great", "perfect", "why not", "let us do it", "make it so",
    "you bet", "indeed", "naturally",
})
_NO = frozenset({
    "no", "n", "nope", "nah", "do not", "cancel", "stop", "abort", "wait", "never mind", "not now", "not that",
    "neither", "none", "leave it", "forget it", "please", "thanks", "thank you", "no thanks", "hold on", "hold off",
    "not yet", "absolutely not", "no way", "do not do it", "do not do that", "better not", "i changed my mind",
    "changed my mind", "actually", "on second thought", "not really", "i would rather not", "rather not",
})
_POLITE = frozenset({"please", "thanks", "thank you"})
CANCEL = re.compile(r"^\s*(cancel|never ?mind|forget (it|that|about it)|stop|abort|nothing|none of (them|those)|"
                    r"neither( of them)?|no thanks|no,? thank you|scratch that)\b", re.IGNORECASE)
_LAST = frozenset({"last", "final", "bottom"})
_CARDINALS = frozenset(w for w in UNITS if w not in ("a", "an", "couple", "dozen", "single"))

CANCELLED = "OK, I've dropped that request."


def advance(partial: PartialPlan) -> Plan:
    """The plan as far as it is settled: the next question, or the steps to run."""
    steps = list(partial.steps)
    for i in range(partial.index, len(steps)):
        here = replace(partial, index=i)
        choices = partial.choices[i] if i < len(partial.choices) else ()
        if len(choices) > 1:
            options = tuple(Option(_label(s, partial.facts), s) for s in choices)
            listed = "\n".join(f"{n}. {o.label}" for n, o in enumerate(options, 1))
            return Plan(
                steps=tuple(steps),
                pending=Clarification("choose", f"Which did you mean?\n{listed}", here, options=options),
            )
        if len(choices) == 1:  # the planner's only guess, and not a confident one
            option = Option(_label(choices[0], partial.facts), choices[0])
            question = f"I'm not sure I understood. Did you mean: {option.label}? (yes / no)"
            return Plan(steps=tuple(steps), pending=Clarification("choose", question, here, options=(option,)))
        facts = partial.facts.get(steps[i].name)
        if facts is None:
            continue
        missing = tuple(p for p in facts.required if p not in steps[i].args)
        if missing:
            return Plan(
                steps=tuple(steps),
                pending=Clarification("missing", _ask_for(facts, missing[0]), here, missing=missing),
            )
    waiting = [s for s in steps if _needs_yes(s, partial.facts)]
    if waiting:
        listed = "; ".join(_label(s, partial.facts) for s in waiting)
        question = f"Please confirm: {listed}. Shall I go ahead? (yes / no)"
        return Plan(steps=tuple(steps), pending=Clarification("confirm", question, replace(partial, index=0)))
    return Plan(steps=tuple(steps))


def resume(pending: Clarification, text: str, context: PlanContext | None = None) -> Plan | None:
    """The plan once `text` answers `pending`; None when `text` is not an answer to it."""
    context = context or PlanContext()
    words = [w.low for w in tokenize(prepare(text))]
    if not words:
        return None
    if CANCEL.match(text.strip()):
        return Plan(reply=CANCELLED)
    partial = pending.partial
    if not 0 <= partial.index < len(partial.steps):
        return None
    if pending.kind == "confirm":
        if _is_yes(words):
            steps = tuple(replace(s, confirmed=True) if _needs_yes(s, partial.facts) else s for s in partial.steps)
            return advance(replace(partial, steps=steps))
        if _is_no(words):
            return Plan(reply=CANCELLED)
        return None
    if pending.kind == "choose":
        picked = _pick(words, text, pending.options)
        if picked is None:
            if len(pending.options) == 1 and _is_no(words):
                return Plan(reply=CANCELLED)
            return None
        steps = list(partial.steps)
        choices = list(partial.choices) + [()] * (len(steps) - len(partial.choices))
        steps[partial.index] = picked
        choices[partial.index] = ()
        return advance(replace(partial, steps=tuple(steps), choices=tuple(choices)))
    if pending.kind == "missing" and pending.missing:
        name = pending.missing[0]
        step = partial.steps[partial.index]
        facts = partial.facts.get(step.name)
        schema = facts.properties.get(name, {}) if facts else {}
        value = read_answer(slot_type(name, schema if isinstance(schema, dict) else {}, True), text,
                            _now(partial, context))
        if value is None:
            return None
        steps = list(partial.steps)
        steps[partial.index] = replace(step, args={**step.args, name: value})
        return advance(replace(partial, steps=tuple(steps)))
    return None


def read_answer(slot: SlotType, text: str, now: datetime) -> Any:
    """A bare answer ("milk and eggs", "next friday", "30") read as a value of this slot type, or None."""
    lex = _lexicon()
    prepared = prepare(text)
    toks = tokenize(prepared)
    # "It's next friday", "the title is Dentist": the words before the value are not part of it.
    lead = 0
    lows = [t.low for t in toks]
    for i, w in enumerate(lows[:4]):
        if w in ("is", "be", "was", "are") and i < len(lows) - 1:
            lead = i + 1
    toks = toks[lead:]
    if not toks:
        return None
    fixed = []
    for t in toks:
        fix = t.low
        if t.kind == "word" and not lex.is_known(t.low):
            typo = lex.spell(t.low)
            if typo:
                fix = typo[0]
        fixed.append(fix)
    reading = Reading(fixed, prepared[toks[0].start : toks[-1].end], [t.kind for t in toks], now)
    got = read(slot, reading)
    return got[0] if got else None


@lru_cache(maxsize=1)
def _lexicon() -> Lexicon:
    return Lexicon()


def _now(partial: PartialPlan, context: PlanContext) -> datetime:
    if partial.now:
        try:
            return datetime.fromisoformat(partial.now)
        except ValueError:
            pass
    return context.local_now()


def _pick(words: list[str], text: str, options: tuple[Option, ...]) -> Step | None:
    """The option the user named: by number, by ordinal, or by words of its label."""
    if not options:
        return None
    # Ordinals ("the second one", "the last") first; then digits; then number words, but only
    # said alone or after "number"/"option": in "the grocery one", "one" is no number.
    numbers = [ORDINALS[w] for w in words if w in ORDINALS]
    numbers += [int(w[:-2]) for w in words if re.fullmatch(r"\d+(st|nd|rd|th)", w)]
    if any(w in _LAST for w in words):
        numbers.append(len(options))
    if "other" in words and len(options) == 2:
        numbers.append(2)
    if not numbers:
        numbers = [int(w) for w in words if w.isdigit()]
        numbers += [
            UNITS[w] for i, w in enumerate(words)
            if w in _CARDINALS and (len(words) == 1 or (i and words[i - 1] in ("number", "option", "choice", "no")))
        ]
    picks = {n for n in numbers if 1 <= n <= len(options)}
    if len(picks) == 1:
        return options[picks.pop() - 1].step
    if len(options) == 1 and _is_yes(words):
        return options[0].step
    # Words of an option: "the grocery one", "the task list", "todo" (spelling forgiven).
    said = {plural_strip(fold(w)) for w in words if w not in FILLERS and w not in PRONOUNS}
    if not said:
        return None
    scores = []
    for option in options:
        text = f"{option.label} {option.step.agent} {option.step.function}".replace("_", " ")
        known = {plural_strip(fold(w.low)) for w in tokenize(prepare(text))}
        scores.append(sum(1 for w in said if w in known or any(fuzz.ratio(w, k) >= 85 for k in known)))
    best = max(scores)
    if best and scores.count(best) == 1:
        return options[scores.index(best)].step
    return None


def _is_yes(words: list[str]) -> bool:
    return made_of(words, _YES) and not made_of(words, _POLITE)


def _is_no(words: list[str]) -> bool:
    return made_of(words, _NO) and not made_of(words, _POLITE)


def _needs_yes(step: Step, facts: dict[str, FunctionFacts] | Any) -> bool:
    known = facts.get(step.name)
    return bool(known and known.confirm and not step.confirmed)


def _label(step: Step, facts: dict[str, FunctionFacts] | Any) -> str:
    known = facts.get(step.name)
    summary = addressed(known.summary) if known and known.summary else step.name
    shown = ", ".join(f"{k.replace('_', ' ')}: {_show(v)}" for k, v in step.args.items())
    return f"{summary} ({shown})" if shown else summary


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _ask_for(facts: FunctionFacts, name: str) -> str:
    schema = facts.properties.get(name, {})
    slot = slot_type(name, schema if isinstance(schema, dict) else {}, True)
    label = name.replace("_", " ")
    question = {
        "list": f"which {label}?",
        "day": "for which day?",
        "moment": "when?" if name in ("start", "when", "at", "time") else f"what {label} (a day and time)?",
        "int": f"how many {label}?" if not label.startswith(("max", "min")) else f"what {label}?",
        "number": f"what {label}?",
        "bool": f"{label}: yes or no?",
        "enum": f"which {label}: {', '.join(slot.choices)}?",
        "url": "which link?",
    }.get(slot.kind, f"what {label}?")
    return f"{addressed(facts.summary)}: {question}"
