"""The call's span without start_as_current_span (issue 23): it ends as use_span ends a span,
it is the parent of what its syscalls make, its trace is the invocation row's, and the
kernel's sampler records every span unless the operator chose another."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.principal import Caller
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Invocation
from dreamer.kernel.tracing import setup_tracing
from dreamer.kernel.tracing.provider import EverySpan
from dreamer.kernel.tracing.spans import ending

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
import test_admission_durable as world


def _recorded() -> tuple[trace.Tracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("t"), exporter


def _seen(span: ReadableSpan) -> tuple[Any, ...]:
    events = [(e.name, {k: v for k, v in (e.attributes or {}).items() if k != "exception.stacktrace"})
              for e in span.events]
    return span.status.status_code, span.status.description, events, span.end_time is not None


@pytest.mark.parametrize("error", [DreamerError("not_found", "no such agent"), ValueError("bad"), None])
def test_ending_ends_a_span_as_use_span_does(error: Exception | None) -> None:
    tracer, exporter = _recorded()
    for hold in (lambda s: trace.use_span(s, end_on_exit=True), ending):
        try:
            with hold(tracer.start_span("s")) as span:
                span.set_attribute("a", 1)
                if error is not None:
                    raise error
        except Exception:  # noqa: BLE001 - the span's record is what is compared
            pass
    by_use_span, by_ending = exporter.get_finished_spans()
    assert _seen(by_ending) == _seen(by_use_span)
    assert by_ending.attributes == {"a": 1}


def test_ending_does_not_record_a_cancellation_as_use_span_does_not() -> None:
    tracer, exporter = _recorded()
    for hold in (lambda s: trace.use_span(s, end_on_exit=True), ending):
        with pytest.raises(asyncio.CancelledError), hold(tracer.start_span("s")):
            raise asyncio.CancelledError
    by_use_span, by_ending = exporter.get_finished_spans()
    assert _seen(by_ending) == _seen(by_use_span) == (trace.StatusCode.UNSET, None, [], True)


def test_ending_does_not_make_the_span_current() -> None:
    tracer, _ = _recorded()
    with ending(tracer.start_span("s")):
        assert not trace.get_current_span().get_span_context().is_valid


def test_the_kernels_sampler_records_every_span_unless_the_operator_chose_one(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_TRACES_SAMPLER", raising=False)
    provider = setup_tracing(store, batch=False)
    assert isinstance(provider.sampler, EverySpan)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("root") as root, tracer.start_as_current_span("child") as child:
        assert root.is_recording() and child.is_recording()
        assert child.get_span_context().trace_flags.sampled and not child.get_span_context().trace_state
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "parentbased_always_off")
    assert isinstance(setup_tracing(store, batch=False).sampler, ParentBased)


def test_the_calls_span_is_its_rows_trace_and_its_syscalls_parent(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = world._world(store, tmp_path)
    tracer, exporter = _recorded()
    invoker.tracer = tracer
    worker.syscall = ("no.such.syscall", {})  # refused by the kernel: the syscall span's error only

    async def main() -> str:
        outcome = await invoker.invoke(ada, "notes", "read", {}, Caller("user"))
        assert not trace.get_current_span().get_span_context().is_valid
        return outcome.invocation_id

    try:
        invocation_id = asyncio.run(main())
    finally:
        invoker.writer.close()
    syscall, call = exporter.get_finished_spans()
    assert call.name == "invoke_agent notes" and syscall.name == "execute_tool no.such.syscall"
    assert syscall.parent is not None and syscall.parent.span_id == call.context.span_id
    assert syscall.status.status_code == trace.StatusCode.ERROR and syscall.attributes["error.type"] == "not_available"
    assert call.status.status_code == trace.StatusCode.UNSET and not call.events
    with store.session() as s:
        row = s.scalars(select(Invocation).where(Invocation.id == invocation_id)).one()
    assert row.trace_id == format(call.context.trace_id, "032x")
