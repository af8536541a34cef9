"""A span that ends on leaving its block without being made the current span.

`Tracer.start_as_current_span` makes the span current for its whole block: two generator
context managers and a context attach and detach around it, on every call. An invocation's
span has children only through its syscalls, so the invoker makes it current only around
each syscall (`trace.use_span`) and holds it with `ending` the rest of the time (issue 23).

`ending` does on leaving the block what `trace.use_span(span, end_on_exit=True)` does: an
`Exception` that leaves it is recorded on the span as an event and sets its status to
ERROR with "Type: message", and the span ends, whatever left it. (The SDK span's own
`with span:` differs: it records any BaseException, a cancellation too, and marks the
event escaped.)
"""

from __future__ import annotations

from types import TracebackType

from opentelemetry.trace import Span, Status, StatusCode


class ending:
    __slots__ = ("span",)

    def __init__(self, span: Span) -> None:
        self.span = span

    def __enter__(self) -> Span:
        return self.span

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        span = self.span
        try:
            if isinstance(exc, Exception) and span.is_recording():
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        finally:
            span.end()
