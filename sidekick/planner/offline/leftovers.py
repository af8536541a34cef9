"""Giving the words a pattern left over to the function's other parameters.

After an alignment, a day or time said anywhere, a number next to a word of a
parameter's name ("in 20 minutes"), an enumeration value or one of a text
parameter's example values ("a vegetarian dinner"), an address, or a
clause naming a yes/no parameter ("... and add the ingredients to my grocery
list" sets add_to_grocery_list) still count. Each function changes `args`,
`spans` and `explained` in place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dreamer.sidekick.planner.language import dates
from dreamer.sidekick.planner.language.lexicon import VERB_HEADS
from dreamer.sidekick.planner.language.slots import SlotType
from dreamer.sidekick.planner.offline.index import ToolInfo
from dreamer.sidekick.planner.offline.request import Request, Tok

MAX_LEFTOVER_SPAN = 7


@dataclass
class _Left:
    """The words of toks[a:a+n] and what leaving each unexplained still costs (0: explained)."""

    req: Request
    info: ToolInfo
    a: int
    explained: list[float]
    args: dict[str, Any]
    spans: dict[str, tuple[int, int]]

    @property
    def toks(self) -> list[Tok]:
        return self.req.toks[self.a : self.a + len(self.explained)]

    def runs(self) -> list[tuple[int, int]]:
        """Stretches of unexplained words, broken at punctuation."""
        out: list[tuple[int, int]] = []
        start = None
        toks, explained, n = self.toks, self.explained, len(self.explained)
        for j in range(n + 1):
            free = j < n and explained[j] > 0
            if free and start is None:
                start = j
            if start is not None and (not free or toks[j].sep in _BREAKS):
                out.append((start, j + 1 if free else j))
                start = None
        return out

    def take(self, name: str, value: Any, s: int, e: int, words: Iterable[int] | None = None) -> None:
        self.args[name], self.spans[name] = value, (self.a + s, self.a + e)
        for j in words if words is not None else range(s, e):
            self.explained[j] = 0.0


_BREAKS = frozenset({",", ";", ".", "!", "?"})


def fill_leftovers(
    req: Request, info: ToolInfo, a: int, explained: list[float], args: dict[str, Any],
    spans: dict[str, tuple[int, int]],
) -> None:
    """Give words no pattern word or slot took to parameters whose type they fit."""
    if not any(explained):
        return
    left = _Left(req, info, a, explained, args, spans)
    for name, slot in info.slots.items():
        if name in args:
            continue
        if slot.kind in ("day", "moment"):
            _time(left, name, slot)
        elif slot.kind in ("int", "number"):
            _number(left, name, slot)
        elif slot.kind == "enum":
            _choice(left, name, slot)
        elif slot.kind == "url":
            _address(left, name, slot)
        elif slot.kind == "bool":
            _flag(left, name)
        elif slot.kind == "text" and slot.choices:
            _choice(left, name, SlotType("enum", slot.choices, required=slot.required))
        elif slot.kind == "text" and name in info.leads:
            _led(left, name, slot)


def _time(left: _Left, name: str, slot: SlotType) -> None:
    if any(left.info.slots[p].kind in ("day", "moment") for p in left.args):
        return  # a second day or time from leftovers would be a guess ("end" after "start")
    for s, e in left.runs():
        found = _longest(left.req, slot, left.a, s, e)
        if found:
            (fs, fe), value = found
            left.take(name, value, fs, fe)
            return


def _number(left: _Left, name: str, slot: SlotType) -> None:
    """A number next to a word of the parameter's name ("20 minutes"), or the only number parameter."""
    words = left.info.param_words.get(name, frozenset())
    toks, explained, n = left.toks, left.explained, len(left.explained)
    numeric = [p for p, s in left.info.slots.items() if s.kind in ("int", "number") and p not in left.args]
    for j in range(n):
        if not explained[j]:
            continue
        got = left.req.read(slot, left.a + j, left.a + j + 1)  # cached: many patterns ask
        if got is None:
            continue
        value = got[0]
        near = [k for k in (j - 1, j + 1) if 0 <= k < n and explained[k] and toks[k].canon in words]
        if near or len(numeric) == 1:
            left.take(name, value, j, j + 1, [j, *near])
            return


def _choice(left: _Left, name: str, slot: SlotType) -> None:
    for s, e in left.runs():
        for size in (3, 2, 1):
            for start in range(s, e - size + 1):
                got = left.req.read(slot, left.a + start, left.a + start + size)
                if got and got[1] >= 0.9:
                    left.take(name, got[0], start, start + size)
                    return


MAX_LED_WORDS = 4  # "with chicken thighs": a value led by its small word is a few words


def _led(left: _Left, name: str, slot: SlotType) -> None:
    """Words left over after the small word the function's examples put before this parameter: "a Thai recipe
    with chicken" once "a {cuisine} recipe" took the rest."""
    leads = left.info.leads[name]
    for s, e in left.runs():
        if left.toks[s].canon in leads and 2 <= e - s <= MAX_LED_WORDS + 1 and all(
                t.kind == "word" for t in left.toks[s + 1:e]):
            got = left.req.read(slot, left.a + s + 1, left.a + e)
            if got and got[0]:
                left.take(name, got[0], s, e)
                return


def _address(left: _Left, name: str, slot: SlotType) -> None:
    for j, t in enumerate(left.toks):
        if left.explained[j] and t.kind == "url":
            got = left.req.read(slot, left.a + j, left.a + j + 1)
            if got:
                left.take(name, got[0], j, j + 1)
                return


def _flag(left: _Left, name: str) -> None:
    """A clause that names a yes/no parameter sets it: true, or false when the clause negates."""
    words = left.info.param_words.get(name, frozenset())
    if not words:
        return
    lex = left.req.lex
    toks = left.toks
    need = len(words) if len(words) == 1 else max(2, math.ceil(0.6 * len(words)))
    verb = lex.canon_word(name.split("_")[0])
    for s, e in left.runs():
        clause = toks[s:e]
        if len({w for w in words if any(w in t.alts for t in clause)}) < need:
            continue
        negated = any(t.canon in lex.negations for t in clause) or _keeps_away(clause)
        if verb in VERB_HEADS and not any(verb in t.alts for t in clause) and not negated:
            continue  # "add_to_grocery_list" is set by "and add the ingredients", not by "on the shopping list"
        # (but "don't touch the shopping list", "leave my grocery list alone" say no to it without its verb)
        # The clause is about this parameter: its own words, small words, "it"/"them", and words
        # the function's description uses ("the ingredients") are accounted for; others are not.
        ok = (words | lex.fillers | lex.pronouns | lex.negations | lex.split_words | left.info.description_words
              | _KEEP_AWAY)
        about = [s + i for i, t in enumerate(clause) if t.canon in ok or any(alt in words for alt in t.alts)]
        left.take(name, not negated, s, e, about)
        return


# "leave my grocery list alone", "hands off the shopping list": saying no to a thing without "not".
_KEEP_AWAY = frozenset({"leave", "alone", "touch", "hands", "off", "untouched", "be"})


def _keeps_away(clause: Sequence[Tok]) -> bool:
    said = {t.fix for t in clause} | {t.canon for t in clause}
    return ("leave" in said and ("alone" in said or "untouched" in said or "be" in said)) or {"hands", "off"} <= said


def _longest(req: Request, slot: SlotType, a: int, s: int, e: int) -> tuple[tuple[int, int], Any] | None:
    for size in range(min(e - s, MAX_LEFTOVER_SPAN), 0, -1):
        for start in range(s, e - size + 1):
            got = req.read(slot, a + start, a + start + size)
            if got is not None:
                return (start, start + size), got[0]
    return None


# Words that change which day the words after them name ("next friday" on a Friday is a week on).
DAY_MODIFIERS = frozenset({"next", "this", "coming", "following"})


def widen_days(req: Request, info: ToolInfo, a: int, explained: list[float], args: dict[str, Any],
               spans: dict[str, tuple[int, int]]) -> None:
    """A day or time value takes an unexplained "next"/"this" just before it when that changes the day.

    The alignment may leave such a word out of the value: it weighs little, and leaving it out
    costs less than reading it with a lower quality. But "next friday" said on a Friday is not today.
    """
    for name, (k, j) in list(spans.items()):
        slot = info.slots[name]
        if slot.kind not in ("day", "moment") or k <= a or explained[k - a - 1] <= 0:
            continue
        if req.toks[k - 1].fix not in DAY_MODIFIERS:
            continue
        got = req.read(slot, k - 1, j)
        if got is None or got[0] == args.get(name):
            continue
        args[name], spans[name] = got[0], (k - 1, j)
        explained[k - a - 1] = 0.0


# What names a list parameter of labels at the end of free text ("..., tag it admin", "... tagged
# work and travel", "... with the label urgent"): the parameter's own name, as a noun or a verb.
_LABEL_PARAMS = {"tags": "tag", "labels": "label"}
# Each part is a fixed word or one space, so a try at each position reads a bounded number of
# characters: no backtracking on long input (tests/security/test_regex_backtracking.py). The
# labels themselves are what follows, split without a regular expression.
_LABEL_CLAUSES = {
    stem: re.compile(
        rf"(?:, ?|; ?| )(?:and )?(?:please )?(?:{stem}(?:ged|led)?|with (?:the |a )?{stem}s?|as a {stem}) "
        rf"(?:(?:it|this|that|them) )?(?:(?:as|with) )?(?:the )?(?:{stem}s? )?",
        re.IGNORECASE,
    )
    for stem in _LABEL_PARAMS.values()
}
MAX_LABELS_CHARS = 200
_LABEL_WORD = re.compile(r"[\w-]{1,40}")


def _labels(rest: str) -> list[str] | None:
    """ "work and travel", "home, urgent": single-word labels and nothing else, or None."""
    parts = [p.strip() for p in rest.rstrip(".! ").replace(" and ", ",").split(",")]
    if not parts or not all(_LABEL_WORD.fullmatch(p) for p in parts):
        return None
    return [p.lower() for p in parts]


_HASHTAG = re.compile(r"(?<![\w#])#([A-Za-z][\w-]{0,39})")


def labels_from_text(info: ToolInfo, args: dict[str, Any]) -> None:
    """Labels said in a text value go to the function's list of labels (`tags`, `labels`).

    "note try the new ramen place #food" and "add a note renew the passport, tag it admin":
    the text keeps its hashtags (they are the note's words) but loses a trailing tagging clause,
    which is an instruction, not part of the note.
    """
    for param, stem in _LABEL_PARAMS.items():
        slot = info.slots.get(param)
        if slot is None or slot.kind != "list" or args.get(param):
            continue
        for name, value in list(args.items()):
            if info.slots[name].kind != "text" or not isinstance(value, str):
                continue
            value = " ".join(value.split())
            labels: list[str] = []
            for clause in _LABEL_CLAUSES[stem].finditer(value):
                # Labels are a few words: a longer rest is not read (nor is its reading quadratic).
                rest = value[clause.end():]
                said = _labels(rest) if clause.start() > 0 and len(rest) <= MAX_LABELS_CHARS else None
                if said:
                    labels = said
                    args[name] = value[: clause.start()].rstrip(" ,;")
                    break
            labels += [t.lower() for t in _HASHTAG.findall(value) if t.lower() not in labels]
            if labels:
                args[param] = labels
                break


def carve_times(req: Request, info: ToolInfo, args: dict[str, Any], spans: dict[str, tuple[int, int]]) -> None:
    """A day or time said inside free text meant for another parameter moves to its own parameter.

    "add flight to Berlin on friday at 6am to my calendar" fills the title with
    everything before "to my calendar"; the start is the end of that run.
    """
    for name, slot in info.slots.items():
        if name in args or slot.kind not in ("day", "moment") or not slot.required:
            continue
        # A day or time given to an optional parameter while a required one has none (an "end"
        # but no "start") belongs to the required one.
        spare = next((p for p, s in info.slots.items() if p in args and s.kind == slot.kind and not s.required), None)
        if spare is not None:
            args[name], spans[name] = args.pop(spare), spans.pop(spare)
            continue
        for text_name, (k, j) in list(spans.items()):
            text_slot = info.slots.get(text_name)
            if text_slot is None or text_slot.kind != "text" or j - k < 2:
                continue
            cut = None
            for s in range(k + 1, j):  # longest ending first
                got = req.read(slot, s, j)
                if got is not None:
                    cut = ((s, j), (k, s), got[0])
                    break
            if cut is None:
                for e in range(j - 1, k, -1):  # then the longest beginning
                    got = req.read(slot, k, e)
                    if got is not None:
                        cut = ((k, e), (e, j), got[0])
                        break
            if cut is None:
                continue
            (ts, te), (rs, re_), value = cut
            rest = req.read(text_slot, rs, re_)
            if rest is None:
                continue
            args[name], spans[name] = value, (ts, te)
            args[text_name], spans[text_name] = rest[0], (rs, re_)
            break


def share_days(req: Request, info: ToolInfo, args: dict[str, Any], spans: dict[str, tuple[int, int]]) -> None:
    """"from 2pm to 3pm tomorrow": a time said without a day takes the day said with the other one."""
    said = {}
    for name, slot in info.slots.items():
        if slot.kind == "moment" and name in spans:
            k, j = spans[name]
            moment = dates.parse_moment([t.fix for t in req.toks[k:j]], req.now)
            if moment is not None:
                said[name] = moment
    days = {m.day for m in said.values() if m.day is not None}
    if len(days) != 1:
        return
    day = days.pop()
    for name, moment in said.items():
        if moment.day is None and moment.clock is not None:
            args[name] = dates.moment_value(dates.Moment(day, moment.clock), req.now)
