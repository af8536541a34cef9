"""Sidekick as the kernel's ChatService and TaskRunner (kernel/ports.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.functions import FunctionSpec
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.ports import TaskPlan
from dreamer.sidekick.chat.conversation_index import conversations_of_runs, delete_conversation, find_conversations
from dreamer.sidekick.chat.conversations import conversation_view
from dreamer.sidekick.chat.sidekick import Sidekick
from dreamer.sidekick.chat.tasks import run_task
from dreamer.sidekick.planner import Tool


class SidekickChat:
    def __init__(self, sidekick: Sidekick) -> None:
        self.sidekick = sidekick

    def turn(self, who: Principal, message: str, conversation_id: str | None) -> AsyncIterator[dict[str, Any]]:
        return self.sidekick.turn(who, message, conversation_id)

    def conversations(
        self, who: Principal, limit: int, offset: int = 0, query: str | None = None
    ) -> list[dict[str, Any]]:
        return find_conversations(self.sidekick.store, who.user_id, limit, offset, query)

    def conversation(self, who: Principal, conversation_id: str) -> dict[str, Any]:
        return conversation_view(self.sidekick.store, who.user_id, conversation_id)

    def delete_conversation(self, who: Principal, conversation_id: str) -> dict[str, Any]:
        return delete_conversation(self.sidekick.store, who.user_id, conversation_id)

    def conversations_of(self, who: Principal, runs: Mapping[str, datetime]) -> dict[str, dict[str, Any]]:
        return conversations_of_runs(self.sidekick.store, who.user_id, runs)

    def close(self) -> None:
        self.sidekick.planning.close()


@dataclass(frozen=True)
class SidekickTaskPlan:
    tools: tuple[Tool, ...]


class SidekickTasks:
    def __init__(self, sidekick: Sidekick) -> None:
        self.sidekick = sidekick

    def has_model(self) -> bool:
        return self.sidekick.model_gateway() is not None

    def plan(
        self, who: Principal, agent: str, description: str, functions: Sequence[FunctionSpec], tools: Sequence[str]
    ) -> TaskPlan:
        # Sidekick's tools are built from the functions.json shape: the one place the specs become dicts.
        chosen = [Tool.from_spec(agent, spec.model_dump(), description) for spec in functions]
        if tools:
            offered = {t.name: t for t in self.sidekick.tools(who) if t.kind == "tool"}
            for name in tools:
                if name not in offered:
                    raise DreamerError("not_found", f"the user has no enabled tool named {name[:80]!r}")
                chosen.append(offered[name])
        return SidekickTaskPlan(tuple(chosen))

    async def run(self, who: Principal, prompt: str, plan: TaskPlan) -> dict[str, Any]:
        if not isinstance(plan, SidekickTaskPlan):
            raise TypeError("a task plan made by another runner")
        gateway = self.sidekick.model_gateway()
        if gateway is None:
            raise DreamerError("not_available", "the model went away before the task started")
        outcome = await run_task(self.sidekick.invoker, who, prompt, plan.tools, gateway=gateway)
        return outcome.to_dict()
