"""Tracing: spans land in the store; OTLP export reaches a collector."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.tracing import StoreSpanExporter, setup_tracing, spans_for, traces_endpoint
from dreamer.kernel.tracing import semconv as sc
from dreamer.kernel.tracing.ids import TimeOrderedIds


def test_spans_land_in_the_store_with_links_and_attributes(store: Store) -> None:
    provider = setup_tracing(store, batch=False)
    tracer = provider.get_tracer(sc.TRACER_NAME)
    with tracer.start_as_current_span(
        sc.invoke_agent_span("recipes"),
        kind=SpanKind.SERVER,
        attributes={
            sc.GEN_AI_OPERATION_NAME: sc.OP_INVOKE_AGENT,
            sc.GEN_AI_AGENT_NAME: "recipes",
            sc.DREAMER_INVOCATION_ID: "inv-1",
            sc.DREAMER_FUNCTION: "suggest",
            "dreamer.tags": ("a", "b"),
        },
    ) as parent:
        with tracer.start_as_current_span(
            sc.execute_tool_span("search"),
            attributes={sc.GEN_AI_OPERATION_NAME: sc.OP_EXECUTE_TOOL, sc.GEN_AI_TOOL_NAME: "search",
                        sc.DREAMER_INVOCATION_ID: "inv-1"},
        ):
            pass
        parent.set_status(StatusCode.OK)
    # No flush: unbatched, the store exporter writes as each span ends.
    with store.session() as session:
        spans = spans_for(session, invocation_id="inv-1")
    assert [s["name"] for s in spans] == ["invoke_agent recipes", "execute_tool search"]
    outer, inner = spans
    assert inner["parent_span_id"] == outer["span_id"]
    assert outer["parent_span_id"] is None
    assert inner["trace_id"] == outer["trace_id"] == format(parent.get_span_context().trace_id, "032x")
    assert outer["span_id"] == format(parent.get_span_context().span_id, "016x")
    assert outer["attributes"]["gen_ai.agent.name"] == "recipes"
    assert outer["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert outer["attributes"]["dreamer.tags"] == ["a", "b"]
    assert inner["attributes"]["gen_ai.tool.name"] == "search"
    assert (outer["kind"], outer["status"]) == ("server", "ok")
    assert (inner["kind"], inner["status"]) == ("internal", "unset")
    assert outer["end_ns"] >= inner["end_ns"] >= inner["start_ns"] >= outer["start_ns"]
    assert outer["duration_ms"] == pytest.approx((outer["end_ns"] - outer["start_ns"]) / 1e6)
    assert all(s["invocation_id"] == "inv-1" for s in spans)
    provider.shutdown()


def test_failed_span_keeps_the_error(store: Store) -> None:
    provider = setup_tracing(store, batch=False)
    tracer = provider.get_tracer(sc.TRACER_NAME)
    with pytest.raises(ValueError):
        with tracer.start_as_current_span("chat offline", attributes={sc.DREAMER_INVOCATION_ID: "inv-2"}):
            raise ValueError("no such recipe")
    with store.session() as session:
        (span,) = spans_for(session, invocation_id="inv-2")
    assert span["status"] == "error"
    assert span["attributes"]["exception.type"] == "ValueError"
    assert span["attributes"]["exception.message"] == "no such recipe"
    assert "no such recipe" in span["attributes"]["otel.status_description"]
    provider.shutdown()


def test_spans_for_filters_by_trace_and_invocation(store: Store) -> None:
    provider = setup_tracing(store, batch=False)
    tracer = provider.get_tracer(sc.TRACER_NAME)
    with tracer.start_as_current_span("a", attributes={sc.DREAMER_INVOCATION_ID: "inv-a"}) as a:
        with tracer.start_as_current_span("a.child"):  # no invocation attribute
            pass
    with tracer.start_as_current_span("b", attributes={sc.DREAMER_INVOCATION_ID: "inv-b"}):
        pass
    trace_a = format(a.get_span_context().trace_id, "032x")
    with store.session() as session:
        assert [s["name"] for s in spans_for(session, trace_id=trace_a)] == ["a", "a.child"]
        assert [s["name"] for s in spans_for(session, invocation_id="inv-b")] == ["b"]
        assert spans_for(session, invocation_id="inv-b", trace_id=trace_a) == []
        assert spans_for(session, trace_id=trace_a)[1]["invocation_id"] is None
        with pytest.raises(ValueError):
            spans_for(session)
    provider.shutdown()


def test_odd_attribute_values_are_stored(store: Store) -> None:
    provider = setup_tracing(store, batch=False)
    tracer = provider.get_tracer(sc.TRACER_NAME)
    with tracer.start_as_current_span(
        "x" * 300,
        attributes={sc.DREAMER_INVOCATION_ID: "inv-3", "nan": float("nan"), "text": "nul\x00byte \udc80"},
    ):
        pass
    with store.session() as session:
        (span,) = spans_for(session, invocation_id="inv-3")
    assert len(span["name"]) == 200
    assert span["attributes"]["nan"] == "nan"
    assert "\x00" not in span["attributes"]["text"]
    provider.shutdown()


def test_provider_is_not_installed_globally(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    provider = setup_tracing(store)
    assert trace.get_tracer_provider() is not provider
    resource = provider.resource.attributes
    assert resource["service.name"] == "dreamer-kernel"
    provider.shutdown()
    store.dispose()


def test_export_failure_is_reported_not_raised(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")  # not migrated: no spans table
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(StoreSpanExporter(store)))
    with provider.get_tracer("t").start_as_current_span("survives"):
        pass  # ending the span must not raise although the write fails
    (span,) = memory.get_finished_spans()
    assert StoreSpanExporter(store).export([span]) is SpanExportResult.FAILURE
    provider.shutdown()
    store.dispose()


# --- OTLP ----------------------------------------------------------------------------


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, dict[str, str], bytes]] = []
    arrived = threading.Event()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {key.lower(): value for key, value in self.headers.items()}
        type(self).received.append((self.path, headers, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
        type(self).arrived.set()

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, type[_Collector]]]:
    handler = type("Collector", (_Collector,), {"received": [], "arrived": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_otlp_exporter_posts_to_v1_traces(tmp_path: Path, collector: tuple[str, type[_Collector]]) -> None:
    base, handler = collector
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    provider = setup_tracing(store, otlp_endpoint=base)
    with provider.get_tracer(sc.TRACER_NAME).start_as_current_span(
        sc.chat_span("offline"), attributes={sc.GEN_AI_REQUEST_MODEL: "offline"}
    ):
        pass
    assert provider.force_flush(10_000)
    assert handler.arrived.wait(10)
    path, headers, body = handler.received[0]
    assert path == "/v1/traces"
    assert headers["content-type"] == "application/x-protobuf"
    encoding = headers.get("content-encoding", "")
    if encoding == "gzip":
        body = gzip.decompress(body)
    elif encoding == "deflate":
        body = zlib.decompress(body)
    request = ExportTraceServiceRequest.FromString(body)
    (resource_spans,) = request.resource_spans
    service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert service["service.name"] == "dreamer-kernel"
    sent = [span for scope in resource_spans.scope_spans for span in scope.spans]
    assert [span.name for span in sent] == ["chat offline"]
    # The same span also landed in the store.
    with store.session() as session:
        stored = spans_for(session, trace_id=sent[0].trace_id.hex())
    assert [span["name"] for span in stored] == ["chat offline"]
    provider.shutdown()
    store.dispose()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://collector:4318", "http://collector:4318/v1/traces"),
        ("http://collector:4318/", "http://collector:4318/v1/traces"),
        ("https://otel.example/v1/traces", "https://otel.example/v1/traces"),
    ],
)
def test_traces_endpoint(given: str, expected: str) -> None:
    assert traces_endpoint(given) == expected


@pytest.mark.parametrize("given", ["collector:4318", "ftp://collector", "http://"])
def test_bad_otlp_endpoint_is_refused(given: str) -> None:
    with pytest.raises(DreamerError) as caught:
        traces_endpoint(given)
    assert caught.value.code == "invalid_argument"


# --- semantic conventions -------------------------------------------------------------


def test_genai_names_match_opentelemetry_semantic_conventions() -> None:
    gen_ai = pytest.importorskip("opentelemetry.semconv._incubating.attributes.gen_ai_attributes")
    ours = {name: value for name, value in vars(sc).items() if name.startswith("GEN_AI_")}
    assert ours, "no GenAI constants defined"
    for name, value in ours.items():
        assert getattr(gen_ai, name) == value, name
    operations = {v.value for v in gen_ai.GenAiOperationNameValues}
    assert {sc.OP_INVOKE_AGENT, sc.OP_EXECUTE_TOOL, sc.OP_CHAT} <= operations
    from opentelemetry.semconv.attributes.error_attributes import ERROR_TYPE

    assert sc.ERROR_TYPE == ERROR_TYPE
    assert sc.invoke_agent_span("a") == "invoke_agent a"
    assert sc.execute_tool_span("t") == "execute_tool t"
    assert sc.chat_span("m") == "chat m"


def test_batched_spans_are_readable_after_a_flush(store: Store) -> None:
    provider = setup_tracing(store)
    tracer = provider.get_tracer(sc.TRACER_NAME)
    with tracer.start_as_current_span("invoke_agent batched", attributes={sc.DREAMER_INVOCATION_ID: "inv-b"}):
        pass
    provider.force_flush()
    with store.session() as session:
        assert [s["name"] for s in spans_for(session, invocation_id="inv-b")] == ["invoke_agent batched"]
    provider.shutdown()


def test_the_kernels_trace_ids_begin_with_their_time(store: Store) -> None:
    # The spans' index on (trace_id, span_id) then grows at its right edge (issue 23).
    now = [1_765_000_000_123_456_789]
    ids = TimeOrderedIds(clock_ns=lambda: now[0])
    first, second = ids.generate_trace_id(), ids.generate_trace_id()
    assert first >> 80 == second >> 80 == 1_765_000_000_123  # the milliseconds
    assert first != second and len({ids.generate_trace_id() & (2**80 - 1) for _ in range(50)}) == 50
    now[0] += 1_000_000
    assert ids.generate_trace_id() > max(first, second)
    assert ids.is_trace_id_random()  # the rightmost 56 bits and more are random
    provider = setup_tracing(store, batch=False)
    assert isinstance(provider.id_generator, TimeOrderedIds)
    provider.shutdown()
