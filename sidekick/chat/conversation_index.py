"""Finding and removing a user's conversations: the history a sidebar pages through.

Kept apart from conversations.py (which runs a turn) because listing, searching and
deleting touch no dialogue state; both read the same kernel tables."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import delete, exists, func, select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChatMessage, Conversation

MAX_QUERY_CHARS = 200
# A turn's answer (with its calls' invocation ids) is written when the turn ends, after the
# calls were admitted: the messages to read for a run lie within this much after it began.
TURN_SPAN = timedelta(hours=1)
MAX_RUNS_LOOKED_UP = 1000


def find_conversations(
    store: Store, user_id: int, limit: int = 50, offset: int = 0, query: str | None = None
) -> list[dict[str, Any]]:
    """The user's conversations, most recently used first; with `query`, only those whose
    title or any message contains it (case-insensitive, taken literally: % and _ match themselves)."""
    words = " ".join((query or "").split())[:MAX_QUERY_CHARS].lower()
    with store.session() as s:
        q = select(Conversation).where(Conversation.user_id == user_id)
        if words:
            said = exists().where(
                ChatMessage.conversation_id == Conversation.id,
                func.lower(ChatMessage.content).contains(words, autoescape=True),
            )
            q = q.where(func.lower(Conversation.title).contains(words, autoescape=True) | said)
        rows = s.scalars(q.order_by(Conversation.updated_at.desc(), Conversation.id).offset(offset).limit(limit))
        return [
            {"id": c.id, "title": c.title, "updated_at": c.updated_at.isoformat(), "waiting": c.pending is not None}
            for c in rows
        ]


def delete_conversation(store: Store, user_id: int, conversation_id: str) -> dict[str, Any]:
    """Remove one of the user's conversations and all its messages, in one transaction.
    Another user's id answers not_found, exactly as an unknown one does."""
    with store.session() as s:
        conv = s.get(Conversation, conversation_id)
        if conv is None or conv.user_id != user_id:
            raise DreamerError("not_found", f"no conversation {conversation_id!r} (GET /v1/conversations lists yours)")
        removed = s.execute(delete(ChatMessage).where(ChatMessage.conversation_id == conversation_id)).rowcount
        s.delete(conv)
        return {"id": conversation_id, "deleted": True, "messages": int(removed or 0)}


def conversations_of_runs(store: Store, user_id: int, runs: Mapping[str, datetime]) -> dict[str, dict[str, Any]]:
    """Which conversation each run (invocation id -> when it was created) was made in, for the
    runs Sidekick made in a chat: {invocation id: {"id", "title"}}. Only the user's answers
    written from the earliest run to a turn's length after the latest are read."""
    if not runs or len(runs) > MAX_RUNS_LOOKED_UP:
        return {}
    times = [t if t.tzinfo else t.replace(tzinfo=timezone.utc) for t in runs.values()]
    found: dict[str, dict[str, Any]] = {}
    with store.session() as s:
        rows = s.execute(
            select(ChatMessage.data, Conversation.id, Conversation.title)
            .join(Conversation, Conversation.id == ChatMessage.conversation_id)
            .where(Conversation.user_id == user_id, ChatMessage.role == "assistant",
                   ChatMessage.at >= min(times) - timedelta(seconds=1), ChatMessage.at <= max(times) + TURN_SPAN)
        )
        for data, conv_id, title in rows:
            calls = data.get("calls") if isinstance(data, dict) else None
            for call in calls if isinstance(calls, list) else []:
                made = call.get("invocation_id") if isinstance(call, dict) else None
                if isinstance(made, str) and made in runs:
                    found[made] = {"id": conv_id, "title": title}
    return found
