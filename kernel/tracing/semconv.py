"""Span names and attribute keys the kernel uses: OpenTelemetry's GenAI semantic
conventions (https://opentelemetry.io/docs/specs/semconv/gen-ai/) plus our own
`dreamer.*` keys.

The GenAI keys are spelled out here rather than imported from
opentelemetry-semantic-conventions, whose gen_ai module is still "incubating" and
may move; a test checks the strings against that module.
"""

from __future__ import annotations

from typing import Final

# gen_ai.operation.name values
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_CHAT: Final = "chat"

# GenAI attributes
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
GEN_AI_AGENT_VERSION: Final = "gen_ai.agent.version"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
ERROR_TYPE: Final = "error.type"

# dreamer attributes
DREAMER_INVOCATION_ID: Final = "dreamer.invocation_id"  # fills spans.invocation_id
DREAMER_USER: Final = "dreamer.user"
DREAMER_FUNCTION: Final = "dreamer.function"
DREAMER_CALLER: Final = "dreamer.caller"
DREAMER_CALL_DEPTH: Final = "dreamer.call_depth"

TRACER_NAME: Final = "dreamer.kernel"
SERVICE_NAME: Final = "dreamer-kernel"


def invoke_agent_span(agent: str) -> str:
    return f"{OP_INVOKE_AGENT} {agent}"


def execute_tool_span(tool: str) -> str:
    return f"{OP_EXECUTE_TOOL} {tool}"


def chat_span(model: str) -> str:
    return f"{OP_CHAT} {model}"
