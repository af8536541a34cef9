"""Questions put as statements: "i wonder what's on the list", "remind me what i need to get".

People often wrap a question in a clause about wanting to know it. The wrapper is said to
Sidekick and asks nothing of an agent; the question inside is the request. An embedded
question keeps a statement's word order ("what I need to get"), so it is put back in a
question's ("what do I need to get"), the order the agents' examples are written in.
"Remind me to call mum" is no question: only a wrapper followed by a question word counts. "Tell me
when ..." is no wrapper either: it asks to be told later ("tell me when the page says remote"), a watch.
"""

from __future__ import annotations

import re

# What wraps the question, then the question word it must be followed by.
_WRAPPED = re.compile(
    r"^(?:i wonder|i was wondering|i'm wondering|im wondering|wondering|do you know|d'you know|any idea|no idea"
    r"|remind me|i'd like to know|i want to know|i need to know|i would like to know|i'd love to know|i'd like to see"
    r"|i would like to see|i want to see|i wanna know|i wanna see|let me see|i am wanting to know|i was wanting to know"
    r"|(?:could|can|would) you (?:please )?tell me|(?:please |kindly )?tell me(?= (?:what|which|who|where|how)\b)"
    # "tell me what I need from the store" (never "tell me when ...": that asks to be told later, a watch)
    r"|tell me(?= (?:what|what's|whats|which|who|where|how|if|whether)\b)"
    r"|i forgot|i forget|i can't remember|i cant remember|not sure)"
    r",? (?=(?:what|what's|whats|when|where|which|who|how|if|whether)\b)",
    re.IGNORECASE,
)
# An embedded question's subject before its verb: "what i need", "what we have on" (no "do").
_STATEMENT_ORDER = re.compile(r"^(what(?: \w+)?|which \w+|when|where) (i|we|you) (need|have|got|want|should)\b",
                              re.IGNORECASE)
# "if"/"whether" asks yes or no: "i wonder if i have anything on today" is "do i have anything on today".
_YES_NO = re.compile(r"^(?:if|whether) (i|we) (have|need)\b", re.IGNORECASE)


def unwrapped_question(text: str) -> str | None:
    """The question a statement wraps, in a question's word order; None when the text wraps none."""
    m = _WRAPPED.match(text.strip())
    if m is None:
        return None
    return in_question_order(text.strip()[m.end():])


def in_question_order(question: str) -> str:
    """An embedded question ("what we need", "if i have anything on") in a question's word order."""
    yes_no = _YES_NO.match(question)
    if yes_no is not None:
        return f"do {yes_no.group(1)} {yes_no.group(2)}{question[yes_no.end():]}"
    order = _STATEMENT_ORDER.match(question)
    if order is not None and order.group(3).casefold() != "should":
        return f"{order.group(1)} do {order.group(2)} {order.group(3)}{question[order.end():]}"
    return question


# A question whose question word stays where its answer goes, as many Englishes put it ("for tomorrow I
# have what?", "my dentist is when?", "today got what?"): put in the order the examples are written in.
# Each pattern is anchored, with one lazy run before fixed words: nothing repeats a space.
_IN_PLACE = (
    (re.compile(r"^(?P<x>[^?]{1,80}?) (?P<s>i|we|you) (?P<v>have|got|need|need to buy|need to do|must do|should cook)"
                r" (?P<w>what|when|which)\s?\??$", re.IGNORECASE), "{w} do {s} {v} {x}?"),
    (re.compile(r"^(?P<x>[^?]{1,80}?) (?P<v>is|are|was|will be) (?P<w>what|when|where|what time|which day)(?: again)?\s?\??$",
                re.IGNORECASE), "{w} {v} {x}?"),
    (re.compile(r"^(?P<x>[^?]{1,80}?) (?:got|have|has) what\s?\??$", re.IGNORECASE), "what's on {x}?"),
)


def question_word_last(text: str) -> str | None:
    """The question with its question word first ("what do I have for tomorrow?"); None for other text."""
    said = " ".join(text.split())
    for pattern, order in _IN_PLACE:
        m = pattern.match(said)
        if m is not None:
            return order.format(**{k: v.casefold() if k in ("s", "v", "w") else v for k, v in m.groupdict().items()})
    return None
