"""What a training export reads: one user's rollouts, a page at a time.

A rollout is one Sidekick turn (an assistant message in chat_messages, named
`turn_<message id>` as feedback names it) or one run an agent did outside chat (a root invocation Sidekick did not make:
a background run, a trigger's run, a direct `dreamer call`). Everything a rollout set
off belongs to it: the invocations it made and theirs in turn (by `parent_id`), their
spans, the model calls (model_requests, by invocation or turn) and the rewards.

An attempt is one try: a background run's attempts are its `invoke_agent` spans with
`dreamer.attempt`, each its own trace; a turn or a direct call has one.

Pages are read with a few bulk queries each (never one per rollout), and only one page
is held at a time, so an export of any size streams in constant memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypeVar

from sqlalchemy import and_, or_, select, tuple_

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChatMessage, Conversation, Invocation, ModelRequest, Reward, Span

T = TypeVar("T")
PAGE = 200  # rollouts per page
_IN_CHUNK = 500  # ids per IN (...) list: well under SQLite's and PostgreSQL's parameter limits


@dataclass
class AttemptData:
    attempt_id: str
    started: float | None = None  # epoch seconds of its first span, for placing rewards
    spans: list[dict[str, Any]] = field(default_factory=list)
    model_requests: list[ModelRequest] = field(default_factory=list)
    rewards: list[Reward] = field(default_factory=list)


@dataclass
class RolloutData:
    rollout_id: str
    kind: str  # sidekick_turn | background_run | call
    user_name: str
    created_at: datetime
    updated_at: datetime
    input: Any
    output: Any
    state: str  # queuing | running | succeeded | failed (Agent Lightning's RolloutState)
    error: str | None
    extra: dict[str, Any]
    attempts: list[AttemptData]
    invocations: dict[str, Invocation] = field(default_factory=dict)  # every invocation of the rollout

    @property
    def rewards(self) -> list[Reward]:
        return [r for a in self.attempts for r in a.rewards]


def epoch(at: datetime | None) -> float | None:
    if at is None:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=timezone.utc)).timestamp()


def _chunks(ids: list[T]) -> Iterator[list[T]]:
    for i in range(0, len(ids), _IN_CHUNK):
        yield ids[i:i + _IN_CHUNK]


_STATES = {"queued": "queuing", "running": "running", "succeeded": "succeeded"}


def _state(status: str) -> str:
    return _STATES.get(status, "failed")  # failed, cancelled, anything else: over and not good


def rollouts(store: Store, user_id: int, user_name: str, since: datetime | None = None) -> Iterator[RolloutData]:
    """The user's Sidekick turns, then their runs, oldest first within each."""
    yield from _turns(store, user_id, user_name, since)
    yield from _runs(store, user_id, user_name, since)


# -- Sidekick turns ---------------------------------------------------------------------------


def _turns(store: Store, user_id: int, user_name: str, since: datetime | None) -> Iterator[RolloutData]:
    after = 0
    while True:
        with store.session() as s:
            q = (
                select(ChatMessage)
                .join(Conversation, Conversation.id == ChatMessage.conversation_id)
                .where(Conversation.user_id == user_id, ChatMessage.role == "assistant", ChatMessage.id > after)
            )
            if since is not None:
                q = q.where(ChatMessage.at >= since)
            answers = list(s.scalars(q.order_by(ChatMessage.id).limit(PAGE)))
            if not answers:
                return
            after = answers[-1].id
            asked = _questions(s, answers)
            turn_ids = {a.id: f"turn_{a.id}" for a in answers}
            # The key the turn's own model calls were recorded under (model_requests.turn_key).
            keys = {a.id: str(k) for a in answers if isinstance(k := (a.data or {}).get("rollout_key"), str)}
            roots: dict[str, str] = {}  # invocation id -> turn id
            for a in answers:
                for call in (a.data or {}).get("calls") or []:
                    if isinstance(call, dict) and isinstance(call.get("invocation_id"), str):
                        roots[call["invocation_id"]] = turn_ids[a.id]
            invocations = _closure(s, user_id, roots)
            found = _Found.load(s, user_id, invocations, list(keys.values()), list(turn_ids))
            grouped = _group(invocations, roots)
            page = []
            for a in answers:
                turn = turn_ids[a.id]
                mine = grouped.get(turn, {})
                question = asked.get(a.id)
                attempt = AttemptData("1", started=epoch(question.at if question is not None else a.at))
                _fill(attempt, found, set(mine), keys.get(a.id), a.id)
                data = a.data or {}
                failed = [c for c in data.get("calls") or [] if isinstance(c, dict) and c.get("ok") is False]
                page.append(RolloutData(
                    rollout_id=turn, kind="sidekick_turn", user_name=user_name,
                    created_at=question.at if question is not None else a.at, updated_at=a.at,
                    input={"message": question.content if question is not None else None,
                           "conversation_id": a.conversation_id},
                    output={"reply": a.content, "calls": data.get("calls") or []},
                    state="failed" if failed and len(failed) == len(data.get("calls") or []) else "succeeded",
                    error=None, extra={"conversation_id": a.conversation_id, "message_id": a.id},
                    attempts=[attempt], invocations=mine,
                ))
        yield from page


def _questions(s: Any, answers: list[ChatMessage]) -> dict[int, ChatMessage]:
    """The user's message each answer answered: record_turn writes it just before, in the same
    transaction, so it is nearly always the id before; otherwise the latest earlier one."""
    by_id = {m.id: m for m in s.scalars(select(ChatMessage).where(ChatMessage.id.in_([a.id - 1 for a in answers])))}
    out: dict[int, ChatMessage] = {}
    for a in answers:
        m = by_id.get(a.id - 1)
        if m is None or m.conversation_id != a.conversation_id or m.role != "user":
            m = s.scalars(
                select(ChatMessage)
                .where(ChatMessage.conversation_id == a.conversation_id, ChatMessage.role == "user", ChatMessage.id < a.id)
                .order_by(ChatMessage.id.desc()).limit(1)
            ).first()
        if m is not None:
            out[a.id] = m
    return out


# -- runs outside chat --------------------------------------------------------------------------


def _runs(store: Store, user_id: int, user_name: str, since: datetime | None) -> Iterator[RolloutData]:
    cursor: tuple[datetime, str] | None = None
    while True:
        with store.session() as s:
            q = select(Invocation).where(
                Invocation.user_id == user_id, Invocation.parent_id.is_(None), Invocation.caller != "sidekick"
            )
            if since is not None:
                q = q.where(Invocation.created_at >= since)
            if cursor is not None:
                q = q.where(or_(Invocation.created_at > cursor[0], and_(Invocation.created_at == cursor[0], Invocation.id > cursor[1])))
            heads = list(s.scalars(q.order_by(Invocation.created_at, Invocation.id).limit(PAGE)))
            if not heads:
                return
            cursor = (heads[-1].created_at, heads[-1].id)
            roots = {h.id: h.id for h in heads}
            invocations = _closure(s, user_id, roots)
            found = _Found.load(s, user_id, invocations, [], [])
            grouped = _group(invocations, roots)
            page = []
            for head in heads:
                mine = grouped.get(head.id, {})
                attempts = _attempts(head, found, set(mine))
                kind = "background_run" if head.background else "call"
                page.append(RolloutData(
                    rollout_id=head.id, kind=kind, user_name=user_name, created_at=head.created_at,
                    updated_at=head.finished_at or head.started_at or head.created_at,
                    input={"agent": head.agent, "function": head.function, "args": head.args},
                    output=head.result, state=_state(head.status),
                    error=f"{head.error_code}: {head.error_message}" if head.error_code else None,
                    extra={"agent": head.agent, "function": head.function, "caller": head.caller,
                           "status": head.status, "trigger": head.trigger},
                    attempts=attempts, invocations=mine,
                ))
        yield from page


def _attempts(head: Invocation, found: "_Found", ids: set[str]) -> list[AttemptData]:
    """A run's tries: each `invoke_agent` span of the head that carries `dreamer.attempt` opens
    one, in its own trace; spans in any other trace (the admission) go with the first."""
    by_trace: dict[str, AttemptData] = {}
    attempts: dict[str, AttemptData] = {}
    for span in found.spans_of(ids):
        number = (span["attributes"] or {}).get("dreamer.attempt")
        if span["invocation_id"] == head.id and span["parent_span_id"] is None and isinstance(number, int):
            attempt = attempts.setdefault(str(number), AttemptData(str(number)))
            attempt.started = span["start_ns"] / 1e9
            by_trace[span["trace_id"]] = attempt
    if not attempts:
        attempts["1"] = AttemptData("1", started=epoch(head.started_at or head.created_at))
    ordered = sorted(attempts.values(), key=lambda a: int(a.attempt_id))
    first = ordered[0]
    for span in found.spans_of(ids):
        by_trace.get(span["trace_id"], first).spans.append(span)
    for row in found.requests_of(ids, None):
        by_trace.get(row.trace_id or "", _by_time(ordered, epoch(row.at))).model_requests.append(row)
    for reward in found.rewards_of(ids):
        _by_time(ordered, epoch(reward.created_at)).rewards.append(reward)
    return ordered


def _by_time(attempts: list[AttemptData], at: float | None) -> AttemptData:
    """The attempt running at `at`: the last one started by then (the first if none was)."""
    chosen = attempts[0]
    for attempt in attempts:
        if at is not None and attempt.started is not None and attempt.started <= at:
            chosen = attempt
    return chosen


def _fill(attempt: AttemptData, found: "_Found", ids: set[str], key: str | None, message_id: int) -> None:
    attempt.spans.extend(found.spans_of(ids))
    attempt.model_requests.extend(found.requests_of(ids, key))
    attempt.rewards.extend(sorted(found.rewards_of(ids) + found.turn_rewards.get(message_id, []), key=lambda r: r.id))
    known = {s["span_id"] for s in attempt.spans}
    # The turn's own model calls are not under any invocation: their chat spans are found by id.
    wanted = {r.span_id for r in attempt.model_requests} - known
    attempt.spans.extend(s for s in found.turn_spans if s["span_id"] in wanted)
    attempt.spans.sort(key=lambda s: (s["start_ns"], s["span_id"]))


# -- shared ---------------------------------------------------------------------------------


def _closure(s: Any, user_id: int, roots: dict[str, str]) -> dict[str, Invocation]:
    """The root invocations and everything they called, however deep (one query per level)."""
    out: dict[str, Invocation] = {}
    for chunk in _chunks(list(roots)):
        out.update({r.id: r for r in s.scalars(select(Invocation).where(Invocation.user_id == user_id, Invocation.id.in_(chunk)))})
    frontier = list(out)
    while frontier:
        found: list[Invocation] = []
        for chunk in _chunks(frontier):
            found.extend(s.scalars(select(Invocation).where(Invocation.user_id == user_id, Invocation.parent_id.in_(chunk))))
        frontier = [r.id for r in found if r.id not in out]
        out.update({r.id: r for r in found})
    return out


def _group(invocations: dict[str, Invocation], roots: dict[str, str]) -> dict[str, dict[str, Invocation]]:
    """The invocations under each rollout, by the rollout id their root maps to."""
    out: dict[str, dict[str, Invocation]] = {}
    for i, row in invocations.items():
        rollout = _root_of(row, invocations, roots)
        if rollout is not None:
            out.setdefault(rollout, {})[i] = row
    return out


def _root_of(row: Invocation, invocations: dict[str, Invocation], roots: dict[str, str]) -> str | None:
    seen: set[str] = set()
    while row.id not in roots:
        if row.parent_id is None or row.parent_id in seen or row.parent_id not in invocations:
            return None
        seen.add(row.id)
        row = invocations[row.parent_id]
    return roots[row.id]


# Issue 20's feedback adds `rewards.turn_id` (the rated answer's message id): a rating of a turn
# is one row with no invocation, plus a copy on each invocation the turn made. Read when present.
_TURN_ATTR = "turn_id"
_REWARD_TURN = getattr(Reward, _TURN_ATTR, None)


@dataclass
class _Found:
    """One page's spans, model calls and rewards, indexed by invocation (and turn)."""

    spans: dict[str, list[dict[str, Any]]]
    requests: dict[str, list[ModelRequest]]
    by_turn: dict[str, list[ModelRequest]]
    rewards: dict[str, list[Reward]]
    turn_rewards: dict[int, list[Reward]]
    turn_spans: list[dict[str, Any]]

    @classmethod
    def load(cls, s: Any, user_id: int, invocations: dict[str, Invocation], turn_keys: list[str],
             message_ids: list[int]) -> "_Found":
        ids = list(invocations)
        spans: dict[str, list[dict[str, Any]]] = {}
        requests: dict[str, list[ModelRequest]] = {}
        by_turn: dict[str, list[ModelRequest]] = {}
        rewards: dict[str, list[Reward]] = {}
        turn_rewards: dict[int, list[Reward]] = {}
        for chunk in _chunks(ids):
            for row in s.execute(select(*_SPAN_COLUMNS).where(Span.invocation_id.in_(chunk))):
                spans.setdefault(row.invocation_id, []).append(dict(row._mapping))
            for req in s.scalars(select(ModelRequest).where(ModelRequest.user_id == user_id, ModelRequest.invocation_id.in_(chunk))):
                requests.setdefault(req.invocation_id or "", []).append(req)
            query = select(Reward).where(Reward.user_id == user_id, Reward.invocation_id.in_(chunk))
            if _REWARD_TURN is not None:
                query = query.where(_REWARD_TURN.is_(None))  # a turn's rating is counted once, on the turn
            for reward in s.scalars(query):
                rewards.setdefault(str(reward.invocation_id), []).append(reward)
        if _REWARD_TURN is not None:
            for numbers in _chunks(message_ids):
                query = select(Reward).where(Reward.user_id == user_id, _REWARD_TURN.in_(numbers), Reward.invocation_id.is_(None))
                for reward in s.scalars(query):
                    turn_rewards.setdefault(int(getattr(reward, _TURN_ATTR)), []).append(reward)
        for chunk in _chunks(turn_keys):
            for req in s.scalars(select(ModelRequest).where(ModelRequest.user_id == user_id, ModelRequest.turn_key.in_(chunk),
                                                            ModelRequest.invocation_id.is_(None))):
                by_turn.setdefault(req.turn_key or "", []).append(req)
        # By (trace, span), a span's identity and the spans table's index (migration 0021).
        turn_span_keys = [(r.trace_id, r.span_id) for rows in by_turn.values() for r in rows if r.trace_id and r.span_id]
        turn_spans: list[dict[str, Any]] = []
        for keys in _chunks(turn_span_keys):
            query = select(*_SPAN_COLUMNS).where(tuple_(Span.trace_id, Span.span_id).in_(keys))
            turn_spans.extend(dict(row._mapping) for row in s.execute(query))
        return cls(spans, requests, by_turn, rewards, turn_rewards, turn_spans)

    def spans_of(self, ids: set[str]) -> list[dict[str, Any]]:
        return sorted((s for i in ids for s in self.spans.get(i, [])), key=lambda s: (s["start_ns"], s["span_id"]))

    def requests_of(self, ids: set[str], turn_key: str | None) -> list[ModelRequest]:
        rows = [r for i in ids for r in self.requests.get(i, [])]
        if turn_key is not None:
            rows.extend(self.by_turn.get(turn_key, []))
        return sorted(rows, key=lambda r: r.id)

    def rewards_of(self, ids: set[str]) -> list[Reward]:
        return sorted((r for i in ids for r in self.rewards.get(i, [])), key=lambda r: r.id)


_SPAN_COLUMNS = (
    Span.span_id, Span.trace_id, Span.parent_span_id, Span.name, Span.kind, Span.start_ns, Span.end_ns,
    Span.status, Span.attributes, Span.invocation_id,
)
