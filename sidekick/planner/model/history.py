"""Earlier turns for the model, and compaction of a long conversation into a summary.

History items are the stored chat messages as dicts: {"id", "role", "content",
"data"}. A summary is an assistant message whose data is {"summary": true,
"through": ID}: it stands for every message up to ID, and the store hands back
the latest summary plus the messages after ID
(dreamer.sidekick.chat.conversations.recent_history).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, Gateway, Message
from dreamer.sidekick.planner.model.prompt import SUMMARY

MAX_TURN_CHARS = 2000  # one old message never crowds out the rest


@dataclass(frozen=True)
class Budget:
    """When to compact: more than `max_messages` or `max_chars` since the last summary.
    The newest `keep` messages stay verbatim."""

    max_messages: int = 30
    max_chars: int = 12_000
    keep: int = 6


@dataclass(frozen=True)
class Compaction:
    summary: str
    through: int  # the id of the last message the summary stands for


def is_summary(item: Mapping[str, Any]) -> bool:
    data = item.get("data")
    return isinstance(data, Mapping) and bool(data.get("summary"))


def split(history: Sequence[Mapping[str, Any]]) -> tuple[str | None, list[Mapping[str, Any]]]:
    """The latest summary's text, and the turns after the part it stands for (a summary
    is stored after the newest turns it kept verbatim, so order alone does not tell)."""
    summaries = [item for item in history if is_summary(item)]
    turns = [item for item in history if not is_summary(item)]
    if not summaries:
        return None, turns
    latest = summaries[-1]
    data = latest.get("data") or {}
    through = data.get("through") if isinstance(data.get("through"), int) else None
    if through is not None:
        turns = after(turns, through)
    return str(latest.get("content") or ""), turns


def needs_compaction(turns: Sequence[Mapping[str, Any]], budget: Budget) -> bool:
    chars = sum(len(str(t.get("content") or "")) for t in turns)
    return len(turns) > budget.max_messages or (chars > budget.max_chars and len(turns) > budget.keep)


async def compact(
    summary: str | None, turns: Sequence[Mapping[str, Any]], gateway: Gateway, user_id: int, budget: Budget,
    *, turn_key: str | None = None,
) -> Compaction | None:
    """Ask the model for a summary of everything but the newest turns; None when it cannot."""
    cut = _cut(turns, budget.keep)
    old = turns[:cut]
    through = old[-1].get("id") if old else None
    if not isinstance(through, int):
        return None
    transcript = "\n".join(_line(t) for t in old)
    if summary:
        transcript = f"Summary of what came before:\n{summary}\n\n{transcript}"
    request = ChatRequest([Message.user(transcript)], system=SUMMARY, max_tokens=600)
    try:
        answer = await gateway.complete(request, user_id=user_id, turn_key=turn_key)
    except DreamerError:
        return None  # no summary this turn; the caller sends the newest turns only
    text = answer.text.strip()
    return Compaction(text, through) if text else None


def after(turns: Sequence[Mapping[str, Any]], through: int) -> list[Mapping[str, Any]]:
    return [t for t in turns if isinstance(t.get("id"), int) and t["id"] > through]


def to_messages(turns: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Stored turns as model messages: user text, and the assistant's reply with the calls it made."""
    out: list[Message] = []
    for turn in turns:
        content = _clip(str(turn.get("content") or ""))
        if turn.get("role") == "user":
            if content:
                out.append(Message.user(content))
        elif turn.get("role") == "assistant" and out:  # a conversation starts with the user
            calls = _calls_note(turn.get("data"))
            text = f"{content}\n{calls}".strip()
            if text:
                out.append(Message.assistant(text))
    return out


def _cut(turns: Sequence[Mapping[str, Any]], keep: int) -> int:
    """Where the kept tail starts: `keep` from the end, moved back to a user message."""
    cut = max(0, len(turns) - keep)
    while cut > 0 and turns[cut].get("role") != "user":
        cut -= 1
    return cut


def _line(turn: Mapping[str, Any]) -> str:
    who = "User" if turn.get("role") == "user" else "Sidekick"
    note = _calls_note(turn.get("data")) if who == "Sidekick" else ""
    return f"{who}: {_clip(str(turn.get('content') or ''))}{' ' + note if note else ''}"


def _calls_note(data: Any) -> str:
    calls = data.get("calls") if isinstance(data, Mapping) else None
    if not isinstance(calls, list) or not calls:
        return ""
    done = [f"{c.get('agent')}.{c.get('function')} {'ok' if c.get('ok') else 'failed'}"
            for c in calls if isinstance(c, Mapping)]
    return f"(calls: {', '.join(done)})" if done else ""


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TURN_CHARS else text[: MAX_TURN_CHARS - 1] + "…"
