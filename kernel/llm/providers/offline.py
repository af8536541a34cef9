"""No model at all: every call says how to configure one."""

from __future__ import annotations

from collections.abc import AsyncIterator

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm.types import ChatRequest, ChatResponse, StreamEvent

NO_MODEL = (
    "no model is configured; set DREAMER_LLM_PROVIDER=anthropic (with ANTHROPIC_API_KEY) or "
    "DREAMER_LLM_PROVIDER=openai with DREAMER_LLM_BASE_URL and DREAMER_LLM_MODEL, "
    "or the [llm] table of $DREAMER_HOME/config.toml (see docs/MODELS.md)"
)


class OfflineProvider:
    name = "offline"

    def __init__(self, problem: str | None = None) -> None:
        # A configuration that could not be used is reported instead of the generic hint.
        self.problem = problem

    @property
    def message(self) -> str:
        if self.problem:
            return f"the model is not available because its configuration is wrong: {self.problem}"
        return NO_MODEL

    async def complete(self, request: ChatRequest, model: str) -> ChatResponse:
        raise DreamerError("not_available", self.message)

    async def stream(self, request: ChatRequest, model: str) -> AsyncIterator[StreamEvent]:
        raise DreamerError("not_available", self.message)
        yield  # an async generator, like the other providers' streams

    async def aclose(self) -> None:
        return None
