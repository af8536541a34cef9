"""Traces out, for training (issue 20): Agent Lightning v1 rollouts and events, OTLP/JSON
spans with its v0 attributes, and (prompt, response, reward) triplets; scrubbed of
secrets, per user, streamed."""

from dreamer.kernel.tracing.export.consent import opted_out, set_opted_out
from dreamer.kernel.tracing.export.exporter import FORMATS, Exportee, export_lines, exportees, known_secrets, parse_since

__all__ = ["FORMATS", "Exportee", "export_lines", "exportees", "known_secrets", "opted_out", "parse_since", "set_opted_out"]
