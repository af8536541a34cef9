"""Context in process: syscall payloads, not-yet-available members, the database transaction.

The kernel side here is a recorder of the two syscall primitives; the real
channel is exercised end to end in test_worker.py.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dreamer.sdk import CallError, Context, User
from dreamer.sdk.database import AgentDatabase


class Recorder:
    def __init__(self, answer: Any = None) -> None:
        self.answer = answer
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append(("request", method, params))
        return self.answer

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append(("notify", method, params))


def make_ctx(tmp_path: Path, kernel: Recorder | None = None) -> Context:
    return Context(
        user=User(id=1, name="ada", timezone="UTC"),
        invocation_id="inv-1",
        agent="grocery",
        function="add_items",
        kernel=kernel or Recorder(),
        database=AgentDatabase(tmp_path),
    )


def test_emit_reward_sends_the_value_and_refuses_what_is_not_a_number(tmp_path: Path) -> None:
    kernel = Recorder(answer={"id": 1})
    ctx = make_ctx(tmp_path, kernel)
    ctx.emit_reward(0.5, "the user kept the plan")
    assert kernel.sent == [("request", "rewards.emit", {"value": 0.5, "note": "the user kept the plan"})]
    for bad in ("good", True, None):
        with pytest.raises(TypeError):
            ctx.emit_reward(bad)  # type: ignore[arg-type]


def test_tools_call_sends_the_tool_and_returns_its_value(tmp_path: Path) -> None:
    kernel = Recorder(answer={"value": {"events": []}})
    assert make_ctx(tmp_path, kernel).tools.call("calendar.list_events", {"day": "2026-01-01"}) == {"events": []}
    assert kernel.sent == [("request", "tools.call", {"tool": "calendar.list_events", "args": {"day": "2026-01-01"}})]


def test_call_sends_json_args_and_returns_the_value(tmp_path: Path) -> None:
    class Item(BaseModel):
        name: str

    kernel = Recorder(answer={"value": {"ok": True}, "invocation_id": "inv-2"})
    ctx = make_ctx(tmp_path, kernel)
    # agent/function are positional-only, so a callee parameter may be called `agent`.
    assert ctx.call("recipes", "suggest", item=Item(name="leek"), agent="x") == {"ok": True}
    assert kernel.sent == [
        ("request", "agents.call", {"agent": "recipes", "function": "suggest", "args": {"item": {"name": "leek"}, "agent": "x"}})
    ]


def test_call_refuses_arguments_that_are_not_json(tmp_path: Path) -> None:
    kernel = Recorder(answer={"value": 1})
    ctx = make_ctx(tmp_path, kernel)
    with pytest.raises(TypeError, match=r"^ctx.call\('recipes', 'suggest'\): argument 'thing' cannot be sent as JSON"):
        ctx.call("recipes", "suggest", thing=object())
    with pytest.raises(TypeError, match=r"argument 'x' cannot be sent as JSON"):
        ctx.call("recipes", "suggest", x=float("nan"))
    assert kernel.sent == []


def test_call_with_a_malformed_answer_is_a_call_error(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, Recorder(answer={"nothing": 1}))
    with pytest.raises(CallError) as caught:
        ctx.call("recipes", "suggest")
    assert caught.value.kind == "protocol_error"


def test_log_sends_a_notification_with_json_fields(tmp_path: Path) -> None:
    kernel = Recorder()
    ctx = make_ctx(tmp_path, kernel)
    ctx.log("added", count=2, path=Path("/x"), odd=object)
    ctx.log("careful", level="warning")
    assert kernel.sent[0] == (
        "notify",
        "log",
        {"level": "info", "message": "added", "fields": {"count": 2, "path": "/x", "odd": "<class 'object'>"}},
    )
    assert kernel.sent[1] == ("notify", "log", {"level": "warning", "message": "careful", "fields": {}})
    with pytest.raises(ValueError, match=r"log level must be one of debug, info, warning, error, not 'loud'"):
        ctx.log("x", level="loud")


def test_context_is_unusable_after_its_invocation(tmp_path: Path) -> None:
    kernel = Recorder(answer={"value": 1})
    ctx = make_ctx(tmp_path, kernel)
    ctx._end()
    for use in (lambda: ctx.db, lambda: ctx.call("a", "b"), lambda: ctx.log("x")):
        with pytest.raises(RuntimeError, match=r"used after invocation inv-1 ended"):
            use()
    assert kernel.sent == []


def test_database_is_one_transaction_including_schema_changes(tmp_path: Path) -> None:
    db = AgentDatabase(tmp_path)
    assert not db.is_open and not (tmp_path / "agent.db").exists()
    conn = db.connection()
    assert conn.row_factory is sqlite3.Row
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.execute("INSERT INTO t VALUES (1)")
    db.rollback()
    tables = db.connection().execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert tables == []

    db.connection().execute("CREATE TABLE t (x INTEGER)")
    db.connection().execute("INSERT INTO t VALUES (1)")
    db.commit()
    db.connection().execute("INSERT INTO t VALUES (2)")
    db.rollback()
    assert [row["x"] for row in db.connection().execute("SELECT x FROM t")] == [1]
    db.close()


def test_early_commit_by_agent_code_keeps_work_done_so_far(tmp_path: Path) -> None:
    db = AgentDatabase(tmp_path)
    ctx = make_ctx(tmp_path)
    ctx._database = db
    ctx.db.execute("CREATE TABLE t (x INTEGER)")
    ctx.db.commit()
    ctx.db.execute("INSERT INTO t VALUES (1)")  # a new transaction started on this use
    db.rollback()
    with sqlite3.connect(tmp_path / "agent.db") as other:
        assert other.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    db.close()
