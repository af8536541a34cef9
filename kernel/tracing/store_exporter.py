"""An OpenTelemetry span exporter that writes finished spans to the kernel store,
so `dreamer logs --run ID` and GET /v1/invocations/{id} can show them without a
collector.

It runs under a SimpleSpanProcessor (synchronously, as each span ends), so a span
is readable as soon as the call it describes returns. On SQLite, end spans outside
an open write transaction of the same thread: the exporter writes through its own
connection and would wait for that transaction's lock.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_span_id, format_trace_id
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.hot import HotStatement
from dreamer.kernel.store.models import Span
from dreamer.kernel.store.tables import table, width
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.tracing.semconv import DREAMER_INVOCATION_ID
from dreamer.kernel.store.text import storable_text

log = logging.getLogger(__name__)

_SPANS = table(Span)
_NAME_WIDTH = width(_SPANS.c.name) or 200
_INVOCATION_WIDTH = width(_SPANS.c.invocation_id) or 40




def _json_value(value: Any) -> Any:
    """Attribute values as JSON: sequences become lists, NaN/inf become strings."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(item) for item in value]
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return storable_text(str(value))


def span_row(span: ReadableSpan) -> Span:
    return Span(**span_values(span))


def span_values(span: ReadableSpan) -> dict[str, Any]:
    """A finished span as the values of its row (span_dict's keys), without an ORM object."""
    context = span.get_span_context()
    assert context is not None  # SDK spans always have one
    attributes: dict[str, Any] = {
        storable_text(key): _json_value(value) for key, value in (span.attributes or {}).items()
    }
    if span.status.description:
        attributes.setdefault("otel.status_description", storable_text(span.status.description))
    # Keep the first recorded exception readable without a collector.
    for event in span.events:
        if event.name == "exception" and event.attributes:
            for key in ("exception.type", "exception.message"):
                if key in event.attributes:
                    attributes.setdefault(key, _json_value(event.attributes[key]))
            break
    invocation = attributes.get(DREAMER_INVOCATION_ID)
    start = span.start_time or 0
    end = span.end_time or start
    return dict(
        span_id=format_span_id(context.span_id),
        trace_id=format_trace_id(context.trace_id),
        parent_span_id=format_span_id(span.parent.span_id) if span.parent else None,
        name=storable_text(span.name)[:_NAME_WIDTH],
        kind=span.kind.name.lower(),
        start_ns=start,
        end_ns=end,
        duration_ms=(end - start) / 1e6,
        status=span.status.status_code.name.lower(),
        attributes=attributes,
        invocation_id=invocation[:_INVOCATION_WIDTH] if isinstance(invocation, str) else None,
    )


_SPAN_COLUMNS = (
    "span_id", "trace_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "duration_ms", "status",
    "attributes", "invocation_id",
)
_INSERT_SPANS = HotStatement(insert(_SPANS), _SPAN_COLUMNS)


class StoreSpanExporter(SpanExporter):
    """Writes each batch of finished spans to the `spans` table in one transaction."""

    def __init__(self, store: Store, writer: GroupWriter | None = None) -> None:
        self._store = store
        self._writer = writer
        self._stopped = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._stopped:
            return SpanExportResult.FAILURE
        try:
            rows = [span_values(span) for span in spans]
            if self._writer is not None:
                self._writer.write_now(lambda conn: _INSERT_SPANS.execute(conn, rows))
            else:
                with self._store.session() as session:
                    _INSERT_SPANS.execute(session.connection(), rows)
        except Exception as error:  # noqa: BLE001 - tracing must never break the call it traces
            log.warning("could not store %d span(s): %s", len(spans), error)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._stopped = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # nothing is buffered


def span_dict(span: Span) -> dict[str, Any]:
    return {
        "span_id": span.span_id,
        "trace_id": span.trace_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "kind": span.kind,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "duration_ms": span.duration_ms,
        "status": span.status,
        "attributes": span.attributes,
        "invocation_id": span.invocation_id,
    }


def spans_for(
    session: Session, invocation_id: str | None = None, trace_id: str | None = None
) -> list[dict[str, Any]]:
    """Stored spans of one invocation and/or one trace, oldest first."""
    if invocation_id is None and trace_id is None:
        raise ValueError("spans_for needs an invocation_id or a trace_id.")
    query = select(Span)
    if invocation_id is not None:
        query = query.where(Span.invocation_id == invocation_id)
    if trace_id is not None:
        query = query.where(Span.trace_id == trace_id)
    query = query.order_by(Span.start_ns, Span.span_id)
    return [span_dict(span) for span in session.scalars(query)]
