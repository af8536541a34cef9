"""Conversations with Sidekick, kept in the kernel store."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from dreamer.kernel.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChatMessage, Conversation, utcnow
from dreamer.kernel.store.text import storable_text

HISTORY_LIMIT = 20


def open_conversation(store: Store, user_id: int, conversation_id: str | None, first_text: str) -> Conversation:
    """The user's conversation by id, or a new one titled after its first message."""
    with store.session() as s:
        if conversation_id:
            found = s.get(Conversation, conversation_id)
            if found is None or found.user_id != user_id:
                raise DreamerError("not_found", f"no conversation {conversation_id!r}")
            return found
        title = " ".join(first_text.split())[:80] or "Conversation"
        conv = Conversation(id="conv_" + uuid.uuid4().hex, user_id=user_id, title=storable_text(title), pending=None)
        s.add(conv)
        return conv


def record_turn(
    store: Store, conversation_id: str, user_text: str, reply: str, data: dict[str, Any], pending: dict | None
) -> None:
    """The user's message, Sidekick's answer and the question it now waits on, in one transaction."""
    with store.session() as s:
        conv = s.get(Conversation, conversation_id)
        if conv is None:
            return
        s.add(ChatMessage(conversation_id=conversation_id, role="user", content=storable_text(user_text), data={}))
        s.add(ChatMessage(conversation_id=conversation_id, role="assistant", content=storable_text(reply), data=data))
        conv.pending = pending
        conv.updated_at = utcnow()


def list_conversations(store: Store, user_id: int, limit: int = 50) -> list[dict[str, Any]]:
    with store.session() as s:
        rows = s.scalars(
            select(Conversation).where(Conversation.user_id == user_id).order_by(Conversation.updated_at.desc()).limit(limit)
        )
        return [
            {"id": c.id, "title": c.title, "updated_at": c.updated_at.isoformat(), "waiting": c.pending is not None}
            for c in rows
        ]


def conversation_view(store: Store, user_id: int, conversation_id: str) -> dict[str, Any]:
    with store.session() as s:
        conv = s.get(Conversation, conversation_id)
        if conv is None or conv.user_id != user_id:
            raise DreamerError("not_found", f"no conversation {conversation_id!r}")
        messages = s.scalars(
            select(ChatMessage).where(ChatMessage.conversation_id == conversation_id).order_by(ChatMessage.id)
        )
        return {
            "id": conv.id,
            "title": conv.title,
            "pending": conv.pending,
            "messages": [
                {"role": m.role, "content": m.content, "data": m.data, "at": m.at.isoformat()} for m in messages
            ],
        }
