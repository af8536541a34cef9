"""A fake model provider: a real HTTP server on 127.0.0.1 that speaks Anthropic's
Messages API (POST /v1/messages) and OpenAI's Chat Completions (POST
/v1/chat/completions), streaming (SSE) or not, and replays scripted replies.

    with FakeLLMServer() as fake:
        fake.script(Text("hello"), ToolCalls([Call("search", {"q": "soup"})]), Fail(429, "slow down"))
        client = anthropic.AsyncAnthropic(base_url=fake.anthropic_url, api_key="k")
        ...
        fake.requests[0].body["messages"]   # what the client sent

Each request takes the next scripted reply (whichever wire format it uses); when
the script is empty, `responder(request)` is asked, and without one the server
answers 500 "no scripted reply left", so a test that calls more often than it
planned fails loudly. Replies: Text, ToolCalls, Fail (an HTTP error),
BrokenStream (an error in the middle of a stream), Delay (answer late, for
timeouts), Raw (any bytes). Tool call arguments given as a string are sent
as-is, which is how a test makes a model send malformed JSON.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


# -- scripted replies ---------------------------------------------------------------------


@dataclass
class Reply:
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    model: str | None = None  # default: the model the request named
    stop_reason: str | None = None  # default: the natural one for the reply and format


@dataclass
class Text(Reply):
    text: str = ""
    chunks: list[str] | None = None  # how a stream splits the text; default: about 3 pieces
    pace: float = 0.0  # seconds between a stream's events (a slow model, so a reader sees the text grow)

    def __init__(self, text: str, *, chunks: list[str] | None = None, pace: float = 0.0, **usage: Any) -> None:
        super().__init__(**usage)
        self.text, self.chunks, self.pace = text, chunks, pace


@dataclass
class Call:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim: malformed JSON is a str
    id: str | None = None


@dataclass
class ToolCalls(Reply):
    calls: list[Call] = field(default_factory=list)
    text: str = ""

    def __init__(self, calls: list[Call], text: str = "", **usage: Any) -> None:
        super().__init__(**usage)
        self.calls, self.text = calls, text


@dataclass
class Fail:
    """An HTTP error in the format's own error body."""

    status: int
    message: str
    type: str = "api_error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class BrokenStream:
    """A stream that starts with `text` and then reports an error (non-streaming requests get a 500)."""

    text: str
    message: str = "the fake server broke the stream"


@dataclass
class Delay:
    """Wait `seconds` (or until the server stops) before answering with `then`."""

    seconds: float
    then: Any = None


@dataclass
class Raw:
    body: bytes | str
    status: int = 200
    content_type: str = "application/json"


@dataclass
class Recorded:
    path: str
    format: str  # "anthropic" | "openai" | "unknown"
    headers: dict[str, str]
    body: Any
    stream: bool


Responder = Callable[[Recorded], Any]


# -- the server -----------------------------------------------------------------------------


class FakeLLMServer:
    def __init__(self, responder: Responder | None = None) -> None:
        self.responder = responder
        self.requests: list[Recorded] = []
        self._script: deque[Any] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> "FakeLLMServer":
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakeLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # addresses
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def anthropic_url(self) -> str:
        """The base URL for anthropic.Anthropic (which appends /v1/messages)."""
        return self.url

    @property
    def openai_url(self) -> str:
        """The base URL for openai.OpenAI (which appends /chat/completions)."""
        return self.url + "/v1"

    def kernel_env(self, model: str = "medium-1", api_key: str = "sk-test", **extra: str) -> dict[str, str]:
        """The environment of a kernel whose model gateway talks to this server (OpenAI wire format),
        with no retries so a scripted failure reaches the caller at once."""
        return {
            "DREAMER_LLM_PROVIDER": "openai", "DREAMER_LLM_BASE_URL": self.openai_url, "DREAMER_LLM_MODEL": model,
            "DREAMER_LLM_API_KEY": api_key, "DREAMER_LLM_MAX_RETRIES": "0", **extra,
        }

    # script
    def script(self, *replies: Any) -> "FakeLLMServer":
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    def _next(self, recorded: Recorded) -> Any:
        with self._lock:
            self.requests.append(recorded)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            reply = self.responder(recorded)
            if reply is not None:
                return reply
        return Fail(500, "the fake server has no scripted reply left")


def _handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection; a stream ends when it closes

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": []})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            path = self.path.split("?", 1)[0]
            fmt = "anthropic" if path.endswith("/messages") else "openai" if path.endswith("/chat/completions") else "unknown"
            stream = isinstance(body, dict) and body.get("stream") is True
            headers = {k.lower(): v for k, v in self.headers.items()}
            recorded = Recorded(path=path, format=fmt, headers=headers, body=body, stream=stream)
            if fmt == "unknown":
                self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
                return
            reply = server._next(recorded)
            try:
                self._answer(recorded, reply)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to do

        def _answer(self, req: Recorded, reply: Any) -> None:
            while isinstance(reply, Delay):
                if server._stopping.wait(reply.seconds):
                    return
                reply = reply.then if reply.then is not None else Text("(late)")
            if isinstance(reply, Raw):
                data = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self._send(reply.status, reply.content_type, data)
            elif isinstance(reply, Fail):
                self._json(reply.status, _error_body(req.format, reply.type, reply.message), reply.headers)
            elif isinstance(reply, BrokenStream) and not req.stream:
                self._json(500, _error_body(req.format, "api_error", reply.message))
            elif req.stream:
                self._stream(_events(req, reply), getattr(reply, "pace", 0.0))
            else:
                render = _anthropic_message if req.format == "anthropic" else _openai_completion
                self._json(200, render(req, reply))

        def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, "application/json", json.dumps(payload).encode(), headers)

        def _send(self, status: int, content_type: str, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: Iterator[bytes], pace: float = 0.0) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            for n, event in enumerate(events):
                if n and pace and server._stopping.wait(pace):
                    return
                self.wfile.write(event)
                self.wfile.flush()

    return Handler


# -- wire formats ----------------------------------------------------------------------------


def _error_body(fmt: str, kind: str, message: str) -> dict[str, Any]:
    if fmt == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _model(req: Recorded, reply: Any) -> str:
    named = getattr(reply, "model", None)
    return named or (req.body.get("model") if isinstance(req.body, dict) else None) or "fake-model"


def _arguments_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _call_id(call: Call, prefix: str, index: int) -> str:
    return call.id or f"{prefix}{index}_{uuid.uuid4().hex[:8]}"


def _pieces(text: str, chunks: list[str] | None) -> list[str]:
    if chunks is not None:
        return chunks
    if not text:
        return []
    size = max(1, -(-len(text) // 3))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _anthropic_usage(reply: Reply) -> dict[str, int]:
    return {
        "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
        "cache_read_input_tokens": reply.cache_read_tokens, "cache_creation_input_tokens": reply.cache_write_tokens,
    }


def _anthropic_message(req: Recorded, reply: Any) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    stop = "end_turn"
    if isinstance(reply, ToolCalls):
        stop = "tool_use"
        for i, call in enumerate(reply.calls):
            arguments: Any = call.arguments
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    pass  # sent as a string: a malformed input
            content.append({"type": "tool_use", "id": _call_id(call, "toolu_", i), "name": call.name, "input": arguments})
    return {
        "id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant", "model": _model(req, reply),
        "content": content, "stop_reason": reply.stop_reason or stop, "stop_sequence": None,
        "usage": _anthropic_usage(reply),
    }


def _openai_usage(reply: Reply) -> dict[str, Any]:
    prompt = reply.input_tokens + reply.cache_read_tokens  # OpenAI counts cached input inside prompt_tokens
    return {
        "prompt_tokens": prompt, "completion_tokens": reply.output_tokens,
        "total_tokens": prompt + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens},
    }


def _openai_calls(reply: Any) -> list[dict[str, Any]]:
    return [
        {"id": _call_id(call, "call_", i), "type": "function",
         "function": {"name": call.name, "arguments": _arguments_text(call.arguments)}}
        for i, call in enumerate(getattr(reply, "calls", []))
    ]


def _openai_completion(req: Recorded, reply: Any) -> dict[str, Any]:
    calls = _openai_calls(reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
        "model": _model(req, reply),
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": reply.stop_reason or ("tool_calls" if calls else "stop")}],
        "usage": _openai_usage(reply),
    }


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def _events(req: Recorded, reply: Any) -> Iterator[bytes]:
    if req.format == "anthropic":
        yield from _anthropic_events(req, reply)
    else:
        yield from _openai_events(req, reply)


def _anthropic_events(req: Recorded, reply: Any) -> Iterator[bytes]:
    usage = _anthropic_usage(reply) if isinstance(reply, Reply) else _anthropic_usage(Reply())
    start_usage = {**usage, "output_tokens": 1}
    yield _sse("message_start", {"type": "message_start", "message": {
        "id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant", "model": _model(req, reply),
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}})
    yield _sse("ping", {"type": "ping"})
    index = 0
    text = reply.text
    if text:
        yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "text", "text": ""}})
        for piece in _pieces(text, getattr(reply, "chunks", None)):
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "text_delta", "text": piece}})
        if isinstance(reply, BrokenStream):
            yield _sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": reply.message}})
            return
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    elif isinstance(reply, BrokenStream):
        yield _sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": reply.message}})
        return
    stop = "end_turn"
    for i, call in enumerate(getattr(reply, "calls", [])):
        stop = "tool_use"
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": _call_id(call, "toolu_", i), "name": call.name, "input": {}}})
        for piece in _pieces(_arguments_text(call.arguments), None):
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "input_json_delta", "partial_json": piece}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    yield _sse("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": reply.stop_reason or stop, "stop_sequence": None},
                                 "usage": {"output_tokens": reply.output_tokens}})
    yield _sse("message_stop", {"type": "message_stop"})


def _openai_events(req: Recorded, reply: Any) -> Iterator[bytes]:
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": _model(req, reply)}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(None, {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.text, getattr(reply, "chunks", None)):
        yield chunk({"content": piece})
    if isinstance(reply, BrokenStream):
        yield _sse(None, {"error": {"message": reply.message, "type": "server_error", "param": None, "code": None}})
        return
    calls = _openai_calls(reply)
    for i, call in enumerate(calls):
        yield chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        for piece in _pieces(call["function"]["arguments"], None):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, reply.stop_reason or ("tool_calls" if calls else "stop"))
    options = req.body.get("stream_options") if isinstance(req.body, dict) else None
    if isinstance(options, dict) and options.get("include_usage"):
        yield _sse(None, {**base, "choices": [], "usage": _openai_usage(reply)})
    yield _sse(None, "[DONE]")
