"""Scoring the sql-explorer's `ask` on the question families against truth SQL.

The demo HR data is built for this month (as the kernel builds it), with a truth copy
holding only what ops_manager may see (department D042 and its records): the same
truth SQL run on the full copy answers for hr_admin and on the truth copy for the
scoped manager. The explorer's data syscalls are answered by the kernel's own
DataService (validator, scope rewriter, engine layer), so its answers are scoped the way
the kernel scopes them.

    .venv/bin/python tests/agents/sql_eval.py             # every split, both users
    .venv/bin/python tests/agents/sql_eval.py --chat      # the same questions through the offline planner
    .venv/bin/python tests/agents/sql_eval.py --sidekick  # ... through Sidekick's whole turn
    .venv/bin/python tests/agents/sql_eval.py --postgres  # the same rows on PostgreSQL (with any of the above)

`--chat` sends each question through Sidekick's planner (no model: the offline one the
chat runs, over the starter agents' real functions in tests/sidekick/tools.json) and
counts it right only when the plan is one call of `sql-explorer.ask` whose answer, with
the question the planner passed, is right. `--sidekick` sends it through Sidekick's turn
itself (memory rules, dialogue layer, planner, reply), as the chat does.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sql_questions import Case  # noqa: E402

from dreamer.kernel.data.demo import DEMO_CONNECTION, SCOPES_FILE, build_demo  # noqa: E402
from dreamer.kernel.data.queries import DataService  # noqa: E402
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


PG_ADMIN_URL = os.environ.get("DREAMER_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


@contextmanager
def postgres_world(folder: Path, admin_url: str = PG_ADMIN_URL) -> Iterator[World]:
    """The same demo rows in a PostgreSQL database of their own (schema hr), dropped afterwards;
    the truth queries still run on the SQLite copies. psycopg.OperationalError when it does not answer."""
    import psycopg

    from dreamer.kernel.data import engine_pg
    from dreamer.kernel.data.demo import SCHEMA, demo_rows

    with psycopg.connect(admin_url, autocommit=True, connect_timeout=3) as admin:
        name = f"dreamer_sqleval_{secrets.token_hex(4)}"
        admin.execute(f'CREATE DATABASE "{name}"')
    url = admin_url.rsplit("/", 1)[0] + f"/{name}"
    world: World | None = None
    try:
        with psycopg.connect(url) as db:
            db.execute("CREATE SCHEMA hr")
            db.execute("SET search_path = hr")
            db.execute(SCHEMA)
            for table, rows in demo_rows(date.today().replace(day=1)).items():
                with db.cursor().copy(f"COPY {table} FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
        world = build_world(folder, url=f"{url}?schema=hr")
        yield world
    finally:
        if world is not None:
            world.data.remove(DEMO_CONNECTION)
            world.store.engine.dispose()
        engine_pg.close_pools()
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=3) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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


ANSWERED = ("value", "groups", "top")  # what a numeric answer carries; a refusal carries none of them


def _routed_away(result: dict[str, Any]) -> bool:
    """The chat sent the question to something other than `ask` (or to nothing)."""
    return "routed_to" in result


def score(case: Case, result: dict[str, Any] | None, truth: list[tuple[Any, ...]]) -> bool:
    """Whether `result` answers `case` as `truth` does. An answer counts only when `ask` gave it:
    an empty or NULL truth is not met by a question that went elsewhere or was refused."""
    if result is None:
        return False
    if _routed_away(result):  # the chat sent it elsewhere: right only for what is not ask's to answer
        if case.kind == "unplaceable":  # an HR-sounding question off the model: "none of your agents can"
            return not result["routed_to"]
        return case.kind in ("elsewhere", "refused") and "sql-explorer.ask" not in result["routed_to"]
    refusal = not any(k in result for k in ANSWERED) and bool(result.get("answer"))
    if case.kind == "elsewhere":  # not about HR: no number
        return refusal
    if case.kind == "refused":  # about the asker: a sentence saying so, not a word it could not place
        return refusal and "could not place" not in str(result["answer"])
    if case.kind == "unplaceable":
        return not any(k in result for k in ANSWERED) and "could not place" in str(result.get("answer"))
    if result.get("via") not in ("semantic-model", "model"):
        return False
    if case.kind == "scalar":
        expected = truth[0][0] if truth else None
        if "value" not in result or "groups" in result:
            return False
        got = result["value"]
        if expected is None:
            return got in (None, 0)
        return isinstance(got, (int, float)) and abs(float(got) - float(expected)) <= 0.5
    if case.kind in ("grouped", "grouped2"):
        if "groups" not in result or "top" in result:
            return False
        width = 1 if case.kind == "grouped" else 2
        got = {_key(g, width): float(g["value"]) for g in result["groups"] if g["value"] is not None}
        want = {tuple(str(c) for c in row[:width]): float(row[width]) for row in truth if row[width] is not None}
        return got.keys() == want.keys() and all(abs(got[k] - want[k]) <= 0.5 for k in want)
    if case.kind == "top":
        if "top" not in result:
            return False
        ids = bool(truth) and isinstance(truth[0][0], int) and "top_ids" in result
        got = [str(x) for x in result["top_ids" if ids else "top"]]
        want = {str(row[0]) for row in truth}
        return bool(got) and all(g in want for g in got) if want else not got
    if case.kind == "topn":  # exactly n (fewer only when fewer exist), each among the true best n, ties allowed
        if "top" not in result:
            return False
        got = [str(x) for x in result.get("top_ids") or result["top"]]
        values = {str(row[0]): float(row[1]) for row in truth if row[1] is not None}
        ranked = sorted(values.values(), reverse=case.order == "max")
        n = min(case.n, len(ranked))
        if len(got) != n or len(set(got)) != n or not all(g in values for g in got):
            return False
        return sorted((values[g] for g in got), reverse=case.order == "max") == ranked[:n]
    raise ValueError(case.kind)


def _key(group: dict[str, Any], width: int) -> tuple[str, ...]:
    return (str(group["code"]),) if width == 1 else (str(group["code"]), str(group.get("code2")))


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


def through_chat(ask: Callable[[str, str], dict[str, Any] | None]) -> Callable[[str, str], dict[str, Any] | None]:
    """`ask` reached as Sidekick's offline planner routes a chat message (the planner alone):
    the answer when the plan is one call of `sql-explorer.ask`, else where it went (`routed_to`)."""
    sys.path.insert(0, str(HERE.parent / "sidekick"))
    from routing_eval import load_tools

    from dreamer.sidekick.planner import OfflinePlanner, PlanContext

    tools, planner = load_tools(), OfflinePlanner()

    def chat(question: str, user: str) -> dict[str, Any] | None:
        plan = planner.plan(question, tools, PlanContext(now=datetime.now(timezone.utc), timezone="UTC"))
        calls = [f"{s.agent}.{s.function}" for s in plan.steps]
        if calls != ["sql-explorer.ask"] or plan.pending is not None:
            return {"answer": f"routed to {calls or 'no call'}{' (asked first)' if plan.pending else ''}",
                    "routed_to": calls or [f"{s.agent}.{s.function}" for s in plan.pending.partial.steps]
                    if plan.pending else calls}
        return ask(str(plan.steps[0].args.get("question", "")), user)

    return chat


def through_sidekick(ask: Callable[[str, str], dict[str, Any] | None], world: World
                     ) -> Callable[[str, str], dict[str, Any] | None]:
    """`ask` reached through Sidekick's whole turn (memory rules, the dialogue layer, the offline
    planner, the question a function's result asks, the reply text), in this process: each
    question opens a new conversation of an eval user; the installed functions are the starter
    agents' (tests/sidekick/tools.json), and only `sql-explorer.ask` runs (any other call is
    recorded as where the message went). The result carries the reply the user would read."""
    import asyncio

    sys.path.insert(0, str(HERE.parent / "sidekick"))
    from routing_eval import load_tools

    from dreamer.kernel.invocations.principal import Principal
    from dreamer.kernel.invocations.records import Outcome
    from dreamer.kernel.users.accounts import create_user
    from dreamer.sidekick.chat.planning import PlanningPool
    from dreamer.sidekick.chat.sidekick import Sidekick
    from dreamer.sidekick.planner import OfflinePlanner

    tools = load_tools()
    current = {"user": "hr_admin"}

    class InProcessPlanner(OfflinePlanner):
        """The offline planner run in a planning thread of this process (the kernel uses processes)."""

    class Invoker:
        llm = None
        tools = None

        async def invoke(self, who: Principal, agent: str, function: str, args: dict[str, Any], caller: Any) -> Outcome:
            if (agent, function) != ("sql-explorer", "ask"):
                return Outcome({"reply": "(not run in the eval)"}, "inv_eval")
            return Outcome(ask(str(args.get("question", "")), current["user"]), "inv_eval")

    class EvalSidekick(Sidekick):
        def tools(self, who: Principal) -> list[Any]:
            return list(tools)

    sidekick = EvalSidekick(world.store, Invoker(), InProcessPlanner())  # type: ignore[arg-type]
    sidekick.planning = PlanningPool(budget_s=600.0, processes=0)  # a slow shared machine: no TooSlow here
    principals: dict[str, Principal] = {}
    for user in USERS:  # users of their own each time: a world may serve several runs
        name = f"eval-{user}-{secrets.token_hex(3)}"
        with world.store.session() as s:
            made, _ = create_user(s, name)
            principals[user] = Principal(made.id, name)

    async def turn(question: str, user: str) -> dict[str, Any]:
        return [e async for e in sidekick.turn(principals[user], question)][-1]

    def chat(question: str, user: str) -> dict[str, Any] | None:
        current["user"] = user
        done = asyncio.run(turn(question, user))
        calls = [f"{c['agent']}.{c['function']}" for c in done["calls"]]
        if calls != ["sql-explorer.ask"]:
            steps = [s["agent"] + "." + s["function"] for s in (done["pending"] or {}).get("steps", [])]
            return {"answer": f"routed to {calls or steps or 'no call'}: {done['reply']}", "routed_to": calls or steps,
                    "chat_reply": done["reply"]}
        result = done["calls"][0].get("result")
        if not isinstance(result, dict):
            return {"answer": done["reply"], "failed": True}
        return {**result, "chat_reply": done["reply"]}

    return chat


def splits(today: date) -> list[tuple[str, list[Case]]]:
    from sql_questions import issue_questions, tuning, tuning_wider
    from sql_questions_heldout import held_out
    from sql_questions_heldout2 import held_out_2

    return [("tuning", tuning(today) + issue_questions(today) + tuning_wider(today)), ("held-out", held_out(today)),
            ("held-out-2", held_out_2(today))]


def main() -> None:
    """Scores per split and per user; `-v` lists the tuning split's misses (never a held-out split's)."""
    verbose = "-v" in sys.argv
    with tempfile.TemporaryDirectory() as tmp, \
            (postgres_world(Path(tmp)) if "--postgres" in sys.argv else _sqlite_world(Path(tmp))) as world:
        ask = in_process_ask(world)
        if "--chat" in sys.argv:
            ask = through_chat(ask)
        elif "--sidekick" in sys.argv:
            ask = through_sidekick(ask, world)
        for name, cases in splits(date.today()):
            outcomes = run(cases, ask, world)
            per_user = "; ".join(f"{user} {summary([o for o in outcomes if o.user == user])}" for user in USERS)
            print(f"{name}: {len(cases)} questions x {len(USERS)} users: {summary(outcomes)} ({per_user})")
            if verbose and name == "tuning":
                for o in outcomes:
                    if not o.ok:
                        print(f"  [{o.user}] {o.case.question!r}: {o.said}")


@contextmanager
def _sqlite_world(folder: Path) -> Iterator[World]:
    world = build_world(folder)
    try:
        yield world
    finally:
        world.store.engine.dispose()


if __name__ == "__main__":
    main()
