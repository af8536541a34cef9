"""`dreamer doctor`'s model probe stays within its total budget however slow the server is,
so the CLI (120 s per call) always gets the report instead of timing out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from dreamer.kernel.llm.probe import probe
from dreamer.kernel.llm.types import ChatRequest, ChatResponse, StreamEvent


class _Silent:
    """A model server that accepts a request and never answers (a stalled local model)."""

    async def complete(self, request: ChatRequest, model: str) -> ChatResponse:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    def stream(self, request: ChatRequest, model: str) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


def test_a_silent_server_is_reported_within_the_budget() -> None:
    async def run() -> list[str]:
        found = await probe(_Silent(), {"fast": "a", "standard": "b", "powerful": "c"}, timeout_s=0.4, budget_s=1.5)
        return [f.detail for f in found]

    details = asyncio.run(run())
    # Budget 1.5 s: "a" waits its 0.4 s, "b" its 0.4 s, "c" gets the rest or is not checked.
    assert len(details) == 3
    assert details[0] == "it did not answer within 0.4 s"
    assert all("did not" in d or "not checked" in d for d in details)


def test_the_budget_cuts_a_model_mid_probe() -> None:
    async def run() -> list[str]:
        found = await probe(_Silent(), {"fast": "a", "standard": "b"}, timeout_s=5.0, budget_s=1.2)
        return [f.detail for f in found]

    details = asyncio.run(run())
    assert details[0] == "it did not finish the probe within the doctor's 1.2 s"
    assert details[1].startswith("not checked: the doctor's 1.2 s for the model probe ran out")
