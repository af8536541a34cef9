"""Seeds a kernel store with what a training export reads, in the shapes the kernel writes.

Each run is a root invocation that calls a second agent (`agents.call`), which asks the
model three times (`llm.complete`, each with its `chat` span and its model_requests row),
then rewards itself: 10 spans, 2 invocations, 3 model calls and 1 reward per run. Each
Sidekick turn is a user message and an answer whose model call carries the answer's rollout_key.
Used by bench/bench_export.py and tests/tracing/test_export_store.py.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import insert, select

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import (
    ChatMessage, Conversation, Invocation, ModelRequest, Reward, Span, User,
)

SPANS_PER_RUN = 10
PROMPT = ("You plan dinners for a family of four, vegetarian on weekdays, and keep the grocery list "
          "in step with what you plan. ") * 2


@dataclass
class Seeded:
    user_id: int
    runs: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)
    spans: int = 0


def _hex(width: int) -> str:
    return uuid.uuid4().hex[:width] if width <= 32 else (uuid.uuid4().hex + uuid.uuid4().hex)[:width]


def user(store: Store, name: str) -> int:
    with store.session() as s:
        found = s.scalar(select(User.id).where(User.name == name))
        if found is not None:
            return int(found)
        row = User(name=name, is_admin=False)
        s.add(row)
        s.flush()
        return row.id


def seed(store: Store, name: str, runs: int, turns: int = 0, *, start: datetime | None = None,
         text: str = "plan dinner", secret: str | None = None) -> Seeded:
    """`runs` runs and `turns` turns for user `name`; `secret` is planted in every argument,
    prompt and span of them (to check the export takes it out)."""
    uid = user(store, name)
    out = Seeded(uid)
    at = start or datetime.now(timezone.utc) - timedelta(hours=1)
    extra = f" {secret}" if secret else ""
    invocations: list[dict[str, Any]] = []
    spans: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    rewards: list[dict[str, Any]] = []
    for n in range(runs):
        when = at + timedelta(milliseconds=n)
        ns = int(when.timestamp() * 1e9)
        root, child, trace = "inv_" + _hex(32), "inv_" + _hex(32), _hex(32)
        out.runs.append(root)
        out.children.append(child)
        for inv, parent, agent, fn in ((root, None, "recipes", "plan_dinner"), (child, root, "grocery", "add_items")):
            invocations.append(dict(
                id=inv, user_id=uid, agent=agent, function=fn, args={"text": f"{text} {n}{extra}"},
                caller="user" if parent is None else "recipes", parent_id=parent, status="succeeded",
                result={"ok": True, "note": f"done {n}{extra}"}, attempt=1, created_at=when, started_at=when,
                finished_at=when + timedelta(milliseconds=5), trace_id=trace, background=parent is None,
                max_attempts=1, trigger=None,
            ))
        ids = [_hex(16) for _ in range(SPANS_PER_RUN)]
        layout = [  # (name, parent index, invocation, attributes)
            ("invoke_agent recipes", None, root, {"gen_ai.operation.name": "invoke_agent", "dreamer.attempt": 1}),
            ("execute_tool agents.call", 0, root, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "agents.call"}),
            ("invoke_agent grocery", 1, child, {"gen_ai.operation.name": "invoke_agent", "dreamer.caller": "recipes"}),
        ]
        for _ in range(3):
            layout.append(("execute_tool llm.complete", 2, child, {"gen_ai.tool.name": "llm.complete"}))
            layout.append(("chat medium-1", len(layout) - 1, child, {"gen_ai.operation.name": "chat",
                                                                     "gen_ai.request.model": "medium-1"}))
        layout.append(("execute_tool rewards.emit", 0, root, {"gen_ai.tool.name": "rewards.emit"}))
        for i, (span_name, parent_index, inv, attrs) in enumerate(layout):
            spans.append(dict(
                span_id=ids[i], trace_id=trace, parent_span_id=None if parent_index is None else ids[parent_index],
                name=span_name, kind="internal", start_ns=ns + i * 1000, end_ns=ns + i * 1000 + 500, duration_ms=0.0005,
                status="ok", attributes={**attrs, "dreamer.invocation_id": inv, "dreamer.note": f"span {i}{extra}"},
                invocation_id=inv,
            ))
            if span_name.startswith("chat"):
                requests.append(_request(uid, child, None, ids[i], trace, when, f"{text} {n}{extra}"))
        rewards.append(dict(invocation_id=root, user_id=uid, agent="recipes", value=0.5, note=f"kept{extra}",
                            created_at=when + timedelta(milliseconds=4)))
    out.spans = len(spans)
    with store.session() as s:
        conn = s.connection()
        for table, rows in ((Invocation, invocations), (Span, spans), (ModelRequest, requests), (Reward, rewards)):
            if rows:
                conn.execute(insert(table), rows)
        if turns:
            conv = "conv_" + _hex(32)
            conn.execute(insert(Conversation), [dict(id=conv, user_id=uid, title=text, pending=None,
                                                     created_at=at, updated_at=at)])
            for n in range(turns):
                when = at + timedelta(milliseconds=n)
                key = "rk_" + _hex(32)
                _, answer = conn.execute(insert(ChatMessage).returning(ChatMessage.id, sort_by_parameter_order=True), [
                    dict(conversation_id=conv, role="user", content=f"{text} turn {n}{extra}", data={}, at=when),
                    dict(conversation_id=conv, role="assistant", content=f"answer {n}{extra}",
                         data={"calls": [], "rollout_key": key}, at=when),
                ]).scalars().all()
                out.turns.append(f"turn_{answer}")
                conn.execute(insert(ModelRequest), [_request(uid, None, key, None, None, when, f"{text} turn {n}{extra}")])
    return out


def _request(uid: int, invocation: str | None, turn_key: str | None, span: str | None, trace: str | None,
             when: datetime, question: str) -> dict[str, Any]:
    return dict(
        user_id=uid, invocation_id=invocation, turn_key=turn_key, span_id=span, trace_id=trace, provider="openai",
        model="medium-1",
        request={"model": "medium-1", "max_tokens": 1024, "messages": [
            {"role": "system", "content": PROMPT}, {"role": "user", "content": question},
            {"role": "assistant", "content": "Which days?"}, {"role": "user", "content": "Monday to Thursday."},
        ]},
        response={"object": "chat.completion", "model": "medium-1", "choices": [{"index": 0, "finish_reason": "end_turn",
                  "message": {"role": "assistant", "content": "Lentil soup, pasta, curry and tacos."}}],
                  "usage": {"input_tokens": 120, "output_tokens": 12}},
        latency_ms=420.0, usage={"input_tokens": 120, "output_tokens": 12}, finish_reason="end_turn", status="ok",
        at=when + timedelta(milliseconds=2),
    )
