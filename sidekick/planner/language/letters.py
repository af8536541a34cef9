"""A request written as a letter: "Good afternoon. My daughter tells me you keep the shopping list now.
Please put Metamucil on it. Regards, Harold".

Older users write to Sidekick as they would to a person: a salutation, who they are, why they write,
the request, a sign-off with their name. Only the request asks anything of an agent; the rest, read
with it, puts the writer's name and greeting into the values. The salutation, a sentence that only
says who is writing, and the sign-off are dropped; a sentence that only tells the context stays
(the request's "it" may point into it: "you keep the shopping list ... put Metamucil on it"), and
"it" as the place something goes is replaced by the place that sentence names.

Only a message that opens with a salutation or closes with a sign-off is read as a letter.
"""

from __future__ import annotations

import re

MAX_LETTER_CHARS = 600  # a letter longer than this is no request to a list

_SENTENCES = re.compile(r"(?<=[.!?:])(?<!\b[A-Z]\.)\s+")  # never after an initial: "Walter P. Kowalski"
# A sentence that only greets, with whom it is to and who writes: "Good afternoon.", "Hello, it is Ruth
# again.", "To whom it may concern:", "Hello there, this is Grandma June."
_SALUTATION = re.compile(
    r"^(?:(?:good (?:morning|afternoon|evening|day)|hello|hi|hey|greetings|dear|to whom it may concern|to the computer"
    r"|hello there|hi there)(?: [\w'-]+){0,2}[,]?)"
    r"(?: (?:this is|it is|it's|i am|i'm|my name is|here is|here's) [\w'.-]+(?: [\w'.-]+){0,3})?[.!:,]?$",
    re.IGNORECASE)
# A sentence that only says who writes: "This is Ruth again.", "It's Grandma June here."
_INTRODUCTION = re.compile(
    r"^(?:this is|it is|it's|my name is|here is|here's) [A-Z][\w'.-]*(?: [\w'.-]+){0,3}[.!]?$")
# The sign-off, with the writer's name: "Regards, Harold", "Sincerely, Walter P. Kowalski", "Love, Nana",
# "Thank you kindly, Dorothy", "Many thanks."
_SIGN_OFF = re.compile(
    r"^(?:(?:kind |best |warm |warmest )?regards|best wishes|sincerely|yours (?:sincerely|truly|faithfully)|love"
    r"|lots of love|much love|with love|thanks|thank you(?: kindly| very much| so much)?|many thanks|cheers|warmly"
    r"|god bless|bless you|with thanks|thanking you|all the best|take care)(?:,? [\w'.-]+(?: [\w'.-]+){0,3})?[.!]?$",
    re.IGNORECASE)
# The same sign-off closing the last sentence after a comma: "... to my list, many thanks, June"
_CLOSING = re.compile(
    r",\s*(?:(?:kind |best |warm )?regards|sincerely|yours (?:sincerely|truly|faithfully)|love|many thanks"
    r"|thank you(?: kindly)?|thanks)(?:,? [A-Z][\w'.-]*(?: [\w'.-]+){0,2})?[.!]?$", re.IGNORECASE)
# Where things are kept, named in a sentence of the letter: "you keep the shopping list now"
_PLACE = re.compile(
    r"\b(?:the|my|our) (?:(?:grocery|shopping|to-do|todo|task) list|list|calendar|diary|notes)\b", re.IGNORECASE)
# "it" as where the thing goes or comes from: "put Metamucil on it", "take it off it"
_PLACE_IT = re.compile(r"\b(on|onto|to|in|into|off|from) it\b(?=[\s.!?,]*$)", re.IGNORECASE)


_WHAT_THERE = re.compile(r"\bwhat(?:'s| is) (?:there|on there|in there|on it|in it)\b", re.IGNORECASE)


def with_place(clause: str, before: str) -> str | None:
    """`clause` with "it" or "there" as a place replaced by the place `before` names ("don't put milk on the
    list, ... just show me what's there": what's on the list); None when there is nothing to replace."""
    place = _PLACE.search(before)
    if place is None:
        return None
    named = _WHAT_THERE.sub(f"what's on {place.group(0)}", clause)
    named = _PLACE_IT.sub(lambda m: f"{m.group(1)} {place.group(0)}", named)
    return named if named != clause else None


def unwrapped_letter(text: str) -> str | None:
    """The request inside a letter, or None when `text` reads as no letter (or nothing would be left)."""
    if len(text) > MAX_LETTER_CHARS:
        return None
    sentences = [s.strip() for s in _SENTENCES.split(text.strip()) if s.strip()]
    if len(sentences) < 2:
        return None
    opened = bool(_SALUTATION.match(sentences[0]))
    if opened:
        sentences = sentences[1:]
    closed = False
    while sentences and _SIGN_OFF.match(sentences[-1]):
        sentences, closed = sentences[:-1], True
    if not (opened or closed) or not sentences:
        return None
    sentences = [s for s in sentences if not _INTRODUCTION.match(s)]
    if not sentences:
        return None
    last = _CLOSING.sub("", sentences[-1]).strip()
    before = " ".join(sentences[:-1])
    place = _PLACE.search(before)
    if place is not None and _PLACE_IT.search(last):
        # "... you keep the shopping list now. Please put Metamucil on it": on the shopping list
        # The sentence before only told where: the request now says it itself.
        return _PLACE_IT.sub(lambda m: f"{m.group(1)} {place.group(0)}", last)
    return " ".join([*sentences[:-1], last]) if last else None
