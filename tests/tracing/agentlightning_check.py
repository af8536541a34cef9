"""Checks of exported records against Agent Lightning's own models (shared by the export tests).

`agentlightning_schema.json` holds the JSON schemas of its pydantic models, derived from its
source by scripts/derive_agentlightning_schema.py (the commits are in the file). An OTLP line
is read the way its span store reads one (agentlightning/utils/otlp.py `spans_from_proto` at
f0a77cfa): parsed as an `ExportTraceServiceRequest`, then each span made into its `Span` model
from the resource's rollout, attempt and sequence ids."""

from __future__ import annotations

import base64
import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from jsonschema import Draft202012Validator
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

SCHEMA = json.loads((Path(__file__).resolve().parent / "agentlightning_schema.json").read_text())
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


@cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(SCHEMA["models"][name])


def valid(name: str, value: Any) -> None:
    errors = [e.message for e in _validator(name).iter_errors(value)]
    assert not errors, f"not a valid Agent Lightning {name}: {errors[:5]}"


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    if kind == "int_value":
        return int(v.int_value)
    return getattr(v, kind) if kind else None


def parse_otlp(record: dict[str, Any]) -> ExportTraceServiceRequest:
    """One OTLP/JSON line as protobuf: its hex ids turned into the base64 protobuf's JSON wants,
    as collectors do; an unknown field or a wrong type fails here."""
    record = copy.deepcopy(record)
    for rs in record["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(record, ExportTraceServiceRequest())


def agl_spans(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Agent Lightning `Span`s of one OTLP line, as its store would keep them, each validated."""
    out = []
    for rs in parse_otlp(record).resource_spans:
        resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
        for ss in rs.scope_spans:
            for span in ss.spans:
                trace_id, span_id = span.trace_id.hex(), span.span_id.hex()
                made = {
                    "rollout_id": resource["agentlightning.rollout_id"],
                    "attempt_id": resource["agentlightning.attempt_id"],
                    "sequence_id": int(str(resource["agentlightning.span_sequence_id"])),
                    "trace_id": trace_id, "span_id": span_id,
                    "parent_id": span.parent_span_id.hex() if span.parent_span_id else None,
                    "name": span.name,
                    "status": {"status_code": _STATUS[span.status.code], "description": span.status.message or None},
                    "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
                    "events": [], "links": [],
                    "start_time": span.start_time_unix_nano / 1e9, "end_time": span.end_time_unix_nano / 1e9,
                    "context": {"trace_id": trace_id, "span_id": span_id, "is_remote": False, "trace_state": {}},
                    "parent": None,
                    "resource": {"attributes": resource, "schema_url": ""},
                }
                valid("Span", made)
                out.append(made)
    return out
