"""Scoring the sql-explorer's `ask` on the question families against truth SQL.

The demo HR data is built for this month (as the kernel builds it), with a truth copy
holding only what ops_manager may see (department D042 and its records): the same
truth SQL run on the full copy answers for hr_admin and on the truth copy for the
scoped manager. The explorer's data syscalls are answered by the kernel's own
DataService (validator, scope rewriter, engine layer), so its answers are scoped the way
the kernel scopes them.

    .venv/bin/python tests/agents/sql_eval.py          # both splits, both users, both databases
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sql_questions import Case  # noqa: E402

from dreamer.kernel.data.demo import DEMO_CONNECTION, SCOPES_FILE, build_demo  # noqa: E402
from dreamer.kernel.data.service import DataService  # noqa: E402
from dreamer.contracts.errors import DreamerError  # noqa: E402
from dreamer.kernel.store.db import Store  # noqa: E402

USERS = {"hr_admin": 1, "ops_manager": 2}
HIDE = {  # deleted from the truth copy: what ops_manager must not see (records before their employees)
    "attendance": "employee_id NOT IN (SELECT employee_id FROM employees WHERE department = 'D042')",
    "approved_leave": "employee_id NOT IN (SELECT employee_id FROM employees WHERE department = 'D042')",
    "absence_records": "employee_id NOT IN (SELECT employee_id FROM employees WHERE department = 'D042')",
    "employees": "department <> 'D042'",
}


class SyscallError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class World:
    data: DataService
    full: Path
    truth: Path
    store: Store
    truth_sql: Callable[[str, str], list[tuple[Any, ...]]] = field(default=lambda sql, user: [])

    def syscall(self, user: str) -> Callable[[str, dict[str, Any]], Any]:
        """The kernel's answer to the explorer's data syscalls, for `user` (as kernel/data/syscall.py does)."""
        uid = USERS[user]

        def handle(method: str, params: dict[str, Any]) -> Any:
            try:
                name = params["connection"] if "connection" in params else DEMO_CONNECTION
                if method == "data.catalog":
                    return self.data.catalog(name, user)
                if method == "data.schema":
                    return self.data.schema(name, user, params["table"], uid)
                if method == "data.distinct":
                    return self.data.distinct(name, user, params["table"], params["column"], params.get("limit", 200), uid)
                if method == "data.query":
                    ran = self.data.query(name, user, params["sql"], uid)
                    return {**ran.result.page(params.get("page", 1), params.get("page_size", 50)),
                            "sql": ran.guarded.written, "secured_sql": ran.guarded.secured, "cached": ran.cached}
                if method == "data.page":
                    return self.data.results.get(params["query_id"], uid).page(params["page"], params.get("page_size", 50))
            except DreamerError as exc:
                raise SyscallError(exc.code, exc.message) from None
            raise SyscallError("not_available", f"no syscall {method}")

        return handle


def build_world(folder: Path, url: str | None = None) -> World:
    """The demo data (SQLite by default; `url` a PostgreSQL schema URL holding the same rows)."""
    full = build_demo(folder / "hr.db")
    truth = folder / "truth.db"
    shutil.copy(full, truth)
    with sqlite3.connect(truth) as db:
        for table, hidden in HIDE.items():
            db.execute(f"DELETE FROM {table} WHERE {hidden}")
    store = Store(f"sqlite:///{folder / 'kernel.db'}")
    store.migrate()
    data = DataService(store)
    data.add(DEMO_CONNECTION, url or f"sqlite:///{full}", scopes=SCOPES_FILE.read_text())
    world = World(data, full, truth, store)

    def truth_sql(sql: str, user: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(f"file:{truth if user == 'ops_manager' else full}?mode=ro", uri=True) as db:
            return db.execute(sql).fetchall()

    world.truth_sql = truth_sql
    return world


@dataclass
class Outcome:
    case: Case
    user: str
    ok: bool
    crashed: bool
    said: str


def score(case: Case, result: dict[str, Any] | None, truth: list[tuple[Any, ...]]) -> bool:
    if result is None:
        return False
    if case.kind == "unplaceable":
        return "value" not in result and "groups" not in result and "could not place" in str(result.get("answer"))
    if case.kind == "scalar":
        expected = truth[0][0] if truth else None
        got = result.get("value")
        if expected is None:
            return got in (None, 0) and "groups" not in result
        return isinstance(got, (int, float)) and abs(float(got) - float(expected)) <= 0.5 and "groups" not in result
    if case.kind == "grouped":
        got = {str(g["code"]): float(g["value"]) for g in result.get("groups") or []}
        want = {str(code): float(value) for code, value in truth}
        return "top" not in result and got.keys() == want.keys() and all(abs(got[k] - want[k]) <= 0.5 for k in want)
    if case.kind == "top":
        got = [str(x) for x in result.get("top") or []]
        want = {str(row[0]) for row in truth}
        return bool(got) and all(g in want for g in got) if want else not got
    raise ValueError(case.kind)


def run(cases: list[Case], ask: Callable[[str, str], dict[str, Any] | None], world: World,
        users: tuple[str, ...] = tuple(USERS)) -> list[Outcome]:
    out = []
    for case in cases:
        for user in users:
            crashed = False
            try:
                result = ask(case.question, user)
            except Exception as exc:  # noqa: BLE001 - a crash is what the eval counts
                result, crashed = None, True
                said = f"CRASH {type(exc).__name__}: {exc}"
            else:
                said = str((result or {}).get("answer"))
                crashed = bool((result or {}).get("failed"))
            truth = world.truth_sql(case.truth, user) if case.truth else []
            out.append(Outcome(case, user, score(case, result, truth) and not crashed, crashed, said))
    return out


def summary(outcomes: list[Outcome]) -> str:
    right = sum(o.ok for o in outcomes)
    crashes = sum(o.crashed for o in outcomes)
    return f"{right}/{len(outcomes)} = {100 * right / max(1, len(outcomes)):.1f}% right, {crashes} crashes"


def in_process_ask(world: World) -> Callable[[str, str], dict[str, Any] | None]:
    """`ask` called in this process with an SDK Context whose kernel is `world` (quick to iterate on;
    the test drives the real worker process instead)."""
    sys.path.insert(0, str(HERE.parents[1] / "agents" / "sql_explorer"))
    from sql_explorer import server

    from dreamer.sdk import CallError
    from dreamer.sdk.context import Context, User

    class Kernel:
        def __init__(self, user: str) -> None:
            self.handle = world.syscall(user)

        def request(self, method: str, params: dict[str, Any]) -> Any:
            if method == "llm.complete" or method.startswith("llm"):
                raise CallError("not_available", "no model")
            if method == "log":
                return None
            try:
                return self.handle(method, params)
            except SyscallError as exc:
                raise CallError(exc.kind, str(exc)) from None

        def notify(self, method: str, params: dict[str, Any]) -> None:
            return None

    def ask(question: str, user: str) -> dict[str, Any] | None:
        ctx = Context(user=User(USERS[user], user, "UTC"), invocation_id="eval", agent="sql-explorer",
                      function="ask", kernel=Kernel(user), database=None)  # type: ignore[arg-type]
        try:
            return server.ask(ctx, question)
        except Exception as exc:  # ask_user raises to ask: an ambiguity is not an answer
            if type(exc).__name__ in ("AskUser", "Question", "NeedsAnswer"):
                return {"answer": f"asked: {exc}"}
            raise

    return ask


def main() -> None:
    from sql_questions import issue_questions, tuning
    from sql_questions_heldout import held_out

    verbose = "-v" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        world = build_world(Path(tmp))
        ask = in_process_ask(world)
        today = date.today()
        for name, cases in (("tuning", tuning(today) + issue_questions(today)), ("held-out", held_out(today))):
            outcomes = run(cases, ask, world)
            print(f"{name}: {len(cases)} questions x {len(USERS)} users: {summary(outcomes)}")
            if verbose and name == "tuning":
                for o in outcomes:
                    if not o.ok:
                        print(f"  [{o.user}] {o.case.question!r}: {o.said}")
        world.store.engine.dispose()


if __name__ == "__main__":
    main()
