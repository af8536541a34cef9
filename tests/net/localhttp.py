"""A small HTTP server on 127.0.0.1 for fetch tests, in a thread of the test process.

Routes: /text, /json, /binary, /latin1, /echo (any method; answers what it received),
/redirect?to=URL[&status=302], /loop, /big?n=BYTES (with Content-Length),
/stream?n=BYTES (no length; the body ends when the connection closes),
/slow?s=SECONDS, /status/CODE. Every request is recorded in `seen`, so a test can
show that a refused fetch never reached the server.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class LocalServer:
    port: int
    seen: list[Seen] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "localhttp"
    record: LocalServer  # set on the subclass made per server

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        pass

    def _route(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.record.seen.append(Seen(self.command, self.path, {k: v for k, v in self.headers.items()}, body))
        path = parts.path
        if path == "/text":
            self._send(200, b"hello from the test server", "text/plain; charset=utf-8")
        elif path == "/json":
            self._send(200, json.dumps({"ok": True, "n": 1}).encode(), "application/json")
        elif path == "/binary":
            self._send(200, bytes(range(256)), "application/octet-stream")
        elif path == "/latin1":
            self._send(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif path == "/echo":
            seen = {"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                    "body": body.decode("latin-1")}
            self._send(200, json.dumps(seen).encode(), "application/json")
        elif path == "/redirect":
            self._send(int(query.get("status", "302")), b"", "text/plain", [("Location", query["to"])])
        elif path == "/loop":
            self._send(302, b"", "text/plain", [("Location", "/loop")])
        elif path == "/big":
            self._send(200, b"x" * int(query["n"]), "application/octet-stream")
        elif path == "/stream":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            remaining = int(query["n"])
            try:
                while remaining > 0:
                    chunk = min(remaining, 64 * 1024)
                    self.wfile.write(b"y" * chunk)
                    remaining -= chunk
            except OSError:
                pass  # the client stopped reading, as it should at its limit
        elif path == "/slow":
            time.sleep(float(query.get("s", "5")))
            self._send(200, b"late", "text/plain")
        elif path.startswith("/status/"):
            self._send(int(path.rsplit("/", 1)[1]), b"status page", "text/plain")
        else:
            self._send(404, b"no such route", "text/plain")

    def _send(self, status: int, body: bytes, content_type: str, extra: list[tuple[str, str]] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in extra or []:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except OSError:
            pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _route


@contextmanager
def local_server(tls: ssl.SSLContext | None = None) -> Iterator[LocalServer]:
    """The server, speaking HTTPS when given a server-side TLS context."""
    record = LocalServer(0)
    handler = type("Handler", (_Handler,), {"record": record})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True  # a /slow request must not hold up the end of the tests
    record.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
