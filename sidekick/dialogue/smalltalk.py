"""Greetings, thanks and "what can you do": short answers in plain words, no function lists.

Help is grouped by agent, in the agents' own descriptions (their first sentence) with
one everyday example each; functions marked @function(sidekick=False) are left out, and
so are functions with no examples (helpers a model calls, such as execute_sql).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz, process

from dreamer.contracts.reply_text import brief
from dreamer.sidekick.planner.base import Tool
from dreamer.sidekick.planner.offline.engine import render_example
from dreamer.sidekick.planner.offline.templates import expand

GREETING = re.compile(r"^(?:hi|hello|hey|hiya|howdy|yo|good (?:morning|afternoon|evening|day)|greetings|hallo|heya|sup|"
                      r"what's up|whats up)(?:\s+(?:there|sidekick|buddy|friend|again|everyone))?\s*[!.,]*\s*$", re.I)
_ACK_WORDS = (r"(?:ok(?:ay)?|great|cool|perfect|awesome|nice|lovely|brilliant|excellent|wonderful|that's great|good|"
              r"got it|alright|all right|fine|noted|understood|sounds good|right|sure|nice one|good one)")
THANKS = re.compile(rf"^(?:{_ACK_WORDS}\W*)*+(?:thanks?(?: you)?(?: (?:so|very) much)?(?: a lot)?|thx|ty|cheers|"
                    r"much appreciated|appreciate it)(?:\s+(?:sidekick|buddy|mate))?\s*[!.,]*\s*$", re.I)
# "ok", "cool", "got it": the user has read the answer; nothing to thank them for.
ACK = re.compile(rf"^(?:{_ACK_WORDS}\W*)++(?:\s*(?:sidekick|buddy|mate))?\s*$", re.I)
DONE = re.compile(r"^(?:(?:ok(?:ay)?|no)\W+)?(?:that's all|that is all|all good|nothing else|that's it|that is it)"
                  r"(?: for now)?\W*$", re.I)
BYE = re.compile(r"^(?:bye|goodbye|good night|see you(?: later)?|see ya|later|ciao|that's it for now)\W*$", re.I)
HOW_ARE_YOU = re.compile(r"^(?:hi\W+|hey\W+)?how (?:are you|are things|is it going|do you do)(?: today)?\W*$", re.I)
WHO = re.compile(r"^(?:who|what) are you\W*$", re.I)
HELP = re.compile(
    r"^(?:so\W+|ok\W+|and\W+)?(?:help|help me|\?|what (?:can|could) (?:you|i) do(?: (?:for me|here|with you))?|"
    r"what (?:are|do) you (?:able to do|do|good at|know how to do)|what can i ask(?: you)?(?: to do)?|"
    r"what (?:agents|skills|things) do (?:i|you) have|how (?:do i use|does this work)(?: you)?|"
    r"what (?:do|can) you help (?:me )?with|show me what you can do|list (?:your|my) (?:agents|skills)|"
    r"what are my options|commands|what are your (?:features|capabilities|abilities|skills|functions|powers)|"
    r"how can you help(?: me)?|what else can you do|what do you do|what can you help (?:me )?with|"
    r"what (?:can|could) you (?:do|help (?:me )?with) for me|what are you for|what is this)\W*$",
    re.I,
)
# Words that only soften a question for help: "what sort of things can you do" is "what things can you do".
HELP_NOISE = re.compile(r"\b(?:sort|sorts|kind|kinds|type|types) of\b|\b(?:exactly|actually|really|all|else|"
                        r"other|stuff|things|thing|the|even|again|please|sidekick)\b", re.I)
# A value to show in an example for a slot, by the parameter's name (when its schema gives none).
SAMPLES = {"items": "milk", "item": "milk", "day": "tomorrow", "date": "tomorrow", "start": "tomorrow at 3pm",
           "when": "tomorrow at 3pm", "title": "dentist", "query": "wifi", "text": "buy stamps", "name": "carbonara",
           "ingredients": "chicken", "ingredient": "chicken", "cuisine": "italian", "diet": "vegetarian",
           "question": "are in sales", "url": "https://example.com", "limit": "5",
           "max_minutes": "30", "department": "sales", "location": "the office"}
MAX_AGENTS = 12
EXAMPLES_PER_AGENT = 2
MAX_SMALL_TALK_CHARS = 300  # tests/security/test_regex_backtracking.py fuzzes these patterns at this length


def small_talk(text: str, tools: Sequence[Tool]) -> str | None:
    """The reply to small talk or a request for help; None when `text` is neither."""
    said = " ".join(text.replace("’", "'").split())
    if not said or len(said) > MAX_SMALL_TALK_CHARS:  # small talk is short; no pattern here sees a long message
        return None
    if HELP.match(said) or HELP.match(" ".join(HELP_NOISE.sub(" ", said).split())):
        return help_text(tools)
    if GREETING.match(said):
        return "Hi! What can I do for you? Ask \"what can you do\" to see what your agents handle."
    if HOW_ARE_YOU.match(said):
        return "All good here, thanks. What can I do for you?"
    if WHO.match(said):
        return "I'm Sidekick: I run your agents for you. Ask \"what can you do\" to see what they handle."
    if BYE.match(said):
        return "Bye for now!"
    if THANKS.match(said):
        return "You're welcome!"
    if DONE.match(said):
        return "OK, I'm here when you need me."
    if ACK.match(said):
        return "Good. Anything else?"
    return _by_clauses(said)


# Small talk said in pieces ("thanks, that's all", "hey sidekick, how are you?", "thank you, bye"):
# each clause is looked up in this lexicon (a typo forgiven); when every clause is small talk, the
# reply answers the weightiest kinds in one or two short sentences.
LEXICON: dict[str, tuple[str, ...]] = {
    "greeting": ("hi", "hello", "hey", "hiya", "howdy", "morning", "good morning", "evening", "good evening",
                 "afternoon", "good afternoon", "hey sidekick", "hi sidekick", "hello sidekick", "hey there", "hi there",
                 "nice to meet you", "happy friday", "happy monday", "yo", "greetings"),
    "thanks": ("thanks", "thank you", "thanks a lot", "thanks so much", "thank you so much", "many thanks", "cheers",
               "thx", "ty", "much appreciated", "appreciate it", "thanks a bunch", "thanks again", "thank you very much"),
    "bye": ("bye", "goodbye", "bye bye", "see you", "see you later", "see you tomorrow", "see ya", "later", "ciao",
            "good night", "night", "talk later", "talk to you later", "catch you later", "have a good day",
            "have a nice day", "take care", "ok bye"),
    "done": ("that is all", "that's all", "that is it", "that's it", "all good", "nothing else", "nothing more",
             "that is all for now", "that's all for now", "i am done", "i'm done", "all done", "that will be all",
             "no that is it", "no that's it", "that's everything", "that is everything"),
    "how": ("how are you", "how are you doing", "how are things", "how is it going", "how's it going",
            "how do you do", "how are you today", "what's up", "whats up", "how have you been", "you ok", "are you ok"),
    "who": ("who are you", "what are you", "what is your name", "what's your name", "are you a robot", "are you a bot",
            "are you human", "are you real", "are you an ai", "who made you", "who built you"),
    "praise": ("you're the best", "you are the best", "great job", "good job", "well done", "nice work", "good bot",
               "you're awesome", "you are awesome", "love it", "i love you", "you rock", "amazing", "you're great",
               "you are great", "you're a star", "brilliant work"),
    "laugh": ("lol", "haha", "hahaha", "lmao", "hehe", "funny", "rofl"),
    "apology": ("sorry", "my bad", "oops sorry", "sorry about that", "apologies"),
    "declined": ("no thanks", "no thank you", "no", "nope", "nah", "not now", "no need", "nothing", "nothing thanks",
                 "not really", "no that's fine", "no it's fine", "i'm good", "i am good", "all set"),
    "welcome": ("you're welcome", "you are welcome", "no problem", "no worries", "np", "anytime"),
}
_KINDS = {phrase: kind for kind, phrases in LEXICON.items() for phrase in phrases}
_PHRASES = tuple(_KINDS)
_ORDER = ("thanks", "praise", "apology", "greeting", "how", "who", "declined", "done", "bye", "laugh", "welcome")
REPLIES = {
    "thanks": "You're welcome!",
    "praise": "Thank you!",
    "apology": "No problem at all.",
    "how": "All good here, thanks.",
    "who": "I'm Sidekick: I run your agents for you.",
    "done": "OK, I'm here when you need me.",
    "bye": "Bye for now!",
    "greeting": "Hi!",
    "laugh": "Glad that made you smile.",
    "welcome": "Anything else I can do?",
    "declined": "OK, nothing done.",
}
FUZZY_SMALL_TALK = 88
MAX_SMALL_TALK_WORDS = 10


def _by_clauses(said: str) -> str | None:
    pieces = [" ".join(p.split()).casefold() for p in re.split(r"[,;.!?:]+|\s[-–]\s", said) if p.strip()]
    if not pieces or sum(len(p.split()) for p in pieces) > MAX_SMALL_TALK_WORDS:
        return None
    kinds: set[str] = set()
    for piece in pieces:
        kind = _KINDS.get(piece)
        if kind is None and len(piece) >= 4:
            best = process.extractOne(piece, _PHRASES, scorer=fuzz.ratio, score_cutoff=FUZZY_SMALL_TALK)
            kind = _KINDS[best[0]] if best else None
        if kind is None:
            return None  # a piece of its own: a request, or something to say we cannot do
        kinds.add(kind)
    said_back = [REPLIES[k] for k in _ORDER if k in kinds][:2]
    if not kinds & {"bye", "done", "welcome", "declined"}:
        said_back.append("What can I do for you?" if kinds & {"greeting", "how", "who"} else "Anything else?")
    return " ".join(dict.fromkeys(said_back))


def help_text(tools: Sequence[Tool]) -> str:
    """A short list of the user's agents, each in a few plain words of its own description and
    two things to say to it; never a word cut in half."""
    shown: dict[str, list[Tool]] = {}
    for tool in tools:
        if tool.listed and tool.examples:
            shown.setdefault(tool.agent, []).append(tool)
    if not shown:
        return "No agents are installed yet, so there is nothing I can do. Install one with `dreamer install`."
    lines = ["Here is what your agents can do:"]
    for agent, mine in list(shown.items())[:MAX_AGENTS]:
        about = brief(_first_sentence(mine[0].agent_description)) or brief(mine[0].summary)
        said = [f"\"{_example(t)}\"" for t in _showcase(mine)]
        lines.append(f"- {agent}: {_lower_first(about)}. Try {' or '.join(said)}.")
    if len(shown) > MAX_AGENTS:
        lines.append(f"And {len(shown) - MAX_AGENTS} more agents: `dreamer agents` lists them.")
    return "\n".join(lines)


def _example(tool: Tool) -> str:
    """An example to say, with its slots filled by a sample value ("add milk to my grocery list"); an
    example with no slots first, and one whose slots have no sample is passed over."""
    for example in sorted(tool.examples[:6], key=lambda e: "{" in e):
        filled = _filled(example, tool)
        if filled is not None:
            return filled
    return render_example(tool.examples[0])


def _filled(example: str, tool: Tool) -> str | None:
    expansions = expand(example)
    if not expansions:
        return None
    out = []
    for piece in expansions[0]:
        if piece.optional:
            continue
        if piece.slot:
            schema = tool.properties.get(piece.slot)
            given = schema.get("examples") if isinstance(schema, dict) else None
            sample = str(given[0]) if isinstance(given, list) and given else SAMPLES.get(piece.slot)
            if sample is None:
                return None
            out.append(sample)
        else:
            out.append(piece.choices[0] if piece.choices else (piece.text or ""))
    return " ".join(" ".join(out).split())


def _showcase(tools: Sequence[Tool]) -> list[Tool]:
    """An agent's functions to show by an example: its most-exampled one (its everyday one), then the
    most-exampled of the other kind (a read beside a change), else the next."""
    ranked = sorted(tools, key=lambda t: -len(t.examples))
    first = ranked[0]
    rest = [t for t in ranked[1:] if t.reads != first.reads] or ranked[1:]
    return [first, *rest[: EXAMPLES_PER_AGENT - 1]]


def not_understood(text: str) -> str:
    """One sentence for a request none of the user's agents can do."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text) if w.lower() not in _COMMON][:3]
    search = f" (try `dreamer gallery search {' '.join(w.lower() for w in words)}`)" if words else ""
    return f"None of your agents can do that yet; the gallery may have an agent for it{search}."


def _first_sentence(text: str) -> str:
    text = " ".join((text or "").split())
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].rstrip(".")


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


_COMMON = frozenset(
    "the and for you your can could would please what whats what's how when where who why which with from that this "
    "there their then than have has had are was were will just some any tell show give get set make let about into "
    "me my mine our want need like know does did doing done also too very really tomorrow today tonight".split()
)
