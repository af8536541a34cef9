"""Finding and removing a user's conversations: the history a sidebar pages through.

Kept apart from conversations.py (which runs a turn) because listing, searching and
deleting touch no dialogue state; both read the same kernel tables."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, exists, func, select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChatMessage, Conversation

MAX_QUERY_CHARS = 200


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
