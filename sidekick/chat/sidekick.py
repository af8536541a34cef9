"""Sidekick's turn: a message in; planned calls run through the kernel; events out.

Sidekick acts with the user's identity but only through exported functions, and it
never runs a function marked confirm=True without the user's yes in this
conversation — the planner asks, and the executor checks again before each call.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

from dreamer.kernel.errors import DreamerError
from dreamer.kernel.install.registry import list_installed
from dreamer.kernel.invocations.service import Invoker, Principal
from dreamer.kernel.llm import Gateway
from dreamer.kernel.memory.service import memories, remember
from dreamer.kernel.store.db import Store
from dreamer.sidekick.chat.conversations import open_conversation, recent_history, record_turn, save_summary
from dreamer.sidekick.chat.planning import PlanningPool, TooSlow
from dreamer.sidekick.chat.preferences import apply_preferences
from dreamer.sidekick.chat.questions import question_from
from dreamer.sidekick.chat.replies import step_line
from dreamer.sidekick.chat.steps import run_step
from dreamer.sidekick.memory.chat import memory_turn
from dreamer.sidekick.planner import Clarification, OfflinePlanner, Plan, PlanContext, Planner, Step, Tool, resume
from dreamer.sidekick.planner.language import embeddings
from dreamer.sidekick.planner.model import ModelLoop

MAX_MESSAGE_CHARS = 8000

Event = dict[str, Any]


class Sidekick:
    def __init__(self, store: Store, invoker: Invoker, planner: Planner | None = None) -> None:
        self.store = store
        self.invoker = invoker
        self.planner: Planner = planner or OfflinePlanner()
        self.model_loop = ModelLoop()  # used instead of `planner` while a model is configured
        self._hints: OrderedDict[str, set[str]] = OrderedDict()  # per conversation: agents told what to grant
        self.planning = PlanningPool()  # messages are read in threads of their own, never on the event loop
        if type(self.planner) is OfflinePlanner:
            self.planning.warm()  # the planning processes start (and load the embedding model) with the kernel
        else:
            embeddings.warm()  # a planner in this process: load the embedding model now, off the event loop

    def tools(self, who: Principal) -> list[Tool]:
        """The exported functions of the user's agents, then the enabled tools of their tool
        servers (a tool named like a function is left out: the function keeps the name)."""
        with self.store.session() as s:
            agents = list_installed(s, who.user_id)
        tools = []
        for agent in agents:
            for spec in agent.functions:
                if spec.get("exported"):
                    tools.append(Tool.from_spec(agent.name, spec, agent.description, agent.publisher,
                                                agent.installed_at.isoformat()))
        taken = {t.name for t in tools}
        for server in self._tool_servers(who):
            for spec in server.tools:
                tool = server_tool(server.server, spec, server.title)
                if spec["name"] not in server.disabled and tool.name not in taken:
                    tools.append(tool)
        return tools

    def skills(self, who: Principal, tools: Sequence[Tool]) -> list[dict[str, str]]:
        """The skills of the tool servers that have a tool in `tools`: what the model reads to use them."""
        in_use = {t.agent for t in tools if t.kind == "tool"}
        return [
            {**skill, "server": server.server}
            for server in self._tool_servers(who) if server.server in in_use
            for skill in server.skills
        ]

    def _tool_servers(self, who: Principal) -> list[Any]:
        registry = getattr(self.invoker, "tools", None)
        return registry.installed_all(who.user_id) if registry is not None else []

    async def turn(
        self, who: Principal, text: str, conversation_id: str | None = None, now: datetime | None = None
    ) -> AsyncIterator[Event]:
        text = text if isinstance(text, str) else ""
        if not text.strip():
            raise DreamerError("invalid_argument", "the message is empty; tell Sidekick what you would like done")
        if len(text) > MAX_MESSAGE_CHARS:
            raise DreamerError("invalid_argument", f"the message is longer than {MAX_MESSAGE_CHARS} characters")
        conv = open_conversation(self.store, who.user_id, conversation_id, text)
        gateway = self._gateway()
        yield {"event": "start", "conversation_id": conv.id, "planner": "offline" if gateway is None else "model"}

        # "I'm vegetarian", "what do you remember about me": Sidekick's memory, no agent involved.
        answering = conv.pending is not None
        try:
            noted = await self.planning.run(who.user_id, lambda: memory_turn(self.store, who, text, answering=answering))
        except TooSlow:
            noted = None
        if noted is not None:
            yield {"event": "text", "delta": noted.reply}
            record_turn(self.store, conv.id, text, noted.reply, {"calls": [], "memory": noted.data()}, None)
            yield {"event": "done", "conversation_id": conv.id, "reply": noted.reply, "calls": [], "pending": None,
                   "memory": noted.data()}
            return

        tools = self.tools(who)
        pending = _pending(conv.pending)
        context = PlanContext(now=now, timezone=who.timezone, pending=pending, skills=self.skills(who, tools))
        calls: list[dict[str, Any]] = []
        # An open question is answered the same way whoever asked it (a confirmed step runs below).
        answered = None
        if gateway is not None and pending is not None:
            try:
                answered = await self.planning.run(who.user_id, lambda: _answer(pending, text, context))
            except TooSlow:
                answered = None
        streamed = False  # the model's reply already reached the client as text deltas
        if gateway is not None and answered is None:
            plan = Plan(reply="Done.")
            try:
                async for event in self._model_turn(who, conv.id, text, tools, context, gateway):
                    if event["event"] == "reply":
                        plan = Plan(reply=event["text"], pending=event["pending"])
                        streamed = bool(event.get("streamed"))
                        continue
                    if event["event"] == "tool_result":
                        calls.append({k: v for k, v in event.items() if k != "event"})
                    yield event
            except DreamerError:
                raise
            except Exception as exc:  # a planner bug must not cost the user their conversation
                plan = Plan(reply=f"Sorry, I could not work that out ({type(exc).__name__}). Try saying it another way.")
        else:
            try:
                plan = answered if answered is not None else await self.planning.plan(
                    who.user_id, self.planner, text, tools, context)
            except TooSlow as slow:
                plan = Plan(reply=str(slow))
            except DreamerError:
                raise
            except Exception as exc:  # a planner bug must not cost the user their conversation
                plan = Plan(reply=f"Sorry, I could not work that out ({type(exc).__name__}). Try saying it another way.")

        lines: list[str] = []
        by_name = {t.name: t for t in tools}
        if plan.pending is not None:
            yield _question_event(plan.pending)
        else:
            # "I'm vegetarian" fills recipes' diet when recipes may read Sidekick's memory; else a hint, once.
            applied = apply_preferences(self.store, who.user_id, plan.steps, by_name, self._hinted(conv.id))
            for step in applied.steps:
                tool = by_name.get(step.name)
                if tool is None:
                    lines.append(f"✗ {step.name} is not one of your agents' functions any more")
                    continue
                if tool.confirm and not step.confirmed:
                    # The planner should have asked; never run such a step unasked.
                    lines.append(f"✗ {tool.summary}: needs your confirmation first")
                    continue
                yield {"event": "tool_call", "agent": step.agent, "function": step.function, "args": dict(step.args)}
                call = await self._run(who, step, tool)
                calls.append(call)
                yield {"event": "tool_result", **call}
                asked = question_from(step, call.get("result"), tool, context) if call["ok"] else None
                if asked is not None:  # the function needs the user's choice before it can answer
                    plan = Plan(pending=asked)
                    yield _question_event(asked)
                    break
                lines.append(step_line(tool.summary, call["ok"], call.get("result"), call.get("error")))
            if plan.pending is None:
                lines.extend(applied.hints)

        reply = _reply(plan, lines)
        if not streamed or lines:
            yield {"event": "text", "delta": reply}
        pending_dict = plan.pending.to_dict() if plan.pending else None
        record_turn(self.store, conv.id, text, reply, {"calls": calls}, pending_dict)
        yield {
            "event": "done",
            "conversation_id": conv.id,
            "reply": reply,
            "calls": calls,
            "pending": _public_pending(plan.pending),
        }

    def _hinted(self, conversation_id: str) -> set[str]:
        found = self._hints.get(conversation_id)
        if found is None:
            found = self._hints[conversation_id] = set()
            while len(self._hints) > 10000:
                self._hints.popitem(last=False)
        return found

    def _gateway(self) -> Gateway | None:
        """The model gateway when a real provider is configured, else None (the offline planner serves)."""
        gateway = getattr(self.invoker, "llm", None)
        return gateway if gateway is not None and gateway.describe()["available"] else None

    async def _model_turn(
        self, who: Principal, conversation_id: str, text: str, tools: list[Tool], context: PlanContext, gateway: Gateway
    ) -> AsyncIterator[Event]:
        """The model loop's events; a compaction summary is stored here, not shown."""
        history = recent_history(self.store, conversation_id)
        by_name = {t.name: t for t in tools}

        async def call(step: Step) -> dict[str, Any]:
            return await self._run(who, step, by_name.get(step.name))

        async def keep(fact: str) -> str:
            # The loop offers this only while the model has seen nothing but the user's words.
            added = remember(self.store, who.user_id, f"sidekick for {who.actor}", fact, source="user", via="chat")
            return "remembered" if added.created else "already remembered"

        facts = [fact.text for fact in memories(self.store, who.user_id)]
        async for event in self.model_loop.run(
            text, tools, history, call, gateway, who.user_id, context, facts=facts, remember=keep
        ):
            if event["event"] == "summary":
                save_summary(self.store, conversation_id, event["text"], event["through"])
            else:
                yield event

    async def _run(self, who: Principal, step: Step, tool: Tool | None = None) -> dict[str, Any]:
        return await run_step(self.invoker, who, step, tool)


def server_tool(server: str, spec: dict[str, Any], title: str) -> Tool:
    """A tool server's tool as Sidekick sees it. Annotations are hints, used only to add
    caution: a tool not marked read-only and not marked non-destructive needs a yes first."""
    notes = spec.get("annotations") or {}
    destructive = notes.get("read_only_hint") is not True and notes.get("destructive_hint") is not False
    return Tool(
        agent=server, function=spec["name"], description=spec.get("description", ""),
        parameters=spec.get("input_schema") or {}, confirm=destructive,
        agent_description=f"tool server: {title}", kind="tool",
    )


def _pending(stored: Any) -> Clarification | None:
    if not isinstance(stored, dict):
        return None
    try:
        return Clarification.from_dict(stored)
    except (ValueError, KeyError, TypeError):
        return None  # a question from an older Sidekick that can no longer be read


def _answer(pending: Clarification | None, text: str, context: PlanContext) -> Plan | None:
    if pending is None:
        return None
    try:
        return resume(pending, text, context)
    except (ValueError, KeyError, IndexError, TypeError):
        return None  # a stored question this Sidekick cannot read: plan the message afresh


def _question_event(pending: Clarification) -> Event:
    kind = "confirmation" if pending.kind == "confirm" else "clarification"
    return {"event": kind, **_public_pending(pending)}  # type: ignore[dict-item]


def _public_pending(pending: Clarification | None) -> dict[str, Any] | None:
    if pending is None:
        return None
    return {
        "kind": pending.kind,
        "question": pending.question,
        "options": [o.label for o in pending.options],
        "missing": list(pending.missing),
        "steps": [s.to_dict() for s in pending.partial.steps],
    }


def _reply(plan: Plan, lines: Sequence[str]) -> str:
    if plan.pending is not None:
        options = "".join(f"\n  {i}. {o.label}" for i, o in enumerate(plan.pending.options, 1))
        done = "".join(f"{line}\n" for line in lines)  # steps that ran before a function asked
        return done + plan.pending.question + options
    if lines:
        return "\n".join(lines)
    return plan.reply or "Done."
