"""What the user has, said beside a question about it: "got leftover spinach, any recipes",
"I have eggs in the fridge, what could I cook", "i only have 20 mins, what can i make".

The clause about having states no request of its own; it says what the question is about. Read
alone, the question asks for ideas with nothing to go on, and dropped as an aside, the thing the
user has is lost. Put back as the "with ..." the agents' examples use for it ("what can I make
with spinach"), or, for a length of time, as "in N minutes", the question carries it.
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.narration import past_form

# The clause opens by saying the user (or the household) has something. "got X" alone is chat for
# "I've got X"; "there's X in the fridge" too.
_HAVING = re.compile(
    r"^(?:(?:so|well|ok|okay|um|hmm|right|alright)\s+)?"
    r"(?:(?:i|we)\s*(?:'ve|have)?\s+(?:only\s+|just\s+|still\s+)?(?:got|have)|i've|ive|weve|we've"
    r"|(?:only\s+|just\s+|still\s+)?got|there's|there is|there are|theres)\s+(?P<what>.+)$",
    re.IGNORECASE,
)
# Said before the thing: how much of it, and that it is left over.
_AMOUNT_HEAD = re.compile(
    r"^(?:some|a few|a bit of|a little|a lot of|lots of|loads of|a load of|a bunch of|plenty of|heaps of|tons of|a ton of|half a"
    r"|leftover|left-over|left over|spare|extra|an? (?:old|open|opened|half) )\s*",
    re.IGNORECASE,
)
# Said after it: where it is, and that it must be used.
_WHERE_TAIL = re.compile(
    r"(?<=\s)(?:(?:sitting |lying )?(?:in|at) (?:the |my |our )?(?:fridge|freezer|cupboard|cupboards|pantry|larder"
    r"|house|home|kitchen)|(?:that|which) (?:needs?|has|have) (?:to be )?(?:using|used) up|(?:that|which) (?:is|are)"
    r" (?:about to go off|going off|on (?:its|their) way out)|to use up|to get rid of|to finish|left ?over|leftover"
    r"|lying around|going spare|going off|kicking around|to cook|to spare)$",
    re.IGNORECASE,
)
# What one "has" that is no thing in hand: "I've never cooked before", "I have a question", "got to go".
_NOT_A_THING = re.compile(
    r"^(?:never|not|no|nothing|been|to|done|had|just|already|always|ever|only just|a (?:question|feeling|meeting|call"
    r"|appointment|doctor|dentist|date|problem|minute|sec|second)|an (?:idea|appointment|hour ago)|time|work|kids|guests"
    r"|people|company|visitors|plans)\b",
    re.IGNORECASE,
)
_TIME = re.compile(r"^(?:about |around |like )?(\d{1,3}) ?(?:min|mins|minutes|minute)\b", re.IGNORECASE)
_HALF_HOUR = re.compile(r"^(?:about |around |like )?(?:half an hour|30 minutes)\b", re.IGNORECASE)
_AN_HOUR = re.compile(r"^(?:about |around |like )?an hour\b", re.IGNORECASE)
_CLAUSES = re.compile(r"[,;]|\s[-–—]\s|[.?!]+\s")  # pieces are stripped after: no \s* around (backtracking)
MAX_THING_WORDS = 5  # a thing one has is a few words; more is a story, not an ingredient
MAX_TAIL_WORDS = 6  # ... and where it is or why it must go ("that needs to be used up")


# "recipes that use shrimp", "something to make using up chickpeas": using a thing is cooking with it,
# and the agents' examples say "with".
_USING = re.compile(
    r"\b(recipes?|dish(?:es)?|meals?|something|anything|ideas?|dinners?|make|cook|do)\s+(?:that\s+|which\s+)?"
    r"(?:uses?|using|have|has|contain|contains|include|includes|call\s+for|calls\s+for)(?:\s+up)?\s+(?=\w)",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(?:it|them|those|that)\b(?=[\s?!.]*$)", re.IGNORECASE)


def using_as_with(text: str) -> str | None:
    """"what recipes use shrimp" as "what recipes with shrimp"; None when nothing is used."""
    said = _USING.sub(lambda m: f"{m.group(1)} with ", text)
    return said if said != text else None


def with_what_is_had(text: str) -> str | None:
    """The question with the thing the other clause says the user has ("what could I cook with eggs"),
    or None when the text is not one clause about having and one other clause."""
    clauses = [c.strip() for c in _CLAUSES.split(text.strip()) if c.strip()]
    if len(clauses) != 2:
        return None
    for having, question in (clauses, clauses[::-1]):
        said = _had(having)
        if said is not None and _HAVING.match(question) is None:
            question = question.rstrip(" ?!.")
            if said.startswith("with ") and _PRONOUN.search(question):
                # "what can I do with it": "it" is the thing had
                return _PRONOUN.sub(said.removeprefix("with "), question, count=1)
            return f"{question} {said}"
    return None


def _had(clause: str) -> str | None:
    """'with X' or 'in N minutes' for a clause saying the user has X or N minutes."""
    m = _HAVING.match(clause.strip(" ?!."))
    if m is None:
        return None
    what = m.group("what")
    if _NOT_A_THING.match(what) or _done(what):
        return None
    minutes = _minutes(what)
    if minutes is not None:
        return f"in {minutes} minutes"
    if len(what.split()) > MAX_THING_WORDS + MAX_TAIL_WORDS:
        return None  # a story, not a thing in hand
    changed = True
    while changed:
        what_left = _AMOUNT_HEAD.sub("", what)
        tail = _WHERE_TAIL.search(what_left)
        cut = (what_left[: tail.start()] if tail else what_left).strip()
        changed, what = cut != what and bool(cut), cut or what
    if not what or len(what.split()) > MAX_THING_WORDS or not re.search(r"[a-z]", what, re.IGNORECASE):
        return None
    return f"with {what}"


def _done(what: str) -> bool:
    """What was done to a thing pointed at, not a thing had: "(we have) finished it yesterday" ("cooked chicken",
    "smoked salmon" are things)."""
    words = what.casefold().split()
    return len(words) >= 2 and past_form(words[0]) and words[1] in ("it", "them", "that", "this", "those", "all", "up", "off")


def _minutes(what: str) -> int | None:
    m = _TIME.match(what)
    if m is not None:
        return int(m.group(1))
    if _HALF_HOUR.match(what):
        return 30
    if _AN_HOUR.match(what):
        return 60
    return None


# "put something on the list", "add a few things to the groceries": the user means to say what next;
# the word stands in for the value, it is not one. Only right before where it goes.
_PLACEHOLDER = re.compile(
    r"(?<!\S)(?:(?:some|a few|a couple of|a couple|an?|one or two|more)\s+)?"
    r"(?:something|somethin|smth|sth|stuff|things|thing|items?|bits|bits and bobs|bits and pieces)\s+"
    r"(?=(?:on|onto|to|in|into)\s+(?:the|my|our|a)\b)",
    re.IGNORECASE,
)


def without_placeholder(text: str) -> str | None:
    """The request without a word standing in for its value ("put on the list"), so that the value is
    asked for; None when there is none."""
    said = _PLACEHOLDER.sub("", text, count=1)
    return said if said != text else None
