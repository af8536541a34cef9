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

from dreamer.sidekick.planner.language.slots import SlotType, clean_text, typical
from dreamer.sidekick.planner.offline.index import (
    ADJUNCTS,
    FREE_SLOT_CREDIT,
    SLOT_CREDIT,
    STRAY_EXTRA,
    STRAY_FREE,
    TRAILING,
    Index,
    Pattern,
    ToolInfo,
)
from dreamer.sidekick.planner.offline.leftovers import (
    carve_times,
    fill_leftovers,
    labels_from_text,
    widen_days,
    share_days,
)
from dreamer.sidekick.planner.offline.request import Request

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
TIME_ONLY = 0.5  # a value that is nothing but a day or time ("sunday") in a slot that takes neither
DANGLING_COST = 0.3  # a value rarely ends in a preposition: "flight to Berlin on"
# A value rarely ends in a word that points at what follows ("flight to Berlin on", "haircut next"),
# or starts with a preposition the phrase around it owns ("search [for] pasta").
DANGLING = frozenset({"on", "at", "for", "to", "from", "by", "in", "with", "of", "until", "and", "next", "this",
                      "coming", "last", "the", "a", "an", "my"})
LEADING = frozenset({"on", "at", "for", "to", "from", "by", "in", "with", "of", "about", "into"})
LEADING_COST = 0.2
OPENING_COST = 0.5
UNMARKED_COST = 0.6  # an optional value taken without the word that introduces it: no gain in filling it

STRANDED_FACTOR = 0.6  # a fit whose last word is a particle with nothing after it: a particle verb
# Words that open a value rather than belong to it ("notes mentioning Mia", "a recipe using feta").
INTRODUCERS = frozenset({"about", "regarding", "concerning", "mentioning", "containing", "using", "called", "named",
                         "titled"})
STATEMENT_FACTOR = 0.85  # a question ("what have I got today") fitted to a template that opens as a statement
# States a page or a shop says a thing is in, whose preposition is part of the words: "in stock", "on sale".
STATES = frozenset({"in stock", "on sale", "on offer", "on special", "in season", "on clearance", "on discount",
                    "on backorder", "in store", "on display"})
_STATE_WORDS = [state.split() for state in STATES]
PARTICLES = frozenset({"on", "off", "up", "down", "out", "over", "away", "back", "in"})

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
    # Which words of the message the pattern's own words matched (positions in req.toks), and
    # the pattern words they matched: what the request said of the function in the function's words.
    said: tuple[tuple[int, str], ...] = ()
    missed: tuple[str, ...] = ()  # the pattern's own words (required ones) the message does not say

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
    exact: list[float]  # known words as written, not as likely typos
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
    exact = [0.0]
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
        # ... but only the word as written says "this may be a second request" ("bread" is no "read").
        exact.append(exact[-1] + (weights.get(t.canon, 0.0) if t.canon in known_words else 0.0))
        tw.append(tw[-1] + t.weight)
        timed.append(timed[-1] + (1.0 if t.temporal else 0.0))
    frame = _Frame(
        xcost=[t.weight * (DESCRIBED if t.canon in desc else 1.0) for t in toks],
        own=own, known=known, exact=exact, tw=tw, timed=timed,
        dangling=[t.fix in DANGLING for t in toks],
        leading=[t.fix in LEADING for t in toks],
    )
    req.frames[key] = frame
    return frame


def _particle_verb(req: Request, toks: list) -> bool:
    """The words open with a verb and end on its particle, and the two are no phrase of the lexicon.

    "put the kettle on", "put the TV on": the verb is "put on" (switch on), not the "put"
    of "put milk on the list"; the lexicon's own phrasal verbs ("take the milk off",
    "cross it off") are what they say.
    """
    last = toks[-1]
    if len(toks) < 3 or last.kind != "word" or last.fix not in PARTICLES or toks[0].kind != "word":
        return False
    return (req.lex.lemma(toks[0].fix), req.lex.lemma(last.fix)) not in req.lex.phrases


def align(index: Index, req: Request, pattern: Pattern, a: int, b: int) -> Match | None:
    """The best in-order fit of `pattern` to req.toks[a:b], post-processed and scored."""
    toks = req.toks[a:b]
    n = len(toks)
    if n == 0:
        return None
    info = index.tools[pattern.tool]
    f = _frame(index, req, info, pattern.tool, a, b)
    xcost, own, known, tw, timed, dangling, leading = f.xcost, f.own, f.known, f.tw, f.timed, f.dangling, f.leading
    # A message rarely begins with its own free text: a first word that begins requests ("show my
    # schedule for friday") is more likely the command than part of a title.
    first = toks[0]
    opening = first.weight >= 1.0 and first.canon in index.openers

    def slot_cost(slot: SlotType, k: int, j: int, q: float) -> float:
        """What filling `slot` with toks[k:j] costs beyond the gain of filling it."""
        kind = slot.kind
        cost = (1 - q) * (tw[j] - tw[k])
        cost += OWN_WORD.get(kind, OTHER_KIND) * (own[j] - own[k])
        cost += KNOWN_WORD.get(kind, OTHER_KIND) * (known[j] - known[k])
        if kind == "text" and info.has_time:
            cost += TIME_IN_TEXT * (timed[j] - timed[k])
        elif kind == "list":
            cost += TIME_IN_LIST * (timed[j] - timed[k])
        if kind in ("text", "list") and timed[j] - timed[k] == j - k:
            cost += TIME_ONLY
        if kind in ("text", "list"):
            if dangling[j - 1]:
                cost += DANGLING_COST
            if leading[k]:
                cost += LEADING_COST
            if k == 0 and opening:
                cost += OPENING_COST
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
        # An optional value and the small word that introduces it ("[at] {location}") are left out
        # together: the value without its word ("add dinner party" as location "party") costs more.
        before = elems[i - 2] if i >= 2 else None
        marked = e.optional and before is not None and not before.slot and before.optional \
            and bool(set(before.canons) & ADJUNCTS)
        Bp = B[i - 1]
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
                if free and k == 0 and opening:
                    cost += OPENING_COST
                if marked and Bp[k] != _MATCH:
                    cost += UNMARKED_COST
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
    said: list[tuple[int, str]] = []
    missed: list[str] = []
    stranded = False
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
                missed.append(e.canons[0])
            i -= 1
        elif kind == _MATCH:
            e = elems[i - 1]
            alts = toks[j - 1].alts
            matched_weight += e.weight * max(alts.get(c, 0.0) for c in e.canons)
            expected_weight += e.weight
            said.append((a + j - 1, max(e.canons, key=lambda c: alts.get(c, 0.0))))
            if j == n and set(e.canons) & ADJUNCTS and any(not x.slot and not x.optional for x in elems[i:]):
                stranded = True  # the message ends on the pattern's preposition, what it introduces unsaid
            i, j = i - 1, j - 1
        else:
            e = elems[i - 1]
            slot = info.slots[e.slot]
            q = next((quality for start, quality in req.table(slot)[a + j] if start == a + k), 1.0)
            got = req.read(slot, a + k, a + j)
            value = got[0] if got else clean_text(req.span_text(a + k, a + j))
            if slot.kind == "text" and req.cut and a + j == len(req.toks):
                value = clean_text(req.text[req.toks[a + k].start :])  # the words past MAX_WORDS too
            if slot.kind == "text" and j - k > 1 and toks[k].fix in INTRODUCERS:
                # "search notes about bike": "about" introduces the value (the topic), it is not part of it.
                value = clean_text(req.span_text(a + k + 1, a + j))
            if slot.kind == "text" and k > 0 and isinstance(value, str) and (
                    f"{toks[k - 1].fix} {value}".casefold().split()[:2] in _STATE_WORDS):
                # "tell me when it says in stock": the state's own preposition is part of it, not a small word left over
                value = f"{toks[k - 1].fix} {value}"
            if slot.kind == "text" and slot.choices and isinstance(value, str):
                value = typical(value, slot.choices) or value
            args[e.slot] = value
            spans[e.slot] = (a + k, a + j)
            slot_quality[e.slot] = q
            slot_penalty += slot_cost(slot, k, j, q)
            if slot.kind in ("text", "list"):
                # Words some example uses, inside free text: the message may be two requests.
                swallowed += f.exact[j] - f.exact[k]
            i, j = i - 1, k

    if (stranded or explained[n - 1] > 0) and _particle_verb(req, toks):
        stranded = True
    else:
        stranded = False
    for name, (k, _) in spans.items():
        if info.slots[name].kind == "list" and k > a and explained[k - a - 1] > 0 and req.toks[k - 1].fix == "to":
            # "I want to order a pizza": what follows a "to" of the user's own is something to do, not things.
            stranded = True
    lead = elems[0]
    if lead.slot and not lead.optional and info.slots[lead.slot].required and lead.slot not in args:
        # An example that opens with its value ("{items} to the shopping list") is that value and
        # a few small words: without the value it fits any mention of the list.
        return None
    widen_days(req, info, a, explained, args, spans)
    fill_leftovers(req, info, a, explained, args, spans)
    carve_times(req, info, args, spans)
    share_days(req, info, args, spans)
    labels_from_text(info, args)

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
    content_left = sum(c for c, t in zip(explained, toks, strict=True) if t.weight >= 1.0)
    covered = max(0.0, 1.0 - (sum(explained) + slot_penalty + FREE_FILL * free_words) / max(total, 1e-9))
    missing = [p for p in info.required if p not in args]
    score = (min(found, 1.0) * covered * pattern.factor * (MISSING_FACTOR ** len(missing))
             * (0.5 + 0.5 * worst_free) * (STRANDED_FACTOR if stranded else 1.0)
             * (STATEMENT_FACTOR if req.asks and not pattern.asks else 1.0))
    return Match(pattern, pattern.tool, a, b, score, args, missing, content_left + swallowed, spans,
                 tuple(reversed(said)), tuple(missed))
