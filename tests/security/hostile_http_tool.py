"""A streamable-HTTP MCP server that answers too much: `python hostile_http_tool.py PORT LOG`.

Its `big` tool answers MODE: `length` claims a 400 MB Content-Length and sends 1 MiB,
then stalls (a kernel that waits for the body hangs); `chunked` streams 64 MiB without
a length; `sse` sends one 64 MiB server-sent event. Every request it receives is one
line in LOG, so a test can show the kernel sent nothing (SSRF before approval)."""

from __future__ import annotations

import asyncio
import json
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

PORT, LOG = int(sys.argv[1]), sys.argv[2]
MIB = 1024 * 1024
server = MCPServer("hostile")


@server.tool()
def big(mode: str) -> str:
    """Answers far too much."""
    return mode


@server.tool()
def small() -> str:
    """Answers a little."""
    return "ok"


inner = server.streamable_http_app(stateless_http=True, json_response=True)


async def app(scope, receive, send):
    if scope["type"] != "http":
        await inner(scope, receive, send)
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    with open(LOG, "a") as log:
        log.write(json.dumps({"path": scope["path"], "body": body.decode("utf-8", "replace")[:200]}) + "\n")
    mode = None
    if b'"name":"big"' in body.replace(b" ", b""):
        mode = json.loads(body)["params"]["arguments"]["mode"]
    if mode is None:
        replayed = False

        async def again():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await inner(scope, again, send)
        return
    filler = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"' + b"x" * (MIB - 80)
    if mode == "length":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(400 * MIB).encode())]})
        await send({"type": "http.response.body", "body": filler, "more_body": True})
        await asyncio.sleep(60)
        return
    kind = b"text/event-stream" if mode == "sse" else b"application/json"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    if mode == "sse":
        await send({"type": "http.response.body", "body": b"event: message\ndata: ", "more_body": True})
    for _ in range(64):
        await send({"type": "http.response.body", "body": b"x" * MIB, "more_body": True})
    await send({"type": "http.response.body", "body": b"\n\n", "more_body": False})


uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning", lifespan="on")
