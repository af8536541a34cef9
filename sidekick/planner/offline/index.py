"""The compiled form of a tool list: every example expanded, stemmed and weighted.

Each example becomes patterns of elements (a literal word, any of a few words,
or a slot), with synonyms merged and duplicates dropped. A word weighs more the
fewer functions' examples use it; a small word that introduces a slot ("from
{start} to {end}") weighs at least MARKER_WEIGHT; an optional parameter's slot
and its small introducing word are optional; a missing last phrase ("[to my
list]") costs TRAILING of its weight. Patterns also get reordered variants.

Built once per distinct tool list and cached by a hash of the specs, so a newly
installed agent's examples count from the next message on, with no restart, and
an unchanged tool list costs one hash per message (building takes about 0.2 s
for 60 functions).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dreamer.sidekick.planner.base import Tool
from dreamer.sidekick.planner.language import outside
from dreamer.sidekick.planner.language.lexicon import OPENING_VERBS, QUESTION_WORDS
from dreamer.sidekick.planner.language.slots import SlotType, slot_type
from dreamer.sidekick.planner.language.text import prepare, tokenize
from dreamer.sidekick.planner.language.vocabulary import MAX_PHRASE, Lexicon
from dreamer.sidekick.planner.offline.memo import SameObjects
from dreamer.sidekick.planner.offline.request import asks_question
from dreamer.sidekick.planner.offline.templates import Piece, expand

FILLER_WEIGHT = 0.2  # "the", "my", "to": known to say little whatever the statistics
MARKER_WEIGHT = 0.45
# Weight of a slot when measuring how much of a pattern was found: a typed value (a number,
# a day, an address) is evidence that this is the phrase; free text or a list fits any words.
SLOT_CREDIT = 0.8
FREE_SLOT_CREDIT = 0.3
STRAY_FREE = 0.15  # = match.FREE_FILL: the least a word costs inside free text
STRAY_EXTRA = 0.5  # = match.DESCRIBED: the least an extra word costs
MAX_EXAMPLES_PER_TOOL = 50
MAX_TOOLS = 2000
CACHE_SIZE = 16
TRAILING = 0.5  # a missing trailing phrase ("add milk [to the list]") counts this much
REORDER_FACTOR = 0.94  # a reordered example is a little less sure than the one written
DERIVED_FACTOR = 0.85  # a phrase made from the function's name, for functions without examples
# Words that open a phrase a request may leave out when it comes last: "add milk [to my list]",
# "save it [for later]". A missing last word that is not such a phrase ("a thai [recipe]") counts fully.
# Words that narrow what a template asks for without changing what it is about: a request that
# leaves one out still asks the same ("when is my [next] dentist", "show my [latest] notes").
SOFT_WORDS = frozenset({"next", "upcoming", "coming", "soon", "again", "another", "more", "new", "current"})
ADJUNCTS = frozenset({"to", "on", "in", "into", "onto", "for", "from", "at", "off", "with", "of", "by"})


@dataclass(slots=True)
class Elem:
    """One element of a pattern: a literal word (`canons`, any of them) or a slot (parameter name)."""

    canons: tuple[str, ...]
    slot: str
    optional: bool
    weight: float = 1.0
    trailing: bool = False  # part of a last phrase a request may leave out, or a word that only narrows (SOFT_WORDS)


@dataclass(slots=True)
class Pattern:
    tool: int
    elems: tuple[Elem, ...]
    example: str
    factor: float = 1.0
    required_weight: float = 0.0  # what the words a request must say weigh (for the quick bound)
    slot_credit: float = 0.0  # what filling every slot could add to how much of the pattern was found
    pid: int = -1  # its place in Index.patterns (reordered variants share their original's)
    # The least a message word this pattern has no word for costs: free text may take it cheaply,
    # a typed slot may take it for nothing, with no slot at all it is an extra word.
    stray_cost: float = 0.0
    variants: tuple[Pattern, ...] = ()  # the same words in other orders, tried when this one fits badly
    asks: bool = False  # it opens as a question ("what's on my calendar {day}", "do I have ...")


@dataclass
class ToolInfo:
    """What matching needs to know about one tool besides its patterns."""

    tool: Tool
    slots: dict[str, SlotType]
    description_words: frozenset[str]
    param_words: dict[str, frozenset[str]]
    required: tuple[str, ...]
    has_time: bool = False  # some parameter takes a day or a moment
    words: frozenset[str] = frozenset()  # content words of all this function's examples
    # text parameter -> the small words its examples put right before it ("recipes with {ingredient}"): words
    # left over after such a word say that parameter's value ("a Thai recipe with chicken")
    leads: dict[str, frozenset[str]] = field(default_factory=dict)


@dataclass
class Index:
    lex: Lexicon
    tools: list[ToolInfo]
    patterns: list[Pattern]
    postings: dict[str, list[int]] = field(default_factory=dict)
    # canon → (pattern, weight of one of its literal elements that canon can be): what a word of
    # the message may earn a pattern, element by element, so a pattern saying a word twice
    # ("remember in my notes": remember ~ note, notes) or in a choice is not under-estimated.
    element_postings: dict[str, list[tuple[int, int, float]]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    # canon → agent → how many of its example patterns use the word (offline/choice.domain_words)
    word_agents: dict[str, dict[str, int]] = field(default_factory=dict)
    known: frozenset[str] = frozenset()  # content words some example uses
    openers: frozenset[str] = frozenset()  # words an example can begin with: where a second request may start
    # Words that name a domain no installed function speaks of (language.outside: "flight", "taxi"):
    # none of them is a word of any function's examples or description.
    outside_words: frozenset[str] = frozenset()
    outside_services: frozenset[str] = frozenset()  # ... of the domains that are not goods (outside.Domain.goods)

    def weight(self, canon: str) -> float:
        return self.weights.get(canon, FILLER_WEIGHT if canon in self.lex.fillers else 1.0)


_cache: OrderedDict[str, Index] = OrderedDict()
_lock = threading.Lock()


_digests: SameObjects[str] = SameObjects()


def spec_hash(tools: Sequence[Tool]) -> str:
    """A digest of everything the index is built from (repr: several times cheaper than JSON here;
    the same specs with their keys in another order only cost one rebuild), remembered for the same tools."""
    return _digests.get(tools, lambda: _spec_hash(tools))


def _spec_hash(tools: Sequence[Tool]) -> str:
    blob = repr([(t.agent, t.function, t.description, t.parameters, tuple(t.examples), t.confirm, t.publisher,
                  t.installed_at) for t in tools])
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


# Small words that lead a value: only these, never a verb ("add {items}"), may mark leftover words as a value.
SLOT_LEADS = frozenset({"with", "using", "about", "containing", "called", "named", "titled", "mentioning", "re"})


def get_index(tools: Sequence[Tool]) -> Index:
    """The index for this tool list, from the cache when the specs are unchanged."""
    key = spec_hash(tools)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    built = build_index(tools)
    with _lock:
        _cache[key] = built
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return built


def build_index(tools: Sequence[Tool]) -> Index:
    tools = list(tools)[:MAX_TOOLS]
    raw: list[tuple[int, list[list[Piece]], str, float]] = []
    words: set[str] = set()
    for n, tool in enumerate(tools):
        params = set(tool.properties)
        examples = [e for e in tool.examples if isinstance(e, str) and e.strip()][:MAX_EXAMPLES_PER_TOOL]
        factor = 1.0
        if not examples:
            examples, factor = _derived_examples(tool), DERIVED_FACTOR
        for example in examples:
            expansions = [
                pieces for pieces in expand(example[:300]) if all(p.slot is None or p.slot in params for p in pieces)
            ]
            if expansions:
                raw.append((n, expansions, example, factor))
                for pieces in expansions:
                    for p in pieces:
                        if p.text:
                            words.update(w.low for w in tokenize(prepare(p.text)))
                        words.update(p.choices)
        words.update(tool.function.replace("_", " ").split())
        for name in params:
            words.update(name.lower().split("_"))
    lex = Lexicon(words)

    infos = [_tool_info(tool, lex) for tool in tools]
    patterns: list[Pattern] = []
    seen: set[tuple] = set()
    for n, expansions, example, factor in raw:
        for pieces in expansions:
            elems = _elements(pieces, lex)
            key = (n, tuple((e.canons, e.slot, e.optional) for e in elems))
            # Synonyms make some examples the same pattern ("remove {items}", "delete {items}"): keep one.
            # A pattern of slots alone would match anything: keep none.
            if key not in seen and any(not e.slot for e in elems):
                seen.add(key)
                patterns.append(Pattern(n, tuple(elems), example, factor))

    # Weights: a word most functions' examples use says little about which one is meant.
    df: dict[str, set[int]] = {}
    for p in patterns:
        for e in p.elems:
            for canon in e.canons:
                df.setdefault(canon, set()).add(p.tool)
    total = max(len(tools), 2)
    weights: dict[str, float] = {}
    for canon, users in df.items():
        if canon in lex.fillers:
            weights[canon] = FILLER_WEIGHT
        else:
            weights[canon] = 0.5 + 0.5 * math.log(total / len(users)) / math.log(total)
    index = Index(lex=lex, tools=infos, patterns=[], weights=weights,
                  known=frozenset(c for c in df if c not in lex.fillers))
    # Words the examples use: a description's words ("the note's text", "a message when it changes") say
    # how a function works, not what people ask of it, so they do not take a domain's name away.
    spoken = index.known
    index.outside_words = frozenset(lex.canon_word(w) for w in outside.domain_names()) - spoken - lex.generic
    index.outside_services = frozenset(lex.canon_word(w) for w in outside.domain_names(goods=False)) - spoken - lex.generic
    for p in patterns:
        infos[p.tool].words |= {c for e in p.elems for c in e.canons if c not in lex.fillers}
        for c in {c for e in p.elems for c in e.canons if c not in lex.fillers}:
            by_agent = index.word_agents.setdefault(c, {})
            by_agent[infos[p.tool].tool.agent] = by_agent.get(infos[p.tool].tool.agent, 0) + 1
    for p in patterns:
        for before, elem in zip(p.elems, p.elems[1:]):
            if elem.slot and not before.slot and infos[p.tool].slots[elem.slot].kind == "text":
                leads = set(before.canons) & SLOT_LEADS
                if leads:
                    infos[p.tool].leads[elem.slot] = infos[p.tool].leads.get(elem.slot, frozenset()) | leads
    for p in patterns:
        _opening_verb(p, lex)
        _finish(p, index)
        p.variants = tuple(_finish(v, index) for v in _reorderings(p))
        index.patterns.append(p)
    openers: set[str] = set()
    for p in index.patterns:
        for e in p.elems:
            if e.slot:
                break
            openers.update(e.canons)
            if not e.optional:
                break
    index.openers = frozenset(openers)
    for pid, p in enumerate(index.patterns):
        p.pid = pid
        for canon in {c for e in p.elems for c in e.canons}:
            index.postings.setdefault(canon, []).append(pid)
        for ei, e in enumerate(p.elems):
            for canon in set(e.canons):
                index.element_postings.setdefault(canon, []).append((pid, ei, e.weight))
    return index


def _opening_verb(p: Pattern, lex: Lexicon) -> None:
    """An example opening with "list" ("list my watches") opens with its verb: "show my watches" says it too."""
    first = p.elems[0] if p.elems else None
    if first is None or first.slot:
        return
    verbs = tuple(lex.canon_word(OPENING_VERBS[c]) for c in first.canons if c in OPENING_VERBS)
    if verbs:
        first.canons = tuple(dict.fromkeys((*first.canons, *verbs)))


def _finish(p: Pattern, index: Index) -> Pattern:
    slots = index.tools[p.tool].slots
    opening = [e for e in p.elems[:3] if not e.slot]
    first = opening[0].canons if opening else ()
    second = opening[1].canons if len(opening) > 1 else ()
    p.asks = any(c in QUESTION_WORDS for c in first) or any(asks_question([a, b]) for a in first for b in second)
    for i, e in enumerate(p.elems):
        if e.slot and e.slot in slots and not slots[e.slot].required:
            # An optional parameter's slot, with the small word that introduces it ("at {location}"),
            # shows how to say it, not that it must be said.
            e.optional = True
            before = p.elems[i - 1] if i else None
            if before is not None and not before.slot and set(before.canons) & (index.lex.fillers | ADJUNCTS):
                before.optional = True
    last_slot = max((i for i, e in enumerate(p.elems) if e.slot), default=len(p.elems))
    tail = [e for e in p.elems[last_slot + 1 :] if not e.optional]
    adjunct = bool(tail) and bool(set(tail[0].canons) & ADJUNCTS)
    for i, e in enumerate(p.elems):
        if not e.slot:
            # A choice weighs what its commonest word does: "(on|into)" says no more than "on".
            e.weight = min(index.weight(c) for c in e.canons)
            # "when is my next {title}": "when is my piano lesson" leaves out only a word that narrows.
            e.trailing = (adjunct and i > last_slot) or all(c in SOFT_WORDS for c in e.canons)
            if i + 1 < len(p.elems) and p.elems[i + 1].slot and i > 0:
                # A small word that tells which slot comes next ("from {start} to {end}") says more
                # about the phrase than its frequency suggests.
                e.weight = max(e.weight, MARKER_WEIGHT)
    p.required_weight = sum(
        e.weight * (TRAILING if e.trailing else 1.0) for e in p.elems if not e.slot and not e.optional
    )
    kinds = [slots[e.slot].kind for e in p.elems if e.slot]
    p.slot_credit = sum(FREE_SLOT_CREDIT if kind in ("text", "list") else SLOT_CREDIT for kind in kinds)
    if not kinds:
        p.stray_cost = STRAY_EXTRA
    elif all(kind in ("text", "list") for kind in kinds):
        p.stray_cost = STRAY_FREE
    return p


def _elements(pieces: list[Piece], lex: Lexicon) -> list[Elem]:
    """Literal runs become stemmed words (phrases merged into their synonym); slots stay."""
    out: list[Elem] = []
    for piece in pieces:
        if piece.slot:
            out.append(Elem((), piece.slot, piece.optional))
            continue
        if piece.choices:
            # Read like the words of a message (lower case, "don't" as one word), so "(I|we)"
            # matches the "I" of "I need milk" as a plain "I need {items}" would.
            canons = tuple(dict.fromkeys(lex.canon_word(_choice_word(w)) for w in piece.choices))
            out.append(Elem(canons, "", piece.optional))
            continue
        lemmas = [lex.lemma(w.low) for w in tokenize(prepare(piece.text or ""))]
        i = 0
        while i < len(lemmas):
            for size in range(min(MAX_PHRASE, len(lemmas) - i), 1, -1):
                head = lex.phrases.get(tuple(lemmas[i : i + size]))
                if head:
                    out.append(Elem((head,), "", piece.optional))
                    i += size
                    break
            else:
                out.append(Elem((lex.single.get(lemmas[i], lemmas[i]),), "", piece.optional))
                i += 1
    return out


def _choice_word(choice: str) -> str:
    words = [w.low for w in tokenize(prepare(choice))]
    return words[0] if len(words) == 1 else choice.lower()


def _reorderings(p: Pattern) -> list[Pattern]:
    """The same words in the other orders people use.

    One slot, "A {s} B": also "{s} A B", "A B {s}" and "B A {s}" ("to my list add
    milk"). More slots: each run of words between slots moved to the end or the
    front ("add {title} {start} to my calendar" for "add {title} to my calendar {start}").
    """
    blocks: list[list[Elem]] = []
    for e in p.elems:
        if e.slot or not blocks or blocks[-1][0].slot:
            blocks.append([e])
        else:
            blocks[-1].append(e)
    slots = [i for i, b in enumerate(blocks) if b[0].slot]
    orders: list[list[Elem]] = []
    if len(slots) == 1:
        k = slots[0]
        a, s, b = [e for blk in blocks[:k] for e in blk], blocks[k], [e for blk in blocks[k + 1 :] for e in blk]
        if a:
            orders.append(s + a + b)
        if b:
            orders.append(a + b + s)
        if a and b:
            orders.append(b + a + s)
    elif slots:
        for i, block in enumerate(blocks):
            if block[0].slot:
                continue
            rest = [e for j, blk in enumerate(blocks) if j != i for e in blk]
            if i != len(blocks) - 1:
                orders.append(rest + block)
            if i != 0:
                orders.append(block + rest)
    return [
        Pattern(p.tool, tuple(Elem(e.canons, e.slot, e.optional) for e in order), p.example, p.factor * REORDER_FACTOR)
        for order in orders
    ]


def _tool_info(tool: Tool, lex: Lexicon) -> ToolInfo:
    params = tool.parameters if isinstance(tool.parameters, Mapping) else {}
    defs = params.get("$defs")
    required = tool.required
    slots = {
        name: slot_type(name, schema if isinstance(schema, Mapping) else {}, name in required,
                        defs if isinstance(defs, Mapping) else {})
        for name, schema in tool.properties.items()
    }
    desc = {lex.canon_word(w.low) for w in tokenize(prepare(tool.description[:2000]))}
    param_words = {
        name: frozenset(lex.canon_word(w) for w in name.lower().split("_") if w) - lex.fillers
        for name in tool.properties
    }
    has_time = any(s.kind in ("day", "moment") for s in slots.values())
    return ToolInfo(tool, slots, frozenset(desc - lex.fillers), param_words, required, has_time)


def _derived_examples(tool: Tool) -> list[str]:
    """Phrases for a function its author gave no examples: its name, its agent, its required parameters."""
    name = tool.function.replace("_", " ")
    agent = tool.agent.replace("-", " ")
    slots = " ".join(f"{{{p}}}" for p in tool.required if p in tool.properties)
    return [f"{name} [{agent}] {slots}".strip(), f"{agent} {name} {slots}".strip()]
