"""The kernel's OpenTelemetry tracer provider."""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import urlsplit

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME as SERVICE_NAME_KEY
from opentelemetry.context import Context
from opentelemetry.sdk.environment_variables import OTEL_TRACES_SAMPLER
from opentelemetry.sdk.resources import SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind, TraceState
from opentelemetry.util.types import Attributes

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.tracing.ids import TimeOrderedIds
from dreamer.kernel.tracing.semconv import SERVICE_NAME
from dreamer.kernel.tracing.store_exporter import StoreSpanExporter

TRACES_PATH = "/v1/traces"


def _kernel_version() -> str:
    try:
        return version("dreamer")
    except PackageNotFoundError:
        return "0"


class EverySpan(Sampler):
    """Every span recorded and sampled, decided without looking at its parent.

    The SDK's default sampler (OTEL_TRACES_SAMPLER unset) is ParentBased(ALWAYS_ON): for each
    span it reads the parent from the context, picks the sampler for that kind of parent, and
    ALWAYS_ON reads the parent again for its trace state. In the kernel every root is sampled
    and no parent is remote (nothing extracts a trace context from a request), so the answer is
    always the same: record and sample, no trace state. This gives it without the look-ups
    (issue 23); an operator's OTEL_TRACES_SAMPLER still chooses the SDK's own sampler."""

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "EverySpan"


def traces_endpoint(endpoint: str) -> str:
    """OTEL_EXPORTER_OTLP_ENDPOINT names the collector's base URL; traces go to
    its /v1/traces. A URL that already ends there is kept."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DreamerError(
            "invalid_argument", f"The OTLP endpoint must be an http:// or https:// URL, not {endpoint!r}."
        )
    if parts.path.rstrip("/").endswith(TRACES_PATH):
        return endpoint
    return endpoint.rstrip("/") + TRACES_PATH


def setup_tracing(
    store: Store, otlp_endpoint: str | None = None, *, batch: bool = True, writer: GroupWriter | None = None
) -> TracerProvider:
    """A tracer provider that stores every finished span and, given an endpoint,
    also ships spans over OTLP/HTTP. It is not installed globally: callers keep
    it and use `provider.get_tracer("dreamer.kernel")`.

    With `batch`, spans are written by a background thread, off the call path;
    readers call `provider.force_flush()` first to see the latest ones. Given the
    kernel's writer, span batches join its queue instead of racing it for the store. Its
    trace ids begin with their time (ids.py), so the spans' index grows at its right edge."""
    resource = Resource.create({SERVICE_NAME_KEY: SERVICE_NAME, SERVICE_VERSION: _kernel_version()})
    sampler = None if os.environ.get(OTEL_TRACES_SAMPLER) else EverySpan()
    provider = TracerProvider(resource=resource, id_generator=TimeOrderedIds(), sampler=sampler)
    exporter = StoreSpanExporter(store, writer)
    provider.add_span_processor(
        BatchSpanProcessor(exporter, schedule_delay_millis=250) if batch else SimpleSpanProcessor(exporter)
    )
    if otlp_endpoint:
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_endpoint(otlp_endpoint))))
    return provider
