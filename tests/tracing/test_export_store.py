"""kernel/tracing/export over a real store, SQLite and PostgreSQL: pages of rollouts that hold
everything each one set off, one user never in another's export, secrets taken out by
value, shape and key, --since, and who may export whom."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from agentlightning_check import agl_spans, valid

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from export_seed import SPANS_PER_RUN, seed

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ModelRequest, Span, Trigger, User
from dreamer.kernel.tracing.export import (
    Exportee, export_lines, exportees, known_secrets, parse_since, set_opted_out,
)
from dreamer.kernel.tracing.export.redact import REDACTED, Redactor
from dreamer.kernel.tracing.export.rollouts import PAGE

def export(store: Store, who: list[Exportee], fmt: str = "agentlightning", **kw: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in export_lines(store, who, fmt, **kw)]


def test_pages_of_rollouts_hold_every_call_span_model_call_and_reward(store: Store) -> None:
    runs = PAGE * 2 + 17  # more than two pages
    ada = seed(store, "ada", runs=runs, turns=PAGE + 3)
    bob = seed(store, "bob", runs=3, turns=2)
    records = export(store, [Exportee(ada.user_id, "ada")])
    ids = [r["rollout"]["rollout_id"] for r in records]
    assert ids == ada.turns + ada.runs  # turns then runs, oldest first, each once
    assert not set(ids) & set(bob.runs + bob.turns)
    for record in records[:3] + records[-3:]:
        valid("RolloutDetail", {k: record[k] for k in ("rollout", "attempts")})
        for event in record["events"]:
            valid("Event", event)
            valid({"model_request": "ModelRequestData", "reward": "RewardData"}[event["event_type"]], event["data"])
    run = records[-1]
    # The child invocation's three model calls belong to the root's rollout, then its reward.
    assert [e["event_type"] for e in run["events"]] == ["model_request"] * 3 + ["reward"]
    assert {e["data"]["dreamer"]["invocation_id"] for e in run["events"][:3]} == {ada.children[-1]}
    turn = records[0]
    assert [e["event_type"] for e in turn["events"]] == ["model_request"]
    assert turn["rollout"]["input"]["message"] == "plan dinner turn 0"

    spans = export(store, [Exportee(ada.user_id, "ada")], "otlp")
    in_runs = [r for r in spans if any(a["value"].get("stringValue", "").startswith("inv_")
                                       for a in r["resourceSpans"][0]["resource"]["attributes"])]
    stored = sum(1 for r in in_runs for rs in r["resourceSpans"] if rs["scopeSpans"][0]["spans"][0]["name"] != "agentlightning.annotation")
    assert stored == runs * SPANS_PER_RUN  # every stored span, the nested invocation's too
    for record in spans[:3] + spans[-3:]:
        made = agl_spans(record)
        assert len({(s["rollout_id"], s["attempt_id"]) for s in made}) == 1

    triplets = export(store, [Exportee(ada.user_id, "ada")], "triplets")
    assert len(triplets) == runs * 3 + PAGE + 3
    for t in triplets[:5]:
        valid("Triplet", t)
    assert {t["reward"] for t in triplets if t["metadata"]["kind"] == "background_run"} == {0.5}


def test_a_turns_own_model_call_brings_its_stored_span(store: Store) -> None:
    # A turn's model calls are under no invocation: their chat spans are found by (trace, span).
    ada = seed(store, "ada", runs=0, turns=2)
    trace, mine, other = "7" * 32, "1" * 16, "2" * 16
    with store.session() as s:
        first = s.scalars(select(ModelRequest).where(ModelRequest.user_id == ada.user_id).order_by(ModelRequest.id)).first()
        assert first is not None
        first.trace_id, first.span_id = trace, mine
        for span_id, trace_id in ((mine, trace), (other, trace), (mine, "8" * 32)):  # only the first is the call's
            s.add(Span(span_id=span_id, trace_id=trace_id, parent_span_id=None, name="chat medium-1", kind="client",
                       start_ns=1, end_ns=2, duration_ms=0.0, status="ok", invocation_id=None,
                       attributes={"dreamer.note": f"{trace_id[0]}{span_id[0]}"}))
    records = export(store, [Exportee(ada.user_id, "ada")], "otlp")
    notes = [a["value"]["stringValue"] for r in records for rs in r["resourceSpans"] for sp in rs["scopeSpans"][0]["spans"]
             for a in sp["attributes"] if a["key"] == "dreamer.note"]
    assert notes == ["71"]


def test_secrets_are_taken_out_by_value_by_shape_and_by_key(store: Store) -> None:
    hook = "a-webhook-secret-of-the-user-1234"
    token = "drm_" + "A1b2" * 11
    ada = seed(store, "ada", runs=3, turns=2, secret=f"{hook} {token} Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl")
    with store.session() as s:
        s.add(Trigger(user_id=ada.user_id, agent="recipes", name="hook", type="webhook", entrypoint="on_hook",
                      secret=hook, token="t" * 43))
    for fmt in ("agentlightning", "otlp", "triplets"):
        raw = b"".join(export_lines(store, [Exportee(ada.user_id, "ada")], fmt, secrets=known_secrets(store)))
        for planted in (hook.encode(), token.encode(), b"eyJhbGciOi", b"Bearer eyJ"):
            assert planted not in raw, (fmt, planted)
        assert REDACTED.encode() in raw and b"plan dinner" in raw


def test_the_redactor_keeps_counts_and_words() -> None:
    scrub = Redactor(["k" * 7, "known-secret-value"])
    out = scrub.value({
        "usage": {"input_tokens": 12, "max_tokens": 100}, "api_key": "anything", "Authorization": "Basic abc",
        "x-api-key": "v", "password": "", "text": "use known-secret-value or sk-ant-abcdefghijklmnop1234 kkkkkkk",
        "list": ["ghp_" + "a" * 36, "AKIAABCDEFGHIJKLMNOP", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"],
    })
    assert out["usage"] == {"input_tokens": 12, "max_tokens": 100}  # token *counts* are not secrets
    assert out["api_key"] == out["Authorization"] == out["x-api-key"] == REDACTED
    assert out["password"] == ""  # nothing there to hide
    assert out["text"] == f"use {REDACTED} or {REDACTED} kkkkkkk"  # too short to be a known secret: kept
    assert out["list"] == [REDACTED] * 3


def test_since_keeps_what_started_since(store: Store) -> None:
    now = datetime.now(timezone.utc)
    old = seed(store, "ada", runs=4, turns=1, start=now - timedelta(days=10))
    new = seed(store, "ada", runs=2, turns=1, start=now - timedelta(hours=1))
    who = [Exportee(old.user_id, "ada")]
    ids = [r["rollout"]["rollout_id"] for r in export(store, who, since=parse_since("3d"))]
    assert ids == new.turns + new.runs
    assert len(export(store, who, since=parse_since((now - timedelta(days=30)).date().isoformat()))) == 8


def test_parse_since_reads_relative_times_and_dates_and_refuses_the_rest() -> None:
    now = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
    assert parse_since("36h", now) == now - timedelta(hours=36)
    assert parse_since("2w", now) == now - timedelta(weeks=2)
    assert parse_since("2026-11-30", now) == datetime(2026, 11, 30, tzinfo=timezone.utc)
    assert parse_since("2026-11-30T08:00:00+01:00", now) == datetime(2026, 11, 30, 7, tzinfo=timezone.utc)
    assert parse_since(None) is None and parse_since("  ") is None
    assert parse_since("999999w", now) == datetime.min.replace(tzinfo=timezone.utc)  # before any date, not a crash
    for bad in ("yesterday", "7 days", "-3d", "2026-13-01", "9" * 100):
        with pytest.raises(DreamerError, match="--since must be like"):
            parse_since(bad, now)


def test_who_may_export_whom(store: Store) -> None:
    ada, bob, cy = (seed(store, n, runs=1).user_id for n in ("ada", "bob", "cy"))
    with store.session() as s:
        s.get(User, ada).is_admin = True  # type: ignore[union-attr]
    assert [e.name for e in exportees(store, bob, acting_admin=False, all_users=False)] == ["bob"]
    with pytest.raises(DreamerError) as refused:
        exportees(store, bob, acting_admin=False, all_users=True)
    assert refused.value.code == "forbidden"
    set_opted_out(store, cy, True)
    assert [e.name for e in exportees(store, ada, acting_admin=True, all_users=True)] == ["ada", "bob"]
    with pytest.raises(DreamerError) as own:
        exportees(store, cy, acting_admin=False, all_users=False)
    assert own.value.code == "conflict" and "dreamer traces opt-in" in own.value.message
