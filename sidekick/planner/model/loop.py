"""The model-driven planner: a tool-use loop over the user's exported functions.

    loop = ModelLoop()
    async for event in loop.run(text, tools, history, call, gateway, user_id, context):
        ...  # text deltas, tool_call, tool_result, summary, then one reply: {"event": "reply", "text", "pending", "streamed"}

Each round the model may ask for several calls; they do not depend on each
other (the model saw no result of any of them), so they run at once and all
results go back together. The rules are enforced here, not by the prompt:
- a function marked confirm=True is never called by the loop: it ends with a
  Clarification(kind="confirm") holding that step, which the executor's
  dialog.resume() turns into a confirmed step when the user says yes;
- an unusable call (malformed arguments, an unknown tool) and a failed call go
  back to the model as error results, so it can recover;
- a call that already succeeded this turn, with the same arguments, is not run again:
  weak models repeat themselves (a 135M model asked to add milk adds it eight times),
  and a round of nothing but such repeats ends the turn with what the calls did;
- after `max_steps` rounds the loop stops and says so.
Each call not run as the model asked comes out as a "refused" event (for the audit log).
A reply that is not the model's own answer (the model failed, gave nothing, or ran
out of steps) carries `failed`, one sentence on why, so Sidekick can fall back to
the offline planner when nothing has run yet.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, ChatResponse, Done, Gateway, Message, TextDelta, ToolCall
from dreamer.sidekick.planner.base import Clarification, FunctionFacts, PartialPlan, PlanContext, Step, Tool
from dreamer.sidekick.planner.dialog import advance
from dreamer.sidekick.planner.model.history import Budget, after, compact, needs_compaction, split, to_messages
from dreamer.sidekick.planner.model.names import ASK_USER, REMEMBER, tool_specs, tool_table
from dreamer.sidekick.planner.model.prompt import system_prompt

Event = dict[str, Any]
CallFn = Callable[[Step], Awaitable[Mapping[str, Any]]]
RememberFn = Callable[[str], Awaitable[str]]  # a fact → what to tell the model

MAX_FACT_CHARS = 500

MAX_RESULT_CHARS = 4000
MAX_QUESTION_CHARS = 500
MAX_OPTIONS = 9


@dataclass
class ModelLoop:
    max_steps: int = 8
    max_parallel: int = 8
    max_tokens: int = 1024
    budget: Budget = field(default_factory=Budget)

    async def run(
        self,
        text: str,
        tools: Sequence[Tool],
        history: Sequence[Mapping[str, Any]],
        call: CallFn,
        gateway: Gateway,
        user_id: int,
        context: PlanContext | None = None,
        *,
        facts: Sequence[str] = (),
        remember: RememberFn | None = None,
        turn_key: str | None = None,
    ) -> AsyncIterator[Event]:
        """`facts`: the user's memory, shown to the model as data; `remember`: how the
        `remember` tool keeps a new fact (no such tool when None); `turn_key`: the
        Sidekick turn the model calls belong to (the training export groups them by it)."""
        context = context or PlanContext()
        summary, turns = split(history)
        if needs_compaction(turns, self.budget):
            done = await compact(summary, turns, gateway, user_id, self.budget, turn_key=turn_key)
            if done is not None:
                yield {"event": "summary", "text": done.summary, "through": done.through}
                summary, turns = done.summary, after(turns, done.through)
            else:
                turns = list(turns[-self.budget.keep:])
        table = tool_table(tools)
        specs = tool_specs(table, remember=remember is not None)
        system = system_prompt(context, summary, facts)
        messages = to_messages(turns) + [Message.user(text)]

        said = False  # some earlier round's text was streamed
        done_lines: list[str] = []  # how each call that ran reads (its "said"), for a silent model
        seen_results = False  # an agent's output has entered the conversation
        succeeded: dict[str, Mapping[str, Any]] = {}  # a call's identity → its outcome, for calls that worked
        for _ in range(self.max_steps):
            answer: ChatResponse | None = None
            streamed = False
            try:
                # Streamed, so the user reads the model's words as they come: text deltas
                # are passed on at once; the tool calls act once the answer is whole.
                async for part in gateway.stream(
                    ChatRequest(messages, system=system, tools=specs, max_tokens=self.max_tokens), user_id=user_id,
                    turn_key=turn_key,
                ):
                    if isinstance(part, TextDelta) and part.text:
                        # A paragraph break between what the model said in different rounds.
                        yield {"event": "text", "delta": ("\n\n" if said and not streamed else "") + part.text}
                        streamed = said = True
                    elif isinstance(part, Done):
                        answer = part.response
            except DreamerError as exc:
                yield _reply(f"I could not finish: {exc.message}", streamed=False, failed=exc.message)
                return
            if answer is None:
                yield _reply("I could not finish: the model's answer ended early.", streamed=False,
                             failed="the model's answer ended early")
                return
            if not answer.tool_calls:
                text = answer.text.strip()
                if text:
                    yield _reply(text, streamed=streamed)
                elif done_lines:
                    # A model that falls silent after its calls: say what the calls did.
                    yield _reply("\n".join(done_lines))
                else:
                    yield _reply("I could not finish: the model gave an empty answer.", failed="the model gave an empty answer")
                return
            messages.append(Message.assistant(answer.text, answer.tool_calls))
            # Memory is written only from the user's own words: once any agent's output is in
            # the context, a `remember` could be a tool result speaking, so it is refused.
            round_ = _sort(answer, table, self.max_parallel, may_remember=remember is not None and not seen_results)
            for name, why in round_.refused:
                yield {"event": "refused", "call": name, "reason": why}
            for call_id, fact in round_.facts.items():
                assert remember is not None
                try:
                    told = await remember(fact)
                except DreamerError as exc:
                    told = f"not remembered: {exc.message}"
                yield {"event": "memory", "fact": fact, "outcome": told}
                round_.results[call_id] = Message.tool_result(call_id, told)
            repeats = _drop_repeats(round_, succeeded)
            if repeats and not (round_.steps or round_.facts or round_.confirm or round_.question):
                # Nothing new was asked for: the model is going round in circles.
                yield _reply(answer.text.strip() or "\n".join(done_lines))
                return
            for step in round_.steps.values():
                yield {"event": "tool_call", "agent": step.agent, "function": step.function, "args": dict(step.args)}
            outcomes = await asyncio.gather(*(_safe(call, s) for s in round_.steps.values()))
            seen_results = seen_results or bool(outcomes)
            for (call_id, step), outcome in zip(round_.steps.items(), outcomes):
                done_lines.append(_said(outcome))
                yield {"event": "tool_result", **outcome}
                round_.results[call_id] = _result_message(call_id, outcome)
                if outcome.get("ok"):
                    succeeded[_identity(step)] = outcome
            messages += [round_.results[c.id] for c in answer.tool_calls if c.id in round_.results]

            if round_.confirm:
                yield _reply_pending(_confirmation(round_.confirm, context))
                return
            if round_.question is not None:
                yield _reply_pending(round_.question)
                return
        yield _reply(
            f"I stopped after {self.max_steps} steps without finishing. "
            "Tell me what to do next, or ask again with more detail.",
            failed=f"the model did not finish within {self.max_steps} steps",
        )


@dataclass
class _Round:
    steps: dict[str, Step] = field(default_factory=dict)  # call id → a step to run now
    results: dict[str, Message] = field(default_factory=dict)  # call id → what goes back to the model
    confirm: list[tuple[Step, Tool]] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)  # call id → a fact to remember
    question: Clarification | None = None
    refused: list[tuple[str, str]] = field(default_factory=list)  # (the name the model used, why not run)


def _sort(answer: ChatResponse, table: Mapping[str, Tool], max_parallel: int, *, may_remember: bool = False) -> _Round:
    """What to do with each call of one model turn."""
    round_ = _Round()
    for tc in answer.tool_calls:
        if tc.error:
            round_.refused.append((tc.name, tc.error))
            round_.results[tc.id] = _error(tc.id, f"{tc.error}; send the call again with a JSON object of arguments")
        elif tc.name == ASK_USER:
            question = _question(tc)
            if question is None:
                round_.results[tc.id] = _error(tc.id, "ask_user needs a `question` (a non-empty string)")
            else:
                round_.question = round_.question or question
                round_.results[tc.id] = Message.tool_result(tc.id, "asked; the user answers in the next message")
        elif tc.name == REMEMBER and may_remember:
            fact = tc.arguments.get("fact") if isinstance(tc.arguments, dict) else None
            if not isinstance(fact, str) or not fact.strip() or len(fact) > MAX_FACT_CHARS:
                round_.results[tc.id] = _error(tc.id, f"remember needs `fact`, a string of 1 to {MAX_FACT_CHARS} characters")
            else:
                round_.facts[tc.id] = fact.strip()
        elif tc.name == REMEMBER:
            round_.results[tc.id] = _error(
                tc.id, "remember is only for what the user says, before any tool result; nothing was stored"
            )
        elif tc.name not in table:
            round_.refused.append((tc.name, "no tool of that name was offered"))
            round_.results[tc.id] = _error(tc.id, f"there is no tool named {tc.name!r}; use one of the tools offered")
        elif table[tc.name].confirm:
            tool = table[tc.name]
            round_.refused.append((tool.name, "not run: it waits for the user's confirmation"))
            round_.confirm.append((Step(tool.agent, tool.function, dict(tc.arguments)), tool))
            round_.results[tc.id] = Message.tool_result(tc.id, "not run: waiting for the user's confirmation")
        elif len(round_.steps) >= max_parallel:
            round_.results[tc.id] = _error(tc.id, f"at most {max_parallel} calls run in one turn; ask again")
        else:
            tool = table[tc.name]
            round_.steps[tc.id] = Step(tool.agent, tool.function, dict(tc.arguments))
    return round_


def _identity(step: Step) -> str:
    return f"{step.agent}.{step.function}:{json.dumps(step.args, sort_keys=True, default=str)}"


def _drop_repeats(round_: _Round, succeeded: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Takes out of the round each step that already succeeded this turn with the same
    arguments; the model reads that it was done, with the result it had. A failed call
    may be tried again (its error may say "try again"), up to the step limit."""
    repeats = [call_id for call_id, step in round_.steps.items() if _identity(step) in succeeded]
    for call_id in repeats:
        earlier = succeeded[_identity(round_.steps.pop(call_id))]
        done = _result_message(call_id, earlier)
        round_.results[call_id] = Message.tool_result(call_id, _clip(f"already done this turn, not run again; {done.content}"))
    return repeats


async def _safe(call: CallFn, step: Step) -> dict[str, Any]:
    """The executor's call record; a bug in `call` is one failed call, not a failed turn."""
    base: dict[str, Any] = {"agent": step.agent, "function": step.function, "args": dict(step.args)}
    try:
        outcome = await call(step)
    except DreamerError as exc:
        return base | {"ok": False, "error": {"code": exc.code, "message": exc.message}}
    except Exception as exc:  # noqa: BLE001 - reported to the model and the user as a failed call
        return base | {"ok": False, "error": {"code": "internal", "message": f"the call failed ({type(exc).__name__})"}}
    return base | dict(outcome)


def _said(outcome: Mapping[str, Any]) -> str:
    """One call in a sentence: Sidekick's own ("said") when the executor gave one."""
    if isinstance(outcome.get("said"), str):
        return str(outcome["said"])
    name = f"{outcome.get('agent')}.{outcome.get('function')}"
    if outcome.get("ok"):
        return f"Ran {name}."
    error = outcome.get("error") if isinstance(outcome.get("error"), Mapping) else {}
    return f"{name} failed: {error.get('message') or 'the call failed'}"


def _result_message(call_id: str, outcome: Mapping[str, Any]) -> Message:
    if outcome.get("ok"):
        data = json.dumps(outcome.get("result"), default=str, ensure_ascii=False)
        # "said": the result in the sentence Sidekick would show (contracts/reply_text.py); the model may reuse it.
        said = outcome.get("said")
        return Message.tool_result(call_id, _clip(f"reads as: {said}\nresult: {data}" if isinstance(said, str) else data))
    error = outcome.get("error") if isinstance(outcome.get("error"), Mapping) else {}
    return _error(call_id, str(error.get("message") or "the call failed"))


def _error(call_id: str, message: str) -> Message:
    return Message.tool_result(call_id, _clip(message), is_error=True)


def _question(tc: ToolCall) -> Clarification | None:
    """ask_user's arguments as a question. Its options carry no step: the model reads
    the answer, so they are listed in the question and the partial plan is empty."""
    asked = tc.arguments.get("question")
    if not isinstance(asked, str) or not asked.strip():
        return None
    question = " ".join(asked.split())[:MAX_QUESTION_CHARS]
    raw = tc.arguments.get("options")
    options = [" ".join(o.split())[:200] for o in raw if isinstance(o, str) and o.strip()] if isinstance(raw, list) else []
    options = options[:MAX_OPTIONS]
    empty = PartialPlan(steps=(), choices=(), facts={})
    if options:
        listed = "\n".join(f"{n}. {o}" for n, o in enumerate(options, 1))
        return Clarification("choose", f"{question}\n{listed}", empty)
    return Clarification("missing", question, empty)


def _confirmation(waiting: Sequence[tuple[Step, Tool]], context: PlanContext) -> Clarification:
    """The same question the offline planner asks, so dialog.resume() reads the answer."""
    partial = PartialPlan(
        steps=tuple(step for step, _ in waiting),
        choices=(),
        facts={tool.name: FunctionFacts.of(tool) for _, tool in waiting},
        now=context.local_now().isoformat(),
        timezone=context.timezone,
    )
    pending = advance(partial).pending
    # advance() always asks for a confirm=True step that is not confirmed yet.
    assert pending is not None
    return pending


def _reply(text: str, streamed: bool = False, failed: str | None = None) -> Event:
    # `streamed`: the user has already seen this text as deltas; the executor must not repeat it.
    # `failed`: why this is not the model's answer (None when it is).
    return {"event": "reply", "text": text, "pending": None, "streamed": streamed, "failed": failed}


def _reply_pending(pending: Clarification) -> Event:
    return {"event": "reply", "text": pending.question, "pending": pending}


def _clip(text: str) -> str:
    return text if len(text) <= MAX_RESULT_CHARS else text[: MAX_RESULT_CHARS - 1] + "…"
