"""Fitting one pattern to part of a message, and scoring the fit.

The fit is a dynamic-programming alignment, in order, of the pattern's words and
slots to the message's words: a pattern word may match a message word (exactly,
as a synonym, or as a likely typo), be missing, or a message word may be extra;
a slot takes a run of words that reads as a value of its type. Reordered
patterns (index.py) cover other word orders. What the alignment leaves over is
then offered to the function's other parameters: a day or time anywhere ("add
lunch with Sam to my calendar, friday at noon"), a number next to a word of the
parameter's name ("in 20 minutes"), and a clause naming a yes/no parameter
("... and add the ingredients to my grocery list" sets add_to_grocery_list).

The score, in [0, 1], is how much of the pattern was found times how much of
the message was explained, with a discount for each required parameter still
missing (the planner then asks for it rather than guessing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dreamer.sidekick.planner.offline.index import (
    FREE_SLOT_CREDIT,
    SLOT_CREDIT,
    STRAY_EXTRA,
    STRAY_FREE,
    TRAILING,
    Index,
    Pattern,
    ToolInfo,
)
from dreamer.sidekick.planner.offline.request import Request
from dreamer.sidekick.planner.language import dates
from dreamer.sidekick.planner.language.slots import SlotType, match_choice, parse_number

LIT_MISS = 1.0  # cost of a pattern word not found, times its weight
SLOT_FILL = 0.6  # gain of filling a slot
SLOT_MISS = 0.6  # cost of leaving a slot of the pattern empty when its parameter is required
SLOT_MISS_OPTIONAL = 0.3  # ... and when it is not
# Cost of a slot taking a word, times the word's weight: one of this function's own example
# words, or a word another function's examples use. Lists of things rarely hold command words;
# free text (a note, a title) often does.
OWN_WORD = {"text": 0.4, "list": 0.6}
KNOWN_WORD = {"text": 0.3, "list": 0.6}
OTHER_KIND = 0.6
DESCRIBED = STRAY_EXTRA  # an extra word the function's description uses costs this fraction
MISSING_FACTOR = 0.9  # score factor per required parameter still missing
FREE_FILL = STRAY_FREE  # words explained only by free text count this much as unexplained
TIME_IN_TEXT = 1.5  # cost of free text swallowing "friday" or "3pm" when the function takes a day or time
TIME_IN_LIST = 0.5  # ... of a list of things swallowing it
DANGLING_COST = 0.3  # a value rarely ends in a preposition: "flight to Berlin on"
MAX_LEFTOVER_SPAN = 7
# A value rarely ends in a word that points at what follows ("flight to Berlin on", "haircut next"),
# or starts with a preposition the phrase around it owns ("search [for] pasta").
DANGLING = frozenset({"on", "at", "for", "to", "from", "by", "in", "with", "of", "until", "and", "next", "this",
                      "coming", "last", "the", "a", "an", "my"})
LEADING = frozenset({"on", "at", "for", "to", "from", "by", "in", "with", "of", "about", "into"})
LEADING_COST = 0.2

_SKIP, _EXTRA, _MATCH, _SLOT = 0, 1, 2, 3


@dataclass
class Match:
    pattern: Pattern
    tool: int
    a: int
    b: int
    score: float
    args: dict[str, Any]
    missing: list[str]
    unexplained: float  # weight of content words nothing accounts for, or that a slot took unwillingly
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        """Every content word is accounted for and the pattern was largely found."""
        return self.unexplained < 0.3 and self.score >= 0.62


@dataclass
class _Frame:
    """Per (function, span): what each word costs left over, and running sums for slot costs."""

    xcost: list[float]
    own: list[float]
    known: list[float]
    tw: list[float]
    timed: list[float]
    dangling: list[bool]
    leading: list[bool]


def _frame(index: Index, req: Request, info: ToolInfo, tool: int, a: int, b: int) -> _Frame:
    key = (tool, a, b)
    found = req.frames.get(key)
    if found is not None:
        return found
    toks = req.toks[a:b]
    desc = info.description_words
    own_words = info.words
    known_words = index.known
    weights = index.weights
    own = [0.0]
    known = [0.0]
    tw = [0.0]
    timed = [0.0]
    for t in toks:
        # A typo of a known word counts as that word, as much as it is likely to be it.
        o = k = 0.0
        for alt, sim in t.alts.items():
            if alt in own_words:
                o = max(o, weights.get(alt, 0.0) * sim)
            elif alt in known_words:
                k = max(k, weights.get(alt, 0.0) * sim)
        own.append(own[-1] + o)
        known.append(known[-1] + k)
        tw.append(tw[-1] + t.weight)
        timed.append(timed[-1] + (1.0 if t.temporal else 0.0))
    frame = _Frame(
        xcost=[t.weight * (DESCRIBED if t.canon in desc else 1.0) for t in toks],
        own=own, known=known, tw=tw, timed=timed,
        dangling=[t.fix in DANGLING for t in toks],
        leading=[t.fix in LEADING for t in toks],
    )
    req.frames[key] = frame
    return frame


def align(index: Index, req: Request, pattern: Pattern, a: int, b: int) -> Match | None:
    """The best in-order fit of `pattern` to req.toks[a:b], post-processed and scored."""
    toks = req.toks[a:b]
    n = len(toks)
    if n == 0:
        return None
    info = index.tools[pattern.tool]
    f = _frame(index, req, info, pattern.tool, a, b)
    xcost, own, known, tw, timed, dangling, leading = f.xcost, f.own, f.known, f.tw, f.timed, f.dangling, f.leading

    def slot_cost(slot: SlotType, k: int, j: int, q: float) -> float:
        """What filling `slot` with toks[k:j] costs beyond the gain of filling it."""
        kind = slot.kind
        cost = (1 - q) * (tw[j] - tw[k])
        cost += OWN_WORD.get(kind, OTHER_KIND) * (own[j] - own[k]) + KNOWN_WORD.get(kind, OTHER_KIND) * (known[j] - known[k])
        if kind == "text" and info.has_time:
            cost += TIME_IN_TEXT * (timed[j] - timed[k])
        elif kind == "list":
            cost += TIME_IN_LIST * (timed[j] - timed[k])
        if kind in ("text", "list"):
            if dangling[j - 1]:
                cost += DANGLING_COST
            if leading[k]:
                cost += LEADING_COST
        return cost

    # D[i][j]: the best fit of the first i elements to the first j words. B[i][j]: how it was
    # reached: _SKIP, _EXTRA, _MATCH, or _SLOT + k (the slot took words k..j-1).
    elems = pattern.elems
    m = len(elems)
    neg = -math.inf
    D = [[neg] * (n + 1) for _ in range(m + 1)]
    B = [[_SKIP] * (n + 1) for _ in range(m + 1)]
    row0, brow0 = D[0], B[0]
    row0[0] = 0.0
    for j in range(1, n + 1):
        row0[j] = row0[j - 1] - xcost[j - 1]
        brow0[j] = _EXTRA
    for i in range(1, m + 1):
        e = elems[i - 1]
        Dp, Di, Bi = D[i - 1], D[i], B[i]
        if not e.slot:
            skip = 0.0 if e.optional else LIT_MISS * e.weight * (TRAILING if e.trailing else 1.0)
            weight = e.weight
            canons = e.canons
            c0 = canons[0]
            single = len(canons) == 1
            prev = Di[0] = Dp[0] - skip
            for j in range(1, n + 1):
                best, op = Dp[j] - skip, _SKIP
                v = prev - xcost[j - 1]
                if v > best:
                    best, op = v, _EXTRA
                alts = toks[j - 1].alts
                sim = alts.get(c0, 0.0) if single else max(alts.get(c, 0.0) for c in canons)
                if sim:
                    v = Dp[j - 1] + weight * sim
                    if v > best:
                        best, op = v, _MATCH
                prev = Di[j] = best
                Bi[j] = op
            continue
        slot = info.slots.get(e.slot)
        skip = 0.0 if e.optional else (SLOT_MISS if slot and slot.required else SLOT_MISS_OPTIONAL)
        prev = Di[0] = Dp[0] - skip
        if slot is None:
            for j in range(1, n + 1):
                best, op = Dp[j] - skip, _SKIP
                v = prev - xcost[j - 1]
                if v > best:
                    best, op = v, _EXTRA
                prev = Di[j] = best
                Bi[j] = op
            continue
        table = req.table(slot)
        kind = slot.kind
        own_c, known_c = OWN_WORD.get(kind, OTHER_KIND), KNOWN_WORD.get(kind, OTHER_KIND)
        time_c = TIME_IN_TEXT if kind == "text" and info.has_time else TIME_IN_LIST if kind == "list" else 0.0
        free = kind in ("text", "list")
        for j in range(1, n + 1):
            best, op = Dp[j] - skip, _SKIP
            v = prev - xcost[j - 1]
            if v > best:
                best, op = v, _EXTRA
            tw_j, own_j, known_j, timed_j = tw[j], own[j], known[j], timed[j]
            end_cost = DANGLING_COST if free and dangling[j - 1] else 0.0
            for k_abs, q in table[a + j]:
                k = k_abs - a
                if k < 0:
                    break  # starts come latest first: the rest lie before this span
                base = Dp[k]
                if base == neg:
                    continue
                # slot_cost(), inlined: this loop is where the planner spends its time.
                cost = (1 - q) * (tw_j - tw[k]) + own_c * (own_j - own[k]) + known_c * (known_j - known[k]) + end_cost
                if time_c:
                    cost += time_c * (timed_j - timed[k])
                if free and leading[k]:
                    cost += LEADING_COST
                v = base + SLOT_FILL - cost
                if v > best:
                    best, op = v, _SLOT + k
            prev = Di[j] = best
            Bi[j] = op

    # Walk back: which words matched, which slot took which run, which words are extra.
    explained = [0.0] * n  # cost left for each word: 0 explained, else what it costs
    matched_weight = expected_weight = 0.0
    spans: dict[str, tuple[int, int]] = {}
    args: dict[str, Any] = {}
    slot_penalty = 0.0
    swallowed = 0.0
    slot_quality: dict[str, float] = {}
    i, j = m, n
    while i > 0 or j > 0:
        kind = B[i][j] if i > 0 else _EXTRA
        if kind >= _SLOT:
            kind, k = _SLOT, kind - _SLOT
        if kind == _EXTRA:
            explained[j - 1] = xcost[j - 1]
            j -= 1
        elif kind == _SKIP:
            e = elems[i - 1]
            if not e.slot and not e.optional:
                expected_weight += e.weight * (TRAILING if e.trailing else 1.0)
            i -= 1
        elif kind == _MATCH:
            e = elems[i - 1]
            alts = toks[j - 1].alts
            matched_weight += e.weight * max(alts.get(c, 0.0) for c in e.canons)
            expected_weight += e.weight
            i, j = i - 1, j - 1
        else:
            e = elems[i - 1]
            slot = info.slots[e.slot]
            value, q = req.read(slot, a + k, a + j)  # type: ignore[misc]
            args[e.slot] = value
            spans[e.slot] = (a + k, a + j)
            slot_quality[e.slot] = q
            slot_penalty += slot_cost(slot, k, j, q)
            if slot.kind in ("text", "list"):
                # Words some example uses, inside free text: the message may be two requests.
                swallowed += (own[j] - own[k]) + (known[j] - known[k])
            i, j = i - 1, k

    _fill_leftovers(req, info, a, explained, args, spans)
    _carve_times(req, info, args, spans)
    _share_days(req, info, args, spans)

    # How much of the pattern was found. A slot whose parameter is required and was not given
    # is left out here: MISSING_FACTOR accounts for it once, and the planner asks for the value.
    got_credit = needed_credit = free_words = 0.0
    worst_free = 1.0
    for e in elems:
        if not e.slot:
            continue
        slot = info.slots[e.slot]
        filled = e.slot in args
        if not filled and (e.optional or slot.required):
            continue
        credit = FREE_SLOT_CREDIT if slot.kind in ("text", "list") else SLOT_CREDIT
        needed_credit += credit
        if filled:
            if slot.kind in ("text", "list"):
                # A slot holding only "it" or "anything" is little evidence that this is the phrase.
                q = slot_quality.get(e.slot, 1.0)
                got_credit += credit * q
                worst_free = min(worst_free, q)
                if e.slot in spans:
                    k, j = spans[e.slot]
                    free_words += tw[j - a] - tw[k - a]
            else:
                got_credit += credit
    found = (matched_weight + got_credit) / max(expected_weight + needed_credit, 1e-9)
    total = tw[n]
    content_left = sum(c for c, t in zip(explained, toks) if t.weight >= 1.0)
    covered = max(0.0, 1.0 - (sum(explained) + slot_penalty + FREE_FILL * free_words) / max(total, 1e-9))
    missing = [p for p in info.required if p not in args]
    score = (min(found, 1.0) * covered * pattern.factor * (MISSING_FACTOR ** len(missing))
             * (0.5 + 0.5 * worst_free))
    return Match(pattern, pattern.tool, a, b, score, args, missing, content_left + swallowed, spans)


def _fill_leftovers(
    req: Request, info: ToolInfo, a: int, explained: list[float], args: dict[str, Any],
    spans: dict[str, tuple[int, int]],
) -> None:
    """Give words no pattern word or slot took to parameters whose type they fit."""
    if not any(explained):
        return
    n = len(explained)
    toks = req.toks[a : a + n]
    lex = req.lex

    def runs() -> list[tuple[int, int]]:
        out, start = [], None
        for j in range(n + 1):
            free = j < n and explained[j] > 0
            if free and start is None:
                start = j
            if start is not None and (not free or (j < n and toks[j].sep in (",", ";", ".", "!", "?"))):
                end = j + 1 if free else j
                out.append((start, end))
                start = None
        return out

    for name, slot in info.slots.items():
        if name in args:
            continue
        if slot.kind in ("day", "moment"):
            if any(info.slots[p].kind in ("day", "moment") for p in args):
                continue  # a second day or time from leftovers would be a guess ("end" after "start")
            for s, e in runs():
                found = _longest(req, slot, a, s, e)
                if found:
                    (fs, fe), value = found
                    args[name], spans[name] = value, (a + fs, a + fe)
                    for j in range(fs, fe):
                        explained[j] = 0.0
                    break
        elif slot.kind in ("int", "number"):
            words = info.param_words.get(name, frozenset())
            for j in range(n):
                if not explained[j]:
                    continue
                value = parse_number([toks[j].fix])
                if value is None or (slot.kind == "int" and value != int(value)):
                    continue
                near = [k for k in (j - 1, j + 1) if 0 <= k < n and explained[k] and toks[k].canon in words]
                numeric = [p for p, s in info.slots.items() if s.kind in ("int", "number") and p not in args]
                if near or len(numeric) == 1:
                    args[name], spans[name] = (int(value) if slot.kind == "int" else value), (a + j, a + j + 1)
                    for k in [j, *near]:
                        explained[k] = 0.0
                    break
        elif slot.kind == "enum":
            for s, e in runs():
                hit = None
                for size in (3, 2, 1):
                    for start in range(s, e - size + 1):
                        choice = match_choice(" ".join(t.fix for t in toks[start : start + size]), slot.choices)
                        if choice and choice[1] >= 0.9:
                            hit = (start, start + size, choice[0])
                            break
                    if hit:
                        break
                if hit:
                    args[name], spans[name] = hit[2], (a + hit[0], a + hit[1])
                    for j in range(hit[0], hit[1]):
                        explained[j] = 0.0
                    break
        elif slot.kind == "url":
            for j in range(n):
                if explained[j] and toks[j].kind == "url":
                    got = req.read(slot, a + j, a + j + 1)
                    if got:
                        args[name], spans[name] = got[0], (a + j, a + j + 1)
                        explained[j] = 0.0
                        break
        elif slot.kind == "bool":
            words = info.param_words.get(name, frozenset())
            if not words:
                continue
            need = len(words) if len(words) == 1 else max(2, math.ceil(0.6 * len(words)))
            for s, e in runs():
                clause = toks[s:e]
                hits = {w for w in words if any(w in t.alts for t in clause)}
                if len(hits) < need:
                    continue
                args[name] = not any(t.canon in lex.negations for t in clause)
                spans[name] = (a + s, a + e)
                # The clause is about this parameter: its own words, small words, "it"/"them",
                # and words the function's description uses ("the ingredients") are accounted for.
                ok = words | lex.fillers | lex.pronouns | lex.negations | lex.split_words | info.description_words
                for j in range(s, e):
                    if toks[j].canon in ok or any(alt in words for alt in toks[j].alts):
                        explained[j] = 0.0
                break


def _longest(req: Request, slot: SlotType, a: int, s: int, e: int) -> tuple[tuple[int, int], Any] | None:
    for size in range(min(e - s, MAX_LEFTOVER_SPAN), 0, -1):
        for start in range(s, e - size + 1):
            got = req.read(slot, a + start, a + start + size)
            if got is not None:
                return (start, start + size), got[0]
    return None


def _carve_times(req: Request, info: ToolInfo, args: dict[str, Any], spans: dict[str, tuple[int, int]]) -> None:
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


def _share_days(req: Request, info: ToolInfo, args: dict[str, Any], spans: dict[str, tuple[int, int]]) -> None:
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
