"""Follow-ups: a message that only makes sense against what was just done or shown.

    "and bread too" / "also butter please"   -> the last call again, with the new items
    "remove the eggs" (eggs were just shown) -> that agent's remover, with the eggs
    "actually make that oat milk"            -> take the last added item back, add this one
    "the second one"                         -> the second thing of the last list, opened
    "do the same for tomorrow"               -> the last call again, for another day

Each reading needs the state to support it (an earlier call with a list parameter, an
entity that was shown, a day parameter); otherwise the message is left to the planner.
Values are read with the planner's own slot readers, so "bread and butter" is two items
and "friday" a date exactly as in a first request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from rapidfuzz import fuzz

from dreamer.sidekick.dialogue.state import CallRecord, DialogueState, label
from dreamer.sidekick.dialogue.undo import inverse_step
from dreamer.sidekick.planner.base import Plan, Step, Tool, takes_whole_request
from dreamer.sidekick.planner.dialog import read_answer
from dreamer.sidekick.planner.language.values import tidy_items, without_politeness
from dreamer.sidekick.planner.language.dates import MONTHS, TEMPORAL, WEEKDAYS, day_value, parse_day, parse_moment
from dreamer.sidekick.planner.language.lexicon import ORDINALS
from dreamer.sidekick.planner.language.slots import SlotType, slot_type
from dreamer.sidekick.planner.language.text import prepare, tokenize
from dreamer.sidekick.dialogue.correction_words import as_correction

MAX_FOLLOWUP_CHARS = 300  # tests/security/test_regex_backtracking.py fuzzes these patterns at this length
# ("an' all": the north of England's and Scotland's "too")
_TAIL = r"(?:\s+(?:too|as well|also|again|please|then|now|thanks|an' all|an all))*+\s*[.!?]*"
ADD_MORE = [
    # an interjection may open it, however drawn out ("ooh and lentils", "ahh also milk")
    re.compile(rf"^(?:(?:o+h+|a+h+|oh wait|oh yeah|hmm+|um+|ok|okay|sorry|oops|wait|right|yeah|yes|ja|aye|yep)[\s,.!]+)?"
               rf"(?:and|also|plus|then|oh and|same again with|same with|same again,|one more thing,)\s+(?:add\s+|get\s+|some\s+|with\s+)?"
               rf"(?:another(?:\s+(?:one|note|item))?\s*[:,-]\s*)?(?P<x>.+?){_TAIL}$", re.I),
    # "what about beef?" after recipe ideas: the same call with this value instead.
    re.compile(r"^(?:and\s+|ok,?\s+|so\s+)?(?:what|how)\s+about\s+(?:with\s+|some\s+)?(?P<x>[^?]+?)\s*\??$", re.I),
    re.compile(rf"^(?P<x>.+?)\s+(?:too|as well|also|an' all|an all){_TAIL}$", re.I),
    # texting's plus: "+ sour patch kids", "+salsa"
    re.compile(rf"^\+\s?(?P<x>[^+].*?){_TAIL}$", re.I),
]
SAME = [
    re.compile(r"^(?:and\s+|now\s+|ok,?\s+|okay,?\s+|then\s+)?(?:please\s+)?(?:do\s+)?(?:the\s+)?same(?:\s+thing)?\s+"
               r"(?:for|on)\s+(?P<x>.+?)\s*(?:too|please)?\s*[.!?]*$", re.I),
    re.compile(r"^(?:and\s+|ok,?\s+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*\??$", re.I),
    re.compile(r"^and\s+(?:for|on)\s+(?P<x>.+?)(?:\s+too)?\s*[.!?]*$", re.I),
    re.compile(r"^(?:now\s+|then\s+)?(?:do\s+)?(?:it|that)\s+(?:again\s+)?(?:for|on)\s+(?P<x>.+?)(?:\s+too)?\s*[.!?]*$", re.I),
]
REMOVE = re.compile(
    r"^(?:please\s+|oh,?\s+|and\s+|also\s+|actually,?\s+)*+(?:remove|delete|drop|scratch|cross off|cross out|get rid of|"
    r"take off|take out|lose|knock off|strike off|tick off|yeet|ditch|bin|nix|axe)\s+(?:the\s+|that\s+|those\s+)?(?P<x>.+?)(?:\s+(?:off|out|from (?:it|that|there|the list)))?"
    r"(?:\s+(?:again|too|please|now))*+\s*[.!]*$|"
    r"^(?:please\s+)?take\s+(?:the\s+)?(?P<y>.+?)\s+(?:off|out)(?:\s+(?:again|too|please|now|of it))*+\s*[.!]*$",
    re.I,
)
# Words that take something back, in more languages than English: "perdón, I meant tostadas", "Entschuldigung,
# I meant pumpernickel", "Oh dear, I meant cream cheese", "ay no, lemons, not limes".
# (Not "oh" or "ah" alone: "oh, custard as well" adds custard; only "oh dear", "ah no" take something back.)
_TAKE_BACK = (r"(?:actually|no|nope|sorry|oops|whoops|wait|wrong|ay no|ah no|oh dear|my bad|perd[oó]n|pardon me"
              r"|entschuldigung|excuse me|d[ée]sol[ée]e?|disculpa|lo siento|scusa)")
REPLACE = [
    re.compile(r"^(?:(?:actually|no|sorry|oh|wait|oops|hmm|dear|perd[oó]n|pardon me|entschuldigung|excuse me"
               r"|d[ée]sol[ée]e?|disculpa|lo siento|scusa|ah|ay)\W+)*+(?:please\s+)?(?:make\s+(?:that|it|this)|change\s+(?:that|it)\s+to|"
               r"switch\s+(?:that|it)\s+to|replace\s+(?:that|it)\s+with|i\s+meant|i\s+mean|i\s+said|not\s+that,)\s+(?P<x>.+?)"
               r"(?:\s+instead)?(?:\s+please)?\s*[.!]*$", re.I),
    re.compile(r"^(?:(?:actually|no|sorry)\W+)*+(?P<x>.+?)\s+instead(?:\s+please)?\s*[.!]*$", re.I),
    # "actually almond milk", "sorry, thursday not wednesday", "no, 10am", "oops, almond milk, not regular":
    # a lead word, then only the value (checked in _replace: it must not be a request of its own).
    # Only words that take something back lead a correction: "oh and lemons" adds lemons.
    re.compile(rf"^{_TAKE_BACK}[\s,.!;:-]+"
               rf"(?:{_TAKE_BACK}[\s,.!;:-]+)?(?P<x>[^,]+?)"
               r"(?:\s*,?\s+not\s+(?:the\s+|a\s+)?[^,]+?)?(?:\s+please)?\s*[.!]*$", re.I),
    # The value ends on a letter, so the space before "not" is read one way only (no backtracking).
    re.compile(r"^(?P<x>[^,]*?[^\s,]),?\s+not\s+[^,]*$", re.I),
]
_NOT_THAT = re.compile(r",?\s+not\s+(?:the\s+|a\s+)?[^,\s]+(?:\s[^,\s]+){0,3}\s*$", re.I)
_BARE_REPLACE = 2  # REPLACE patterns from this one on say only a value: it must not plan as a request
_APOLOGIES = frozenset({"sorry", "soz", "sry", "oops", "my bad", "lol", "haha", "lmao", "xx"})  # (and laughter)
_INSTEAD = 1  # REPLACE's "X instead" pattern
# Verbs that open a request of their own, said with "instead": "move it to 10 instead", "show my notes instead".
_COMMAND_VERBS = frozenset({"move", "push", "show", "cancel", "delete", "remove", "plan", "find", "search", "tell",
                            "remind", "save", "book", "reschedule"})
MAX_BARE_WORDS = 4
PICK = re.compile(
    r"^(?:(?:ok|okay|then|and)\W+)?(?:(?:show|open|give|get|tell)\s+me\s+|i(?:'ll| will)?\s+(?:take|want|go with)\s+|"
    r"let's\s+(?:go with|do)\s+|(?:go with|pick|choose)\s+)?(?:the\s+)?(?:number\s+|option\s+|no\.?\s*)?"
    r"(?P<n>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\d{1,2}(?:st|nd|rd|th)?)"
    r"(?:\s+(?:one|recipe|note|item|event|idea))?(?:\s+please)?"
    # what to see of it: "number 2 please, full recipe"
    r"(?:,?\s+(?:the\s+)?(?:full|whole)\s+(?:recipe|thing|one))?\s*[.!]*$",
    re.I,
)
_REMOVER_WORDS = ("remove", "delete", "take", "cross", "clear")
# Value kinds a correction's words are tried as before free text: "actually make it 11am"
# after adding an event changes its time, not its title.
_TYPED = ("moment", "day", "int", "number", "url")

# text -> the planner's Plan for it as a request of its own (None: no planner to ask)
Replan = Callable[[str], Plan]


@dataclass(frozen=True)
class FollowUp:
    steps: tuple[Step, ...]
    kind: str  # "more" | "same" | "remove" | "replace" | "pick"
    reply: str | None = None  # said instead of running anything (a pick with nothing to open)


def follow_up(text: str, state: DialogueState, tools: Sequence[Tool], now: datetime,
              replan: Replan | None = None) -> FollowUp | None:
    """The follow-up `text` makes against `state`, or None when it is no follow-up of it."""
    said = " ".join(text.replace("’", "'").split())
    if len(said) > MAX_FOLLOWUP_CHARS:  # follow-ups are short; no pattern below sees a long message
        return None
    said = _WHILE_AT_IT.sub(" too", said)  # "oh, ketchup chips while you're at it": one more, as "too" says
    said = without_politeness(said)  # "neeps as well, ta", "jam as well while you're at it"
    said = as_correction(said)  # "oh shoot I meant X", "nah make that X", "correction: X, not Y"
    if not said or not state.calls and state.shown is None:
        return None
    by_name = {t.name: t for t in tools}
    named = _named_replace(said, state, by_name, now, replan) or _not_wanted(said, state, by_name, now)
    if named is not None:
        return named
    for reader in (_pick, _open_last, _day_after, _same, _the_ones, _reask, _narrow, _remove):
        found = reader(said, state, by_name, now)
        if found is not None:
            return found
        if reader is _reask:
            found = _replace(said, state, by_name, now, replan)
            if found is not None:
                return found
    return (_more(said, state, by_name, now, replan) or _refine(said, state, by_name)
            or _swap(said, state, by_name, now, replan))


_WHILE_AT_IT = re.compile(r"(?<!too)(?<!as well),? while you'?re at it[.!]*$", re.IGNORECASE)


# The words before the value; the value is the rest of the message (cut in code: nothing to backtrack).
SWAP = re.compile(r"^(?:and\s+|ok,?\s+|okay,?\s+|so\s+|then\s+)?(?P<about>(?:what|how)\s+about\s+|now\s+|next\s+|same(?:\s+but|\s+again|\s+thing)?\s+(?=with\s|for\s|in\s))?"
                  r"(?:with\s+|some\s+|for\s+|in\s+)?", re.I)
MAX_SWAP_CHARS = 60
MAX_SWAP_WORDS = 4


def _allowed(schema: Mapping[str, Any]) -> set[str]:
    """The values a parameter with fixed values takes, folded ("Italian" and "italian" alike)."""
    found: list[Any] = list(schema.get("enum") or []) + list(schema.get("examples") or [])
    for option in schema.get("anyOf") or []:
        if isinstance(option, Mapping):
            found += list(option.get("enum") or []) + ([option["const"]] if "const" in option else [])
    return {str(v).casefold() for v in found if v is not None}


def _swap(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime,
          replan: Replan | None) -> FollowUp | None:
    """ "What about beef?" / "and mexican?" after recipe ideas: the last call again with the value this
    word fits swapped in: a parameter with fixed values it names (cuisine, diet), else the text
    parameter the last call was given (the ingredient)."""
    last = _last(state, by_name)
    body = said.strip().rstrip("?!. ")
    m = SWAP.match(body)
    if m is None or last is None:
        return None
    asking = said.strip().endswith("?") or m.group("about")
    x = body[m.end():].strip()
    x = _without_tail(x)
    if not asking or not x or len(x) > MAX_SWAP_CHARS or "," in x or "?" in x:
        return None
    if len(x.split()) > MAX_SWAP_WORDS or _is_request(x, replan):
        return None
    record, tool = last
    if tool.reads is False and tool.undo is not False:
        return None  # only a look-up is asked again this way; a change is "and X too"
    schemas = {n: v for n, v in tool.properties.items() if isinstance(v, Mapping)}
    fixed = [n for n, v in schemas.items() if _allowed(v)]
    for param in fixed:
        if x.casefold() in _allowed(schemas[param]):
            return FollowUp((Step(record.agent, record.function, {**record.args, param: x.casefold()}),), "same")
    free = [n for n in schemas if n not in fixed and _slot(tool, n).kind == "text" and not takes_whole_request(tool.properties, n)]
    given = [n for n in free if n in record.args]
    param = given[0] if len(given) == 1 else free[0] if len(free) == 1 else None
    if param is None:
        return None
    return FollowUp((Step(record.agent, record.function, {**record.args, param: x}),), "same")


def _last(state: DialogueState, by_name: Mapping[str, Tool]) -> tuple[CallRecord, Tool] | None:
    for record in reversed(state.calls):
        if record.is_undo:
            continue
        tool = by_name.get(record.name)
        return (record, tool) if tool is not None else None
    return None


def _slot(tool: Tool, name: str) -> SlotType:
    schema = tool.properties.get(name, {})
    return slot_type(name, schema if isinstance(schema, Mapping) else {}, name in tool.required)


# Where a thing goes, said with it: "... to my todos", "... on the calendar".
_PLACE_SAID = re.compile(r"\b(?:to|on|onto|into|in)\s+(?:my|the|our)\s+[\w-]+", re.IGNORECASE)


def _more(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime,
          replan: Replan | None = None) -> FollowUp | None:
    last = _last(state, by_name)
    if last is None:
        return None
    record, tool = last
    for pattern in ADD_MORE:
        m = pattern.match(said)
        if m is None:
            continue
        x = _without_tail(m.group("x").strip())
        param = _fillable(tool)
        if param is None or not x or takes_whole_request(tool.properties, param):
            return None  # a fragment is no whole question: _reask rewrites the question, or the planner reads it
        # "and don't forget croutons": what follows "and" may be a request of its own. Asked
        # as one, it names this same function (its value read by the planner, without the
        # command words), another function (the planner takes the whole message), or nothing
        # (then it is the value itself: "and bread too").
        if replan is not None and _PLACE_SAID.search(x):
            whole = replan(said)
            if whole.steps and whole.pending is None and all(step.agent != record.agent for step in whole.steps):
                return None  # "also add finish the essay to my todos": it names another agent's place
        planned = replan(x) if replan is not None else None
        if planned is not None and planned.steps and planned.pending is None and not planned.unmatched:
            if len(planned.steps) == 1 and planned.steps[0].name == record.name and param in planned.steps[0].args:
                return FollowUp((Step(record.agent, record.function,
                                      {**record.args, param: planned.steps[0].args[param]}),), "more")
            if not _only_value(x, planned, by_name) and not _free_text_goes_on(tool, param, x, planned):
                return None
        value = read_answer(_slot(tool, param), x, now)
        if isinstance(value, list):
            value = tidy_items(value)  # "chuck limes on too": the items, not how they go on
        if value in (None, [], ""):
            return None
        return FollowUp((Step(record.agent, record.function, {**record.args, param: value}),), "more")
    return None


def _fillable(tool: Tool) -> str | None:
    """The parameter "and X too" gives a new value: a required list one, else the only required text
    one, else any list one (recipes' ingredients; notes' tags are not what "and X" means)."""
    lists = [n for n in tool.properties if _slot(tool, n).kind == "list"]
    required = [n for n in lists if n in tool.required]
    if required:
        return required[0]
    texts = [n for n in tool.required if _slot(tool, n).kind == "text"]
    if len(texts) == 1:
        return texts[0]
    return lists[0] if lists else None


def _only_text_said(tool: Tool, record: CallRecord) -> str | None:
    """The one free-text parameter the last call was given, where the function requires none: "sorry, I
    meant lamb" after recipe ideas with prawns corrects the ingredient, the only thing said in words."""
    said = [n for n, v in record.args.items() if isinstance(v, str) and v and _slot(tool, n).kind == "text"]
    return said[0] if len(said) == 1 else None


def _same(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    last = _last(state, by_name)
    if last is None:
        return None
    record, tool = last
    bare = _bare_day(said)
    for pattern in SAME:
        m = pattern.match(said)
        if m is None and bare is None:
            continue
        x = m.group("x").strip() if m is not None else str(bare)
        for param in tool.properties:
            kind = _slot(tool, param).kind
            if kind not in ("day", "moment"):
                continue
            value = read_answer(SlotType("day", required=True), x, now)
            if value is None and kind == "moment":
                value = read_answer(SlotType("moment", required=True), x, now)  # "same again on friday at 10"
                if value is not None:
                    return FollowUp((Step(record.agent, record.function, {**record.args, param: value}),), "same")
            if value is None:
                return None
            old = record.args.get(param)
            if kind == "moment" and isinstance(old, str) and "T" in old and "T" not in str(value):
                day = read_answer(SlotType("moment", required=True), x, now)
                value = f"{str(day)[:10]}{old[10:]}" if isinstance(day, str) and len(day) >= 10 else value
            return FollowUp((Step(record.agent, record.function, {**record.args, param: value}),), "same")
        return None
    return None


# "and the day after?", "what about the day before": the last look-up's day, moved by one.
_NEXT_DAY = re.compile(r"^(?:and|ok|so|then|what about|how about)?,? ?(?:the )?(?P<which>day after|next day|following day"
                       r"|day before|day after that|previous day)(?: that)?(?: then| too| please)?[?!. ]*$", re.IGNORECASE)


def _day_after(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    m = _NEXT_DAY.match(" ".join(said.split()))
    last = _last(state, by_name)
    if m is None or last is None:
        return None
    record, tool = last
    for param in tool.properties:
        if _slot(tool, param).kind != "day":
            continue
        old = record.args.get(param, tool.properties[param].get("default") if isinstance(tool.properties[param], Mapping) else None)
        base = parse_day(str(old).split(), now.date()) if old is not None else None
        if base is None:
            return None
        step = -1 if "before" in m["which"].casefold() or "previous" in m["which"].casefold() else 1
        value = day_value(base + timedelta(days=step), now.date())
        return FollowUp((Step(record.agent, record.function, {**record.args, param: value}),), "same")
    return None


REASK = re.compile(r"^(?:(?:and|ok|okay|so|now)\W+)?(?:(?:what|how)\s+about\s+|and\s+|now\s+)(?P<x>[^?!.]{1,80}?)(?:\s+(?:too|then))?\s*[?!.]*$",
                   re.IGNORECASE)
_PREPOSITIONS = frozenset("in for at from of during on by within".split())
MAX_BARE_QUESTION_WORDS = 2
# Words that end a preposition's object in a question: "in sales [took] sick leave".
_OBJECT_ENDS = _PREPOSITIONS | frozenset("took take were was is are have has had did do does who which that last this next "
                                         "and or with than".split())


def _reask(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    """ "And in finance?" after a question put whole to a function (sql-explorer's ask): the same question,
    with the part the fragment replaces swapped. A day or month replaces the question's day or month; anything
    else replaces the other object of a preposition ("in sales" -> "in finance")."""
    last = _last(state, by_name)
    m = REASK.match(said)
    bare = said.rstrip().endswith("?") and len(said.split()) <= MAX_BARE_QUESTION_WORDS  # "finance?"
    if last is None or (m is None and not bare):
        return None
    record, tool = last
    whole = [n for n in tool.properties if takes_whole_request(tool.properties, n)]
    if len(whole) != 1 or not isinstance(record.args.get(whole[0]), str):
        return None
    fragment = m.group("x") if m is not None else said.strip().rstrip("?!. ")
    if _BREAKDOWN.match(fragment):
        return None  # "and by team", "and team-wise": a breakdown of the question (_narrow), never a new value
    asked = _swapped(record.args[whole[0]], fragment)
    if asked is None:
        return None
    return FollowUp((Step(record.agent, record.function, {**record.args, whole[0]: asked}),), "same")


_BREAKDOWN = re.compile(r"^(?:by|per)\s|^[a-z]{2,20}-?wise\b", re.IGNORECASE)


# Who the counted ones were, asked after a count: "and who were they", "names please", "list them", "which ones?".
THE_ONES = re.compile(
    r"^(?:(?:and|ok|okay|so|then|can you|could you|please|kindly|pls)\W+){0,2}(?:"
    r"who (?:were|are|was|is) (?:they|those|them|these|that)(?: people)?|(?:their |the )?names(?: please| pls)?"
    r"|(?:list|show|name|give me|share|send|tell me)(?: me)? (?:them|those|the names|their names|the people"
    r"|who they (?:were|are))(?: also| too| as well)?(?: please| pls)?"
    r"|what (?:are|were) (?:their|the) names|which (?:ones|people|employees|staff)(?: were they| are they)?"
    r"|who(?: exactly)?)\s*[?!.]*$", re.IGNORECASE)
# A count's opening, and the people it counts: "how many people did we hire" -> "who did we hire".
_HOW_MANY = re.compile(r"^how many (?:(?:of )?(?:the |our )?)?(?P<who>people|employees|staff|workers|hires|new hires|joiners"
                       r"|starters|leavers|contractors|managers|engineers|interns|team members|men|women)\b\s*",
                       re.IGNORECASE)


def _the_ones(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    """"Who were they?" after a count put whole to a function (sql-explorer's ask): the same question, asking who."""
    last = _last(state, by_name)
    if last is None or THE_ONES.match(said) is None:
        return None
    record, tool = last
    whole = [n for n in tool.properties if takes_whole_request(tool.properties, n)]
    if len(whole) != 1 or not isinstance(record.args.get(whole[0]), str):
        return None
    m = _HOW_MANY.match(record.args[whole[0]].strip())
    if m is None:
        return None
    rest = record.args[whole[0]].strip()[m.end():]
    # ("how many people did we hire" -> "who did we hire"; "how many employees were absent" -> "which employees were absent")
    asked = f"who {rest}" if m.group("who").casefold() == "people" else f"which {m.group('who')} {rest}"
    return FollowUp((Step(record.agent, record.function, {**record.args, whole[0]: asked}),), "same")


# The last question narrowed or broken down: "break that down by reason", "split by gender", "only the
# unapproved ones", "just for Customer Support" (one fixed alternation, then a bounded run: no backtracking).
NARROW = re.compile(
    r"^(?:(?:and|ok|okay|now|so|then|can you)\W+)?(?:"
    r"(?:(?:break|split|group)\s+(?:that|it|this|them)\s+(?:down\s+|up\s+)?by|(?:broken\s+down|split|grouped)\s+by|by|per)"
    r"\s+(?P<by>[^?!.]{1,60}?)|(?:just\s+|only\s+|but\s+only\s+|how\s+many\s+of\s+(?:them|those)\s+(?:are|were|is|was)\s+"
    r"|what\s+about\s+)?(?P<only>(?:for|in|at|from)\s+[^?!.]{1,60}?)"
    r"|(?:just|only|but\s+only)\s+(?P<rows>[^?!.]{1,60}?)"
    # Indian English's "-wise" is "by": "department-wise also", "and team-wise"
    r"|(?P<wise>[a-z]{2,20})-?wise(?:\s+(?:also|too|please|pls))?)\s*[?!.]*$", re.IGNORECASE)
# What "only ..." may open with to say which rows count ("only the unapproved ones", "only full-time staff");
# anything else is a request of its own ("just do it").
_ROWS_LEAD = frozenset("the those these ones people employees staff women men managers contractors full-time "
                       "part-time permanent temporary new current active approved unapproved pending".split())


def _narrow(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    """The question last put whole to a function (sql-explorer's ask) again, broken down by what the
    fragment names ("... by reason") or kept to part of it ("just for Customer Support" swaps the
    department the question named; "only the unapproved ones" says which rows count)."""
    last = _last(state, by_name)
    m = NARROW.match(said)
    if last is None or m is None:
        return None
    record, tool = last
    whole = [n for n in tool.properties if takes_whole_request(tool.properties, n)]
    if len(whole) != 1 or not isinstance(record.args.get(whole[0]), str):
        return None
    question = record.args[whole[0]].rstrip(" ?!.")
    if m.group("by") is not None or m.group("wise") is not None:
        asked = f"{question}, broken down by {(m.group('by') or m.group('wise')).strip()}?"
    elif m.group("only") is not None:
        only = m.group("only").strip()
        swapped = _swapped(question, only)
        asked = f"{swapped}?" if swapped else f"{question}, only {only}?"
    else:
        rows = m.group("rows").strip()
        if not (rows.split()[0].casefold() in _ROWS_LEAD or rows[:1].isupper()):
            return None
        asked = f"{question}, only {rows}?"
    return FollowUp((Step(record.agent, record.function, {**record.args, whole[0]: asked}),), "same")


def _named(words: list[str]) -> list[tuple[int, int, bool]]:
    """The one run of capitalised words after the first word (a name: "Customer Support"), as a span."""
    runs: list[tuple[int, int, bool]] = []
    i = 1
    while i < len(words):
        if _capitalised_name(words[i]):
            j = i
            while j < len(words) and _capitalised_name(words[j]):
                j += 1
            runs.append((i, j, False))
            i = j
        else:
            i += 1
    return runs if len(runs) == 1 else []


def _capitalised_name(word: str) -> bool:
    """A word written with a capital that is part of a name, not "I" nor a month or a day."""
    low = word.casefold().strip(",?!.")
    return word[:1].isupper() and low not in ("i", "i'm", "i've", "i'd") and low not in MONTHS and low not in WEEKDAYS


def _swapped(question: str, fragment: str) -> str | None:
    """`question` with the preposition phrase `fragment` stands for replaced, or None when none fits."""
    new = fragment.split()
    if not new:
        return None
    prep = new[0].casefold() if new[0].casefold() in _PREPOSITIONS else None
    value = new[1:] if prep else new
    if not value:
        return None
    timed = any(_a_time(w) or w.casefold() in WEEKDAYS for w in value) or bool(_time_phrases(value))
    words = question.rstrip(" ?!.").split()
    ends = [w.casefold().strip(",?") for w in value if w.casefold().strip(",?") in _SUPERLATIVES]
    at = next((k for k, w in enumerate(words) if w.casefold() in _SUPERLATIVES), None)
    if ends and at is not None and len(value) <= MAX_SUPERLATIVE_WORDS:
        # "and the fewest?" after "which team had the most absences": the other end of the same question
        return " ".join([*words[:at], ends[-1], *words[at + 1:]]) + question.rstrip()[len(question.rstrip(" ?!.").rstrip()):]
    spans: list[tuple[int, int, bool]] = []  # (start, end) of each preposition's object, and whether it names a time
    for i, w in enumerate(words):
        if w.casefold() not in _PREPOSITIONS or (prep and w.casefold() != prep and not timed):
            continue
        j = i + 1
        while j < len(words) and words[j].casefold() not in _OBJECT_ENDS:
            j += 1
        if j > i + 1:
            spans.append((i + 1, j, any(_a_time(x) for x in words[i + 1 : j])))
    fitting = [sp for sp in spans if sp[2] == timed]
    if not prep and not timed and value[0][:1].isupper() and _named(words):
        fitting = _named(words)  # a name for a name: "what about Legal" after "... did Field Operations log in May"
    if not fitting and prep and not timed:
        return _swapped(question, " ".join(value))  # "and for finance" after "... in sales": the object, whatever its preposition
    if not fitting and timed and not prep:
        fitting = _time_phrases(words)  # "what about last year" after "... hires did we have this year"
    if not fitting and not timed:
        fitting = _named(words)  # "what about Human Resources" after "... did Customer Support have ..."
    if not fitting:
        return None
    a, b, _ = fitting[-1] if timed else fitting[0]
    year = next((int(w) for w in words[a:b] if re.fullmatch(r"(?:19|20)\d\d", w.strip(",?"))), None)
    if year is not None and _YEAR_BEFORE.fullmatch(" ".join(value).casefold()):
        value = [str(year - 1)]  # "what about the year before" after "... in 2024": 2023
    tail = question.rstrip()[len(question.rstrip(" ?!.").rstrip()):]
    return " ".join([*words[:a], *value, *words[b:]]) + tail


_YEAR_BEFORE = re.compile(r"(?:the )?(?:year before|previous year|prior year|year prior)")
_YEAR_OR_QUARTER = re.compile(r"(?:19|20)\d\d|q[1-4]|h[12]|fy\d\d(?:\d\d)?")


def _a_time(word: str) -> bool:
    """A word that names a time: "may", "yesterday", and a year or a quarter ("in 2024", "in Q3")."""
    bare = word.casefold().strip(",?!.")
    # (and a period said of itself: "the year before", "the previous quarter")
    return bare in TEMPORAL or bare in _PERIODS or _YEAR_OR_QUARTER.fullmatch(bare) is not None


# The ends of a ranking: a follow-up naming one asks the same question for it.
_SUPERLATIVES = frozenset("most fewest least highest lowest largest smallest biggest longest shortest top bottom "
                          "best worst".split())
MAX_SUPERLATIVE_WORDS = 4  # "and which had the least": a longer fragment says more than which end
_RELATIVE = frozenset("this last next past previous".split())
_PERIODS = frozenset("year month week quarter day weekend morning afternoon evening".split())


def _time_phrases(words: Sequence[str]) -> list[tuple[int, int, bool]]:
    """The spans of "this year", "last month" (a relative word and a period) in a question's words."""
    return [(i, i + 2, True) for i in range(len(words) - 1)
            if words[i].casefold() in _RELATIVE and words[i + 1].casefold().strip(",") in _PERIODS]


_WRAPPER_LEAD = frozenset("and now then ok okay so what how about do it that the same thing for on also again please".split())
_WRAPPER_TAIL = frozenset("too also again please then instead as well".split())


def _without_tail(x: str) -> str:
    """The value without a last word that only says how it was asked: "how about chicken tacos then"."""
    words = x.split()
    return " ".join(words[:-1]) if len(words) > 1 and words[-1].casefold().strip(".,!") in _WRAPPER_TAIL else x


def _bare_day(said: str) -> str | None:
    """The day a message names and nothing else, inside "and", "what about", "now do ... too": "and saturday?"."""
    words = [w.low for w in tokenize(prepare(said)) if w.kind != "punct"]
    while words and words[0] in _WRAPPER_LEAD:
        words = words[1:]
    while words and words[-1] in _WRAPPER_TAIL:
        words = words[:-1]
    if not words or not any(w in TEMPORAL or w in WEEKDAYS for w in words):
        return None  # "and bread" names no day; only a day word makes this a day
    return " ".join(words) if parse_moment(words, datetime.now()) is not None else None


def _replace(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime,
             replan: Replan | None = None) -> FollowUp | None:
    last = _last(state, by_name)
    if last is None:
        return None
    record, tool = last
    for i, pattern in enumerate(REPLACE):
        m = pattern.match(said)
        if m is None:
            continue
        x = m.group("x").strip()
        if record.undone:
            return None
        if len(x.split()) > 1 and x.split()[-1].casefold().strip(".,!") in _APOLOGIES:
            x = x.rsplit(" ", 1)[0].rstrip(" ,")  # "I meant paneer sorry"
        if i == 0:
            x = _NOT_THAT.sub("", x) or x  # "I meant tostadas not tortillas": what it was is no part of it
        typed = _typed_value(tool, record, x, now)
        if i >= _BARE_REPLACE and re.match(r"(?:and|also|plus|too|as well)\b", x, re.I):
            continue  # "sorry, and lemons": one more, not instead
        fixed = _fixed_value(tool, x)
        if fixed is not None and typed is None:
            # "actually, make it mexican" after Italian ideas: the look-up again with the cuisine swapped;
            # a listed value names its parameter, whatever else the word could start.
            step = Step(record.agent, record.function, {**record.args, fixed[0]: fixed[1]})
            inverse = inverse_step(record) if not tool.reads else None
            return FollowUp((inverse, step) if inverse is not None else (step,), "replace")
        if i >= _BARE_REPLACE and typed is None:
            if len(x.split()) > MAX_BARE_WORDS or _is_request(x, replan):
                continue  # "no, show my notes": a request of its own
        if i == _INSTEAD and x.split()[0].casefold() in _COMMAND_VERBS and _is_request(x, replan):
            continue  # "move it to 10 instead": a request of its own, said with "instead"
        param = typed[0] if typed else (_fillable(tool) or _only_text_said(tool, record))
        if param is None:
            return None
        old = record.args.get(param)
        value = typed[1] if typed else read_answer(_slot(tool, param), x, now)
        planned = replan(x) if replan is not None and not typed else None
        if planned is not None and len(planned.steps) == 1 and planned.pending is None and \
                planned.steps[0].name == record.name and param in planned.steps[0].args:
            value = planned.steps[0].args[param]  # "no, add oat milk instead": the value without the command
        if value in (None, [], ""):
            return None
        steps: list[Step] = []
        inverse = inverse_step(record)
        if isinstance(old, list) and old:
            gone = old[-1]
            if inverse is not None:
                kept = {k: ([v for v in val if _same_item(v, gone)] if isinstance(val, list) else val)
                        for k, val in inverse.args.items()}
                if any(isinstance(v, list) and v for v in kept.values()):
                    steps.append(Step(inverse.agent, inverse.function, kept))
            new = value if isinstance(value, list) else [value]
            steps.append(Step(record.agent, record.function, {**record.args, param: new}))
        else:
            # (what the call was about, named even where it changed nothing: "put the haircut on at 2" found
            # it already there, and "make that 3:30" moves that one)
            named = inverse if inverse is not None else inverse_step(record, changed_only=False)
            mover = _editor(record, tool, named, param, by_name) if typed else None
            if mover is not None and named is not None:
                # "actually make it 6pm" after adding an event: moved where it is (move_event with its
                # id), not taken off and made again.
                return FollowUp((Step(mover.agent, mover.function, {**named.args, param: value}),), "replace")
            if inverse is not None:
                steps.append(inverse)
            steps.append(Step(record.agent, record.function, {**record.args, param: value}))
        return FollowUp(tuple(steps), "replace")
    return None


def _editor(record: CallRecord, tool: Tool, inverse: Step | None, param: str,
            by_name: Mapping[str, Tool]) -> Tool | None:
    """The agent's function that changes `param` of what the last call made in place: it takes the
    value and what names the thing (the values its inverse is given, such as event_id) and is its
    own inverse (move_event undoes to move_event)."""
    if inverse is None or not inverse.args or tool.reads:
        return None
    for other in by_name.values():
        if other.agent != record.agent or other.function in (record.function, inverse.function) or other.reads:
            continue
        undo = other.undo
        if not isinstance(undo, Mapping) or undo.get("function") != other.function:
            continue
        if param in other.properties and all(k in other.properties for k in inverse.args):
            return other
    return None


def _is_request(x: str, replan: Replan | None) -> bool:
    if replan is None:
        return True  # no planner to tell: a bare value is not assumed
    planned = replan(x)
    return not planned.unmatched and bool(planned.steps or planned.pending is not None)


def _typed_value(tool: Tool, record: CallRecord, x: str, now: datetime) -> tuple[str, Any] | None:
    """The parameter of the last call whose kind `x` reads as wholly (a time, a day, a number), and its value.

    A bare time for a date-and-time parameter keeps the date already given: "make it 11am"
    moves Friday's 10:00 to Friday's 11:00, not to today.
    """
    for param in tool.properties:
        kind = _slot(tool, param).kind
        if kind not in _TYPED or param not in record.args:
            continue
        value = read_answer(_slot(tool, param), x, now)
        old = record.args.get(param)
        if value in (None, "", []) and kind == "moment":
            value = _bare_hour(x, old)
        if value in (None, "", []):
            continue
        if kind == "moment" and isinstance(value, str) and isinstance(old, str) and len(old) >= 10 and "T" in value:
            said = parse_moment([w.low for w in tokenize(prepare(x))], now)
            if said is not None and said.day is None:  # a time only: on the day already given
                value = old[:10] + value[10:]
        if kind == "moment" and isinstance(value, str) and "T" not in value and isinstance(old, str) and "T" in old:
            said = parse_moment([w.low for w in tokenize(prepare(x))], now)
            if said is not None and said.day is not None and said.clock is None:
                value = said.day.isoformat() + old[10:]  # "make it thursday": the time of day already given
        return param, value
    return None


# Saying the thing is not needed: "I already have bread, remove it", "no more apples", "we don't
# need the cheese anymore". Only an entry just shown or named counts (checked below).
NOT_NEEDED = re.compile(
    r"^(?:(?:oh|actually|wait|ok|okay),?\s+)?(?:i|we)\s+(?:already\s+|still\s+)?(?:have|got)\s+(?:the\s+|some\s+|enough\s+)?"
    r"(?P<x>[^,.!]+?)(?:\s+already)?(?:\s*[,.;!]?\s*(?:so\s+)?(?:please\s+)?(?:remove|take|delete|cross)\s+(?:it|them|that|those)"
    r"(?:\s+off)?(?:\s+please)?)?\s*[.!]*$|"
    r"^(?:and\s+)?no\s+more\s+(?P<y>[^,.!]+?)\s*(?:please)?\s*[.!]*$|"
    r"^(?:i|we)\s+(?:don't|do not|dont)\s+need\s+(?:the\s+|any\s+)?(?P<z>[^,.!]+?)(?:\s+any\s*more)?\s*[.!]*$",
    re.I,
)


def _remove(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    m = REMOVE.match(said) or NOT_NEEDED.match(said)
    if m is None:
        return None
    x = next((v for v in m.groupdict().values() if v), "").strip()
    if not x or x.lower() in ("it", "that", "them", "those", "this"):
        return None
    known = _known_entities(state)
    wanted = read_answer(SlotType("list", required=True), x, now) or [x]
    picked: list[tuple[str, str]] = []  # (agent, entity)
    for want in wanted:
        match = next(((agent, label(e)) for agent, e in known if _same_item(label(e), str(want))), None)
        if match is None:
            return None  # something not just shown: a request of its own, for the planner
        picked.append(match)
    agents = {a for a, _ in picked}
    if len(agents) != 1:
        return None
    agent = agents.pop()
    remover = _remover(agent, by_name)
    if remover is None:
        # "tick off the swimming lessons" after the to-dos were read: an agent with no list to take things
        # off marks one entry done by its words, or deletes it by its id
        finisher = _finisher(agent, by_name) if len(picked) == 1 else None
        if finisher is not None:
            return FollowUp((Step(agent, finisher[0].function, {finisher[1]: picked[0][1]}),), "remove")
        entity = next((e for a, e in known if a == agent and label(e) == picked[0][1]), None) if len(picked) == 1 else None
        removal = _removal(agent, entity, by_name) if entity is not None else None
        return FollowUp((removal,), "remove") if removal is not None else None
    param = _fillable(remover)
    if param is None:
        return None
    return FollowUp((Step(agent, remover.function, {param: [e for _, e in picked]}),), "remove")


def known_entities(state: DialogueState) -> list[tuple[str, Any]]:
    """The entries the conversation has shown or named, newest first, with their agents."""
    return _known_entities(state)


def _known_entities(state: DialogueState) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if state.shown is not None:
        out += [(state.shown.agent, e) for e in state.shown.entities]
    for record in reversed(state.calls):
        for value in record.args.values():
            if isinstance(value, list):
                out += [(record.agent, v) for v in value if isinstance(v, str)]
    return out


def _remover(agent: str, by_name: Mapping[str, Tool]) -> Tool | None:
    """The agent's function that takes things off: one that reverses an adding function, named like removing."""
    tools = [t for t in by_name.values() if t.agent == agent]
    targets = {t.undo["function"] for t in tools if isinstance(t.undo, Mapping) and isinstance(t.undo.get("function"), str)}
    found = [t for t in tools if t.function in targets and any(_slot(t, n).kind == "list" for n in t.properties)
             and _removes(t)]
    return found[0] if found else None


_FINISHING = ("finish", "complete", "done", "tick", "check_off")


def _finisher(agent: str, by_name: Mapping[str, Tool]) -> tuple[Tool, str] | None:
    """The agent's one function that marks an entry done by its words (notes' finish_todo), and that parameter."""
    found = [(t, t.required[0]) for t in by_name.values()
             if t.agent == agent and any(w in t.function.lower() for w in _FINISHING)
             and len(t.required) == 1 and _slot(t, t.required[0]).kind == "text"]
    return found[0] if len(found) == 1 else None


def _removes(tool: Tool) -> bool:
    return any(w in tool.function.lower() for w in _REMOVER_WORDS if w != "clear")


def _removal(agent: str, entity: Any, by_name: Mapping[str, Tool]) -> Step | None:
    """The call that takes this one entry off: a remover given it in a list ("bread"), or a deleting
    function given its id or name (a note's note_id)."""
    remover = _remover(agent, by_name)
    param = _fillable(remover) if remover is not None else None
    if remover is not None and param is not None:
        return Step(remover.agent, remover.function, {param: [label(entity)]})
    if not isinstance(entity, Mapping):
        return None
    for tool in by_name.values():
        if tool.agent != agent or not _removes(tool):
            continue
        if len(tool.required) == 1:
            need = tool.required[0]
            if need in entity:
                return Step(tool.agent, tool.function, {need: entity[need]})
            if need.endswith("_id") and "id" in entity:
                return Step(tool.agent, tool.function, {need: entity["id"]})
        elif not tool.required and "id" in entity:
            # remove_event(event_id=None, title=None): the entry's id names it exactly.
            ids = [n for n in tool.properties if n.endswith("_id")]
            if len(ids) == 1:
                return Step(tool.agent, tool.function, {ids[0]: entity["id"]})
    return None


# Words that may stand beside an ordinal in a message that only points at an entry of the
# list just shown: "tell me more about the second one", "what's in the first one?", "open number 2".
_POINTING = frozenset(
    "the a one ones please me show open tell more about details detail of on what is in recipe note item event idea "
    "entry number option no go with let us i will take want how do make cook get give see view read that it can you "
    "could would and ok okay then pick choose select just like sounds good looks lets let's s "
    "info information ingredients steps for whats thing things need".split()
)
# Verbs that take the entry off instead of opening it: "remove the first one", "take the last one off".
_TAKING_OFF = frozenset("remove delete drop cross scratch tick check strike knock ditch nix bin lose rid off out".split())
MAX_POINTING_WORDS = 9
MAX_ORDINAL_WORDS = 12  # "the first one sounds good, how do i make it": every word but the ordinal points


def _ordinal(said: str) -> tuple[str, bool] | None:
    """The ordinal a short message points with ("second", "last", "2") and whether it takes the entry off."""
    words = [w for w in tokenize(prepare(said)) if w.kind in ("word", "num", "ord")]
    if not words or len(words) > MAX_ORDINAL_WORDS:
        return None
    found: list[str] = []
    taking = False
    for i, w in enumerate(words):
        low = w.low
        if low in ORDINALS or low == "last" or re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)", low):
            found.append(low)
        elif low in ("top", "bottom") and i + 1 < len(words) and words[i + 1].low in ("one", "recipe", "item", "entry", "idea"):
            found.append("first" if low == "top" else "last")  # "the top one", "the bottom one"
        elif w.kind == "num" and re.fullmatch(r"\d{1,2}", low) and (
                len(words) == 1 or (i and words[i - 1].low in ("number", "no", "option", "recipe", "item", "entry"))):
            found.append(low)
        elif low in _TAKING_OFF or low in ("take", "get", "rid") and any(x.low in ("off", "out", "rid") for x in words):
            taking = taking or low in _TAKING_OFF or low in ("off", "out", "rid")
        elif low not in _POINTING:
            return None  # a word of its own: a request, for the planner
    if len(found) != 1:
        return None
    return found[0], taking


def _pick(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    if state.shown is None or not state.shown.entities:
        return None
    m = PICK.match(said)
    pointed = (m.group("n").lower(), False) if m is not None else _ordinal(said)
    if pointed is None:
        return _pick_by_words(said, state, by_name)
    word, taking = pointed
    entities = state.shown.entities
    if word == "last":
        n = len(entities)
    elif word in ORDINALS:
        n = ORDINALS[word]
    else:
        n = int(re.sub(r"\D", "", word) or 0)
    if taking and 1 <= n <= len(entities):
        step = _removal(state.shown.agent, entities[n - 1], by_name)
        if step is None:
            return FollowUp((), "pick", f"I can't take entries off that list; number {n} is {label(entities[n - 1])}.")
        return FollowUp((step,), "remove")
    if not 1 <= n <= len(entities):
        return FollowUp((), "pick", f"The last list had {len(entities)} entries; say a number from 1 to {len(entities)}.")
    entity = entities[n - 1]
    opener = _opener(state.shown.agent, entity, by_name)
    if opener is None:
        return FollowUp((), "pick", f"Number {n} is {label(entity)}.")
    tool, param, value = opener
    return FollowUp((Step(tool.agent, tool.function, {param: value}),), "pick")


# "the pie one", "that chickpea one please": an entry of the list just shown, named by a word of it.
THE_WORD_ONE = re.compile(r"^(?:ok,?\s+|and\s+)?(?:the|that)\s+(?P<w>[\w'-]+(?:\s+[\w'-]+)?)\s+one"
                          r"(?:\s+(?:pls|please|then|thanks))?[\s.!?]*$", re.IGNORECASE)


def _pick_by_words(said: str, state: DialogueState, by_name: Mapping[str, Tool]) -> FollowUp | None:
    m = THE_WORD_ONE.match(said)
    if m is None or state.shown is None:
        return None
    wanted = set(m.group("w").casefold().split())
    fits = [e for e in state.shown.entities if wanted <= set(re.findall(r"[\w'-]+", label(e).casefold()))]
    if len(fits) != 1:
        return None  # none or several hold the word: the planner reads it
    opener = _opener(state.shown.agent, fits[0], by_name)
    if opener is None:
        return None
    tool, param, value = opener
    return FollowUp((Step(tool.agent, tool.function, {param: value}),), "pick")


_THE_THING = frozenset({"recipe", "steps", "it", "method", "instructions", "full", "whole", "are"})


def _open_last(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    """ "Show me the recipe", "what are the steps?" after a dinner was planned: the thing the last
    result named (its nested object, such as the recipe), opened with the agent's reading function."""
    words = [w.low for w in tokenize(prepare(said)) if w.kind == "word"]
    if not words or len(words) > MAX_POINTING_WORDS or not set(words) & (_THE_THING - {"are", "full", "whole"}):
        return None
    if not set(words) <= _POINTING | _THE_THING:
        return None
    last = _last(state, by_name)
    if last is None or not isinstance(last[0].result, Mapping):
        return None
    record = last[0]
    for value in record.result.values():
        if isinstance(value, Mapping):
            opener = _opener(record.agent, value, by_name)
            if opener is not None:
                tool, param, arg = opener
                return FollowUp((Step(tool.agent, tool.function, {param: arg}),), "pick")
    return None


def _opener(agent: str, entity: Any, by_name: Mapping[str, Tool]) -> tuple[Tool, str, Any] | None:
    """A read-only function of the agent that takes this entity as its one required value ("get_recipe(name)")."""
    if not isinstance(entity, Mapping):
        return None
    for tool in by_name.values():
        if tool.agent != agent or not (tool.reads or tool.undo is False) or len(tool.required) != 1:
            continue
        param = tool.required[0]
        if param in entity:
            return tool, param, entity[param]
    return None


def _same_item(a: Any, b: Any) -> bool:
    x, y = str(a).casefold().strip(), str(b).casefold().strip()
    if x == y or x.rstrip("s") == y.rstrip("s"):
        return True
    return len(x) > 3 and len(y) > 3 and fuzz.ratio(x, y) >= 88


def _only_value(x: str, planned: Plan, by_name: Mapping[str, Tool]) -> bool:
    """Whether the plan for `x` read it as nothing but a value: "dish soap" read as a recipe
    ingredient ("soap") is a bare value, no request of its own; "what's on my calendar" is one.
    The words the plan did not take as a value must not be words of that function's own
    examples (its request words: "what", "calendar")."""
    words = {w.low for w in tokenize(prepare(x)) if w.kind == "word"}
    if not words or len(planned.steps) != 1:
        return False
    step = planned.steps[0]
    got: set[str] = set()
    for value in step.args.values():
        values = value if isinstance(value, list) else [value]
        got |= {w.low for v in values if isinstance(v, str) for w in tokenize(prepare(v)) if w.kind == "word"}
    if not words & got:
        return False
    if len(words) <= MAX_BARE_WORDS and not words & REQUEST_WORDS:
        return True  # "dish soap": a noun phrase with no question or command word is a value
    tool = by_name.get(step.name)
    said = " ".join([*(tool.examples if tool else ()), tool.summary if tool else ""])
    own = {w.low for w in tokenize(prepare(said)) if w.kind == "word"}
    return not (words - got) & own


# Question and command words: a follow-up's words with one of these make a request of their own
# ("and what's on my calendar", "and show me recipes"); without, they are a value ("and dish soap").
REQUEST_WORDS = frozenset("what what's whats when where which who how show tell find list plan suggest give read search "
                          "add put remove delete cancel move remind schedule book check is are do does can could "
                          "would will any my me".split())


# Words that send a follow-up to another place than the last call's ("also remind me to ...",
# "and on my shopping list"): with none of them, "also buy a card" after a to-do is another to-do.
_ELSEWHERE = frozenset("list lists calendar schedule note notes grocery groceries shopping remind reminder recipe "
                       "recipes dinner jot memo diary todo to-do todos to-dos task tasks".split())


def _free_text_goes_on(tool: Tool, param: str, x: str, planned: Plan) -> bool:
    """After a call whose value is free text (a to-do, a note), "also <words>" is one more such value
    unless the words name another place: the text holds verbs ("buy a card"), so another agent's
    reading of them is no request of its own."""
    if _slot(tool, param).kind != "text" or planned.steps[0].agent == tool.agent:
        return False
    words = {w.low for w in tokenize(prepare(x)) if w.kind == "word"}
    return not words & (_ELSEWHERE | {planned.steps[0].agent.casefold()})


def _fixed_value(tool: Tool, x: str) -> tuple[str, str] | None:
    """The parameter with listed values (a cuisine, a diet) that `x` is one of, and the value."""
    value = x.strip().rstrip("?!. ").casefold()
    for name, schema in tool.properties.items():
        if isinstance(schema, Mapping) and value in _allowed(schema):
            return name, value
    return None


def _bare_hour(x: str, old: Any) -> str | None:
    """ "make it 4" for a time already given: that hour on the same day, morning or afternoon
    whichever is nearer the old time (14:00 -> 16:00, 09:00 -> 10:00 for "10")."""
    said = x.strip().rstrip("?!. ").split()
    if len(said) != 1 or not said[0].isdigit() or not isinstance(old, str) or len(old) < 16 or old[10] != "T":
        return None
    hour = int(said[0])
    if not 1 <= hour <= 12:
        return None
    try:
        was = int(old[11:13])
    except ValueError:
        return None
    options = [hour % 12, hour % 12 + 12]
    best = min(options, key=lambda h: abs(h - was))
    return f"{old[:11]}{best:02d}:00{old[16:]}"


def removes_looked_up(said: str, state: DialogueState, tools: Sequence[Tool]) -> Step | None:
    """ "Cancel it" / "delete that" straight after a look-up that showed one entry ("when is my next
    dentist?"): that entry taken off with the agent's remover. An undo passes reads over; a pronoun
    after a look-up points at what it showed."""
    if not state.calls:
        return None
    by_name = {t.name: t for t in tools}
    record = state.calls[-1]
    tool = by_name.get(record.name)
    if record.is_undo or tool is None or not tool.reads or not isinstance(record.result, Mapping):
        return None
    entities = [v for v in record.result.values() if isinstance(v, Mapping) and "id" in v]
    if len(entities) != 1:
        return None
    return _removal(record.agent, entities[0], by_name)


def _named_replace(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime,
                   replan: Replan | None) -> FollowUp | None:
    """ "Change milk to almond milk", "almond milk instead of milk", "I meant almond milk not milk": a
    correction that names the old value too. It is one only when the old value is the last call's."""
    # Imported here: a line more at the top would move the patterns tests/security names by line.
    from dreamer.sidekick.dialogue.rephrase import named_correction
    found = named_correction(said)
    last = _last(state, by_name)
    if found is None or last is None:
        return None
    old, new = found
    record = last[0]
    given = [v for value in record.args.values() for v in (value if isinstance(value, list) else [value])]
    if not any(isinstance(v, str) and (_same_item(v, old) or old.casefold() in v.casefold()) for v in given):
        return None
    return _replace(f"make that {new}", state, by_name, now, replan)


# Words around a listed value that only narrow the look-up just made: "anything vegetarian?",
# "only vegetarian ones please", "make them vegan".
_NARROWING = frozenset("anything any only ones one them those these it just please make something some what about "
                       "how and the that are is which what's options ideas recipes ones also but".split())


def _refine(said: str, state: DialogueState, by_name: Mapping[str, Tool]) -> FollowUp | None:
    """The last look-up again, narrowed by a listed value of one of its parameters (a diet, a cuisine)."""
    last = _last(state, by_name)
    if last is None or not last[1].reads:
        return None
    record, tool = last
    words = [w.low for w in tokenize(prepare(said)) if w.kind == "word"]
    rest = [w for w in words if w not in _NARROWING]
    if not rest or len(words) > MAX_POINTING_WORDS:
        return None
    fixed = _fixed_value(tool, " ".join(rest))
    if fixed is None:
        return None
    return FollowUp((Step(record.agent, record.function, {**record.args, fixed[0]: fixed[1]}),), "same")


def _not_wanted(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    """ "Actually no eggs", "forget the eggs", "eggs are not needed" right after the eggs were added or
    shown: taken off (only an entry just shown or named counts; anything else is left to the planner)."""
    from dreamer.sidekick.dialogue.rephrase import unwanted
    x = unwanted(said)
    return _remove(f"remove {x}", state, by_name, now) if x else None
