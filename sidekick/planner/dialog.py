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

from dreamer.contracts.reply_text import and_list, brief
from dreamer.sidekick.planner.base import (
    Clarification,
    FunctionFacts,
    Option,
    PartialPlan,
    Plan,
    PlanContext,
    Step,
    takes_whole_request,
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
    "you bet", "indeed", "naturally", "go on", "carry on", "sure thing", "yes please", "alright then", "ok then",
    "do the needful", "haan", "haan ji", "ji", "theek hai",  # Indian English and Hindi: "ok do the needful"
})
_NO = frozenset({
    "no", "n", "nope", "nah", "do not", "cancel", "stop", "abort", "wait", "never mind", "not now", "not that",
    "neither", "none", "leave it", "forget it", "please", "thanks", "thank you", "no thanks", "hold on", "hold off",
    "not yet", "absolutely not", "no way", "do not do it", "do not do that", "better not", "i changed my mind",
    "changed my mind", "actually", "on second thought", "not really", "i would rather not", "rather not",
    "keep it", "keep them", "keep that", "leave them", "leave it as is", "do not bother", "no need",
    "not necessary", "skip it", "forget about it",
})
# An answer may open with yes or no and then say back what it agrees to or refuses: "yup, clear
# it", "yes, wipe it", "no, keep everything", "don't bother". After the head, at most one word
# of its own (the verb), with words that point back at what was asked.
_YES_HEADS = frozenset({"yes", "yeah", "yea", "yep", "yup", "sure", "ok", "okay", "fine", "alright", "absolutely",
                        "definitely", "certainly", "of course", "go ahead", "please do", "do it", "correct", "right"})
_NO_HEADS = frozenset({"no", "nope", "nah", "do not", "not", "please do not", "no no"})
# Words that point back at what was asked, or say nothing: "the list" or "my notes" would name
# something, and "ok, show my list" is a request, not a yes.
_ECHO = frozenset({"it", "that", "them", "this", "those", "everything", "all", "then", "now", "please", "thing",
                   "ahead", "and", "go", "just", "so", "thanks", "thank", "you", "anything", "is"})
MAX_ECHO = 4  # words after the head
_OBJECTS = frozenset({"it", "that", "them", "this", "those", "everything", "all", "anything"})
_YES_VERBS = frozenset({"proceed", "continue", "go"})
_NO_VERBS = frozenset({"bother", "keep", "leave", "need", "cancel", "stop", "touch", "worry", "change", "do", "go",
                       "proceed", "continue"})
_POLITE = frozenset({"please", "thanks", "thank you"})
CANCEL = re.compile(r"^\s*(cancel|never ?mind|forget (it|that|about it)|stop|abort|nothing|none of (them|those)|"
                    r"neither( of them)?|no thanks|no,? thank you|scratch that)\b", re.IGNORECASE)
_LAST = frozenset({"last", "final", "bottom"})
_CARDINALS = frozenset(w for w in UNITS if w not in ("a", "an", "couple", "dozen", "single"))

CANCELLED = "OK, I've dropped that request."
_AGENT_NAMED = re.compile(r" \(the [^()]+ agent(?: by [^()]+)?\)$")


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
            if _is_no(words):
                return Plan(reply=CANCELLED)  # "no, leave it" to "which did you mean?": neither
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


# Words that name the value before its "is": "it's next friday", "the title is Dentist", "that would be 3".
_NAMING = frozenset({"it", "that", "this", "the", "title", "name", "date", "day", "time", "its", "would", "should",
                     "answer", "value"})


def read_answer(slot: SlotType, text: str, now: datetime) -> Any:
    """A bare answer ("milk and eggs", "next friday", "30") read as a value of this slot type, or None."""
    lex = _lexicon()
    prepared = prepare(text)
    toks = tokenize(prepared)
    # "It's next friday", "the title is Dentist": the words before the value are not part of it.
    lead = 0
    lows = [t.low for t in toks]
    for i, w in enumerate(lows[:4]):
        # (only after words that name the value: "baby wipes, we are nearly out" keeps its baby wipes)
        if w in ("is", "be", "was", "are") and i < len(lows) - 1 and all(x in _NAMING for x in lows[:i]):
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
    timed = _pick_by_time(words, text, options)
    if timed is not None:  # "the 4 pm one", "the afternoon one", "the later one"
        return timed
    dated = _pick_by_day(words, options)
    if dated is not None:  # "the May one", "the one on the 15th", "the Tuesday one"
        return dated
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
    # Words of an option: "the grocery one", "the shopping list one", "todo" (spelling and synonyms forgiven).
    # An acronym written in capitals is a name even when its letters spell a small word: "IT operations".
    said = said_words(words) | {a.casefold() for a in re.findall(r"\b[A-Z]{2,5}\b", text)}
    if not said:
        return None
    scores = []
    for option in options:
        known = option_words(option)
        scores.append(sum(1 for w in said if w in known or any(fuzz.ratio(w, k) >= 85 for k in known)))
    best = max(scores)
    if best and scores.count(best) == 1:
        return options[scores.index(best)].step
    return None


# A time said in an answer ("the 4 pm one", "the 16:00 one") and the start time in an option's label
# ("Dentist, 11 Dec, 16:00–17:00"); the parts of the day; and which of several is later or earlier.
_SAID_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))? ?(am|pm|a\.m\.|p\.m\.)(?![a-z])|\b(\d{1,2}):(\d{2})\b", re.IGNORECASE)
_LABEL_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_PARTS_OF_DAY = {"morning": (0, 12), "afternoon": (12, 17), "evening": (17, 24), "night": (17, 24), "noon": (12, 13),
                 "lunchtime": (11, 14)}
_LATER = frozenset({"later", "latest", "late"})
_EARLIER = frozenset({"earlier", "earliest", "sooner", "soonest", "early"})
# Words that pick an option by its time, nothing else (the dialogue's test of a bare answer).
TIME_ANSWER_WORDS = frozenset(_PARTS_OF_DAY) | _LATER | _EARLIER | {"am", "pm", "one"}


def _pick_by_time(words: list[str], text: str, options: tuple[Option, ...]) -> Step | None:
    """The option whose time the answer names: a clock time, a part of the day, or later/earlier
    (options are listed soonest first)."""
    starts = []
    for option in options:
        m = _LABEL_TIME.search(option.label)
        starts.append(int(m.group(1)) * 60 + int(m.group(2)) if m else None)
    if all(t is None for t in starts):
        return None
    said = _SAID_TIME.search(text)
    if said is not None:
        if said.group(4) is not None:
            wanted = {int(said.group(4)) * 60 + int(said.group(5))}
        else:
            hour = int(said.group(1)) % 12 + (12 if said.group(3).casefold().startswith("p") else 0)
            wanted = {hour * 60 + int(said.group(2) or 0)}
        found = [o for o, t in zip(options, starts, strict=True) if t in wanted]
        return found[0].step if len(found) == 1 else None
    for word, (first, last) in _PARTS_OF_DAY.items():
        if word in words:
            found = [o for o, t in zip(options, starts, strict=True) if t is not None and first * 60 <= t < last * 60]
            return found[0].step if len(found) == 1 else None
    if set(words) & _LATER and not set(words) & _EARLIER:
        return options[-1].step
    if set(words) & _EARLIER and not set(words) & _LATER:
        return options[0].step
    return None


# A day in an option's label ("Dentist, Tue 4 Mar 2031, 09:30–10:30") and the words that name one in an answer.
_LABEL_DAY = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w* (\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*\b")
_MONTH_WORDS = {m.casefold(): m[:3].casefold() for m in (
    "January February March April May June July August September October November December".split())}
_MONTH_ABBREVIATIONS = frozenset({"jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"})  # ("mar" is a word)
_WEEKDAY_WORDS = {d.casefold(): d[:3].casefold() for d in "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()}


def _pick_by_day(words: list[str], options: tuple[Option, ...]) -> Step | None:
    """The one option whose day the answer names: its month ("the May one", "the one in March"), its weekday,
    or its day of the month said as an ordinal beyond the options' count ("the one on the 15th")."""
    days = [_LABEL_DAY.search(o.label) for o in options]
    if any(d is None for d in days):
        return None
    short = {_MONTH_WORDS[w] for w in words if w in _MONTH_WORDS} | {w[:3] for w in words if w in _MONTH_ABBREVIATIONS}
    weekdays = {_WEEKDAY_WORDS[w] for w in words if w in _WEEKDAY_WORDS}
    dates = {int(w[:-2]) for w in words if re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)", w) and int(w[:-2]) > len(options)}
    if not (short or weekdays or dates):
        return None
    found = [o for o, d in zip(options, days, strict=True) if d is not None
             and (not short or d.group(3).casefold() in short) and (not weekdays or d.group(1).casefold() in weekdays)
             and (not dates or int(d.group(2)) in dates)]
    return found[0].step if len(found) == 1 else None


def said_words(words: list[str]) -> set[str]:
    """The content words of an answer in the lexicon's forms ("shopping" is "grocery")."""
    lex = _lexicon()
    return {lex.canon_word(w) for w in words if w not in FILLERS and w not in PRONOUNS}


def option_words(option: Option) -> set[str]:
    """The words an option can be named by: its label's, its agent's and its function's, in the lexicon's forms."""
    lex = _lexicon()
    text = f"{option.label} {option.step.agent} {option.step.function}".replace("_", " ").replace("-", " ")
    return {lex.canon_word(w.low) for w in tokenize(prepare(text))} | {plural_strip(fold(w.low)) for w in tokenize(prepare(text))}


def _is_yes(words: list[str]) -> bool:
    return (made_of(words, _YES) or _head_and_echo(words, _YES_HEADS, _YES_VERBS)) and not made_of(words, _POLITE)


def _is_no(words: list[str]) -> bool:
    return (made_of(words, _NO) or _head_and_echo(words, _NO_HEADS, _NO_VERBS)) and not made_of(words, _POLITE)


def _head_and_echo(words: list[str], heads: frozenset[str], verbs: frozenset[str]) -> bool:
    """`words` open with one of `heads` and go on only to say it back: a verb with "it" ("clear it",
    "keep everything"), or one of `verbs` alone ("don't bother"); "no milk" is no refusal."""
    rest = words
    while True:  # "no, don't clear it": one head after another
        size = next((n for n in (3, 2, 1) if len(rest) > n and " ".join(rest[:n]) in heads), 0)
        if not size:
            break
        rest = rest[size:]
    if rest is words:
        return False
    own = [i for i, w in enumerate(rest) if w not in _ECHO]
    if len(rest) > MAX_ECHO or len(own) > 1:
        return False
    if not own:
        return True
    i = own[0]
    return rest[i] in verbs or (i + 1 < len(rest) and rest[i + 1] in _OBJECTS)


def _needs_yes(step: Step, facts: dict[str, FunctionFacts] | Any) -> bool:
    known = facts.get(step.name)
    return bool(known and known.confirm and not step.confirmed)


def _label(step: Step, facts: dict[str, FunctionFacts] | Any) -> str:
    """An option or a step as a person reads it: "Add items to your grocery list: bread"."""
    known = facts.get(step.name)
    shown = [_show(v) for k, v in step.args.items() if not (known and takes_whole_request(known.properties, k)) and _show(v)]
    return f"{_doing(known, step)}: {'; '.join(shown)}" if shown else _doing(known, step)


def _doing(known: FunctionFacts | None, step: Step) -> str:
    """What the function does, short and capitalised ("Delete one event from your calendar")."""
    summary = known.summary if known else ""
    # Among several agents' functions the summary ends "(the grocery agent by dreamer)": kept.
    agent = _AGENT_NAMED.search(summary)
    what = brief(summary[: agent.start()] if agent else summary) or step.function.replace("_", " ")
    return what[:1].upper() + what[1:] + (agent.group(0) if agent else "")


def _show(value: Any) -> str:
    if isinstance(value, list):
        return and_list([_show(v) for v in value])
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return _when(value) or value
    return str(value)


def _when(value: str) -> str | None:
    """An ISO day or time as words: "2025-03-14" is "Friday 14 March", with "at 15:00" for a time."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if not re.match(r"^\d{4}-\d{2}-\d{2}", value):
        return None
    day = f"{moment.strftime('%A')} {moment.day} {moment.strftime('%B')}"
    return f"{day} at {moment.strftime('%H:%M')}" if "T" in value or " " in value.strip() else day


def _ask_for(facts: FunctionFacts, name: str) -> str:
    schema = facts.properties.get(name, {})
    slot = slot_type(name, schema if isinstance(schema, dict) else {}, True)
    label = name.replace("_", " ")
    doing = _doing(facts, Step("", name))
    if slot.kind in ("int", "text") and (name == "id" or name.endswith("_id")):
        # "watch_id": the thing is named by its number, which a listing shows.
        thing = name[: -len("_id")].replace("_", " ") if name != "id" else "one"
        return f"{doing}: which {thing}? Say its number."
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
    return f"{doing}: {question}"
