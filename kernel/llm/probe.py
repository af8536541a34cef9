"""`dreamer doctor`'s look at the configured model endpoint, for real: does each
configured model answer, and can it call a tool (the model-driven planner needs both)?

Three small requests per distinct model: a plain one ("Reply with the word OK."),
one that offers a single tool and names it in tool_choice (every server with tool
support can do that), and one that leaves the choice to the model, as Sidekick's loop
does (llama-cpp-python's plain chat formats manage the second but not the third). They go to the provider
directly, not through a user's budget: the doctor is the administrator's check and
costs a few dozen tokens.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm.errors import clip
from dreamer.kernel.llm.providers.base import Provider
from dreamer.kernel.llm.types import ChatRequest, Message, ToolSpec

PING = ToolSpec(
    "doctor_ping",
    "Report that tools work. Call it with ok set to true.",
    {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
)
PROBE_TIMEOUT_S = 60.0  # a local model on two cores loads and answers within this
# The whole probe's bound, below the CLI's 120 s call timeout: up to three requests per model
# each waiting PROBE_TIMEOUT_S would otherwise keep `dreamer doctor` past it on a slow machine.
PROBE_BUDGET_S = 90.0


@dataclass(frozen=True)
class ModelProbe:
    model: str
    variants: list[str]
    answers: bool
    tools: bool
    detail: str  # one sentence: what worked, or what did not and what to change

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def probe(provider: Provider, models: dict[str, str], timeout_s: float = PROBE_TIMEOUT_S,
                budget_s: float = PROBE_BUDGET_S) -> list[ModelProbe]:
    """One ModelProbe per distinct model of `models` (variant → model), in variant order.

    Each request waits at most `timeout_s`, and the whole probe at most `budget_s`: a model
    the budget does not reach is reported as not checked rather than holding the answer."""
    by_model: dict[str, list[str]] = {}
    for variant, model in models.items():
        by_model.setdefault(model, []).append(variant)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget_s
    probes: list[ModelProbe] = []
    for model, variants in by_model.items():
        left = deadline - loop.time()
        if left <= 1.0:
            probes.append(ModelProbe(model, variants, False, False,
                                     f"not checked: the doctor's {budget_s:g} s for the model probe ran out; "
                                     "run `dreamer doctor` again when the model server is less busy"))
            continue
        try:
            async with asyncio.timeout(left):
                probes.append(await _one(provider, model, variants, min(timeout_s, left)))
        except TimeoutError:
            probes.append(ModelProbe(model, variants, False, False,
                                     f"it did not finish the probe within the doctor's {budget_s:g} s"))
    return probes


async def _one(provider: Provider, model: str, variants: list[str], timeout_s: float) -> ModelProbe:
    plain = ChatRequest([Message.user("Reply with the word OK.")], max_tokens=8, temperature=0)
    try:
        async with asyncio.timeout(timeout_s):
            answer = await provider.complete(plain, model)
    except DreamerError as exc:
        return ModelProbe(model, variants, False, False, f"it does not answer: {clip(exc.message, 300)}")
    except TimeoutError:
        return ModelProbe(model, variants, False, False, f"it did not answer within {timeout_s:g} s")
    if not answer.text.strip() and answer.usage.output_tokens == 0:
        return ModelProbe(model, variants, False, False, "it answers with nothing (no text, no tokens)")

    # Told which tool: any server with tool support can do this (a grammar, a parser).
    forced = ChatRequest([Message.user("Call doctor_ping with ok set to true.")], tools=[PING],
                         tool_choice=PING.name, max_tokens=32, temperature=0)
    # Left to choose, as Sidekick's model loop leaves it: some servers only manage the first.
    chosen = ChatRequest([Message.user("Call the doctor_ping tool now.")], tools=[PING], max_tokens=32, temperature=0)
    outcomes: list[str | None] = []  # per request: None when it called doctor_ping, else why not
    for request in (forced, chosen):
        try:
            async with asyncio.timeout(timeout_s):
                called = await provider.complete(request, model)
        except DreamerError as exc:
            return ModelProbe(model, variants, True, False,
                              f"it answers, but refuses a request with tools: {clip(exc.message, 300)}")
        except TimeoutError:
            return ModelProbe(model, variants, True, False,
                              f"it answers, but not to a request with tools within {timeout_s:g} s")
        if any(c.name == PING.name and c.error is None for c in called.tool_calls):
            outcomes.append(None)
        else:
            broken = next((c.error for c in called.tool_calls if c.error), None)
            outcomes.append(clip(broken, 200) if broken else "it answered in text instead")
    if outcomes == [None, None]:
        return ModelProbe(model, variants, True, True, "it answers and calls tools")
    why = ("it calls a tool it is told to call, but did not choose one itself (tool_choice auto)"
           if outcomes[0] is None else outcomes[0] or "")
    return ModelProbe(model, variants, True, False,
                      f"it answers, but does not call tools ({why}); Sidekick's model planner needs a server "
                      "with tool calling (llama.cpp: --chat_format chatml-function-calling; "
                      "vLLM: --enable-auto-tool-choice; Ollama: a model with tool support)")
