"""The provider-neutral shapes of a model call: what is asked, what comes back.

Providers translate these to and from their wire formats; nothing above the
providers (the gateway, the syscall, Sidekick's planner) sees a provider type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]
Variant = Literal["fast", "standard", "powerful"]
VARIANTS: tuple[str, ...] = ("fast", "standard", "powerful")

# Normalised stop reasons; providers map theirs onto these ("stop" -> end_turn, ...).
StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: a name, what it does, a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model made.

    `error` is set when the call cannot be used as it stands (arguments that are
    not a JSON object, a tool that was not offered); `arguments` is then {} and
    `raw_arguments` keeps what the model sent, so a planner can tell the model
    what went wrong instead of failing the whole turn.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    error: str | None = None
    raw_arguments: str | None = None


@dataclass(frozen=True)
class Message:
    """One turn of a conversation.

    user / assistant turns carry `content`; an assistant turn may also carry the
    tool calls it made; a `tool` turn is the result of the call `tool_call_id`.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False

    @classmethod
    def user(cls, text: str) -> "Message":
        return cls("user", text)

    @classmethod
    def assistant(cls, text: str, tool_calls: tuple[ToolCall, ...] | list[ToolCall] = ()) -> "Message":
        return cls("assistant", text, tuple(tool_calls))

    @classmethod
    def tool_result(cls, call_id: str, text: str, *, is_error: bool = False) -> "Message":
        return cls("tool", text, tool_call_id=call_id, is_error=is_error)


@dataclass(frozen=True)
class ChatRequest:
    """A model call.

    `tool_choice`: None lets the model decide, "required" makes it call some tool,
    a tool's name makes it call that tool. `response_schema` (a JSON schema of an
    object) asks for a JSON answer, which comes back as the response's `text`:
    Anthropic is made to call a tool with that input schema, OpenAI-compatible
    servers get `response_format: json_schema`. It does not validate the answer;
    `dreamer.kernel.llm.structured` does.
    """

    messages: list[Message]
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 1024
    temperature: float | None = None
    variant: str = "standard"
    tool_choice: str | None = None
    response_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens of one call. `input_tokens` counts input that was not read from the
    prompt cache; cached input is in `cache_read_tokens` (providers differ here and
    are normalised to this)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True)
class ChatResponse:
    text: str
    tool_calls: list[ToolCall]
    stop_reason: StopReason
    usage: Usage
    model: str
    provider: str


# -- streaming events ------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """A tool call, emitted once its arguments are complete."""

    call: ToolCall


@dataclass(frozen=True)
class Done:
    """The end of a stream: the whole response, as `complete` would have returned it."""

    response: ChatResponse


StreamEvent = TextDelta | ToolCallEvent | Done
