"""Greetings, thanks and "what can you do": short answers in plain words, no function lists.

Help is grouped by agent, in the agents' own descriptions (their first sentence) with
one everyday example each; functions marked @function(sidekick=False) are left out, and
so are functions with no examples (helpers a model calls, such as execute_sql).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dreamer.contracts.reply_text import brief
from dreamer.sidekick.planner.base import Tool
from dreamer.sidekick.planner.offline.engine import render_example

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
    r"what are my options|commands)\W*$",
    re.I,
)
MAX_AGENTS = 12
EXAMPLES_PER_AGENT = 2
MAX_SMALL_TALK_CHARS = 300  # tests/security/test_regex_backtracking.py fuzzes these patterns at this length


def small_talk(text: str, tools: Sequence[Tool]) -> str | None:
    """The reply to small talk or a request for help; None when `text` is neither."""
    said = " ".join(text.replace("’", "'").split())
    if not said or len(said) > MAX_SMALL_TALK_CHARS:  # small talk is short; no pattern here sees a long message
        return None
    if HELP.match(said):
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
    return None


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
        said = [f"\"{render_example(t.examples[0])}\"" for t in _showcase(mine)]
        lines.append(f"- {agent}: {_lower_first(about)}. Try {' or '.join(said)}.")
    if len(shown) > MAX_AGENTS:
        lines.append(f"And {len(shown) - MAX_AGENTS} more agents: `dreamer agents` lists them.")
    return "\n".join(lines)


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
