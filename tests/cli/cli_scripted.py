"""A scripted HTTP server that answers like the kernel's API, for the CLI's unit tests.

A real HTTP server on a real port that answers the way the API table in
docs/ARCHITECTURE.md says the kernel does; it records every request so a test
can check what the CLI sent (and that it sent nothing).
"""

from __future__ import annotations

import json
import socket
import sys
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

DREAMER = str(Path(sys.executable).with_name("dreamer"))


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Answer = tuple[int, Any]


@dataclass
class ScriptedKernel:
    """Answers (method, path) with queued (status, json) pairs; the last answer repeats."""

    url: str = ""
    routes: dict[tuple[str, str], list[Answer]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def on(self, method: str, path: str, *answers: Answer) -> None:
        self.routes[(method, path)] = list(answers)

    def answer(self, method: str, path: str) -> Answer:
        queue = self.routes.get((method, path))
        if not queue:
            return 404, {"error": {"code": "not_found", "message": f"no route {method} {path}"}}
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def requests(self, method: str | None = None, path: str | None = None) -> list[Seen]:
        return [s for s in self.seen if method in (None, s.method) and path in (None, s.path)]


def handler(kernel: ScriptedKernel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            kernel.seen.append(
                Seen(self.command, parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, body)
            )
            status, payload = kernel.answer(self.command, parts.path)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _serve

        def log_message(self, *args: object) -> None:
            pass

    return Handler
