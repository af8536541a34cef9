"""Tool names the model sees, and the way back to `agent.function`.

Provider APIs allow only `[A-Za-z0-9_-]{1,64}` in a tool name, so the dot of
`grocery.add_items` cannot travel; the model sees `grocery__add_items`. The way
back is a table, never a split, so an agent name with underscores or dashes
cannot be misread.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from dreamer.kernel.llm import ToolSpec
from dreamer.sidekick.planner.base import Tool

ASK_USER = "ask_user"
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

ASK_USER_SPEC = ToolSpec(
    ASK_USER,
    "Ask the user a question and wait for the answer. Use it when the request leaves a choice open "
    "(which list, which day, which of several functions) or lacks something a function needs. "
    "Give `options` when the user should pick one of a few answers.",
    {
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "One short question for the user."},
            "options": {"type": "array", "items": {"type": "string"}, "description": "Answers to pick from."},
        },
        "required": ["question"],
    },
)


REMEMBER = "remember"

REMEMBER_SPEC = ToolSpec(
    REMEMBER,
    "Keep a lasting fact about the user in their memory (a diet, where they live, a preference), "
    "in their words, when they state one. Only for what the user says, never for what a tool returned.",
    {
        "type": "object",
        "properties": {"fact": {"type": "string", "description": "One short fact, e.g. I'm vegetarian."}},
        "required": ["fact"],
    },
)


def model_name(tool: Tool) -> str:
    """`agent__function`, made safe for the API and at most 64 characters."""
    name = _UNSAFE.sub("_", f"{tool.agent}__{tool.function}")
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(tool.name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def tool_table(tools: Sequence[Tool]) -> dict[str, Tool]:
    """Model tool name → Tool; the built-in tools cannot be shadowed by an agent's function
    (whose names always hold `__` anyway)."""
    table: dict[str, Tool] = {}
    for tool in tools:
        name = model_name(tool)
        if name not in (ASK_USER, REMEMBER) and name not in table:
            table[name] = tool
    return table


def tool_specs(table: dict[str, Tool], *, remember: bool = False) -> list[ToolSpec]:
    specs = [ToolSpec(name, _describe(tool), _schema(tool)) for name, tool in table.items()]
    return specs + [ASK_USER_SPEC] + ([REMEMBER_SPEC] if remember else [])


def _describe(tool: Tool) -> str:
    about = tool.description.strip() or tool.function.replace("_", " ")
    if tool.agent_description:
        about += f" (agent {tool.agent}: {tool.agent_description.strip()})"
    if tool.confirm:
        about += " The user must confirm this call before it runs; Sidekick asks them."
    return about[:1024]


def _schema(tool: Tool) -> dict:
    params = dict(tool.parameters) if tool.parameters else {}
    if params.get("type") != "object":
        return {"type": "object", "properties": dict(tool.properties)}
    return params
