"""Compaction: a long conversation is summarised by the model (goals, decisions, open
items), the summary is stored and the next turn sends it with only the newest turns."""

from __future__ import annotations

from llm_server import FakeLLMServer, Text
from model_testkit import Calls, drive, system_of

from dreamer.kernel.store.db import Store
from dreamer.sidekick.chat.conversations import open_conversation, recent_history, record_turn, save_summary
from dreamer.sidekick.planner.model.prompt import SUMMARY


def long_history(turns: int) -> list[dict]:
    out: list[dict] = []
    for n in range(turns):
        out.append({"id": 2 * n + 1, "role": "user", "content": f"question {n}", "data": {}})
        out.append({"id": 2 * n + 2, "role": "assistant", "content": f"answer {n}",
                    "data": {"calls": [{"agent": "grocery", "function": "add_items", "ok": True}]}})
    return out


def test_a_long_conversation_is_compacted(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    history = long_history(16)  # 32 messages: over the 30 of the default budget
    fake.script(Text("Goal: a party on Friday. Decided: pasta. Open: the guest list."), Text("Noted."))
    events = drive(fake, provider, sqlite_store, user_id, "and the drinks?", Calls(), history=history)
    (summary,) = [e for e in events if e["event"] == "summary"]
    assert summary["text"].startswith("Goal: a party on Friday")
    assert summary["through"] == 26  # the newest six messages (ids 27..32) stay verbatim
    asked, answered = (r.body for r in fake.requests)
    assert system_of(provider, asked) == SUMMARY
    transcript = str(asked["messages"])
    assert "question 0" in transcript and "grocery.add_items ok" in transcript and "question 13" not in transcript
    assert "Goal: a party on Friday" in system_of(provider, answered)
    sent = str(answered["messages"])
    assert "question 12" not in sent and "question 13" in sent and "and the drinks?" in sent


def test_a_short_conversation_goes_as_it_is(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(Text("Sure."))
    events = drive(fake, provider, sqlite_store, user_id, "thanks", Calls(), history=long_history(3))
    assert "summary" not in [e["event"] for e in events]
    (sent,) = fake.requests
    roles = [m["role"] for m in sent.body["messages"] if m["role"] != "system"]
    assert roles == ["user", "assistant"] * 3 + ["user"]


def test_the_store_hands_back_the_latest_summary_and_what_follows(sqlite_store: Store, user_id: int) -> None:
    conv = open_conversation(sqlite_store, user_id, None, "hello")
    for n in range(4):
        record_turn(sqlite_store, conv.id, f"q{n}", f"a{n}", {"calls": []}, None)
    ids = [m["id"] for m in recent_history(sqlite_store, conv.id)]
    assert len(ids) == 8
    save_summary(sqlite_store, conv.id, "old summary", through=ids[1])
    save_summary(sqlite_store, conv.id, "summary of q0..q1", through=ids[3])
    record_turn(sqlite_store, conv.id, "q4", "a4", {"calls": []}, None)
    got = recent_history(sqlite_store, conv.id)
    assert [m["content"] for m in got] == ["q2", "a2", "q3", "a3", "summary of q0..q1", "q4", "a4"]
    assert got[4]["data"] == {"summary": True, "through": ids[3]}


def test_the_next_turn_sends_the_stored_summary_and_the_kept_turns(
    fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int
) -> None:
    conv = open_conversation(sqlite_store, user_id, None, "hello")
    for n in range(4):
        record_turn(sqlite_store, conv.id, f"q{n}", f"a{n}", {"calls": []}, None)
    through = recent_history(sqlite_store, conv.id)[3]["id"]  # q0 a0 q1 a1 are summarised
    save_summary(sqlite_store, conv.id, "Goal: soup.", through=through)
    fake.script(Text("ok"))
    drive(fake, provider, sqlite_store, user_id, "q4", Calls(), history=recent_history(sqlite_store, conv.id))
    body = fake.requests[0].body
    assert "Goal: soup." in system_of(provider, body)
    sent = str(body["messages"])
    assert "q1" not in sent and all(t in sent for t in ("q2", "a2", "q3", "a3", "q4"))
