"""The kernel's HTTP connections: slow clients are dropped, and there is a cap on how many
are open, so a flood of half-open sockets cannot freeze the kernel (issue 14, finding 4).

uvicorn has a keep-alive timeout but no deadline for a request to arrive: a socket that
sends half its headers, or one byte a minute, holds a file descriptor for ever, and
21,000 of them exhaust the process. This protocol is uvicorn's httptools one with:

- a header deadline: from the moment a connection waits for a request (it opened, or
  its last response ended) its headers must be complete within `header_timeout_s`,
  however slowly bytes trickle in;
- a body idle timeout: while a request body is arriving, `body_timeout_s` without a
  byte closes it (unless the kernel itself paused reading, which is back-pressure);
- a connection cap: past `max_connections`, the connection that has waited longest for
  a request is closed to make room (a flood evicts itself, a client that sends its
  request at once is served); when every connection is busy with a request, the new one
  is closed at once.

The kernel raises its file-descriptor limit to the hard limit at start and keeps the
cap at half of it, so workers, the store and logs always have descriptors left.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("dreamer.http")

DEFAULT_MAX_CONNECTIONS = 4096


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keepalive_timeout_s: float = 5.0
    max_connections: int = 0  # 0: decided from the descriptor limit (`connection_cap`)


def raise_fd_limit() -> int:
    """Lift the soft descriptor limit to the hard one; the (new) soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    return soft


def connection_cap(asked: int, fd_limit: int) -> int:
    """At most half the descriptors go to HTTP connections; the rest stay for workers and files."""
    ceiling = max(16, fd_limit // 2)
    return min(asked or DEFAULT_MAX_CONNECTIONS, ceiling)


def accept_backlog(fd_limit: int) -> int:
    """The listen backlog, which is also how many connections asyncio accepts in one go
    before any protocol code runs: kept small enough that a burst cannot use up the
    descriptors the cap leaves free (a closed socket's descriptor is freed one loop turn later)."""
    return max(16, min(2048, fd_limit // 8))


def guarded_protocol(limits: ConnectionLimits, max_connections: int) -> type[HttpToolsProtocol]:
    """An httptools protocol class that enforces `limits`; one class per server, since the
    connections waiting for a request are shared state of that server."""
    waiting: OrderedDict[GuardedProtocol, None] = OrderedDict()  # oldest wait first
    # Open and not being dropped. uvicorn's own set keeps a closed connection until its
    # connection_lost, a loop turn later, which is too late for counting under a flood.
    live: set[GuardedProtocol] = set()

    class GuardedProtocol(HttpToolsProtocol):
        _timer: asyncio.TimerHandle | None = None
        _reading_body = False

        # uvicorn's HttpToolsProtocol narrows asyncio's BaseTransport to Transport; this override keeps its signature.
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(OneWrite(transport, self.loop))
            live.add(self)
            if len(live) > max_connections:
                if waiting:
                    # Make room: the connection that has waited longest for a request goes.
                    next(iter(waiting))._drop()
                else:
                    _busy_warning(len(live))
                    self._drop()
                    return
            self._await_request()

        def connection_lost(self, exc: Exception | None) -> None:
            self._forget()
            live.discard(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._reading_body and not self.transport.is_closing():
                self._arm(limits.body_timeout_s, self._body_stalled)

        def on_headers_complete(self) -> None:
            self._forget()
            super().on_headers_complete()
            # Until on_message_complete, which follows at once when there is no body.
            self._reading_body = True
            self._arm(limits.body_timeout_s, self._body_stalled)

        def on_message_complete(self) -> None:
            self._reading_body = False
            self._cancel()
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # No pipelined request is waiting (uvicorn armed its keep-alive timer): the next
            # request's headers get their deadline from now, and the idle connection may be evicted.
            if self.timeout_keep_alive_task is not None:
                self._await_request()

        # -- internals ---------------------------------------------------------------

        def _await_request(self) -> None:
            waiting[self] = None
            waiting.move_to_end(self)
            self._arm(limits.header_timeout_s, self._drop)

        def _body_stalled(self) -> None:
            if self.flow is not None and self.flow.read_paused:
                self._arm(limits.body_timeout_s, self._body_stalled)  # the kernel paused reading, not the client
            else:
                self._drop()

        def _arm(self, seconds: float, then: Any) -> None:
            self._cancel()
            self._timer = self.loop.call_later(seconds, then)

        def _cancel(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _forget(self) -> None:
            waiting.pop(self, None)
            self._cancel()

        def _drop(self) -> None:
            self._forget()
            live.discard(self)
            if self.transport is not None and not self.transport.is_closing():
                self.transport.close()

    return GuardedProtocol


# A write this size or smaller waits for the next one (see OneWrite); a larger one leaves at once.
HOLD_AT_MOST = 64 * 1024


class OneWrite(asyncio.Transport):
    """A connection's transport, through which a small response leaves in one write.

    uvicorn writes a response's status line and headers as soon as the app starts the
    response, and its body with the next message: two send calls, two segments, and two
    wake-ups of the client for one small answer. Here a small write waits for the next one
    (joined to it), or for the end of the current turn of the event loop, whichever comes
    first; so nothing waits longer than the code that wrote it keeps running, and the order
    of the bytes is unchanged. Closing sends what waits first; aborting drops it, as an
    abort drops the transport's own buffer.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if len(data) <= HOLD_AT_MOST:
                self._transport.write(held + bytes(data))
                return
            self._transport.write(held)
        if len(data) > HOLD_AT_MOST or self._transport.is_closing():
            self._transport.write(data)
            return
        self._held = bytes(data)
        self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            self._transport.write(held)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        self.write(b"".join(list_of_data))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + len(self._held or b"")

    # -- the rest is the transport's own ------------------------------------------------

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()


_last_warning = 0.0


def _busy_warning(count: int) -> None:
    """At most one line a minute: a flood must not also flood the log."""
    global _last_warning
    now = time.monotonic()
    if now - _last_warning > 60:
        _last_warning = now
        log.warning("all %d HTTP connections are busy with requests; new ones are closed until some finish", count)


__all__ = ["ConnectionLimits", "raise_fd_limit", "connection_cap", "accept_backlog", "guarded_protocol"]
