"""Conversations with Sidekick, kept in the kernel store."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.feedback.ratings import ratings_of_turns
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
) -> str | None:
    """The user's message, Sidekick's answer and the question it now waits on, in one transaction.

    The answer's id ("turn_<id>") is what a thumbs up/down names (kernel/feedback/ratings.py);
    None when the conversation was deleted meanwhile."""
    with store.session() as s:
        conv = s.get(Conversation, conversation_id)
        if conv is None:
            return None
        s.add(ChatMessage(conversation_id=conversation_id, role="user", content=storable_text(user_text), data={}))
        answer = ChatMessage(conversation_id=conversation_id, role="assistant", content=storable_text(reply), data=data)
        s.add(answer)
        conv.pending = pending
        conv.updated_at = utcnow()
        s.flush()
        return turn_id(answer.id)


def turn_id(message_id: int) -> str:
    return f"turn_{message_id}"


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
        messages = list(s.scalars(
            select(ChatMessage).where(ChatMessage.conversation_id == conversation_id).order_by(ChatMessage.id)
        ))
        rated = ratings_of_turns(store, user_id, [m.id for m in messages if m.role == "assistant"])
        view: dict[str, Any] = {
            "id": conv.id,
            "title": conv.title,
            "pending": conv.pending,
            "messages": [
                {"role": m.role, "content": m.content, "data": m.data, "at": m.at.isoformat(),
                 **({"turn_id": turn_id(m.id)} if m.role == "assistant" and not (m.data or {}).get("summary") else {})}
                for m in messages
            ],
        }
        for message, m in zip(view["messages"], messages):
            if m.id in rated:  # the user's own thumbs up/down on this answer
                message["rating"] = "up" if rated[m.id] > 0 else "down"
    return view


def facts_said_in(store: Store, conversation_id: str) -> set[int]:
    """Ids of the memory facts the user stated in this conversation ("I'm vegetarian" earlier on).

    A memory turn records its facts in the answer's data (sidekick/memory/chat.py's MemoryTurn)."""
    with store.session() as s:
        rows = s.scalars(
            select(ChatMessage.data).where(ChatMessage.conversation_id == conversation_id, ChatMessage.role == "assistant")
            .order_by(ChatMessage.id.desc()).limit(HISTORY_SCAN)
        )
        found: set[int] = set()
        for data in rows:
            memory = data.get("memory") if isinstance(data, dict) else None
            if not isinstance(memory, dict) or memory.get("action") not in ("remembered", "known"):
                continue
            for fact in memory.get("memories") or []:
                if isinstance(fact, dict) and isinstance(fact.get("id"), int):
                    found.add(fact["id"])
        return found


HISTORY_SCAN = 400  # messages read back at most; compaction keeps a conversation far below this


def recent_history(store: Store, conversation_id: str) -> list[dict[str, Any]]:
    """The latest summary (if any) and the messages after the part it stands for, oldest first.

    A summary is an assistant message with data {"summary": true, "through": ID}
    (written by `save_summary`); messages up to ID are left out."""
    with store.session() as s:
        rows = s.scalars(
            select(ChatMessage).where(ChatMessage.conversation_id == conversation_id)
            .order_by(ChatMessage.id.desc()).limit(HISTORY_SCAN)
        )
        found: list[dict[str, Any]] = []
        through: int | None = None
        for m in rows:
            if through is not None and m.id <= through:
                break
            data = m.data if isinstance(m.data, dict) else {}
            if data.get("summary"):
                if through is not None:
                    continue  # an older summary inside the part the newer one already covers
                through = int(data.get("through") or 0)
            found.append({"id": m.id, "role": m.role, "content": m.content, "data": data})
        found.reverse()
        return found


def save_summary(store: Store, conversation_id: str, summary: str, through: int) -> None:
    with store.session() as s:
        s.add(ChatMessage(conversation_id=conversation_id, role="assistant", content=storable_text(summary),
                          data={"summary": True, "through": through}))
