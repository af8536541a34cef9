"""A question whether something is already in a place: "is milk on the list", "did I already put eggs on
the list", "check if crumpets is on the list", "is the dentist in my calendar".

Such a question names a thing and a verb of putting, so read as written it puts the thing there again
("did I put eggs on the list" adding eggs). What the user wants is to see the place and find out, so
the question is read as "what's on <the place>": the place's own function that shows what it holds
answers it. Every pattern is matched on the text with single spaces and has no nested repetition
(tests/security/test_regex_backtracking.py).
"""

from __future__ import annotations

import re

# Where things are kept, as a question names it; "there" / "on it" is the list a shopping question means.
_PLACE = (r"(?P<place>(?:the |my |our |your )?(?:[\w-]+ )?(?:list|calendar|schedule|diary|agenda|notes|to-do list"
          r"|todo list|to-dos|todos|tasks)|there|it)")
_AFTER = r"(?: already| yet| still| or not| by any chance| at all| or did i forget(?: it)?)?[?.!]?$"
_MEMBERSHIP = (
    # "is milk on the list", "are the eggs on there or not", "is the dentist in my calendar"
    re.compile(rf"^(?:is|are|was|were) (?:there )?(?:any )?(?P<thing>[^\s,;.!?][^,;.!?]{{0,60}}?) (?:on|in|onto) {_PLACE}{_AFTER}",
               re.IGNORECASE),
    # "did I already put eggs on the list", "have we added bin bags to the list", "did you add it to my to-dos"
    re.compile(r"^(?:did|have|had|has) (?:i|we|you|someone|anyone|somebody|anybody) (?:already |just |ever )?"
               r"(?:put|add|added|write|wrote|written|stick|stuck|pop|popped|chuck|chucked|get|got|jot|jotted)"
               rf"(?: down)? [^\s,;.!?][^,;.!?]{{0,60}}? (?:on|to|in|into|onto) {_PLACE}{_AFTER}", re.IGNORECASE),
    # "check if crumpets is on the list", "can you see whether oat milk is already on my list"
    re.compile(r"^(?:(?:can|could) you )?(?:please )?(?:check|see|look|find out)(?: for me)? (?:if|whether) [^\s,;.!?][^,;.!?]{0,60}? "
               rf"(?:is|are|'s)(?: already| still)? (?:on|in) {_PLACE}{_AFTER}", re.IGNORECASE),
    # "do we have any eggs on the list", "do we got bread on there already"
    re.compile(r"^(?:do|does|did) (?:we|i|you) (?:still |already )?(?:have|got) (?:any )?[^\s,;.!?][^,;.!?]{0,60}? "
               rf"(?:on|in) {_PLACE}{_AFTER}", re.IGNORECASE),
    # "there is milk in the list?": the question asked in a statement's order (with its question mark)
    re.compile(rf"^there (?:is|are|'s) (?:any |some )?[^\s,;.!?][^,;.!?]{{0,60}}? (?:on|in) {_PLACE}(?: already| yet| still)?\?$",
               re.IGNORECASE),
    # "did the cream make it onto the shopping list", "has the bin bags gone on the list yet"
    re.compile(r"^(?:did|has|have) (?:the |my |our )?[^\s,;.!?][^,;.!?]{0,60}? (?:make it|get|got|go|gone|end up|ended up)"
               rf"(?: (?:on|onto|in|into|to))? {_PLACE}{_AFTER}", re.IGNORECASE),
    # "does the list have eggs", "does my shopping list include milk"
    re.compile(rf"^(?:does|do) {_PLACE} (?:already )?(?:have|has|include|contain|got) [^\s,;.!?][^,;.!?]{{0,60}}?[?.!]?$",
               re.IGNORECASE),
)
# "is there any chance you could put eggs on the list": a thing asked of someone is a request, no question
_ASKED = re.compile(r"\b(?:you|u|ya|someone)\b", re.IGNORECASE)
# "anything left on the list?", "is there anything else on my shopping list", "much on the to-do list?": a
# question about the place as a whole, whichever list the conversation is about ("the list" after the to-dos).
_ANYTHING = re.compile(rf"^(?:is there |are there |got )?(?:anything|something|much|stuff|any items)(?: else)?(?: left| still)? "
                       rf"(?:on|in) {_PLACE}{_AFTER}", re.IGNORECASE)
_VAGUE_PLACE = frozenset({"there", "it", "the list", "my list", "our list", "your list"})


def membership_question(text: str) -> str | None:
    """"what's on <the place>" for a question whether something is in it; None for any other text."""
    said = " ".join(text.split())
    for pattern in _MEMBERSHIP:
        m = pattern.match(said)
        if m is not None and not ("thing" in m.groupdict() and _ASKED.search(m.group("thing"))):
            place = m.group("place").casefold()
            # "on there", "on the list": with no other word, the shopping list is what such a question means
            return "what's on my shopping list" if place in _VAGUE_PLACE else f"what's on {place}"
    m = _ANYTHING.match(said)
    if m is not None and m.group("place").casefold() not in ("there", "it"):
        return f"what's on {m.group('place')}"
    return None
