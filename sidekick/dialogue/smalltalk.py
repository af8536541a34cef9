"""Greetings, thanks and "what can you do": short answers in plain words, no function lists.

Help is grouped by agent, in the agents' own descriptions (their first sentence) with
one everyday example each; functions marked @function(sidekick=False) are left out, and
so are functions with no examples (helpers a model calls, such as execute_sql).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dreamer.contracts.reply_text import brief
from dreamer.sidekick.planner.language.chatter import (  # noqa: F401  (re-exported: tests read them here)
    ACK,
    BYE,
    DONE,
    GREETING,
    HOW_ARE_YOU,
    MAX_SMALL_TALK_CHARS,
    THANKS,
    WHO,
    chatter_reply,
)
from dreamer.sidekick.planner.base import Tool
from dreamer.sidekick.planner.offline.engine import render_example
from dreamer.sidekick.planner.offline.templates import expand

HELP = re.compile(
    r"^(?:so\W+|ok\W+|and\W+)?(?:help|help me|\?|what (?:can|could) (?:you|i) do(?: (?:for me|here|with you))?|"
    r"what (?:are|do) you (?:able to do|do|good at|know how to do)|what can i ask(?: you)?(?: to do)?|"
    r"what (?:are|were) you able to (?:do|help (?:me )?with)|what (?:can|could) you assist (?:me )?with|"
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


def small_talk(text: str, tools: Sequence[Tool]) -> str | None:
    """The reply to small talk or a request for help; None when `text` is neither."""
    said = " ".join(text.replace("’", "'").split())
    if not said or len(said) > MAX_SMALL_TALK_CHARS:  # small talk is short; no pattern here sees a long message
        return None
    if HELP.match(said) or HELP.match(" ".join(HELP_NOISE.sub(" ", said).split())):
        return help_text(tools)
    return chatter_reply(said)


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
