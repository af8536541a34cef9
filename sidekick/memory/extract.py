"""Does a chat message tell Sidekick something to remember, ask what it remembers,
or ask it to forget something? A small rule set, deliberately conservative.

Only a message that is WHOLLY such a statement counts: "I'm vegetarian" is a
fact, "I'm vegetarian, suggest a recipe" is a request for the planner, and "add
milk to my list" is never a memory. Statements without "remember that" must fit
one of a few shapes (a diet, an allergy, where one lives or works, what one
eats, likes or avoids, "my favourite X is Y", a family member's name); anything
with a command word, a question mark or a relative time in it is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamer.sidekick.planner.language.spoken import as_written

MAX_STATEMENT_CHARS = 300
MAX_OBJECT_WORDS = 12


@dataclass(frozen=True)
class Remember:
    fact: str  # the statement as the user said it, "remember that" removed


@dataclass(frozen=True)
class Recall:
    pass


@dataclass(frozen=True)
class Forget:
    what: str = ""  # the statement to forget ("I live in Lyon"), or
    memory_id: int | None = None  # the memory's id ("forget memory 3")


MemoryIntent = Remember | Recall | Forget

# Words that make a message a request, not a statement about oneself.
_COMMAND_WORDS = frozenset(
    """add remove delete plan suggest remind schedule show list tell find search make create put buy order book
    call send clear cancel set please can could would will should cook""".split()
)
# A fact must hold tomorrow too: "I have a meeting tomorrow" is for the calendar.
_TIME_WORDS = frozenset("today tonight tomorrow yesterday later soon currently".split())
# "I prefer the first one" answers a question; "I like that" says nothing on its own.
_POINTERS = frozenset("it this that these those you them him her".split())
_EMPTY_OBJECTS = _POINTERS | frozenset(
    "the a an one ones first second third last option former latter other both either neither all none some any".split()
)
# A fact needs a word beyond these: "remember that I am" says nothing.
_HOLLOW = frozenset("i i'm am is are was were be my me we we're our us a an the to that and not do don't".split())

_POLITE_START = re.compile(
    r"^(?:(?:hey|hi|ok|okay)\s+)?(?:sidekick\s*[,:]?\s+)?(?:please\s*[,:]?\s+|fyi\s*[,:]?\s+|btw\s*[,:]?\s+|by the way\s*[,:]?\s+|"
    r"just so you know\s*[,:]?\s+|for the record\s*[,:]?\s+|for your information\s*[,:]?\s+|"
    # "just so u know im vegetarian now", "for future reference, ...", "mind that I'm a vegetarian", "heads up, ..."
    r"just so u know\s*[,:]?\s+|for future reference\s*[,:]?\s+|mind that\s+|heads up\s*[,:]?\s+"
    # "please note that I have been a vegetarian for forty years"
    r"|note that\s+|please note\s*[,:]?\s+)*"
)
# Asking to keep it, said after the fact: "I've gone vegan, remember that", "..., so keep that in mind",
# "..., please remember", "..., by the way". Taken off again and again, one phrase at a time (_tidy).
_REMEMBER_END = re.compile(
    r"(?:,\s*(?:so\s+|and\s+)?(?:please\s+)?|\s(?:so|and|please)\s+)(?:remember(?:\s+that|\s+this|\s+it)?|keep\s+(?:that|this|it)\s+in\s+mind"
    r"|by\s+the\s+way|btw|for\s+future\s+reference|fyi)$"
    # said after the fact with no comma: "I'm a vegetarian by the way"
    r"|\s(?:by\s+the\s+way|btw|fyi)$"
)
# One polite word at the end, taken off again and again (_tidy): the single pattern
# `(?:\s*[,.]?\s*(?:please|thanks|thank you))+$` backtracked exponentially ("x please please ... y").
_POLITE_END = re.compile(r"\b(?:please|thanks|thank you|lol|haha|lmao)$")

_RECALL = re.compile(
    r"(?:what\s+(?:do|did)\s+you\s+(?:remember|know)(?:\s+about\s+me)?"
    r"|what\s+have\s+(?:you\s+remembered|i\s+told\s+you)(?:\s+about\s+(?:me|myself))?"
    r"|what(?:'s|\s+is)\s+in\s+your\s+memory"
    r"|(?:show|list|tell)(?:\s+me)?\s+(?:my\s+memories|what\s+you\s+(?:remember|know)(?:\s+about\s+me)?)"
    r"|my\s+memories)\s*\??"
)
_FORGET_ID = re.compile(r"(?:forget|delete|remove)\s+memory\s+#?(?P<id>\d{1,12})")
# "forget that last one": the last change, taken back (the dialogue's undo), not a fact to forget.
_LAST_THING = frozenset({"last one", "last thing", "one", "last bit", "last item", "last entry"})
_FORGET = re.compile(r"forget\s+(?:that|the\s+fact\s+that|what\s+i\s+(?:said|told\s+you)\s+about)\s+(?P<what>.+)")
_EXPLICIT = re.compile(
    r"(?:(?:remember|keep\s+in\s+mind|don't\s+forget|do\s+not\s+forget)\s*(?:that\b|:)"
    r"|remember(?=\s+(?:i|i'm|i've|my|we|we're|our)\b))\s*(?P<fact>.+)"
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself|we|we're|we've|our|ours|us)\b")

_DIETS = (
    r"vegetarians?|vegans?|pescatarians?|pescetarians?|pollotarians?|flexitarians?|plant[- ]based|gluten[- ]free|"
    r"dairy[- ]free|nut[- ]free|lactose[- ]intolerant|gluten[- ]intolerant|coeliacs?|celiacs?|diabetics?|"
    r"teetotal(?:l?ers?)?|kosher|halal|keto|paleo|sober|pure\s+veg|veggies?"
)
_BE = r"(?:i\s+am|i'm|im|we\s+are|we're)"
# Becoming it: "I've gone vegan", "we went vegetarian last year" (the diet shape only).
_BECAME = r"(?:" + _BE + r"|(?:i|we)(?:'ve|\s+have)\s+(?:gone|become|turned|been)|(?:i|we)\s+(?:went|became|turned))"
_SUBJ = r"(?:i|we)"
_OBJ = r"(?P<obj>.+)"
_RELATIVE = r"(?:wife|husband|partner|spouse|son|daughter|kid|child|mother|mom|mum|father|dad|brother|sister|boss|dog|cat)"
_OWNED = (
    r"(?:favou?rite(?:\s+[\w'-]+){1,3}|preferred(?:\s+[\w'-]+){1,3}|name|nickname|birthday|date\s+of\s+birth|diet|"
    r"hometown|home\s+town|city|address|job|profession|occupation|employer|pronouns|blood\s+type|"
    r"dietary\s+\w+|" + _RELATIVE + r"(?:'s\s+(?:name|birthday))?)"
)

# The shapes a statement about oneself may take. Those with an `obj` group check it too.
_STATEMENTS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        _BECAME + r"(?:\s+(?:now|strictly|mostly|fully|a|an))*\s+(?:" + _DIETS + r")(?:\s+now)?"
        # since when, and where: "I am vegan since one month", "... in this house", "... last month"
        r"(?:\s+(?:since|for)(?:\s+[\w'-]+){1,4}|\s+(?:in\s+this\s+house|at\s+home|these\s+days)"
        r"|\s+(?:last\s+(?:week|month|year|summer|winter|spring|autumn)|this\s+year|recently|a\s+(?:while|week|month|year)\s+ago))?",
        # the household's: "my family is vegan now", "the kids are vegetarian", "we're a halal household"
        r"(?:my|our|the)\s+(?:family|household|house|home|kids|children|whole\s+family)\s+(?:is|are)(?:\s+(?:now|all|strictly|mostly|fully))*"
        r"\s+(?:" + _DIETS + r")(?:\s+now)?",
        _BE + r"\s+an?\s+(?:" + _DIETS + r")\s+(?:household|family|house|home)",
        # what is not eaten, said first: "no shellfish for me", "no pork for us please"
        r"no\s+" + _OBJ + r"\s+for\s+(?:me|us)",
        _BE + r"\s+on\s+an?(?:\s+[\w-]+){0,3}\s+diet",
        _BE + r"(?:\s+(?:very|severely|mildly|slightly|a\s+bit|quite))?\s+(?:allergic|intolerant|sensitive)\s+(?:to|of)\s+" + _OBJ,
        _BE + r"\s+(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+" + _OBJ,
        _BE + r"\s+(?:originally\s+)?from\s+" + _OBJ,
        _BE + r"\s+based\s+in\s+" + _OBJ,
        _SUBJ + r"\s+(?:live|reside|work)\s+(?:in|at|near|on)\s+" + _OBJ,
        _SUBJ + r"\s+work\s+(?:as|for)\s+" + _OBJ,
        _SUBJ + r"\s+(?:just\s+|recently\s+)?moved\s+to\s+" + _OBJ,
        _SUBJ + r"\s+(?:don't|do\s+not|never|can't|cannot|won't|will\s+not|no\s+longer|only|rarely)\s+(?:eat|drink)\s+" + _OBJ,
        _SUBJ + r"\s+(?:eat|drink)\s+no\s+" + _OBJ,
        # "I eat halal only", "we only eat kosher", "I keep halal"
        _SUBJ + r"\s+(?:only\s+)?(?:eat|keep)\s+(?:strictly\s+)?(?:" + _DIETS + r")(?:\s+(?:food|meat))?(?:\s+only)?",
        _SUBJ + r"\s+(?:try\s+to\s+|always\s+)?avoid\s+" + _OBJ,
        _BE + r"\s+(?:trying\s+to\s+avoid|avoiding)\s+" + _OBJ,
        _SUBJ + r"(?:\s+(?:really|absolutely|truly|just))?(?:\s+(?:don't|do\s+not))?(?:\s+really)?\s+"
        r"(?:love|like|prefer|hate|dislike|enjoy|adore|detest)\s+" + _OBJ,
        _SUBJ + r"\s+(?:can't|cannot)\s+stand\s+" + _OBJ,
        r"(?:my|our)\s+" + _OWNED + r"\s+(?:is|are)\s+" + _OBJ,
        r"(?:my|our)\s+" + _RELATIVE + r"\s+is\s+(?:called|named)\s+" + _OBJ,
        _SUBJ + r"\s+have\s+an?(?:\s+[\w-]+){0,2}\s+(?:allergy|intolerance)(?:\s+to\s+" + _OBJ + r")?",
        _SUBJ + r"\s+have\s+(?:celiac|coeliac)\s+disease",
        _SUBJ + r"\s+have\s+(?:a|an|one|two|three|four|five|six|\d)\s+(?:dogs?|cats?|kids?|children|child|sons?|daughters?)",
    )
)


def read_memory_intent(message: str, *, answering: bool = False) -> MemoryIntent | None:
    """What `message` asks of Sidekick's memory, or None when it is not about memory.

    `answering`: Sidekick has just asked the user a question; then only an explicit
    "remember that ..." is a fact ("I prefer the first one" is an answer).
    """
    said = _tidy(message)
    if not said or len(said) > MAX_STATEMENT_CHARS:
        return None
    low = _fold(said)
    if _RECALL.fullmatch(low):
        return Recall()
    if m := _FORGET_ID.fullmatch(low):
        return Forget(memory_id=int(m["id"]))
    if (m := _FORGET.fullmatch(low)) and m["what"].strip(" .!") not in _LAST_THING:
        what = _statement(said[m.start("what") :])
        return Forget(what=what) if what else None
    if "?" in said:
        return None
    if m := _EXPLICIT.fullmatch(low):
        fact = _statement(said[m.start("fact") :])
        low_fact = _fold(fact)
        meaningful = set(re.findall(r"[\w']+", low_fact)) - _HOLLOW
        if meaningful and _FIRST_PERSON.search(low_fact) and _plain(low_fact):
            return Remember(_capitalised(fact))
        return None
    if answering:
        return None
    if _is_statement(low):
        return Remember(_capitalised(said))
    head, sep, tail = low.rpartition(", no ")
    if sep and head and _is_statement(head) and re.fullmatch(r"[\w' -]{1,40}", tail):
        return Remember(_capitalised(said))  # "I'm vegetarian, no meat": the fact, and what it means said again
    head, sep, tail = low.partition(", ")
    if sep and head and _is_statement(head) and _aside(tail):
        # "I'm gluten-free, doctor's orders", "I'm vegetarian, have been for years", "no shellfish for me, I
        # react badly": the fact, then why or since when (never a request: "I'm vegan, plan dinner" asks)
        return Remember(_capitalised(said))
    return None


MAX_ASIDE_WORDS = 8


def _aside(tail: str) -> bool:
    """Words after a fact that say why or since when, and ask nothing: no command, no question, no time to come."""
    words = re.findall(r"[\w']+", tail)
    return 0 < len(words) <= MAX_ASIDE_WORDS and _plain(tail) and not (set(words) & _ASKING)


# Words that make what follows a fact a request of its own ("I'm vegan, what can I make").
_ASKING = frozenset("what which how when where who why any anything need want get give help".split())


# "we eat vegan in this house", "I cook vegetarian": how one eats, where "cook" is no command.
_EATING = re.compile(
    _SUBJ + r"\s+(?:only\s+)?(?:eat|cook|live)\s+(?:" + _DIETS + r")(?:\s+(?:in\s+this\s+house|at\s+home|now|these\s+days))?"
)


def _is_statement(low: str) -> bool:
    if _EATING.fullmatch(low) is not None:
        return True
    if not _plain(low):
        return False
    for pattern in _STATEMENTS:
        m = pattern.fullmatch(low)
        if m is not None and (m.groupdict().get("obj") is None or _object_ok(m["obj"])):
            return True
    return False


def _object_ok(obj: str) -> bool:
    """What one lives in, eats or likes must be named, not pointed at ("this", "the first one")."""
    words = re.findall(r"[\w'-]+", obj)
    if not words or len(words) > MAX_OBJECT_WORDS or words[0] in _POINTERS:
        return False
    return not set(words) <= _EMPTY_OBJECTS


def _plain(low: str) -> bool:
    """No command word and no relative time anywhere in the statement."""
    words = set(re.findall(r"[\w']+", low))
    return not (words & _COMMAND_WORDS or words & _TIME_WORDS)


def _fold(text: str) -> str:
    """Lower case, one character for one, so a match's offsets also index the original
    ("ß".casefold() is "ss", which would shift every offset after it)."""
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _tidy(message: str) -> str:
    # Longer than any statement: nothing to read (and no pattern below sees thousands of characters).
    said = " ".join(str(message)[: 4 * MAX_STATEMENT_CHARS].replace("\u2019", "'").replace("\u2018", "'").split())
    said = as_written(said)  # "I'm vegetarian po": other Englishes' particles say how, never what
    said = said.rstrip(" .!")
    low = _fold(said)
    start = _POLITE_START.match(low)
    said = said[start.end() :] if start else said
    while True:
        end = _POLITE_END.search(_fold(said)) or _REMEMBER_END.search(_fold(said))
        if end is None or end.start() <= 0:
            break
        said = said[: end.start()].rstrip(" ,.")
    return said.strip(" ,.!")


def _statement(text: str) -> str:
    return text.strip(" ,.!:;\"'")


def _capitalised(fact: str) -> str:
    return fact[:1].upper() + fact[1:]


# What a fact says is not eaten: "I don't eat meat or fish", "I'm allergic to shellfish", "my son is
# allergic to peanuts", "we avoid gluten". Read by Sidekick to pass what this conversation said to a
# function that takes it (recipes' `avoid`, "x-from-memory": "avoided"; sidekick/chat/preferences.py).
# (Read on the fact with its spaces made single: no pattern here repeats a space.)
_AVOIDED = re.compile(
    r"\b(?:(?:don't|do not|never|can't|cannot|no longer|won't|will not) (?:eat|drink|have|touch)"
    r"|(?:allergic|intolerant|sensitive) (?:to|of)|avoid(?:s|ing)?|(?:eat|eats) no) (?P<what>[^.;!?,]+)"
    r"|^no (?P<first>[^.;!?,]+?) for (?:me|us)\b")
_AVOIDED_TAIL = re.compile(
    r" (?:in (?:our|this|my|the) (?:house|home|family)|at home|any ?more|at all|these days)$")


def avoided_in(fact: str) -> str | None:
    """What `fact` says is not eaten ("meat or fish"), or None."""
    m = _AVOIDED.search(" ".join(_fold(fact).split()))
    if m is None:
        return None
    what = (m["what"] or m["first"]).strip(" ,")
    while (tail := _AVOIDED_TAIL.search(what)) is not None:
        what = what[: tail.start()]
    return what or None


_SWAPS: dict[str, str] = {
    "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "i": "you", "me": "you",
    "my": "your", "mine": "yours", "myself": "yourself", "we're": "you're", "we've": "you've",
    "we": "you", "us": "you", "our": "your", "ours": "yours", "am": "are",
}


def second_person(fact: str) -> str:
    """"I'm vegetarian" as Sidekick says it back: "you're vegetarian"."""
    out: list[str] = []
    previous = ""
    for token in re.findall(r"[\w']+|[^\w']+", fact):
        low = token.casefold()
        if low == "am" and previous not in ("i", "we"):
            swapped = token  # "I am" only; a stray "am" is left alone
        elif low == "was" and previous in ("i", "we"):
            swapped = "were"
        else:
            swapped = _SWAPS.get(low, token)
        out.append(swapped)
        if token.strip():
            previous = low
    return "".join(out)
