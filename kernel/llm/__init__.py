"""The model gateway: one interface over Anthropic, any OpenAI-compatible server,
and no model at all (offline), with budgets and usage accounting per user.

    gateway = Gateway.from_home(settings.home, store, tracer=tracer)
    answer = await gateway.complete(ChatRequest([Message.user("hi")]), user_id=1, agent="recipes")
    async for event in gateway.stream(request, user_id=1): ...      # TextDelta | ToolCallEvent | Done
    result = await gateway.structured(request, schema, user_id=1)  # result.data is valid JSON
"""

from dreamer.kernel.llm.config import LLMConfig, LLMConfigError, Price, load_llm_config
from dreamer.kernel.llm.gateway import Gateway
from dreamer.kernel.llm.structured import Structured
from dreamer.kernel.llm.types import (
    VARIANTS,
    ChatRequest,
    ChatResponse,
    Done,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    Usage,
)

__all__ = [
    "VARIANTS", "ChatRequest", "ChatResponse", "Done", "Gateway", "LLMConfig", "LLMConfigError", "Message",
    "Price", "StreamEvent", "Structured", "TextDelta", "ToolCall", "ToolCallEvent", "ToolSpec", "Usage",
    "load_llm_config",
]
