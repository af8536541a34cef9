"""A streamable-HTTP MCP server on localhost for the tests: `python http_tool_server.py PORT KEY`.

Every request must carry `X-Test-Key: KEY`, so the tests can show that the kernel sends
the headers the user set, and only those."""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

PORT, KEY = int(sys.argv[1]), sys.argv[2]
server = MCPServer("weather")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def forecast(city: str) -> dict:
    """Tomorrow's weather in a city."""
    return {"city": city, "sky": "clear"}


inner = server.streamable_http_app(stateless_http=True, json_response=True)


async def app(scope, receive, send):
    if scope["type"] == "http" and dict(scope["headers"]).get(b"x-test-key", b"").decode() != KEY:
        await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"missing key"})
        return
    await inner(scope, receive, send)


uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning", lifespan="on")
