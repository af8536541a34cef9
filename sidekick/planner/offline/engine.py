"""The offline planner: examples in, steps out, no model anywhere.

For a message it (1) reads the words against the tool list's vocabulary
(request.py), (2) picks the patterns that share words with it (an inverted
index) and fits them best-first (match.py), skipping those that could not come
close to the best fit so far, and keeps each function's best fit, (3) when the
best fit of the whole message leaves words unexplained, tries reading it as
several requests joined by "and", "then" or punctuation, keeping a split only
when every part fits and the parts fit clearly better than the whole, or
account for words it leaves over, and (4) turns the result into a Plan: steps,
a question when two functions fit about equally well, the fit is doubtful or a
required value is missing, or a list of what the agents can do when nothing fits.

Scores are in [0, 1]: ACCEPT and above is acted on, WEAK to ACCEPT is offered
as "did you mean ...?", below WEAK nothing fits.
"""

from __future__ import annotations

from collections.abc import Sequence
import re
from dataclasses import dataclass, replace
from typing import Any

from dreamer.sidekick.planner.base import (
    FunctionFacts,
    PartialPlan,
    Plan,
    PlanContext,
    Step,
    Tool,
    addressed,
    takes_whole_request,
)
from dreamer.sidekick.planner.dialog import advance, resume
from dreamer.sidekick.planner.language.dates import DATE_WORDS, says_my_day
from dreamer.sidekick.planner.language.antecedent import resolve_pronoun
from dreamer.sidekick.planner.language.chatter import chatter_reply
from dreamer.sidekick.planner.language.embedded import question_word_last, unwrapped_question
from dreamer.sidekick.planner.language.negated import denied, wont
from dreamer.sidekick.planner.language.selfcorrect import corrected, split_correction
from dreamer.sidekick.planner.language.having import using_as_with, with_what_is_had, without_placeholder
from dreamer.sidekick.planner.language.labels import bare_things, labelled_entry, list_tag_entry, verb_labelled
from dreamer.sidekick.planner.language.addressed import Addressed, addressed_to, topic
from dreamer.sidekick.planner.language.passive import as_command
from dreamer.sidekick.planner.language.commands import as_sentence
from dreamer.sidekick.planner.language.spoken import as_written
from dreamer.sidekick.planner.language.membership import membership_question
from dreamer.sidekick.planner.language.chunks import subject_verb, things_of
from dreamer.sidekick.planner.language.narration import asks_or_plans, narrates, tells_how_it_went
from dreamer.sidekick.planner.language.remarks import JUDGING, REMARK_REPLY, a_saying, judging_words, lacked_no_things
from dreamer.sidekick.planner.language.lexicon import GENERIC_WORDS, QUESTION_WORDS, VERB_HEADS
from dreamer.sidekick.planner.language.pasted import on_one_line
from dreamer.sidekick.planner.language.letters import unwrapped_letter, with_place
from dreamer.sidekick.planner.language.text import quoted_spans
from rapidfuzz.distance import OSA
from dreamer.sidekick.planner.language.values import (
    drop_echoes,
    fill_typical,
    redistribute,
    strip_own_head,
    tidy_args,
    tidy_items,
    without_politeness,
    without_when,
)
from dreamer.sidekick.planner.offline.choice import (
    domain_words,
    holds_chores,
    opens_with_task,
    prefer_reading,
    settle,
    timed_things,
    typical_values,
    unnamed_kind,
    follows_recent,
    without_absent_values,
)
from dreamer.sidekick.planner.offline.index import REORDER_FACTOR, Index, get_index
from dreamer.sidekick.planner.offline.match import MISSING_FACTOR, Match, align
from dreamer.sidekick.planner.offline.meaning import (
    GUESS_CLOSENESS,
    NEWCOMER,
    DIFFERENT_THING,
    OUT_OF_SCOPE,
    agreeing,
    generic_veto,
    names_a_domain,
    tense_veto,
    OUTSIDE_GAP,
    outside,
    rescore,
    rescue_tool,
    senior_by_meaning,
)
from dreamer.sidekick.planner.offline.request import Request, Tok, read_request
from dreamer.sidekick.planner.offline.statement import statement
from dreamer.sidekick.planner.offline.semantic import Closeness
from dreamer.sidekick.planner.offline.templates import expand

ACCEPT = 0.6  # a fit this good is acted on
WEAK = 0.55  # below this nothing fits; between the two the planner asks "did you mean ...?"
AGREED_SCORE = ACCEPT  # a weak fit meaning agrees with (meaning.agreeing) is acted on
MARGIN = 0.06  # two functions this close in score: the user chooses
SPLIT_GAIN = 0.05  # a split must beat the whole message by this much,
SPLIT_EXPLAINS = 0.5  # or account for this much more of its words
SPLIT_COST = 0.1  # at a score at most this much lower
STEP_COST = 0.03  # between splits that fit about equally, the one with fewer steps
MAX_STEPS = 5
MAX_SPLIT_POINTS = 8  # places a span may divide at, at most (the first ones)
PRUNE_MARGIN = 0.1  # fits this far below the best cannot matter (MARGIN is smaller)
MAX_FITS = 40  # fits per span at most, whatever the bounds say,
FIT_BUDGET = 400  # ... and at most this many divided by the span's length in words,
MIN_FITS = 8  # ... but never fewer than this
FITS_PER_FUNCTION = 5  # ... and per function (its most promising patterns)
REORDER_TRIES = 6  # best patterns also tried in other word orders when nothing fits cleanly
MAX_OPTIONS = 3  # choices offered at most
MAX_LISTED = 30  # functions listed when nothing fits
NOTHING_INSTALLED = "No agents are installed yet, so there is nothing I can do. Install one with `dreamer install`."


@dataclass
class _Part:
    a: int
    b: int
    ranked: list[Match]  # the best fit per function, best first

    @property
    def score(self) -> float:
        return self.ranked[0].score if self.ranked else 0.0


MAX_ASIDE_CLAUSES = 3  # a request and an aside or two; more commas are a list
MAX_TYPO_FIXES = 2  # verbs one edit from a mistyped first word, each read again
_TYPO_TARGETS = ("add", "put")  # the list verbs a phone's keyboard most often turns into other words
_CLAUSES = re.compile(r"[,;]|(?<=[?!])\s|(?<=\w\.)\s")
_COMMAS = re.compile(r"[,;]")
# Where one request ends and another begins: "..., then ...", "... and then ...", "...; ...", and "and"
# before a verb that opens a request of its own ("... and tell me what's on tomorrow").
_JOINER = re.compile(  # (read on the text with single spaces: no pattern here repeats a space)
    r",? (?:and )?then |; ?|,? and also "
    r"|,? and (?=(?:tell|show|give|remind|add|put|remove|take|plan|save|note|find|search|check|clear|cancel|move"
    r"|delete|what|what's|when|when's)\b)", re.IGNORECASE)
# "... to the shopping list and ... to my to-do list": each thing has a place of its own (the " and " after the first).
_TWO_PLACES = re.compile(r"(?<=\blist) and (?=.{1,80} (?:to|on|onto) (?:my|the) [\w-]+(?: [\w-]+)? list$)", re.IGNORECASE)
MIN_ASIDE_WORDS = 2  # "milk" alone is an item, never an aside
MAX_TELLING_WORDS = 7  # "we have finished it yesterday": how the thing stands is said in a few words
# One more thing said after the place: "put X on the list and also Y (too)".
# (after a comma too: "add milk to the list, and eggs", "add milk to the list, eggs too")
_MORE_AFTER_PLACE = re.compile(r"^(?P<head>.{1,120}?) (?P<place>(?:on|to|onto|in) (?:the|my|our) (?:[\w-]+ )?list)"
                               r"(?:,? (?:and|&|plus) (?:also )?(?P<more>[^,.;!?]{1,60}?)(?: too| as well| also)?"
                               r"|, (?:also|plus) (?P<led>[^,.;!?]{1,60}?)(?: too| as well)?"
                               r"|, (?P<marked>[^,.;!?]{1,60}?) (?:too|as well|also))[.!]?$",
                               re.IGNORECASE)
# What the things are for, said after the list they go on: "... to the list for the big shop".
_PURPOSE_AFTER_PLACE = re.compile(r"(?<= list) for ((?:the |my |our |a |this |next )?[\w'-]+(?: [\w'-]+){0,3})[.!?]?$",
                                  re.IGNORECASE)
_JOINING = frozenset({"and", "&", "plus", "also", "then", "too", "as", "with", "but", "or"})
# Words said after where the thing goes: "add chips to the list ngl we're out", "... to the list mum said".
# (or after a comma or a sentence's end, in any words: "... on the grocery list, heading to Sobeys after work",
# "... from my calendar, they rang to cancel", "... to my grocery list, broke student edition lol")
_AFTER_PLACE = re.compile(r"^(?P<head>.{3,160}? (?P<prep>to|on|onto|in|into|from|off|off of) (?:the |my |our |me )?(?:[\w'-]+ )?"
                          r"(?:list|groceries|calendar|diary|to-do list|todo list|to-dos|todos|tasks|task list))"
                          r"(?:(?P<tail>(?: [\w'-]+){1,6})[.!?]*|(?P<sep> ?[,;.!?\u2013\u2014-]+)(?P<aside> .{1,160}))$",
                          re.IGNORECASE)
# What marks words after the place as more of the request: "..., eggs too", "..., and eggs".
_MORE_MARK = re.compile(r"\b(?:too|as well|also|aswell|an aw|as well please|too please)[.!?]*$", re.IGNORECASE)
_DAY_NAMES = frozenset(DATE_WORDS) | {"today", "tomorrow", "tonight", "weekend"}
_SMALL_WORDS = frozenset({"the", "my", "our", "a", "this", "next"})


class OfflinePlanner:
    """The intent engine over functions' examples. Stateless; safe to share between threads."""

    def plan(self, text: str, tools: Sequence[Tool], context: PlanContext | None = None) -> Plan:
        """A Plan for `text` over `tools`; see base.Plan for what the executor may do with it."""
        context = context or PlanContext()
        if not isinstance(text, str):
            return Plan(reply="I can only read text messages.")
        plan = self._plan_message(as_written(on_one_line(text)), tools, context)
        if context.pending is None and _a_remark(text, plan, tools):
            return Plan(reply=REMARK_REPLY)  # "the meeting ran way over today, so annoying"
        if context.pending is None and not plan.steps and plan.pending is None and (
                plan.unmatched or plan.reply == OUT_OF_SCOPE) and _a_story(_CLAUSES.split(text)):
            return Plan(reply=REMARK_REPLY)  # "we got back late last night": heard, not a list of functions
        return plan

    def _plan_message(self, text: str, tools: Sequence[Tool], context: PlanContext) -> Plan:
        said = text  # as written, before its politeness goes (labels.bare_things reads "pls")
        if context.pending is not None:
            answered = resume(context.pending, text, context)
            if answered is not None:
                return answered
        index = get_index(tools)
        if not index.tools:
            return Plan(reply=NOTHING_INSTALLED)
        chatter = chatter_reply(text)
        if chatter is not None:  # "good morning", "ok cool": said to Sidekick, asking nothing of an agent
            return Plan(reply=chatter)
        text = unwrapped_letter(text) or text  # "Good afternoon. ... Please put Metamucil on it. Regards, Harold"
        text = without_politeness(text)
        chatter = chatter_reply(text)
        if chatter is not None:  # "good morning hon!" once whom it is said to went
            return Plan(reply=chatter)
        text = _without_exclamation(text)  # "what a day, add wine to the list": the exclamation asks nothing
        text = as_command(text) or text  # "I'd like shortbread added to my list" is "add shortbread to my list"
        text = as_sentence(text) or text  # "/notes search visa" is "search my notes for visa"
        text = verb_labelled(text) or text  # "save: the gate code is 4471" is "save a note: ..."
        named = addressed_to(text, {t.tool.agent for t in index.tools})
        if named is not None:
            # "ask notes who Mia's teacher is": the rest, read against the named agent's functions alone.
            # A question ("ask notes who ...") is answered by a function that reads, never one that writes.
            own = [t for t in tools if t.agent == named.agent]
            if named.question and any(t.reads for t in own):
                own = [t for t in own if t.reads]
            read = self.plan(named.rest, own, replace(context, pending=None)) if own else Plan()
            if read.steps and (read.pending is None or read.pending.kind == "missing"):
                return read
            asked = _asked_of(own, named) if named.question and not read.steps else None
            if asked is not None:
                return Plan(steps=(asked,))
        asked = membership_question(text)
        if asked is not None:
            # "did I already put eggs on the list": whether it is there, never putting it there again
            read = self._plan_text(asked, index, context)
            if len(read.steps) == 1 and read.pending is None and _reads(index, read.steps[0]):
                return read
        # (the wrapper before its politeness went too: "I am wanting to know what ..." lost "I am wanting to")
        question = unwrapped_question(text) or unwrapped_question(said) or question_word_last(text)
        if question is not None:
            # "i wonder what's on the list": the wrapper is said to Sidekick; the question inside is the request.
            read = self._plan_text(question, index, context)
            if read.steps and read.pending is None:
                return read
        negative = denied(text)
        if negative is not None:
            # "don't put bread on the list": nothing is done, unless what to do instead is said after it
            # ("don't add bread, add rolls instead").
            what, after = negative
            for n in range(len(after)):
                # (from the first clause said after it that asks something: "..., we have plenty, just show me");
                # "there" and "it" there are the place the denial named ("... on the list, just show me what's there")
                rest = ", ".join(after[n:])
                for said in (rest, with_place(rest, what)):
                    read = self._plan_text(said, index, context) if said is not None else Plan()
                    if read.steps and _sure(read):
                        return read
            if self._plan_text(what, index, context).steps:
                return Plan(reply=wont(what))
        fixed = self._self_corrected(text, index, context)
        if fixed is not None:
            return fixed
        plan = self._plan_text(text, index, context)
        # a mistyped first verb, then two requests joined: each read only when the one before found nothing
        for reread in (lambda: self._first_word_typo(text, plan, index, context),
                       lambda: self._compound(text, plan, tools, context)):
            found = reread()
            if found is not None:
                return found
        held = without_placeholder(text)
        if held is not None:
            # "put something on the shopping list": which thing is asked, not "something" added.
            read = self._plan_text(held, index, context)
            if len(read.steps) == 1 and read.pending is not None and read.pending.kind == "missing":
                return read
        chore = self._as_chore(text, plan, index, context)
        if chore is not None:
            return chore
        eaten = self._used_up(text, plan, index, context)
        if eaten is not None:
            return eaten
        needed = self._needed_by(text, plan, index, context)
        if needed is not None:
            return needed
        event = self._an_event(text, plan, index, context)
        if event is not None:
            return event
        for tidy in (True, False):
            # The thing first without the state said around it ("jeera is finished": "finished" is the to-do
            # list's word), then with it, where only the state says which list ("I have run out of tea").
            pointed = resolve_pronoun(text, tidy=tidy)
            if pointed is None or not index.lex.is_known(pointed.split()[0].casefold()):
                break
            # (only a verb some function knows commands: "never tried it before" says nothing about risotto)
            # "I picked up garlic already, take it off the list": the command is about the thing said first.
            # Read so, it wins where the whole was unsure, and where it is the same call with tidier values:
            # the whole's values then hold words of the clauses around the thing ("olive oil is", "put that").
            read = self._plan_text(pointed, index, context)
            if len(read.steps) == 1 and read.pending is None and (
                    plan.pending is not None or len(plan.steps) != 1 or _tidier(read.steps[0], plan.steps[0])
                    or _spans_sentences(plan.steps[0])):
                return read
        tagged = list_tag_entry(text)
        if tagged is not None:
            # "buy greek yogurt #groceries": the hashtag says which list, as "add ... to my grocery list" does.
            read = self._plan_text(tagged, index, context)
            if read.steps and read.pending is None:
                return read
        for rewritten in (with_what_is_had(text), using_as_with(text)):
            # "got leftover spinach, any recipes": the thing had is what the question is about;
            # "what recipes use shrimp": recipes with shrimp.
            read = self._plan_text(rewritten, index, context) if rewritten is not None else None
            if read is not None and len(read.steps) == 1 and read.pending is None and (
                    not _sure(plan) or len(plan.steps) != 1 or (
                        plan.steps[0].name == read.steps[0].name and set(plan.steps[0].args) < set(read.steps[0].args))
                    or _tidier(read.steps[0], plan.steps[0])
                    or (plan.steps[0].name == read.steps[0].name and _value_words(plan.steps[0]) & _HAVING_WORDS)):
                return read
        # (one more thing after the place first: "..., and eggs" is no aside)
        for reread in (lambda: self._more_after_place(text, plan, index, context),
                       lambda: self._after_preamble(text, plan, index, context),
                       lambda: self._without_aside(text, plan, index, context),
                       lambda: self._without_purpose(text, plan, index, context),
                       lambda: self._said_after_place(text, plan, index, context)):
            found = reread()
            if found is not None:
                return found
        asked = self._whole_question(text, plan, index, context)
        if asked is not None:
            return asked
        scheduled = self._scheduled(text, plan, index, context)
        if scheduled is not None:
            return scheduled
        # (nor a thing of a domain no agent serves: "weather pls", "joke pls")
        things = bare_things(said, _NOT_THINGS | index.outside_words) if not _sure(plan) else None
        if things is not None:
            # "eggs and bacon pls": things and a word of asking, the shopping list's
            read = self._plan_text(things, index, context)
            if len(read.steps) == 1 and read.pending is None:
                return read
        entry = labelled_entry(text) if len(plan.steps) != 1 or plan.pending is not None else None
        if entry is not None:
            # "shopping list: baking soda" fits nothing surely as written; as "add ... to my shopping list" it may.
            read = self._plan_text(entry, index, context)
            if (read.steps and read.pending is None) or (not plan.steps and read.pending is not None):
                return read
        return plan

    def _first_word_typo(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """"add" or "put" mistyped into another real word, which spelling correction leaves alone ("ad yogurt
        to my list", "pit tortillas on the list"): a lower-case first word one edit from one of them that the
        whole took into a value, where the corrected message is surely one call. (Only these two: other
        words one edit from a verb are words of their own, "text mum", "clean the gutters", "tea bags".)"""
        words = text.split()
        first = words[0] if words else ""
        if len(words) < 3 or not first.isalpha() or not first.islower() or first in _TYPO_TARGETS:
            return None
        if not any(first in _value_words(step) for step in plan.steps):
            return None
        fixes = [w for w in _TYPO_TARGETS if OSA.distance(first, w) == 1]
        reads = [self._plan_text(" ".join([fix, *words[1:]]), index, context) for fix in fixes[:MAX_TYPO_FIXES]]
        sure = [r for r in reads if len(r.steps) == 1 and r.pending is None]
        return sure[0] if len(sure) == 1 else None

    def _compound(self, text: str, plan: Plan, tools: Sequence[Tool], context: PlanContext) -> Plan | None:
        """Two requests joined in one message ("put crumpets on the list and tell me what's on tomorrow",
        "add diapers, then tell me what I have on Saturday"), each read through the whole planner, so
        each gets the rewrites a message alone gets ("tell me what ..." is a question). Taken where each
        half is surely one call of its own and the whole was unsure or read otherwise."""
        text = " ".join(text.split())
        if quoted_spans(text):
            return None  # quoted words are one value: "add 'x; clear the list' to my notes" is one request
        for m in [*_JOINER.finditer(text), *_TWO_PLACES.finditer(text)]:
            left, right = text[: m.start()].strip(" ,"), text[m.end():].strip(" ,")
            if len(left.split()) < 2 or len(right.split()) < 2:
                continue
            if m.re is _TWO_PLACES:
                # "add crumpets to the shopping list and ring the council to my to-do list": the verb said once
                right = f"{left.split()[0]} {right}"
            alone = replace(context, pending=None)
            first, second = self.plan(left, tools, alone), self.plan(right, tools, alone)
            if not (len(first.steps) == len(second.steps) == 1 and first.pending is None and second.pending is None):
                continue
            steps = (first.steps[0], second.steps[0])
            if steps[0].name == steps[1].name:
                continue  # "put garlic and also ginger on my list": one call with both, as the whole reads it
            if plan.pending is None and [s.name for s in plan.steps] == [s.name for s in steps]:
                return None  # the whole read the same two calls
            if _sure(plan) and len(plan.steps) == 1 and plan.steps[0] not in steps and not _holds_words_of(
                    plan.steps[0], right, left):
                return None  # one call that holds both halves: "plan dinner and add the ingredients to my list"
            return Plan(steps=tuple(_without_repeats(list(steps), [(), ()])[0]))
        return None

    def _self_corrected(self, text: str, index: Index, context: PlanContext) -> Plan | None:
        """"add eggs, no wait, two dozen eggs": the correction replaces the thing said last before it; a
        correction that is a request of its own ("add eggs, no wait, take eggs off") is that request."""
        parts = split_correction(text)
        if parts is None:
            return None
        before, after = parts
        alone = self._plan_text(after, index, context)
        if alone.steps and _sure(alone) and len(alone.steps) == 1 and index.lex.is_known(after.split()[0].casefold()):
            return alone
        first = self._plan_text(before, index, context)
        entry = labelled_entry(before) if not _sure(first) else None
        if entry is not None and _sure(read_entry := self._plan_text(entry, index, context)):
            before, first = entry, read_entry  # "grocery list: butter... no, make it ghee"
        if len(first.steps) != 1:
            return None
        values = [v for v in first.steps[0].args.values() if isinstance(v, (list, str))]
        value = next((v for v in reversed(values) if v), None)
        if isinstance(value, list):
            last = value[-1]  # a list's last item
        elif isinstance(value, str):
            # a text's last words, as many as the correction has: "the code is 4471, sorry, 4472"
            size = len(after.split(",")[0].split())
            last = " ".join(value.split()[-size:]) if size < len(value.split()) else value
        else:
            return None
        if not isinstance(last, str):
            return None
        rewritten = corrected(before, last, after)
        if rewritten is None:
            return None
        read = self._plan_text(rewritten, index, context)
        # (the same function, or the same question of which one: "add white bread, no wait, whole wheat bread")
        return read if read.steps and (read.steps[0].name == first.steps[0].name or (
            first.pending is not None and first.pending.kind == "choose")) else None

    def _as_chore(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """"tick off defrost the turkey": a chore put in a list of things ("defrost the turkey" opens with a
        verb no thing's name opens with) is the to-do list's, where chores are kept: read again with that
        list named, and taken when a function that keeps chores does it with the same words."""
        chore: str | None = None  # the chore, when the plan put it in a list of things
        if len(plan.steps) == 1 and not holds_chores(index, plan.steps[0].name):
            items = [v for v in plan.steps[0].args.values() if isinstance(v, list)]
            if len(items) != 1 or len(items[0]) != 1 or not isinstance(items[0][0], str) \
                    or not opens_with_task(items[0][0]):
                return None
            chore = items[0][0].casefold()
        elif plan.steps:
            return None
        # (no plan at all: "tick off wash the car" read as a car wash, a service no agent offers; then only
        # a chore ticked off, a verb or two before it: "I want to order a pizza" is no chore to do)
        places = (" from my to-do list", " to my to-do list") if chore is not None else (" from my to-do list",)
        for place in places:
            read = self._plan_text(text + place, index, context)
            if len(read.steps) == 1 and read.pending is None and holds_chores(index, read.steps[0].name) and any(
                    isinstance(v, str) and (v.casefold() == chore if chore is not None else (
                        opens_with_task(v) and _lead_before(text, v) is not None))
                    for v in read.steps[0].args.values()):
                return read
        return None

    def _used_up(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """"the kids finished the cereal again, we need more", "is finished the onions, put on list": a thing
        (no chore: its words open with no verb) finished, beside a word of putting or needing, was used up,
        not done: it goes on the shopping list. Read so where it is surely one call of a list of things."""
        if len(plan.steps) != 1 or not holds_chores(index, plan.steps[0].name) or not _PUTTING.search(text) or not any(
                w in plan.steps[0].function for w in ("finish", "complete", "done")):
            return None  # (only a call that marks a chore done: adding one is what "put it on my to-dos" asks)
        values = [v for v in plan.steps[0].args.values() if isinstance(v, str)]
        if len(values) != 1 or opens_with_task(values[0]):
            return None
        thing = tidy_items([_FINISHED_TAIL.sub("", values[0].split(",")[0]).strip()])[0]
        if not isinstance(thing, str) or not thing:
            return None
        read = self._plan_text(f"add {thing} to my shopping list", index, context)
        return read if len(read.steps) == 1 and read.pending is None and not holds_chores(index, read.steps[0].name) else None

    def _needed_by(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """"I'll need tea bags for the weekend", "we need candles by friday": a thing needed, and when it is needed
        (no event at that time); read as the thing alone, where the whole was not surely one call."""
        if _sure(plan):
            return None
        m = _NEEDED_BY.match(" ".join(text.split()))
        if m is None:
            return None
        read = self._plan_text(f"we need {m.group('thing')}", index, context)
        return read if len(read.steps) == 1 and read.pending is None and not holds_chores(index, read.steps[0].name) else None

    def _an_event(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """"scrap my piano lesson", "remove the team lunch", "add dentist": one thing taken off or put on a list of
        things whose last word is a kind of event (EVENT_KINDS) is the calendar's, where such things are kept;
        read again with the calendar named, and taken where that is surely one call of another function (an
        event put on may still ask when)."""
        if len(plan.steps) != 1 or plan.pending is not None:
            return None
        lists = [v for v in plan.steps[0].args.values() if isinstance(v, list)]
        if len(lists) != 1 or len(lists[0]) != 1 or not isinstance(lists[0][0], str):
            return None
        thing = without_when(lists[0][0]).split()  # "the dentist on friday": the dentist
        last = thing[-1].casefold() if thing else ""
        function = plan.steps[0].function
        if last not in EVENT_KINDS or not ("remove" in function or "add" in function):
            return None
        # ("add dentist" is put on the calendar too, which then asks when: a kind of event is no thing to buy)
        place = "from my calendar" if "remove" in function else "to my calendar"
        read = self._plan_text(f"{text.rstrip(' .!')} {place}", index, context)
        if len(read.steps) == 1 and read.steps[0].name != plan.steps[0].name and (
                read.pending is None or ("add" in function and read.pending.kind == "missing")):
            return read
        return None

    def _after_preamble(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """The request after what was said before getting to it ("sorry, where was I, put tater tots on
        the list too", "hang on, she's yelling... ok, add string cheese to the grocery list"): from the
        first clause that opens with a verb some function knows and is surely a call on its own, when
        every clause before it is an interjection or asks nothing alone, and the whole was unsure or
        took those clauses' words into its values."""
        if quoted_spans(text):
            return None  # quoted words are one value, never split into clauses (nor obeyed)
        pieces = [p.strip() for p in _PREAMBLE_SPLIT.split(text) if p.strip()]
        if not 2 <= len(pieces) <= MAX_PREAMBLE_PIECES:
            return None
        for k in range(1, len(pieces)):
            # (its first word once the politeness or "anyway" before it went: "..., anyway add ice cream")
            words = (without_politeness(pieces[k]) or pieces[k]).split() or pieces[k].split()
            if not index.lex.is_known(words[0].casefold().strip(",.!?")) and not _PLACED.search(pieces[k]):
                continue  # (a thing and where it goes, with no verb, is a request too: "sprinkles on the list please")
            if len(words) >= MIN_ASIDE_WORDS and not self._plan_text(pieces[k], index, context).steps:
                continue  # "where were we, ok, add kumquats": a known word opens a clause that asks nothing
            before = pieces[:k]
            if not all(_interjection(p) or _about_oneself(p) or narrates(p) or (len(p.split()) >= MIN_ASIDE_WORDS and not _sure(
                    self._plan_text(p, index, context))) for p in before):
                return None
            rest = without_politeness(", ".join(pieces[k:]))
            read = self._plan_text(rest, index, context)
            if not _sure(read):
                # (what the thing is for, after the place, as when said alone: "... Put ice on the list for now.")
                read = self._without_purpose(rest, read, index, context) or read
            if not _sure(read):
                return None
            if len(plan.steps) == len(read.steps) == 1 and plan.steps[0].name == read.steps[0].name and (
                    set(plan.steps[0].args) - set(read.steps[0].args)):
                return None  # "I'm in the mood for japanese, what can I cook": the clause held a value
            said = " ".join(str(x) for step in plan.steps for v in step.args.values()
                            for x in (v if isinstance(v, list) else [v])).casefold()
            # (or its values hold words only the story says: "the dog chewed through the bin bags again. ugh. add ...")
            if not _sure(plan) or any(p.casefold() in said for p in before if not _interjection(p)) or _across(
                    plan, " ".join(before), " ".join(pieces[k:])) or any(
                    _holds_words_of(step, " ".join(before), " ".join(pieces[k:])) for step in plan.steps
                    if any(narrates(p) or _about_oneself(p) for p in before) and not _POINTS_BACK.search(pieces[k])) or any(
                    _interjection(p) and p.casefold() in said.split() for p in before) or (
                    _only_words_of(plan, " ".join(before), " ".join(pieces[k:]))) or (
                    # (or another call, leaving out the things the request names: "what a week ..., Anyway,
                    # dishwasher salt on the grocery list" read as what is on the list)
                    len(plan.steps) == len(read.steps) == 1 and plan.steps[0].name != read.steps[0].name
                    and _reads(index, plan.steps[0]) and not _POINTS_BACK.search(pieces[k])
                    and _value_words(read.steps[0]) and not _value_words(read.steps[0]) & _value_words(plan.steps[0])):
                if len(read.steps) == 1 and read.pending is None:  # a typical value said before still counts ("in the mood for thai, ...")
                    return replace(read, steps=(_with_typical(index, read.steps[0], ", ".join(before)),))
                return read
            return None
        return None

    def _without_aside(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """The request without a clause said beside it that asks nothing ("first time cooking, how do I make
        shakshuka", "how do i make dal, i've never cooked before"), where the rest alone is surely one call
        and the whole was unsure or the same call with more words in its values. A list of things is no
        aside: each of its items asks nothing alone either."""
        # (a sentence is a clause too: "anything on my calendar today? ngl I forgot"; never inside quotes)
        clauses = [c.strip() for c in (_CLAUSES if not quoted_spans(text) else _COMMAS).split(text) if c.strip()]
        if not 2 <= len(clauses) <= MAX_ASIDE_CLAUSES:
            return None
        listed = any(isinstance(v, list) and len(v) > 1 for step in plan.steps for v in step.args.values())
        for n, clause in enumerate(clauses):
            if len(clause.split()) < MIN_ASIDE_WORDS or (listed and not _off_to(clause)):
                continue  # (a list's item is no aside; where the user is off to is: "..., tomorrow go market")
            alone = self._plan_text(clause, index, context)
            sure = alone.steps and (alone.pending is None or alone.pending.kind == "confirm")
            if (sure and not _about_oneself(clause)) or alone.reply == OUT_OF_SCOPE or (
                    not alone.steps and clause.split()[0].casefold() in index.openers - _NOT_COMMANDS):
                continue  # the clause asks something itself ("wipe the grocery list" asks, then confirms; "set a
                # timer for the spuds" asks what no agent does, in a verb some function opens with)
            rest = ", ".join(c for k, c in enumerate(clauses) if k != n)
            read = self._plan_text(rest, index, context)
            if not read.steps and read.pending is None and not read.unmatched and plan.pending is not None:
                return read  # "lock the front door please, I forgot": the rest is for no agent, and says so
            if len(read.steps) != 1 or not _sure(read):
                continue  # (a confirmation is sure: "clear the shopping list, did the big shop" asks it)
            others = [c for k, c in enumerate(clauses) if k != n]
            if any(narrates(c) and _holds_words_of(read.steps[0], c, " ".join(o for o in others if o != c))
                   for c in others):
                continue  # the rest's values hold the story told first ("the fridge leaked ..."): no request's words
            if plan.pending is not None or len(plan.steps) != 1 or (
                    _reads(index, read.steps[0]) and _aside_leaked(read.steps[0], plan.steps[0], clause)) or (
                    (_off_to(clause) or (_about_oneself(clause) and set(plan.steps[0].args) <= set(read.steps[0].args)))
                    and _holds_words_of(plan.steps[0], clause, rest)):
                # (what is written down keeps every clause: "buy the blue paint, colour code 30BB")
                # A typical value the aside holds still counts: "I'm in the mood for thai, any recipes".
                return replace(read, steps=(_with_typical(index, read.steps[0], clause),))
        return None

    def _without_purpose(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """What the things on a list are for, said after the list ("add Hobnobs to the list for the big shop",
        "pop it on my list for the weekend bbq"): the request without it, where the whole was unsure and
        the rest is surely one call. A day there ("for friday") is no purpose: it may be the value."""
        text = " ".join(text.split())
        m = _PURPOSE_AFTER_PLACE.search(text)
        purpose = {w.casefold() for w in m.group(1).split()} if m is not None else set()
        if m is None or purpose & _DAY_NAMES or (_sure(plan) and not any(
                _value_words(step) & (purpose - _SMALL_WORDS) for step in plan.steps)):
            return None  # (a sure read whose values hold the purpose's words took it as a value: "weekly shop")
        read = self._plan_text(text[: m.start()], index, context)
        return read if len(read.steps) == 1 and read.pending is None else None

    def _said_after_place(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """Words said after where the thing goes that ask nothing ("add chips to the list ngl we're out", "yo
        can u add two minute noodles to the list mum said"): the request up to the place, where the whole
        was unsure or its values hold those words, the rest alone asks for no call and the request up to
        the place is surely one call."""
        m = _AFTER_PLACE.match(" ".join(text.split()))
        if m is None:
            return None
        if m.group("tail") and m.group("prep").casefold() in ("from", "off", "off of"):
            return None  # ("delete from calendar the dentist": what is taken off may follow where from, with no comma)
        tail = (m.group("tail") or m.group("aside")).strip().rstrip(".!?")
        if not tail:
            return None
        first = tail.split()[0].casefold().strip(",.!?")
        if first in _JOINING or first in index.openers - _NOT_COMMANDS or _MORE_MARK.search(tail) or (
                _sure(plan) and not any(_holds_words_of(step, tail, m.group("head")) for step in plan.steps)):
            return None  # ("... to the list and eggs", "... to the list, then remind me ...": more of the request)
        read = self._plan_text(m.group("head"), index, context)
        if len(read.steps) != 1 or read.pending is not None:
            return None
        if any(t.temporal or t.kind in ("num", "time", "date") for t in read_request(tail, index.lex, context.local_now()).toks) and (
                m.group("tail") or any(info.has_time for info in index.tools if info.tool.name == read.steps[0].name)):
            return None  # a day or a time after the place is the request's own ("what's on my calendar today");
            # after a comma, only where the call takes one ("..., is for the Sunday dinner" is why, for the list)
        # (the rest asks no call of its own, or only restates the need: "... to the list ngl we're out"; after a
        # comma, or is no sure call: "..., off to the coast on saturday")
        alone = self._plan_text(tail, index, context)
        said = alone.steps
        return read if not said or all(step.name == read.steps[0].name for step in said) or (
            m.group("aside") and (not _sure(alone) or _about_oneself(tail) or narrates(tail))) else None

    def _whole_question(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """A question about one agent's data that no example of it fits ("what's our attrition rate in the
        Denver office", "how many contractors do we have"): where that agent has the one function that
        takes the whole request (sql-explorer's ask), the message asks (a question word, a "?" or a
        measure's word) and says a word of that agent's own and of no other's, it goes there whole;
        only where the whole read nothing surely."""
        if _sure(plan) or not (plan.unmatched or plan.pending is not None):
            return None  # (a reply that the request is for no agent, by meaning, stands: "euro to dollar rate")
        whole = [(t, n) for t in index.tools for n in t.tool.properties if takes_whole_request(t.tool.properties, n)]
        if len(whole) != 1:
            return None
        info, name = whole[0]
        if plan.pending is not None and any(o.step.agent == info.tool.agent for o in plan.pending.options):
            return None  # a choice among that agent's own functions is asked as it is
        req = read_request(text, index.lex, context.local_now())
        words = {t.fix.casefold() for t in req.toks}
        telling = bool(req.toks) and req.toks[0].fix.casefold() in _TELLING
        if not (req.asks or text.rstrip().endswith("?") or words & _MEASURES or telling):
            return None
        # (a word of its subject: not a number nor a word like "left" or "recent")
        own = {w for w in domain_words(index, req, info.tool.agent, 0, len(req.toks))
               if w.isalpha() and len(w) > 3 and w not in _MEASURES and w not in _NO_SUBJECT}
        others = {w for t in index.tools if t.tool.agent != info.tool.agent
                  for w in domain_words(index, req, t.tool.agent, 0, len(req.toks))} - _TELLING
        if not own or others:
            return None
        return Plan(steps=(Step(info.tool.agent, info.tool.function, {name: text.strip()}),))

    def _scheduled(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """What happens and when, with no verb ("dentist tuesday 3pm", "lunch with Sam friday 1pm"): put in a
        diary, as "schedule ..." says; only where nothing fitted at all, the message names a time of day,
        asks nothing, and is short; and only a call that takes the time as a moment or a day."""
        if not plan.unmatched or "?" in text or len(text.split()) > MAX_SCHEDULED_WORDS:
            return None  # (a reply that it is for no agent, by meaning, stands: "football scores tonight")
        req = read_request(text, index.lex, context.local_now())
        # (a clock time, not a day alone: "milk tomorrow" is no appointment)
        if not req.toks or req.asks or req.toks[0].canon in VERB_HEADS or not any(
                t.kind == "time" or (t.temporal and t.kind == "num") for t in req.toks) or all(
                t.temporal or t.weight < 1.0 for t in req.toks):
            return None
        read = self._plan_text(f"schedule {text}", index, context)
        if len(read.steps) != 1 or (read.pending is not None and read.pending.kind != "missing"):
            return None
        info = next((t for t in index.tools if t.tool.name == read.steps[0].name), None)
        timed = info is not None and any(info.slots[n].kind in ("moment", "day") for n in read.steps[0].args
                                         if n in info.slots)
        return read if timed and not _reads(index, read.steps[0]) else None

    def _more_after_place(self, text: str, plan: Plan, index: Index, context: PlanContext) -> Plan | None:
        """"put toilet paper on the list and also paper towels": one more thing said after the place, read
        with the first ("put toilet paper and paper towels on the list"), where the whole was unsure."""
        m = _MORE_AFTER_PLACE.match(" ".join(text.split()))
        more = (m.group("more") or m.group("led") or m.group("marked")) if m is not None else ""
        if m is None or more.split()[0].casefold() in index.openers - _NOT_COMMANDS or _PLACED.search(more) or (
                any(t.temporal or t.kind in ("time", "date") for t in read_request(more, index.lex, context.local_now()).toks)) or (
                _sure(plan) and any(_holds_words_of(step, more, m.group("head")) for step in plan.steps)):
            return None  # ("... and remind me to ...": a request of its own; a sure whole that has the thing stands)
        read = self._plan_text(f"{m.group('head')} and {more} {m.group('place')}", index, context)
        return read if len(read.steps) == 1 and read.pending is None else None

    def _plan_text(self, text: str, index: Index, context: PlanContext) -> Plan:
        now = context.local_now()
        req = read_request(text, index.lex, now)
        if not any(t.weight >= 1.0 for t in req.toks) and not _said_as_an_example(index, req):
            return Plan(reply=capabilities(index, "Here is what I can do:"), unmatched=True)
        query = statement(index, req)
        if query is not None:  # "run SELECT ...": the statement is the whole of what is asked
            number, name, sql = query
            tool = index.tools[number].tool
            partial = PartialPlan(steps=(Step(tool.agent, tool.function, {name: sql}),), choices=((),),
                                  facts={tool.name: _facts(tool, False)}, index=0,
                                  now=now.isoformat(), timezone=context.timezone)
            return advance(partial)
        parts = _Parser(index, req).best(0, len(req.toks), 0)[0]
        parts, verdict = by_meaning(index, req, parts)
        if verdict is not None:
            return Plan(reply=verdict)
        # Every part must have something to do: a request in two parts whose second fits no function
        # (meaning vetoed every fit of it) is not half done, it is not understood, as a weak first part.
        if not parts or parts[0].score < WEAK or any(not part.ranked for part in parts):
            return Plan(reply=capabilities(index, "Sorry, I don't know how to do that. Here is what I can do:"), unmatched=True)

        steps: list[Step] = []
        choices: list[tuple[Step, ...]] = []
        facts: dict[str, FunctionFacts] = {}
        for part in parts:
            top = part.ranked[0]
            if top.score >= ACCEPT:
                # Functions that fit about as well as the best: the user chooses.
                options = [top, *(m for m in part.ranked[1:MAX_OPTIONS] if m.score >= top.score - MARGIN)]
                options = settle(index, req, without_absent_values(index, req, options), context.recent_agent)
                options = unnamed_kind(index, req, options, context.recent_agent, len(parts) == 1)
                if len(parts) == 1:  # "what's left?" straight after the grocery list: that list
                    options = follows_recent(index, req, options, context.recent_agent)
                options = _first_of_one_readers(index, options)
            else:
                # Not sure of any: the best few, to confirm or choose from.
                options = [m for m in part.ranked[:MAX_OPTIONS] if m.score >= WEAK]
            as_steps = tuple(_step(index, m, req) for m in options)
            several = len({index.tools[m.tool].tool.agent for m in options}) > 1
            for m in options:
                tool = index.tools[m.tool].tool
                facts[tool.name] = _facts(tool, several)
            steps.append(as_steps[0])
            # A single option kept as a choice means "not sure": the user is asked to confirm the guess,
            # unless the guess only reads and lacks nothing (_harmless).
            unsure = top.score < ACCEPT and not _harmless(index, options, len(parts))
            choices.append(as_steps if len(as_steps) > 1 or unsure else ())
        steps, choices = _without_repeats(steps, choices)
        steps, choices = _lists_merged(steps, choices)
        partial = PartialPlan(
            steps=tuple(steps), choices=tuple(choices), facts=facts, index=0,
            now=now.isoformat(), timezone=context.timezone,
        )
        return advance(partial)


_POINTERS = frozenset({"it", "that", "them", "this", "those", "these", "there"})


def _said_as_an_example(index: Index, req: Request) -> bool:
    """A message of small words only that one of the functions' own examples says word for word ("what do we
    need" for the shopping list): a request, where small words alone otherwise ask what Sidekick can do."""
    if any(t.fix in _POINTERS for t in req.toks):
        return False  # "what's on it now?": what "it" is, the conversation says (dialogue), not an example
    return any(m.unexplained == 0 and not m.missing and not m.missed and m.score >= ACCEPT and not any(
        takes_whole_request(index.tools[m.tool].tool.properties, n) for n in index.tools[m.tool].tool.properties)
        for m in candidates(index, req, 0, len(req.toks), ACCEPT))  # ("how many" alone is no HR question)


def _long_words(text: str, size: int = 3) -> set[str]:
    """The words of `text` of at least `size` letters, casefolded (small words say nothing of a clause)."""
    return set(re.findall(rf"[\w']{{{size},}}", text.casefold()))


def _across(plan: Plan, before: str, after: str) -> bool:
    """A value of the plan holds words of both sides of a clause boundary ("supermarket now - what do"):
    the whole read across it."""
    near, far = _long_words(before), _long_words(after)
    for step in plan.steps:
        for v in step.args.values():
            for x in v if isinstance(v, list) else [v]:
                words = _long_words(x) if isinstance(x, str) else set()
                if words & (near - far) and words & (far - near):
                    return True
    return False


_THE_SPEAKER = frozenset({"i", "i'm", "im", "we", "we're", "me", "us", "i've", "we've", "i'll", "we'll"})


def _only_words_of(plan: Plan, half: str, other: str) -> bool:
    """Every word of the plan's values is said in `half` and none in `other` ("I'm at Target, what do we need"
    read as the item "I'm"): the plan took the clause before the request for its value."""
    said = {w for step in plan.steps for w in _value_words(step)}
    mine = {w.casefold().strip(".,;:!?") for w in half.split()}
    theirs = {w.casefold().strip(".,;:!?") for w in other.split()}
    # (the speaker themself taken for the value: "I'm"; a typical value said first stays, "craving mexican food")
    return bool(said & _THE_SPEAKER) and said <= mine and not said & theirs


def _holds_words_of(step: Step, half: str, other: str) -> bool:
    """The step's values hold a word of `half` that `other` does not have ("tell me what's on tomorrow"
    read as an item to add)."""
    said = {w for w in _value_words(step) if len(w) >= 4}
    return bool(said & (_long_words(half, 4) - _long_words(other, 4)))


def _lists_merged(steps: list[Step], choices: list[tuple[Step, ...]]) -> tuple[list[Step], list[tuple[Step, ...]]]:
    """Two sure calls of one function that differ only in one list ("add baby wipes, we're nearly out of
    those" read as two adds) as one call with both lists, tidied together (a clause of the speaker's among
    the things goes, as it does in one list)."""
    out: list[Step] = []
    kept: list[tuple[Step, ...]] = []
    for step, choice in zip(steps, choices, strict=True):
        last = out[-1] if out else None
        if last is not None and not choice and not kept[-1] and last.name == step.name and set(last.args) == set(step.args):
            lists = [n for n in step.args if isinstance(step.args[n], list)]
            if len(lists) == 1 and all(last.args[n] == step.args[n] for n in step.args if n != lists[0]) and \
                    isinstance(last.args[lists[0]], list):
                merged = tidy_items([*last.args[lists[0]], *step.args[lists[0]]])
                out[-1] = replace(last, args={**last.args, lists[0]: list(dict.fromkeys(merged))})
                continue
        out.append(step)
        kept.append(choice)
    return out, kept


def _without_repeats(steps: list[Step], choices: list[tuple[Step, ...]]) -> tuple[list[Step], list[tuple[Step, ...]]]:
    """The steps without one that repeats another's call with less said ("prep me for Monday, what do I
    need to know": the briefing for Monday, once); a step kept as a choice is never dropped."""
    keep = list(range(len(steps)))
    for j in range(len(steps)):
        for i in keep:
            if i != j and not choices[j] and steps[i].name == steps[j].name and (
                    steps[j].args.items() <= steps[i].args.items()) and (steps[i].args != steps[j].args or i < j):
                keep.remove(j)
                break
    return [steps[k] for k in keep], [choices[k] for k in keep]


def _asked_of(readers: Sequence[Tool], named: Addressed) -> Step | None:
    """A question put to one agent that none of its patterns fit ("ask the grocery app what we need"):
    its only reading function that needs nothing, else its only one that searches by one text."""
    free = [t for t in readers if not t.required]
    if len(readers) == 1 and free:
        return Step(free[0].agent, free[0].function, {})
    searching = [t for t in readers if len(t.required) == 1
                 and (t.properties.get(t.required[0]) or {}).get("type") == "string"]
    if len(searching) == 1:
        tool = searching[0]
        return Step(tool.agent, tool.function, {tool.required[0]: topic(named.rest)})
    return None


# (and "so" before asking, after a story with no comma: "... she's gluten free so can you find me ...")
_PREAMBLE_SPLIT = re.compile(r"[,;]|\.{2,}|…|\s[-–—]\s|(?<=\w)[.?!]+\s+|\sso\s(?=(?:can|could|would) you\s|please\s|pls\s)")
MAX_PREAMBLE_PIECES = 5
# Words said alone before a request that are never its item: "sorry, ...", "ok, ...", "grand, ...".
_INTERJECTIONS = frozenset(
    "sorry ok okay grand right so well yeah yes oh hey anyway alright cool great lovely perfect hmm um uh wait "
    "also now then righto sweet fine aye ach och lol haha ugh argh sigh oof meh phew jeez honestly seriously "
    "genuinely literally tbh ngl man wow yikes".split())


# A word that points back at what was said before it: "can you get that in my calendar".
_POINTS_BACK = re.compile(r"\b(?:it|that|them|those|this|these)\b", re.IGNORECASE)


# An exclamation: "what a mess", "such a pain", "how annoying", "so typical" (two words after its opening at most).
_EXCLAMATION = re.compile(r"(?:what an?|such an?)(?: [\w']+){1,2}|(?:how|so) (?!many\b|much\b|long\b|often\b|far\b|old\b"
                          r"|about\b|come\b)[\w']+", re.IGNORECASE)


_FIRST_CLAUSE = re.compile(r"^(?P<first>[^,.;!?]{1,40})[,.;!?]+\s+(?P<rest>\S.*)$", re.DOTALL)


def _without_exclamation(text: str) -> str:
    """The message without an exclamation said first ("what a day, ...", "such a pain. ..."); unchanged when
    nothing follows it."""
    m = _FIRST_CLAUSE.match(text)
    if m is None or _EXCLAMATION.fullmatch(m.group("first").strip().casefold()) is None:
        return text
    return m.group("rest")


def _interjection(piece: str) -> bool:
    said = piece.casefold().strip(" .!?")
    return said in _INTERJECTIONS or _EXCLAMATION.fullmatch(said) is not None


def _sure(plan: Plan) -> bool:
    return bool(plan.steps) and (plan.pending is None or plan.pending.kind == "confirm")


# That something is needed or used up: a remark that says so asks for it ("out of milk again, ugh").
_NEEDING = re.compile(r"\b(?:out of|outta|ran out|run out|running out|need|needs|low on|no more|used up|the last of"
                      r"|finished the|nae|none left)\b", re.IGNORECASE)
# Words an agent's examples use that name no subject: when, how and what of ("the most recent", "by name").
_NO_SUBJECT = frozenset({"recent", "latest", "name", "still", "left", "work", "cost", "bill", "rate", "mean", "since",
                         "each", "year", "month", "week", "quarter", "today", "type", "status", "reason"})
# Words that ask for a measure of something, said without a question word: "avg tenure for engineers".
_MEASURES = frozenset({"average", "avg", "mean", "median", "total", "rate", "percentage", "percent", "ratio", "number",
                       "count", "breakdown", "break", "compare", "trend", "split", "distribution", "how", "many",
                       "much"})
# Verbs that ask for figures, said first: "kindly share attrition in Sales this year", "revert with the count".
_TELLING = frozenset({"share", "tell", "give", "show", "pull", "send", "list", "report", "revert", "fetch", "provide",
                      "get"})
# Words that make a part of a message something other than a thing to get (labels.bare_things).
_NOT_THINGS = GENERIC_WORDS | QUESTION_WORDS | VERB_HEADS | frozenset(
    {"i", "you", "we", "me", "my", "the", "it", "this", "that", "is", "are", "was", "not", "no", "yes", "ok", "okay", "hi",
     "hello", "hey", "thanks", "thank", "bye", "sorry", "help", "stop", "wait", "cancel", "undo"})
MAX_LEAD_WORDS = 2  # words of feeling before a command ("ugh, honestly, add ...")
MAX_SCHEDULED_WORDS = 10  # "dentist tuesday 3pm": what and when, said tersely
_FEELING_LEADS = frozenset({"oh", "ok", "okay", "well", "hmm", "argh", "omg", "god", "man", "ah", "aw", "yeah", "right"})
# Kinds of event, said as the last word of what is taken off: never a thing on a shopping list.
EVENT_KINDS = frozenset({
    "appointment", "appt", "meeting", "lesson", "lessons", "class", "session", "lunch", "brunch", "haircut", "checkup",
    "check-up", "dentist", "doctor", "physio", "interview", "party", "practice", "rehearsal", "recital", "playdate",
    "visit", "viewing", "webinar", "standup", "stand-up", "sync", "one-on-one", "1:1", "training", "therapy",
    "consultation", "reservation", "booking", "call", "catch-up", "catchup", "offsite", "workshop", "exam",
    "game", "match", "service", "mot", "hearing", "ceremony", "orientation", "shift"})
# A word of putting on a list or of needing more, beside "finished the X" (engine._used_up).
_PUTTING = re.compile(r"\b(?:put|add|pop|stick|chuck|bung|need|needs|get more|buy more|grab more)\b", re.IGNORECASE)
# A thing needed by a time: "I'll need tea bags for the weekend" (not "need to ...": a task).
_NEEDED_BY = re.compile(r"^(?:i|we)(?:'ll| will|'re going to| are going to| am going to)? (?:also )?(?:need|want)(?! to\b) "
                        r"(?P<thing>[^,;]{1,60}?) (?:for|by|before|on) (?:the |this |next )?(?:weekend|\w+day|tomorrow|tonight|"
                        r"morning|evening|week|party|trip|holiday|holidays|braai|bbq|barbecue)[.!]?$", re.IGNORECASE)
# What is said after the thing in such a message: "all the cereal AGAIN so add cereal ..."
_FINISHED_TAIL = re.compile(r"\s(?:again|so|without|and|before)\b.*$", re.IGNORECASE)
# Words an example may open with that command nothing: who or what a remark is about ("my mum's list ...").
_NOT_COMMANDS = frozenset({"a", "i", "my", "the", "we", "me", "in", "on", "is", "are", "am", "some", "something", "no"})
# Generic words that command nothing when they open a clause: who or what it is about ("everyone was happy").
_NOT_COMMANDING = frozenset({"everyone", "everybody", "people", "person", "user", "thing", "something", "anything",
                             "one", "item", "this", "next", "last", "first", "coming", "upcoming", "soon", "again"})
# What opens a request even without a verb some example begins with: "please ...", "can you ...".
_ASKING = frozenset({"please", "pls", "plz", "kindly", "can", "could", "would", "will", "remind", "remember", "note",
                     "add", "put", "need", "want", "let", "make", "tell", "show"})


def _a_remark(text: str, plan: Plan, tools: Sequence[Tool]) -> bool:
    """A remark read as a request (remarks.py): words of judgement in the plan's values ("is always a mess
    haha" as an item), or said beside an unsure or made-up call ("the meeting ran way over today, so
    annoying"); and no clause of the message opens with a command or asks a question, nor says a need."""
    if not plan.steps or not text.split() or "?" in text:
        return False
    if a_saying(text):
        return True  # "remember when we went to Raglan", "let's take this offline"
    index = get_index(tools)
    openers = index.openers - _NOT_COMMANDS
    clauses = _CLAUSES.split(text)
    while len(clauses) > 1 and _interjection(clauses[0]):
        clauses = clauses[1:]  # "what a day, the boss was giving out the whole time": the exclamation asks nothing
    text = ", ".join(clauses)
    for clause in clauses:  # (a sentence is a clause too: "... again. ugh. add bin bags ...")
        if _PLACED_LAST.search(clause) and not narrates(clause):
            return False  # a thing and where it goes, said last: "..., ugh. Anyway, sprinkles on the list please."
            # (not in a story: "I forgot the milk even though it was on the list")
        # (a word or two of feeling may open the command: "ugh add clean my room to my todos")
        if subject_verb(clause) is not None:
            continue  # (a thing and its verb: "book club was fun last night" names no booking)
        for word in clause.split()[:MAX_LEAD_WORDS + 1]:
            first = word.strip(",.!").casefold()
            # (a word the same as an opener counts: "nuke the grocery list lol" is "clear ...")
            if first in _ASKING or first in openers or index.lex.canon_word(first) in openers or (
                    first in GENERIC_WORDS and first not in _NOT_COMMANDING) or (
                    first in VERB_HEADS) or (
                    first in QUESTION_WORDS):
                return False
            if first not in JUDGING and first not in _FEELING_LEADS:
                break
    if any(lacked_no_things(text) & _value_words(step) for step in plan.steps):
        return True  # "I'm all out of ideas for the party" read as ideas to buy: out of what no shop sells
    if _NEEDING.search(text):
        return False  # "we're out of milk again, so annoying": a need, said with feeling
    if _a_story(clauses):
        return True  # a story that names no thing done or had: "I just got home from work", "we got back late"
    said = judging_words({w.strip(",.!").casefold() for w in text.split()})
    if len(clauses) > 1 and _interjection(clauses[-1]) and _EXCLAMATION.fullmatch(clauses[-1].strip(" .!").casefold()):
        return True  # "finished the book, what a ride": an exclamation last says how it felt
    # (or a story of how something went, with nothing in it to do: "we had tacos for dinner, everyone was happy")
    return bool(judging_words({w for step in plan.steps for w in _value_words(step)}) or said) or tells_how_it_went(text)


def _a_story(clauses: Sequence[str]) -> bool:
    """The clauses tell what happened to the speaker and name no thing done or had, and ask nothing ("I just
    got home from work", "we got back late last night, so tired")."""
    return any(narrates(c) for c in clauses) and not asks_or_plans(" ".join(clauses)) and all(
        (narrates(c) and not things_of(c)) or _interjection(c) for c in clauses)


def _first_of_one_readers(index: Index, options: list[Match]) -> list[Match]:
    """Close fits that are all ways one agent shows things ("got a recipe for fish and chips?": the recipe
    or ideas like it; "list my watched pages": the list or a check of them): the best one, at once. Showing
    changes nothing and the answer says what was shown, so "no, the ideas" costs no more than a question
    would; a choice that changes something is still asked."""
    if len(options) < 2 or options[0].missing:
        return options
    tools = [index.tools[m.tool].tool for m in options]
    if all(t.reads for t in tools) and len({t.agent for t in tools}) == 1:
        return options[:1]
    return options


def _harmless(index: Index, options: Sequence[Match], parts: int) -> bool:
    """A lone guess that is safe to act on: the request's only part, one function, which only reads
    ("any tasks left?" read as the to-do list) and lacks no value. Showing a list changes nothing and
    is answered at once; asking "did you mean ...?" first costs the user a turn for nothing."""
    if parts != 1 or len(options) != 1 or options[0].missing:
        return False
    return index.tools[options[0].tool].tool.reads


# A clause that opens with the user telling about themselves ("I'm new to cooking", "I've never cooked
# before") states something; beside a request, it is why they ask, not what.
_ONESELF = ("i'm ", "im ", "i am ", "i've ", "ive ", "i have never ", "i was ", "i've never ")
# Where the user is off to next is about them too: "later I go NTUC buy", "then we're heading to Costco"
# (Singapore's English leaves the person out after a time: "tomorrow go market").
_OFF_TO = re.compile(r"(?:(?:later|then|after that|afterwards|tomorrow|tonight|soon) )?"
                     r"(?:i|we)(?:'ll| will|'m|'re| am| are)? (?:go|going|gonna go|head|heading|pop|popping) "
                     r"|(?:later|tomorrow|tonight|after work|after this) (?:go|going) "
                     # with no one said: "..., off to the coast on saturday", "..., heading to Sobeys after work"
                     r"|(?:(?:i'm|im|we're|i am|we are) )?(?:off|heading|headed|going) (?:to|out|over|down|up|home|away)\b")


def _off_to(clause: str) -> bool:
    return _OFF_TO.match(clause.casefold().replace("\u2019", "'")) is not None


def _about_oneself(clause: str) -> bool:
    # (and what the speaker did, told after the request: "..., I already bought it", "..., we got some yesterday")
    said = clause.casefold().replace("\u2019", "'")
    return said.startswith(_ONESELF) or _off_to(clause) or (said.startswith(("i ", "we ")) and narrates(clause)) or (
        _tells_of_it(said)) or _EMPTY_PLACE.match(said) is not None


# Where a thing goes, said in a clause: "sprinkles on the shopping list please".
_PLACED = re.compile(r"\b(?:on|onto|to|in|into) (?:the |my |our )?(?:[\w'-]+ )?(?:list|groceries|calendar|diary|to-dos|todos)\b",
                     re.IGNORECASE)


_PLACED_LAST = re.compile(_PLACED.pattern + r"(?: (?:please|pls|plz|thanks|too|as well|for me))?(?: (?:please|pls|plz|thanks))?"
                          r"[.!]*$", re.IGNORECASE)


# Where things are kept, said to be empty: a state beside the request, never a thing to buy ("dorm fridge is
# empty, put rice on the list", "the cupboards are bare").
_EMPTY_PLACE = re.compile(r"(?:the |my |our )?(?:[\w'-]+ )?(?:fridge|freezer|pantry|cupboard|cupboards|press"
                          r"|presses|larder|cabinet|cabinets|kitchen|shelves|shelf)(?: is| are|'s)?(?: (?:totally|completely|"
                          r"basically|pretty much|looking|so|nearly|almost))? (?:empty|bare|a wasteland|dead)\b")


# How the thing stands, said beside the request with a pronoun for it or in words of state and time alone:
# "cancel footy training, it's off", "put Shan masala in the list, we have finished it yesterday", "..., don't
# need it", "..., we are out since yesterday". (Never a thing of its own: "..., we're out of milk" names milk.)
_ABOUT_IT = ("it's ", "it is ", "its ", "that's ", "they're ", "they are ", "we have ", "we've ", "we are ", "we're ",
             "i have ", "don't need ", "dont need ", "do not need ", "no need", "it was ", "they were ")
_IT_WORDS = frozenset({"it", "them", "this", "that", "those", "these", "one"})
_STATE_WORDS = frozenset({"out", "since", "yesterday", "today", "already", "finished", "gone", "empty", "done", "over",
                          "off", "ages", "while", "week", "anymore", "more", "now", "all", "last", "night"})


def _tells_of_it(said: str) -> bool:
    words = re.findall(r"[a-z']+", said)
    if not said.startswith(_ABOUT_IT) or len(words) > MAX_TELLING_WORDS:
        return False
    rest = words[2:] if said.startswith(("don't need", "dont need", "no need")) else words[1:]
    rest = [w for w in rest if w not in ("have", "are", "is", "was", "were", "need", "not", "do", "'re", "'ve", "been",
                                         "the", "we", "i", "just", "still", "only", "finish", "used")]
    return bool(set(rest) & _IT_WORDS) or all(w in _STATE_WORDS for w in rest)


MAX_CHORE_LEAD = 2  # "tick off", "cross off": the words before a chore that no plan read


def _lead_before(text: str, value: str) -> str | None:
    """The words before `value` in `text` when there are one to MAX_CHORE_LEAD of them."""
    at = text.casefold().find(value.casefold())
    lead = text[:at].split() if at > 0 else []
    return " ".join(lead) if 1 <= len(lead) <= MAX_CHORE_LEAD else None


def _with_typical(index: Index, step: Step, said: str) -> Step:
    """The step with its empty parameters that take typical values filled from `said`, if it holds one."""
    info = next((i for i in index.tools if i.tool.name == step.name), None)
    if info is None:
        return step
    args = dict(step.args)
    fill_typical(args, info.slots, said)
    return step if args == dict(step.args) else replace(step, args=args)


def _reads(index: Index, step: Step) -> bool:
    return any(entry.tool.name == step.name and entry.tool.reads for entry in index.tools)


def _aside_leaked(step: Step, than: Step, aside: str) -> bool:
    """`than` is `step` with the aside's words in its values ("I'm new to cooking" as the ingredient):
    the same call, no argument fewer, and every word of its values that `step` lacks is the aside's."""
    if step.name != than.name or not set(than.args) <= set(step.args):
        return False
    extra = _value_words(than) - _value_words(step)
    said = {w.casefold().strip(".,;:!?") for w in aside.split()}
    return bool(extra) and extra <= said


def _tidier(step: Step, than: Step) -> bool:
    """The same call, its values made of fewer of the same words."""
    if step.name != than.name:
        return False
    mine, theirs = _value_words(step), _value_words(than)
    return bool(mine) and mine < theirs


_SENTENCE_END = re.compile(r"[.!?]\s+\S")


def _spans_sentences(step: Step) -> bool:
    """A value of the call runs on past the end of a sentence ("chicken nuggets. Add it"): it took in the next
    sentence, which was a request of its own."""
    return any(_SENTENCE_END.search(v) for value in step.args.values()
               for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))


# A value holding these took in the clause about having ("only got 25" as the ingredient).
_HAVING_WORDS = frozenset({"got", "have", "has", "i've", "we've", "ive", "there's"})


def _value_words(step: Step) -> set[str]:
    values = [v for value in step.args.values() for v in (value if isinstance(value, list) else [value])]
    return {w.casefold().strip(".,;:!?") for v in values if isinstance(v, str) for w in v.split()}


def by_meaning(index: Index, req: Request, parts: list[_Part]) -> tuple[list[_Part], str | None]:
    """The parts re-scored by meaning (meaning.py), or a reply when the request is for no installed agent."""
    tools = [info.tool for info in index.tools]
    out: list[_Part] = []
    for part in parts:
        closeness = Closeness(req.span_text(part.a, part.b), tools)
        ranked = rescore([_whole_request(index, req, m) for m in part.ranked], closeness, tools, ACCEPT - MARGIN,
                         ACCEPT, MARGIN)
        ranked = typical_values(index, req, prefer_reading(index, req, ranked))
        # ("when was the Opera House built" is no "when is {title}": what happened in the world is no one's data here)
        ranked = [m for m in ranked if not tense_veto(req, m)]
        fitted = ranked
        vetoes = {m.tool: why for m in ranked[:MAX_OPTIONS]
                  if (why := generic_veto(index, req, m, tools)) is not None}
        if vetoes:
            top, top_score = ranked[0].tool, ranked[0].score
            ranked = [m for m in ranked if m.tool not in vetoes]
            # A veto overrules a fit, and meaning may say the words are of another domain ("set a timer");
            # words that fitted nothing and are of no domain ("frobnicate the quux") need no veto.
            if top in vetoes and (top_score >= WEAK or vetoes[top] == "outside") and (not ranked or ranked[0].score < WEAK):
                # The words fitted only generic templates, and meaning says the request is about
                # something else: no call (and no "did you mean ...?" for a function it is not about).
                return [], OUT_OF_SCOPE if "outside" in vetoes.values() else DIFFERENT_THING
        # A time of day in a list of things: the timed agent's fit, though generic on words, is meant.
        ranked = timed_things(index, req, ranked, fitted)
        unfiltered = ranked
        if closeness.ok:  # a doubtful fit is offered only when its meaning is near too
            ranked = [m for m in ranked if m.score >= ACCEPT or closeness.by_tool[m.tool] >= GUESS_CLOSENESS]
        senior = senior_by_meaning(ranked, closeness, tools)
        fit = _fit_alone(index, req, senior, part.a, part.b) if senior is not None and ranked else None
        if fit is not None:
            ranked = sorted([replace(fit, score=max(fit.score, ranked[0].score)), *(
                replace(m, score=m.score - NEWCOMER) if m.tool == ranked[0].tool else m
                for m in ranked if m.tool != senior)], key=lambda m: m.score, reverse=True)
        if len(parts) == 1:
            if ranked and outside(index, req, ranked[0], closeness):
                return [], OUT_OF_SCOPE
            if not ranked or ranked[0].score < WEAK:
                found = rescue_tool(closeness)
                fit = _fit_alone(index, req, found, part.a, part.b) if found is not None else None
                agreed = agreeing(unfiltered, closeness) if fit is None else None
                guess = fit or agreed
                if guess is not None and names_elsewhere(index, req, guess):
                    # A weak fit, and a word that names what no agent does ("text Anna that ..."): no call.
                    return [], OUT_OF_SCOPE
                if fit is not None:
                    # Meaning picks it, and the words fit it best too: acted on, not confirmed.
                    agreed = agreeing(unfiltered, closeness)
                    ranked = [replace(fit, score=ACCEPT) if agreed is not None and agreed.tool == fit.tool else fit]
                elif agreed is not None:
                    ranked = [replace(agreed, score=AGREED_SCORE)]
                elif (asked := _asked_whole(index, req, part.a, part.b, closeness)) is not None:
                    ranked = [asked]
                elif closeness.ok and closeness.outside > max(closeness.by_tool, default=0.0) + OUTSIDE_GAP:
                    return [], OUT_OF_SCOPE
            elif ranked[0].score < ACCEPT and agreeing(ranked, closeness) is ranked[0] \
                    and not names_elsewhere(index, req, ranked[0]):
                # A fit short of sure that meaning picks too, and no other function's words come
                # close: acted on, not confirmed ("what are my open tasks").
                ranked = [replace(ranked[0], score=ACCEPT), *ranked[1:]]
        out.append(_Part(part.a, part.b, ranked))
    return out, None


WHOLE_DOMAIN_WORDS = 2  # words of its agent's domain a request needs to be put whole to a function that takes it so


def _asked_whole(index: Index, req: Request, a: int, b: int, closeness: Closeness) -> Match | None:
    """A request no template fits, put whole to the one function that takes a whole request (a question to
    an HR database) when it speaks that function's agent's domain: two of its words ("leave requests for the
    sales department"), or one in a question ("what's attendance like in operations"), no other agent's,
    and meaning does not put it nearer a domain no agent serves ("pay my electricity bill")."""
    found: list[int] = []
    for n, info in enumerate(index.tools):
        if not any(takes_whole_request(info.tool.properties, name) for name in info.tool.properties):
            continue
        said = {w for w in domain_words(index, req, info.tool.agent, a, b) if w.isalpha()}  # no "top 5"
        if closeness.ok and (closeness.outside >= closeness.by_tool[n] or (
                closeness.best()[0] != n and len(said) < WHOLE_DOMAIN_WORDS)):
            # meaning must not put the request nearer a domain no agent serves, nor, on one domain word
            # alone, nearer another function ("show attrition by team" has two: they outweigh it)
            continue
        others = any(domain_words(index, req, agent, a, b) for agent in {i.tool.agent for i in index.tools}
                     if agent != info.tool.agent)
        if not others and (len(said) >= WHOLE_DOMAIN_WORDS or (said and (req.asks or _shows(index, req, a)))):
            found.append(n)
    if len(found) != 1:
        return None
    fit = _fit_alone(index, req, found[0], a, b)
    return replace(_whole_request(index, req, fit), score=ACCEPT) if fit is not None else None


_SHOWING = frozenset({"show", "list", "give", "tell", "count"})


def _shows(index: Index, req: Request, a: int) -> bool:
    """The request opens by asking to be shown something ("show attrition for last quarter"): a question
    put as a command."""
    return a < len(req.toks) and (req.toks[a].canon in _SHOWING or req.toks[a].fix in _SHOWING)


def names_elsewhere(index: Index, req: Request, m: Match) -> bool:
    """A word of the fitted span the fit's own words did not take names a domain no agent serves."""
    said = {pos for pos, _ in m.said}
    return any(names_a_domain(req, k, index.outside_words) for k in range(m.a, m.b) if k not in said)


def _whole_request(index: Index, req: Request, m: Match) -> Match:
    """A fit whose function takes the whole request in a parameter is not missing that parameter."""
    whole = [name for name in m.missing if takes_whole_request(index.tools[m.tool].tool.properties, name)]
    if not whole:
        return m
    args = {**m.args, **{name: req.span_text(m.a, m.b) for name in whole}}
    missing = [name for name in m.missing if name not in whole]
    return replace(m, args=args, missing=missing, score=min(1.0, m.score / MISSING_FACTOR ** len(whole)))


def _fit_alone(index: Index, req: Request, tool: int, a: int, b: int) -> Match | None:
    """The best fit of one function's patterns to toks[a:b], scored as a guess to confirm at least."""
    best: Match | None = None
    for p in index.patterns:
        if p.tool != tool:
            continue
        m = align(index, req, p, a, b)
        if m is not None and (best is None or m.score > best.score):
            best = m
    if best is None:
        return None
    return replace(best, score=max(best.score, WEAK))


def _facts(tool: Tool, name_agent: bool) -> FunctionFacts:
    """What a question shows of a function: among several agents' functions, which agent and publisher."""
    facts = FunctionFacts.of(tool)
    if not name_agent:
        return facts
    by = f" by {tool.publisher}" if tool.publisher else ""
    return replace(facts, summary=f"{facts.summary} (the {tool.agent} agent{by})")


def _step(index: Index, m: Match, req: Request) -> Step:
    info = index.tools[m.tool]
    tool = info.tool
    # Politeness, how the user came to need a thing, where it goes: never part of a value.
    args = tidy_args(_with_kind_word(m, req), {name: slot.kind for name, slot in info.slots.items()}, tool.examples,
                     m.pattern.example, writes=not tool.reads)
    for name in [n for n, v in args.items() if v == []]:
        del args[name]  # (nothing left of a list once who said it went: "we're nearly [out of those]")
    redistribute(args, info.slots, info.param_words)
    fill_typical(args, info.slots, req.span_text(m.a, m.b))
    strip_own_head(args, info.slots, info.words, index.lex.canon_word)
    for name, slot in info.slots.items():
        if slot.kind == "day" and name not in args and says_my_day(req.span_text(m.a, m.b)):
            args[name] = "today"  # "how's my day looking": no day named, and "my day" is today
    drop_echoes(args, info.slots, info.required, info.words, index.lex.canon_word, tool.reads)
    for name in tool.properties:
        # A parameter that wants the user's whole request (sql-explorer's question) gets all of this
        # part's words: "how many people in sales took sick leave" is the question, not "sales took ...".
        if takes_whole_request(tool.properties, name) and name in args:
            args[name] = " ".join(req.span_text(m.a, m.b).split())
    return Step(tool.agent, tool.function, args)


def _with_kind_word(m: Match, req: Request) -> dict[str, Any]:
    """The fit's values, where a word read as the place a pattern names ("calendar" for "appointment")
    follows a value with none of the place's small words said: "add a dentist appointment friday 3pm"
    fits "add {title} on my calendar {start}" with "appointment" for "calendar", yet the word is part of
    the title, and still says which function is meant."""
    args = dict(m.args)
    said = dict(m.said)
    for name, (a, b) in m.spans.items():
        value = args.get(name)
        if not isinstance(value, str) or said.get(b) is None or any(s <= b < e for s, e in m.spans.values()):
            continue
        if said[b] in _PLACE_NOUNS and _PLACE_WORDS & set(m.missed) and (
                " ".join(value.casefold().split()) == " ".join(req.span_text(a, b).casefold().split())):
            args[name] = req.span_text(a, b + 1)
    return args


_PLACE_NOUNS = frozenset({"calendar", "list", "notes", "schedule", "diary"})
_PLACE_WORDS = frozenset({"on", "in", "into", "to", "onto"})


class _Parser:
    """Best fits of spans of one message, memoised: splitting asks for the same spans often."""

    def __init__(self, index: Index, req: Request) -> None:
        self.index = index
        self.req = req
        self.memo: dict[tuple[int, int], _Part] = {}
        self.best_memo: dict[tuple[int, int, int], tuple[list[_Part], float, float]] = {}

    def parse(self, a: int, b: int) -> _Part:
        key = (a, b)
        if key not in self.memo:
            # The whole message may be answered with "did you mean ...?" down to WEAK; a part of
            # it is only used when it fits (ACCEPT), or nearly does (a close second to choose from).
            floor = WEAK if (a, b) == (0, len(self.req.toks)) else ACCEPT - MARGIN
            self.memo[key] = _Part(a, b, candidates(self.index, self.req, a, b, floor))
        return self.memo[key]

    def best(self, a: int, b: int, depth: int) -> tuple[list[_Part], float, float]:
        """The best reading of toks[a:b] as one request or several in a row: parts, score, words left over.

        A split wins when every part fits and either the parts fit clearly better
        than the whole, or they account for words the whole leaves over ("add milk
        to my list and plan dinner" read as one plan_dinner leaves "milk") at
        about the same score.
        """
        key = (a, b, depth)
        if key not in self.best_memo:
            self.best_memo[key] = self._best(a, b, depth)
        return self.best_memo[key]

    def _best(self, a: int, b: int, depth: int) -> tuple[list[_Part], float, float]:
        whole = self.parse(a, b)
        left_over = whole.ranked[0].unexplained if whole.ranked else 0.0
        if (whole.ranked and whole.ranked[0].clean) or depth >= MAX_STEPS - 1:
            return [whole], whole.score, left_over
        best: tuple[list[_Part], float, float] = ([whole], whole.score, left_over)
        rank = -1.0
        incomplete = bool(whole.ranked and whole.ranked[0].missing)
        for left_end, right_start in split_points(self.index, self.req, a, b):
            if self.req.fits_left <= 0:
                break  # the message has had its share of work: what was found so far stands
            left = self.parse(a, left_end)
            # A part that fits only by leaving a required value out ("take a note" | "pick up dry
            # cleaning") is no better a reading than the whole, which has the value.
            if left.score < ACCEPT or (left.ranked[0].missing and not incomplete):
                continue
            rest, rest_score, rest_left = self.best(right_start, b, depth + 1)
            if rest_score < ACCEPT or (any(p.ranked[0].missing for p in rest) and not incomplete):
                continue
            score = min(left.score, rest_score)
            unexplained = left.ranked[0].unexplained + rest_left
            clearer = score > whole.score + SPLIT_GAIN
            fuller = left_over - unexplained >= SPLIT_EXPLAINS and score >= whole.score - SPLIT_COST
            # Among the splits that beat the whole, the best scoring; fewer steps when about equal.
            parts = [left, *rest]
            this_rank = score - STEP_COST * len(parts)
            if (clearer or fuller) and this_rank > rank:
                best, rank = (parts, score, unexplained), this_rank
        return best


def split_points(index: Index, req: Request, a: int, b: int) -> list[tuple[int, int]]:
    """Where toks[a:b] may divide into two requests: (end of the first, start of the second).

    After ";", ".", "?" or "!" always; after "and", "then", "also" or a comma only
    where some example could begin ("milk, eggs and bread" has none, "..., then
    show me the list" has one).
    """
    toks = req.toks
    split_words = req.lex.split_words
    out: list[tuple[int, int]] = []
    for t in range(a + 1, b):
        if toks[t].quote and toks[t].quote == toks[t - 1].quote:
            continue  # inside quotes: what is quoted is one value, not more requests
        if toks[t].canon in split_words and toks[t - 1].canon not in split_words:
            start = t
            while start < b and (toks[start].canon in split_words or
                                 (toks[start].canon == "after" and start + 1 < b and toks[start + 1].canon == "that")):
                start += 2 if toks[start].canon == "after" else 1
            if start < b and _opens(index, toks[start]):
                out.append((t, start))
        elif toks[t - 1].sep in (";", ".", "!", "?") or (toks[t - 1].sep == "," and toks[t].canon in index.openers
                                                          and _opens(index, toks[t])):
            if toks[t].canon not in split_words:
                out.append((t, t))
    return out[:MAX_SPLIT_POINTS]


def _opens(index: Index, tok: Tok) -> bool:
    """The word may begin a request (a likely typo of such a word counts, after "and" or "then"); a verb's
    form in -s never does: "add diapers and wipes" names a thing, where "and wipe the list" commands."""
    if (tok.fix.endswith("s") and not tok.fix.endswith("ss") and tok.fix != tok.canon and tok.kind == "word"
            and tok.fix not in {t.tool.agent for t in index.tools}):  # ("notes: call mum" names the agent)
        return False
    return any(alt in index.openers for alt in tok.alts)


def candidates(index: Index, req: Request, a: int, b: int, floor: float = 0.0) -> list[Match]:
    """Each function's best fit to toks[a:b] among the patterns worth fitting, best first.

    Patterns that could not score `floor` even if everything else fitted are not tried.
    """
    present: dict[str, float] = {}
    for t in req.toks[a:b]:
        for alt, sim in t.alts.items():
            if sim > present.get(alt, 0.0):
                present[alt] = sim
    # A quick estimate per pattern: how much of its words the message has, times how much of
    # the message's example-words it has (so "remove {items}" does not crowd out "remove {items}
    # from my grocery list" when the message says "from my groceries").
    # A pattern's words are counted element by element, at the element's own weight: each element
    # one of the message's words could be earns what it weighs (the best likeness among them).
    weights = index.weights
    said = 0.0
    earned: dict[tuple[int, int], float] = {}
    for canon, sim in present.items():
        postings = index.element_postings.get(canon)
        if not postings:
            continue
        said += weights.get(canon, 1.0) * sim
        for pid, ei, weight in postings:
            key = (pid, ei)
            earned[key] = max(earned.get(key, 0.0), weight * sim)
    bound: dict[int, float] = {}
    for (pid, _), value in earned.items():
        bound[pid] = bound.get(pid, 0.0) + value
    # How much of the message's weight each pattern has words for: the rest costs at least stray_cost.
    total = 0.0
    has: dict[int, float] = {}
    for t in req.toks[a:b]:
        total += t.weight
        pids: set[int] = set()
        for alt in t.alts:
            pids.update(index.postings.get(alt, ()))
        for pid in pids:
            has[pid] = has.get(pid, 0.0) + t.weight
    # Fit the most promising first; skip a pattern once even a perfect fit could not come
    # close to the best fit so far (upper bound: every slot filled, nothing extra said).
    order: list[tuple[float, float, int]] = []
    for pid, got in bound.items():
        p = index.patterns[pid]
        upper = min((got + p.slot_credit) / max(p.required_weight + p.slot_credit, 1e-9), 1.0) * p.factor
        upper *= 1.0 - p.stray_cost * max(total - has.get(pid, 0.0), 0.0) / max(total, 1e-9)
        estimate = min(got / max(p.required_weight, 0.2), 1.0) * (0.5 + 0.5 * min(got / said, 1.0)) * p.factor
        order.append((estimate, upper, pid))
    order.sort(reverse=True)
    uppers = {pid: upper for _, upper, pid in order}
    # A fit costs about the square of the span's length: long spans get fewer, so that no
    # message, however long or odd, costs much more than an everyday one.
    n = max(b - a, 1)
    max_fits = max(MIN_FITS, min(MAX_FITS, FIT_BUDGET // n))
    best: dict[int, Match] = {}
    tried: list[Match] = []
    top = 0.0
    per_tool: dict[int, int] = {}
    for _, upper, pid in order:
        p = index.patterns[pid]
        if upper < floor or upper <= top - PRUNE_MARGIN or (p.tool in best and upper <= best[p.tool].score):
            continue
        if per_tool.get(p.tool, 0) >= FITS_PER_FUNCTION:
            continue
        per_tool[p.tool] = per_tool.get(p.tool, 0) + 1
        m = align(index, req, p, a, b)
        req.fits_left -= 1
        if m is None:
            continue
        tried.append(m)
        top = max(top, m.score)
        if p.tool not in best or m.score > best[p.tool].score:
            best[p.tool] = m
        if len(tried) >= max_fits or req.fits_left <= 0:
            break
    leader = max(best.values(), key=lambda m: m.score, default=None)
    if leader is not None and not leader.clean:
        # No fit explains the whole message in the written order: try the best patterns reordered.
        tried.sort(key=lambda m: m.score, reverse=True)
        for m in tried[: max(2, REORDER_TRIES * max_fits // MAX_FITS)]:
            upper = uppers.get(m.pattern.pid, 1.0) * REORDER_FACTOR
            if upper < max(floor, best[m.tool].score) or upper <= top - PRUNE_MARGIN:
                continue
            for variant in m.pattern.variants:
                if req.fits_left <= 0:
                    break
                req.fits_left -= 1
                v = align(index, req, variant, a, b)
                if v is not None and v.score > best[v.tool].score:
                    best[v.tool] = v
    return sorted(best.values(), key=lambda m: m.score, reverse=True)


def capabilities(index: Index, opener: str) -> str:
    """What the installed agents can do: each function's summary and one example, by agent."""
    lines = [opener]
    listed = 0
    for agent in dict.fromkeys(info.tool.agent for info in index.tools):
        if listed >= MAX_LISTED:
            break
        lines.append(f"{agent}:")
        for tool in (info.tool for info in index.tools if info.tool.agent == agent):
            if listed >= MAX_LISTED:
                break
            example = render_example(tool.examples[0]) if tool.examples else ""
            said = f' — e.g. "{example}"' if example else ""
            lines.append(f"  - {addressed(tool.summary)}{said}")
            listed += 1
    if len(index.tools) > listed:
        lines.append(f"... and {len(index.tools) - listed} more.")
    return "\n".join(lines)


def render_example(example: str) -> str:
    """An example as a person would read it: first alternatives, no optional parts, slots as "…"."""
    expansions = expand(example)
    if not expansions:
        return example
    out = []
    for piece in expansions[0]:
        if piece.optional:
            continue
        out.append("…" if piece.slot else piece.choices[0] if piece.choices else (piece.text or ""))
    return " ".join(" ".join(out).split())
