"""OpenTelemetry for the kernel: a provider whose spans land in the store (and,
optionally, an OTLP collector)."""

from dreamer.kernel.tracing.provider import setup_tracing, traces_endpoint
from dreamer.kernel.tracing.store_exporter import StoreSpanExporter, span_dict, spans_for

__all__ = ["StoreSpanExporter", "setup_tracing", "span_dict", "spans_for", "traces_endpoint"]
