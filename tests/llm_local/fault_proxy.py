"""A proxy in front of the real llama.cpp server that spoils its answers in one chosen way.

llama.cpp's chatml-function-calling format constrains tool names and arguments with a
grammar, so SmolLM2 cannot call a function that does not exist or send broken JSON
through it; servers that parse tool calls out of free text (Ollama, vLLM's parsers)
can. To see the kernel meet those answers from a real model's turn, this proxy
forwards each request to the real server and changes the answer it got back:

    rename   every tool call names a function that was never offered
    garble   every tool call's arguments are cut in half (not JSON any more)
    blank    the answer has no text and no tool calls
    none     passed through unchanged

and `force` (a tool name) rewrites tool_choice "auto" to that tool, so the model must
call it (its arguments are still the model's own): a test's scenario then surely
happens instead of depending on whether a weak model chose to call something.
`force_rounds` is how many requests get forced (None: all of them).

With mode none and no force, streams are relayed byte for byte. Otherwise a stream
is asked for whole, changed, and sent back as a stream of that one answer.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

MODES = ("none", "rename", "garble", "blank")


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")  # …/v1
        self.mode = "none"
        self.force: str | None = None
        self.force_rounds: int | None = None
        self.spoiled = 0  # answers changed so far
        self.requests: list[dict[str, Any]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                answer = httpx.get(proxy.upstream + self.path.removeprefix("/v1"), timeout=120)
                self._send(answer.status_code, answer.content, answer.headers.get("content-type", "application/json"))

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = json.loads(body or b"{}")
                forced = proxy.forcing(request)
                if forced:
                    request["tool_choice"] = {"type": "function", "function": {"name": proxy.force}}
                    body = json.dumps(request).encode()
                proxy.requests.append(request)
                url = proxy.upstream + self.path.removeprefix("/v1")
                if request.get("stream") and (forced or proxy.mode != "none"):
                    # Asked whole, changed, and sent back as a stream of the same answer.
                    whole = {k: v for k, v in request.items() if k not in ("stream", "stream_options")}
                    answer = httpx.post(url, json=whole, timeout=300)
                    if answer.status_code != 200:
                        self._send(answer.status_code, answer.content, "application/json")
                        return
                    events = sse_of(proxy.spoil(answer.json()) if proxy.mode != "none" else answer.json())
                    self._send(200, events, "text/event-stream")
                    return
                if request.get("stream"):
                    with httpx.stream("POST", url, content=body, headers={"content-type": "application/json"},
                                      timeout=300) as answer:
                        self.send_response(answer.status_code)
                        self.send_header("content-type", answer.headers.get("content-type", "text/event-stream"))
                        self.end_headers()
                        for piece in answer.iter_raw():
                            self.wfile.write(piece)
                            self.wfile.flush()
                    return
                answer = httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=300)
                content = answer.content
                if answer.status_code == 200 and proxy.mode != "none":
                    content = json.dumps(proxy.spoil(answer.json())).encode()
                self._send(answer.status_code, content, "application/json")

            def _send(self, status: int, content: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FaultProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self, mode: str = "none", force: str | None = None, force_rounds: int | None = None) -> None:
        assert mode in MODES
        self.mode, self.force, self.force_rounds, self.spoiled = mode, force, force_rounds, 0
        self.requests.clear()

    def forcing(self, request: dict[str, Any]) -> bool:
        if self.force is None or request.get("tool_choice") != "auto":
            return False
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        if self.force not in offered:
            return False
        if self.force_rounds is not None:
            if self.force_rounds <= 0:
                return False
            self.force_rounds -= 1
        return True

    def spoil(self, completion: dict[str, Any]) -> dict[str, Any]:
        for choice in completion.get("choices") or []:
            message = choice.get("message") or {}
            calls = message.get("tool_calls") or []
            if self.mode == "blank":
                message["content"], message["tool_calls"] = "", None
                message.pop("function_call", None)
                choice["finish_reason"] = "stop"
                self.spoiled += 1
            elif calls and self.mode == "rename":
                for call in calls:
                    call["function"]["name"] = "launch_rockets"
                self.spoiled += 1
            elif calls and self.mode == "garble":
                for call in calls:
                    text = call["function"]["arguments"] or "{}"
                    call["function"]["arguments"] = text[: max(1, len(text) // 2)]
                self.spoiled += 1
        return completion


def sse_of(completion: dict[str, Any]) -> bytes:
    """A whole chat completion as the chunks of a stream (text, then tool calls, then usage)."""
    base = {"id": completion.get("id", "chatcmpl-proxy"), "object": "chat.completion.chunk",
            "created": completion.get("created", 0), "model": completion.get("model", "")}
    chunks: list[dict[str, Any]] = []
    for choice in completion.get("choices") or []:
        message = choice.get("message") or {}
        delta: dict[str, Any] = {"role": "assistant"}
        if message.get("content"):
            delta["content"] = message["content"]
        calls = message.get("tool_calls") or []
        if calls:
            delta["tool_calls"] = [
                {"index": i, "id": c.get("id"), "type": "function",
                 "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
                for i, c in enumerate(calls)
            ]
        chunks.append(base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        chunks.append(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason") or "stop"}]})
    if completion.get("usage"):
        chunks.append(base | {"choices": [], "usage": completion["usage"]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
