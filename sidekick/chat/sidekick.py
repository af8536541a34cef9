"""Sidekick's turn: a message in; planned calls run through the kernel; events out.

Sidekick acts with the user's identity but only through exported functions, and it
never runs a function marked confirm=True without the user's yes in this
conversation — the planner asks, and the executor checks again before each call.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.learned import examples as learned
from dreamer.kernel.install.registry import list_installed
from dreamer.kernel.invocations.service import Invoker, Principal
from dreamer.kernel.llm import Gateway
from dreamer.kernel.memory.service import memories, remember
from dreamer.kernel.store.db import Store
from dreamer.sidekick.chat.conversations import open_conversation, recent_history, record_turn, save_summary
from dreamer.sidekick.chat.questions import question_from
from dreamer.sidekick.dialogue.state import load_state
from dreamer.sidekick.dialogue.understand import DROPPED, Understood, understand
from dreamer.sidekick.replies.render import error_text, result_text
from dreamer.sidekick.chat.steps import run_step
from dreamer.sidekick.chat.planning import PlanningPool, TooSlow
from dreamer.sidekick.chat.preferences import apply_preferences
from dreamer.sidekick.memory.chat import memory_turn
from dreamer.sidekick.planner import Clarification, OfflinePlanner, Plan, PlanContext, Planner, Step, Tool
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
        # Messages are read off the event loop: understanding in planning threads, the offline planner
        # in planning processes (sidekick/chat/planning.py).
        self.planning = PlanningPool()
        if type(self.planner) is OfflinePlanner:
            self.planning.warm()  # a planning process starts (and loads the embedding model) with the kernel
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
        state = load_state(self.store, conv.id)
        context = PlanContext(now=now, timezone=who.timezone, skills=self.skills(who, tools))
        calls: list[dict[str, Any]] = []
        streamed = False  # the model's reply already reached the client as text deltas

        def taught(phrase: str) -> list[tuple[str, str, dict]]:
            return [(x.agent, x.function, x.args) for x in learned.lookup(self.store, who.user_id, phrase) if x.weight > 0]

        try:
            seen = await self.planning.run(who.user_id, lambda: understand(
                text, tools, context, state, pending, None if gateway is not None else self._plan, taught))
        except TooSlow as slow:
            seen = Understood(Plan(reply=str(slow)), "planner")
        except DreamerError:
            raise
        except Exception as exc:  # a planner bug must not cost the user their conversation
            seen = Understood(Plan(reply=f"Sorry, I could not work that out ({type(exc).__name__}). "
                                         "Try saying it another way."), "planner")
        if seen.picked is not None and state.asked_text:
            self._learn(who, state.asked_text, *seen.picked)
        if gateway is not None and seen.plan is None:
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
            assert seen.plan is not None
            plan = seen.plan
        if seen.keep_pending and plan.pending is None and pending is not None:
            plan = replace(plan, pending=pending)

        lines: list[str] = []
        by_name = {t.name: t for t in tools}
        if plan.pending is not None and not seen.keep_pending:
            yield _question_event(plan.pending)
        elif plan.pending is None:
            # "I'm vegetarian" fills recipes' diet when recipes may read Sidekick's memory; else a hint, once.
            applied = apply_preferences(self.store, who.user_id, plan.steps, by_name, self._hinted(conv.id))
            for step in applied.steps:
                tool = by_name.get(step.name)
                if tool is None:
                    lines.append(f"I couldn't do that: {step.name} is not one of your agents' functions any more.")
                    continue
                if tool.confirm and not step.confirmed:
                    # The planner should have asked; never run such a step unasked.
                    lines.append(f"I need your yes before I {_lower(tool.summary)}; nothing was done.")
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
                lines.append(step_text(tool, call))
            if plan.pending is None:
                lines.extend(applied.hints)
        if seen.how == "undo" and lines and calls and all(c["ok"] for c in calls):
            lines[0] = "Undone. " + lines[0]

        reply = _reply(plan, lines)
        if seen.keep_pending and plan.pending is not None:
            first = plan.pending.question.split("\n")[0]
            reply = f"{seen.plan.reply if seen.plan and seen.plan.reply else 'OK.'} I'm still waiting on this: {first}"
        if seen.dropped_question and pending is not None:
            reply = f"{DROPPED} {reply}"
        if not streamed or lines or seen.dropped_question:
            yield {"event": "text", "delta": reply}
        pending_dict = plan.pending.to_dict() if plan.pending else None
        asked_text = state.asked_text if seen.keep_pending or seen.how == "answer" else None
        if plan.pending is not None and plan.pending.kind == "choose" and not seen.keep_pending and seen.how != "answer":
            asked_text = text
        new_state = replace(state.with_calls(calls, {t.name: t.undo for t in tools}), asked_text=asked_text)
        record_turn(self.store, conv.id, text, reply, {"calls": calls, "dialogue": new_state.to_dict()}, pending_dict)
        yield {
            "event": "done",
            "conversation_id": conv.id,
            "reply": reply,
            "calls": calls,
            "pending": _public_pending(plan.pending),
        }

    def _plan(self, text: str, tools: Sequence[Tool], context: PlanContext) -> Plan:
        """Called from a planning thread: the offline planner itself runs in a planning process."""
        return self.planning.plan_blocking(self.planner, text, tools, context)

    def _hinted(self, conversation_id: str) -> set[str]:
        found = self._hints.get(conversation_id)
        if found is None:
            found = self._hints[conversation_id] = set()
            while len(self._hints) > 10000:
                self._hints.popitem(last=False)
        return found

    def _learn(self, who: Principal, phrase: str, chosen: Step, passed_over: Sequence[Step]) -> None:
        """The user picked `chosen` for `phrase`: route it there directly next time, for this user only."""
        learned.learn(self.store, who.user_id, phrase, chosen.agent, chosen.function, dict(chosen.args))
        for other in passed_over:
            learned.demote(self.store, who.user_id, phrase, other.agent, other.function)

    def _gateway(self) -> Gateway | None:
        """The model gateway when a real provider is configured, else None (the offline planner serves)."""
        gateway = getattr(self.invoker, "llm", None)
        return gateway if gateway is not None and gateway.describe()["available"] else None

    def model_gateway(self) -> Gateway | None:
        """Public for the composition root's task runner (host/sidekick_parts.py)."""
        return self._gateway()

    async def _model_turn(
        self, who: Principal, conversation_id: str, text: str, tools: list[Tool], context: PlanContext, gateway: Gateway
    ) -> AsyncIterator[Event]:
        """The model loop's events; a compaction summary is stored here, not shown."""
        history = recent_history(self.store, conversation_id)
        by_name = {t.name: t for t in tools}

        async def call(step: Step) -> dict[str, Any]:
            tool = by_name.get(step.name)
            done = await self._run(who, step, tool)
            # The model reads the same sentence the offline planner would show, next to the result.
            return done | {"said": step_text(tool, done)} if tool is not None else done

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
        listed = "\n1. " in plan.pending.question  # "Which did you mean?" lists its options itself
        options = "" if listed else "".join(f"\n  {i}. {o.label}" for i, o in enumerate(plan.pending.options, 1))
        done = "".join(f"{line}\n" for line in lines)  # steps that ran before a function asked
        return done + plan.pending.question + options
    if lines:
        return "\n".join(lines)
    return plan.reply or "Done."


def step_text(tool: Tool, call: dict[str, Any]) -> str:
    """One call as the user reads it: a sentence or a short list, or one sentence on what went wrong."""
    if call["ok"]:
        return result_text(call.get("result"), tool.reply, tool.summary)
    return error_text(tool.summary, call.get("error"))


def _lower(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:]
