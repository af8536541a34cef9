"""Helpers for the model planner tests: tools like the starter agents', a recording `call`."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))

from llm_server import FakeLLMServer

from dreamer.kernel.llm import Gateway, LLMConfig
from dreamer.kernel.store.db import Store
from dreamer.sidekick.planner import Step, Tool
from dreamer.sidekick.planner.model import ModelLoop

ITEMS = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}, "required": ["items"]}
TOOLS = [
    Tool("grocery", "add_items", "Add items to the user's grocery list.", ITEMS),
    Tool("grocery", "list_items", "List the user's grocery list.", {"type": "object", "properties": {}}),
    Tool("grocery", "clear", "Remove every item from the user's grocery list.", {"type": "object", "properties": {}},
         confirm=True),
    Tool("calendar", "agenda", "The user's events of a day.",
         {"type": "object", "properties": {"day": {"type": "string"}}}),
]


def gateway_for(fake: FakeLLMServer, provider: str, store: Store) -> Gateway:
    config = LLMConfig(
        provider=provider, base_url=fake.anthropic_url if provider == "anthropic" else fake.openai_url,
        api_key="sk-test", api_key_source="test", models={"fast": "m-1", "standard": "m-1", "powerful": "m-1"},
        prices={}, budget_usd=None, timeout_s=5.0, max_retries=0,
    )
    return Gateway(config, store)


@dataclass
class Calls:
    """A `call` for the loop: answers from `answers` (name → result or callable), records every step.

    `together` names functions that must be running at the same time: each of
    them waits until all have started, so a loop that runs them one after the
    other fails (the wait times out) instead of passing."""

    answers: Mapping[str, Any] = field(default_factory=dict)
    together: set[str] = field(default_factory=set)
    steps: list[Step] = field(default_factory=list)
    _started: set[str] = field(default_factory=set)
    _all_in: asyncio.Event | None = None

    async def __call__(self, step: Step) -> dict[str, Any]:
        self.steps.append(step)
        if step.name in self.together:
            self._all_in = self._all_in or asyncio.Event()
            self._started.add(step.name)
            if self._started >= self.together:
                self._all_in.set()
            await asyncio.wait_for(self._all_in.wait(), 5)
        answer = self.answers.get(step.name, {"ok": True})
        result = answer(step) if callable(answer) else answer
        return {"ok": True, "result": result} if not (isinstance(result, dict) and "ok" in result) else result


async def run_loop(loop: ModelLoop, gateway: Gateway, user_id: int, text: str, calls: Calls,
                   history: list[dict[str, Any]] | None = None, **memory: Any) -> list[dict[str, Any]]:
    try:
        return [e async for e in loop.run(text, TOOLS, history or [], calls, gateway, user_id, **memory)]
    finally:
        await gateway.aclose()


def drive(fake: FakeLLMServer, provider: str, store: Store, user_id: int, text: str, calls: Calls,
          *, loop: ModelLoop | None = None, history: list[dict[str, Any]] | None = None,
          **memory: Any) -> list[dict[str, Any]]:
    """`memory`: the loop's `facts` and `remember`, when a test gives Sidekick a memory."""
    gateway = gateway_for(fake, provider, store)
    return asyncio.run(run_loop(loop or ModelLoop(), gateway, user_id, text, calls, history, **memory))


def tool_results(provider: str, body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(content, is_error) of every tool result in a recorded request, in either wire format."""
    out: list[tuple[str, bool]] = []
    for message in body["messages"]:
        if provider == "anthropic" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    out.append((block["content"], bool(block.get("is_error"))))
        elif provider == "openai" and message["role"] == "tool":
            out.append((message["content"], message["content"].startswith("Error: ")))
    return out


def system_of(provider: str, body: dict[str, Any]) -> str:
    if provider == "anthropic":
        return "".join(part["text"] for part in body.get("system") or [])
    return next((m["content"] for m in body["messages"] if m["role"] == "system"), "")


def reply_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["event"] == "reply"
    return events[-1]


def names(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"] for e in events]

