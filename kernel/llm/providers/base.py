"""What every provider offers the gateway, and helpers they share."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

from dreamer.kernel.llm.errors import clip
from dreamer.kernel.llm.types import ChatRequest, ChatResponse, StreamEvent, ToolCall


class Provider(Protocol):
    name: str

    async def complete(self, request: ChatRequest, model: str) -> ChatResponse:
        """One answer to `request` from `model`; raise DreamerError on any failure."""
        ...

    def stream(self, request: ChatRequest, model: str) -> AsyncIterator[StreamEvent]:
        """Text deltas and tool calls as they arrive, then Done with the whole response."""
        ...

    async def aclose(self) -> None:
        ...


def tool_call(call_id: str, name: str, arguments: Any, offered: set[str] | None) -> ToolCall:
    """A ToolCall from what the model sent: a dict, or JSON text that should hold one."""
    raw: str | None = None
    if isinstance(arguments, str):
        raw = arguments
        if not arguments.strip():
            arguments = {}
        else:
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                return ToolCall(call_id, name, {}, f"the arguments of {name} are not valid JSON: {clip(str(exc), 120)}", raw)
    if not isinstance(arguments, dict):
        shown = raw if raw is not None else json.dumps(arguments, default=str)
        return ToolCall(call_id, name, {}, f"the arguments of {name} are not a JSON object", shown)
    if offered is not None and name not in offered:
        return ToolCall(call_id, name, arguments, f"the model called {name!r}, which is not one of the tools it was offered", raw)
    return ToolCall(call_id, name, arguments, None, raw)


def offered_tools(request: ChatRequest) -> set[str] | None:
    return {t.name for t in request.tools} if request.tools else None
