"""Sidekick's turn: a message in; planned calls run through the kernel; events out.

Sidekick acts with the user's identity but only through exported functions, and it
never runs a function marked confirm=True without the user's yes in this
conversation — the planner asks, and the executor checks again before each call.
"""

from __future__ import annotations

import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.learned import examples as learned
from dreamer.kernel.install.registry import list_installed
from dreamer.kernel.invocations.invoker import Invoker
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.llm import Gateway
from dreamer.kernel.memory.facts import memories, remember
from dreamer.kernel.store.db import Store
from dreamer.sidekick.chat.conversations import (
    facts_said_in,
    open_conversation,
    recent_history,
    record_turn,
    save_summary,
)
from dreamer.sidekick.chat.questions import question_from
from dreamer.sidekick.dialogue.corrections import correction, meant, rephrases, says_meant
from dreamer.sidekick.dialogue.followups import follow_up
from dreamer.sidekick.dialogue.state import DialogueState, load_state
from dreamer.sidekick.dialogue.understand import DROPPED, Understood, understand
from dreamer.sidekick.dialogue.undo import is_undo
from dreamer.contracts.reply_text import error_text, result_text
from dreamer.sidekick.chat.steps import run_step
from dreamer.sidekick.chat.planning import PlanningPool, TooSlow
from dreamer.sidekick.chat.preferences import apply_preferences
from dreamer.sidekick.memory.chat import memory_turn
from dreamer.sidekick.planner import Clarification, OfflinePlanner, Plan, PlanContext, Planner, Step, Tool
from dreamer.sidekick.planner.language import embeddings
from dreamer.sidekick.planner.model import ModelLoop

MAX_MESSAGE_CHARS = 8000
PLANNER_FAILED = "Sorry, I could not work that out. Try saying it another way."
log = logging.getLogger(__name__)
MAX_LEARNED_PER_TOOL = 10  # learned phrasings added to one function's examples, newest first

Event = dict[str, Any]


class Sidekick:
    def __init__(self, store: Store, invoker: Invoker, planner: Planner | None = None, warm: bool = True) -> None:
        self.store = store
        self.invoker = invoker
        self.planner: Planner = planner or OfflinePlanner()
        self.model_loop = ModelLoop()  # used instead of `planner` while a model is configured
        self._hints: OrderedDict[str, set[str]] = OrderedDict()  # per conversation: agents told what to grant
        # Messages are read off the event loop: understanding in planning threads, the offline planner
        # in planning processes (sidekick/chat/planning.py).
        self.planning = PlanningPool()
        if not warm:
            pass  # DREAMER_SIDEKICK_WARM=0: the planning process (or the model) starts with the first message
        elif type(self.planner) is OfflinePlanner:
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
                if spec.exported:
                    # Tool.from_spec reads the functions.json shape, which the agents API also gives.
                    tools.append(Tool.from_spec(agent.name, spec.model_dump(), agent.description, agent.publisher,
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
            turn = record_turn(self.store, conv.id, text, noted.reply, {"calls": [], "memory": noted.data()}, None)
            yield {"event": "done", "conversation_id": conv.id, "turn_id": turn, "reply": noted.reply, "calls": [],
                   "pending": None, "memory": noted.data()}
            return

        tools = with_learned(self.tools(who), learned.phrasings(self.store, who.user_id))
        # Ties this turn's model calls to its answer for the training export; the answer's own id
        # exists only once it is recorded, after the calls (kernel/tracing/export/rollouts.py).
        rollout_key = "rk_" + uuid.uuid4().hex
        pending = _pending(conv.pending)
        state = load_state(self.store, conv.id)
        # The one agent the previous turn worked with settles an even choice ("add bread" after the grocery list).
        recent = {name.rsplit(".", 1)[0] for name in state.called} if state.outcome == "called" else set()
        context = PlanContext(now=now, timezone=who.timezone, skills=self.skills(who, tools),
                              recent_agent=next(iter(recent)) if len(recent) == 1 else None)
        calls: list[dict[str, Any]] = []
        streamed = False  # the model's reply already reached the client as text deltas

        def taught(phrase: str) -> list[tuple[str, str, dict]]:
            return [(x.agent, x.function, x.args) for x in learned.lookup(self.store, who.user_id, phrase) if x.weight > 0]

        def avoid(phrase: str) -> set[str]:
            return learned.demoted(self.store, who.user_id, phrase)

        def read() -> Understood:
            fixed = self._corrected(text, state, tools, context, pending is not None) if gateway is None else None
            if fixed is not None:
                return Understood(fixed, "corrected")
            return understand(text, tools, context, state, pending, None if gateway is not None else self._plan,
                              taught, avoid)

        try:
            seen = await self.planning.run(who.user_id, read)
        except TooSlow as slow:
            seen = Understood(Plan(reply=str(slow)), "planner")
        except DreamerError:
            raise
        except Exception:  # a planner bug must not cost the user their conversation
            # The exception's name is for the log, never the user (a reply is a sentence).
            log.exception("the offline planner failed on a message")
            seen = Understood(Plan(reply=PLANNER_FAILED), "planner")
        if seen.picked is not None and state.asked_text:
            self._learn(who, state.asked_text, *seen.picked)
        note: str | None = None  # why the offline planner answered instead of the model
        if gateway is not None and seen.plan is None:
            plan = Plan(reply="Done.")
            failed: str | None = None
            try:
                async for event in self._model_turn(who, conv.id, text, tools, context, gateway, rollout_key):
                    if event["event"] == "reply":
                        plan = Plan(reply=event["text"], pending=event["pending"])
                        streamed = bool(event.get("streamed"))
                        failed = event.get("failed")
                        continue
                    if event["event"] == "tool_result":
                        calls.append({k: v for k, v in event.items() if k != "event"})
                    yield event
            except DreamerError:
                raise
            except Exception:  # a planner bug must not cost the user their conversation
                log.exception("the model-driven turn failed")
                plan = Plan(reply=PLANNER_FAILED)
            if failed is not None and not calls:
                # The model produced no usable plan and nothing ran: the offline planner, which
                # needs no model, reads the message instead; the reply says so.
                fallback = await self._offline(who, text, tools, context, state, pending, taught)
                if fallback is not None:
                    seen, plan, streamed = fallback, fallback.plan, False
                    note = f"(The model could not help here: {failed.rstrip('.')}. The offline planner answered instead.)"
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
            # "I'm vegetarian" fills recipes' diet when said in this conversation or when recipes may
            # read Sidekick's memory; else a hint, once.
            applied = apply_preferences(self.store, who.user_id, plan.steps, by_name, self._hinted(conv.id),
                                        lambda: facts_said_in(self.store, conv.id))
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
        self._learn_from_correction(who, text, state, seen, plan, calls)

        reply = _reply(plan, lines)
        if note is not None:
            reply = f"{note}\n{reply}"
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
        # A call that failed (no recipe with lentils) was still where the words were routed.
        ok = tuple(dict.fromkeys(f"{c['agent']}.{c['function']}" for c in calls))
        # A miss: the planner found nothing to do (nothing fitted, or the words read as outside every agent).
        missed = seen.how == "planner" and (plan.unmatched or (not plan.steps and plan.pending is None))
        outcome = "called" if ok else ("missed" if missed else None)
        if not ok and plan.pending is not None and not seen.keep_pending and seen.how in ("planner", "learned", "corrected"):
            # It asked about functions it chose ("what text?" for a note): a correction may say they were wrong.
            outcome, ok = "asked", tuple(dict.fromkeys(st.name for st in plan.pending.partial.steps))
        new_state = replace(state.with_calls(calls, {t.name: t.undo for t in tools}), asked_text=asked_text,
                            said=text, outcome=outcome, called=ok)
        turn = record_turn(self.store, conv.id, text, reply,
                           {"calls": calls, "dialogue": new_state.to_dict(), "rollout_key": rollout_key}, pending_dict)
        yield {
            "event": "done",
            "conversation_id": conv.id,
            "turn_id": turn,
            "reply": reply,
            "calls": calls,
            "pending": _public_pending(plan.pending),
        }

    async def _offline(self, who: Principal, text: str, tools: list[Tool], context: PlanContext, state: Any,
                       pending: Clarification | None, taught: Any) -> Understood | None:
        """The message read as if no model were configured; None when that fails too."""
        try:
            seen = await self.planning.run(who.user_id, lambda: understand(
                text, tools, context, state, pending, self._plan, taught))
        except Exception:  # noqa: BLE001 - the model's own failure is the answer then
            return None
        return seen if seen.plan is not None else None

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

    def _corrected(
        self, text: str, state: DialogueState, tools: Sequence[Tool], context: PlanContext, question_open: bool,
    ) -> Plan | None:
        """"no, I meant my calendar" right after a miss or a call: the plan for what was meant."""
        said = state.said
        rest = correction(text, question_open) if said and state.outcome in ("missed", "called", "asked") else None
        if rest is None or said is None:
            return None
        if not says_meant(text) and (is_undo(text) or follow_up(text, state, tools, context.local_now()) is not None):
            return None  # "no, undo that", "no, the second one": the dialogue reads those
        return meant(rest, said, set(state.called), tools, context, self._plan, after_miss=state.outcome == "missed")

    def _learn_from_correction(
        self, who: Principal, text: str, state: DialogueState, seen: Understood, plan: Plan, calls: list[dict[str, Any]],
    ) -> None:
        """What this turn says about the last one: it was corrected, or rephrased after a miss."""
        # Every call made counts for where the words belong, even one that failed ("no recipe
        # with lentils" was still the recipes agent); an undo counts only when it ran.
        said, done = state.said, list(calls)
        if not said:
            return
        if seen.how == "corrected" and done:
            first = done[0]
            learned.learn(self.store, who.user_id, said, first["agent"], first["function"], dict(first.get("args") or {}),
                          source="corrected")
            for name in state.called:
                agent, _, function = name.partition(".")
                if name != f"{first['agent']}.{first['function']}":
                    learned.demote(self.store, who.user_id, said, agent, function, source="corrected")
        elif (state.outcome == "missed" and seen.how in ("planner", "learned") and done and plan.pending is None
              and rephrases(said, text)):
            first = done[0]
            learned.learn(self.store, who.user_id, said, first["agent"], first["function"], dict(first.get("args") or {}),
                          source="rephrased")
        # An undo teaches nothing about routing: "add sardines to my shopping list", "oops, take
        # that off" went to the right function and the user changed their mind about the item.
        # Demoting the function for those words sent them to the to-do list next time.

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
        self, who: Principal, conversation_id: str, text: str, tools: list[Tool], context: PlanContext, gateway: Gateway,
        rollout_key: str | None = None,
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
            text, tools, history, call, gateway, who.user_id, context, facts=facts, remember=keep, turn_key=rollout_key
        ):
            if event["event"] == "summary":
                save_summary(self.store, conversation_id, event["text"], event["through"])
            elif event["event"] == "refused":
                # What the model asked for and did not get is a decision: it goes in the audit log.
                with self.store.session() as s:
                    audit(s, user_id=who.user_id, actor=f"sidekick for {who.actor}", action="sidekick.model_call",
                          target=str(event["call"])[:200], decision="deny", detail={"reason": event["reason"]})
            else:
                yield event

    async def _run(self, who: Principal, step: Step, tool: Tool | None = None) -> dict[str, Any]:
        return await run_step(self.invoker, who, step, tool)


def with_learned(tools: list[Tool], taught: Sequence[learned.Learned]) -> list[Tool]:
    """The tools with the user's learned phrasings first among their examples, so the
    offline planner's matcher routes these words, and words near them, to the function."""
    extra: dict[str, list[str]] = {}
    for example in taught:
        name = f"{example.agent}.{example.function}"
        pattern = learned.as_example(example)
        if pattern and len(extra.setdefault(name, [])) < MAX_LEARNED_PER_TOOL and pattern not in extra[name]:
            extra[name].append(pattern)
    if not extra:
        return tools
    # A tool without examples keeps the phrases the planner derives for it; the exact phrasing still routes.
    return [replace(t, examples=(*extra[t.name], *t.examples)) if t.name in extra and t.examples else t for t in tools]


def server_tool(server: str, spec: dict[str, Any], title: str) -> Tool:
    """A tool server's tool as Sidekick sees it. Annotations are hints, used only to add
    caution: a tool not marked read-only and not marked non-destructive needs a yes first."""
    notes = spec.get("annotations") or {}
    destructive = notes.get("read_only_hint") is not True and notes.get("destructive_hint") is not False
    return Tool(
        agent=server, function=spec["name"], description=spec.get("description", ""),
        parameters=spec.get("input_schema") or {}, confirm=destructive,
        agent_description=f"tool server: {title}", kind="tool", reads=notes.get("read_only_hint") is True,
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
        # "Which did you mean?" lists its options itself; a single guess names it in the question.
        listed = "\n1. " in plan.pending.question or len(plan.pending.options) == 1
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
    return error_text(tool.summary, call.get("error"), tool.agent)


def _lower(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:]
