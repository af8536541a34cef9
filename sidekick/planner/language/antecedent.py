"""A thing said first and a command about it after: "we're out of soda, add it to the list".

People often name the thing in one clause and give the command in the next, pointing back
with "it" or "them". The command decides what to do; the thing is what the pronoun stands
for. Read as the command with the thing in the pronoun's place: "add we're out of soda to
the list" (the value is tidied later: language.values drops "we're out of").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamer.sidekick.planner.language.lexicon import FILLERS, PRONOUNS
from dreamer.sidekick.planner.language.narration import past_form
from dreamer.sidekick.planner.language.values import PUT_VERBS, tidy_text

# "<thing>, <one or two command words> it|them <the rest>"; the command words do not include a
# pronoun themselves, and the thing clause has no comma of its own (a list of things is no clause).
# The clause is split off in Python, not by a leading lazy group: that one backtracked
# polynomially on long runs of spaces (tests/security/test_regex_backtracking.py).
# "that" points back only before where the thing goes ("put that on the list"): "note that ..." says what follows.
_COMMAND = re.compile(
    r"(?:and\s+|so\s+|please\s+|kindly\s+|(?:can|could|would|will) (?:you|ya|u)\s+)?"
    r"(?P<verb>[a-z]+(?:\s+(?:up|down|off|out|on|in))?)\s+"
    r"(?:(?P<pronoun>it|them|em|'em|both|both of them|all of them|those|these|more|some more)\b(?P<rest>[^,;]*)"
    r"|that\b(?P<where>\s+(?:on|onto|in|into|to|off|from)\b[^,;]*)"
    # no pronoun, straight to the list: "capsicum is finished at home, please add to list"
    r"|(?P<bare>(?:on|onto|in|into|to)\s+(?:the\s+|my\s+|our\s+)?(?:[\w-]+\s+)?(?:list|calendar|diary|schedule|to-dos|todos)"
    r"\b[^,;]*))",
    re.IGNORECASE,
)
# Words that join clauses: in a long thing clause ("I was making pancakes and realised we have no maple
# syrup left"), what the pronoun points back to is the last clause.
_CLAUSE = re.compile(r",|;|\s(?:and|but|so|because|cause|since)\s", re.IGNORECASE)
_JOINERS = frozenset({"and", "so", "but", "then", "because"})
MAX_ITEM_WORDS = 3  # "juice boxes", "a bag of rice": a piece of a list, no clause of its own
LONG_THING = 6  # words: a thing clause longer than this is read from its last clause
MAX_WORDS = 60  # a message longer than this is not searched for a command (each place costs a match)


@dataclass(frozen=True)
class _Shape:
    thing: str
    verb: str
    rest: str


# A letter's favour before the command, read as the command: "... and would be grateful if you added it
# to my list" is "... and added it to my list" (a fixed phrase, taken out before any pattern is tried).
_FAVOUR = re.compile(r"\b(?:i )?would be (?:most |very |so )?grateful if you (?:could |would )?", re.IGNORECASE)


def _shape(text: str) -> _Shape | None:
    """The thing clause and the command after it: at the first place where the rest reads as a
    command about "it" (after a comma, a joining word, or none: "already bought yeast take it off")."""
    words = list(re.finditer(r"\S+", text))
    if len(words) > MAX_WORDS:
        return None
    text = _FAVOUR.sub("", " ".join(text.split()))
    words = list(re.finditer(r"\S+", text))
    for n, w in enumerate(words[1:], 1):
        m = _COMMAND.fullmatch(text[w.start():].strip())
        if m is None:
            continue
        verb = m.group("verb").split()[0].casefold()
        joined = words[n - 1].group().endswith((",", ";", ".")) or words[n - 1].group().casefold() in _JOINERS
        before = words[n - 1].group().casefold()
        # (a verb of the past after a comma reports: "..., picked them up"; after "and" it may be a letter's
        # favour once its wrapper went: "... and would be grateful if you added it to my list")
        # (nor one after its subject: "I never made it to Target" tells what happened)
        reported = past_form(verb) and (words[n - 1].group().endswith((",", ";", ".")) or not joined)
        if m.group("bare") is not None and (verb not in PUT_VERBS or not joined):
            continue  # without a pronoun only a verb of putting, after a comma: "cat food to the list" is no command
        if verb in FILLERS or verb in PRONOUNS or reported or (not joined and (n < 2 or before in FILLERS)):
            continue  # "note that it rains", "remember to water it": no command about a thing said before
        # (no pronoun says nothing of how many: "short on butter, leeks and garlic, add to the list" means all three)
        plural = (m.group("pronoun") or "it").casefold() != "it" or m.group("bare") is not None
        thing = _last_clause(_last_sentence(text[: w.start()]), plural)
        if not thing or any(c in thing for c in "!?"):
            return None
        rest = next((m.group(g) for g in ("rest", "where", "bare") if m.group(g) is not None), "")
        if re.search(r"[.!?]\s+\S", rest):
            continue  # the command ends with its sentence: "... made it to Target. Can you put ..." is two
        if m.group("bare") is not None:
            rest = " " + rest
        return _Shape(thing, m.group("verb"), rest)
    return None


def _last_sentence(text: str) -> str:
    """ "We had guests. We require prunes." -> "We require prunes.": the thing is in the sentence before the command."""
    body = text.rstrip().rstrip(".")
    cut = max(body.rfind(". "), body.rfind("! "), body.rfind("? "))
    return text[cut + 2:] if cut >= 0 else text


# Who said it, before what was said: "my daughter reminds me that we need prunes" is about prunes.
_REPORTED = re.compile(
    r"^(?:\S+\s+){0,3}?(?:says|said|reminds|reminded|tells|told|mentioned|mentions|noticed|notices|reckons|thinks)"
    r"(?:\s+(?:me|us))?(?:\s+that)?\s+(?=\S)",
    re.IGNORECASE,
)


def _last_clause(text: str, plural: bool = False) -> str:
    """The thing said before the command, without the joining words around it; a long one from its last clause.

    "Them" points back to several things: the short pieces a list ends with ("lemons, capers and
    anchovies") and the clause that opens it, so "we're out of lemons, capers and anchovies, put
    them on the list" keeps all three."""
    words = text.strip().strip(",;").split()
    while words and words[-1].casefold() in _JOINERS:
        words.pop()
    thing = " ".join(words).strip(" ,;.")
    thing = _REPORTED.sub("", thing, count=1)
    if len(words) > LONG_THING:
        pieces = [p.strip(" ,;") for p in _CLAUSE.split(thing) if p.strip(" ,;")]
        if pieces and plural:
            first = len(pieces) - 1
            while first > 0 and len(pieces[first].split()) <= MAX_ITEM_WORDS:
                first -= 1
            if first < len(pieces) - 1:
                return ", ".join(pieces[first:])
        if pieces:
            thing = pieces[-1]
    return thing


def resolve_pronoun(text: str, tidy: bool = False) -> str | None:
    """The message with the pronoun replaced by the clause it points back to, or None; with `tidy`,
    the thing without the state said around it ("jeera is finished" -> "jeera")."""
    m = _shape(text)
    if m is None:
        return None
    thing = tidy_text(m.thing, item=True) if tidy else m.thing
    rest = m.rest.strip().rstrip(".!?")
    return " ".join(f"{m.verb} {thing} {rest}".split())
