"""An invocation's records: what a run collects while it runs, the row it starts and ends
with, its log lines, and the rows a dead kernel left running.

The statements compile once with bound parameters; the hot path runs them as Core
through the group writer (kernel/store/writer.py).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection, bindparam, insert, update

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.runs.retry import retry_delay
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.hot import HotStatement
from dreamer.kernel.store.models import Invocation, InvocationLog
from dreamer.kernel.store.tables import rowcount, table
from dreamer.kernel.store.text import storable_text
from dreamer.kernel.store.writer import GroupWriter


@dataclass
class Outcome:
    value: Any
    invocation_id: str
    status: str = "succeeded"  # or "queued": a background function answers at once


@dataclass
class Run:
    """What one invocation collects while it runs."""

    id: str
    logs: list[tuple[datetime, str, str, str]] = field(default_factory=list)
    queued: bool = False  # admitted as a background invocation: the runner will run it
    attempt: int = 1
    max_attempts: int = 1
    background: bool = False
    trigger: dict[str, Any] | None = None
    beyond_own_data: bool = False  # made a syscall that may write outside its agent's data folder
    trace_id: str | None = None  # the trace of the call's span (32 hex digits), for its row
    # The admission's commit when it was queued, not awaited (decision 0051): the answer
    # and every syscall wait for it, so nothing is said or done on an unrecorded admission.
    admitted: asyncio.Future[None] | None = None
    # The admission's transaction while it waits to be written in the same transaction as
    # the call's end (decision 0053), with the writer it goes to and the timer that bounds the wait.
    deferred: Callable[[Connection], None] | None = None
    _writer: GroupWriter | None = None
    _bound: asyncio.TimerHandle | None = None
    admit_by: float = 0.0  # the loop's time by which a deferred admission is queued at the latest
    # This call's caller's admission rides in this call's admission (decision 0057): settled
    # once this admission is on record, which the caller's `durable` waits for.
    carried: asyncio.Future[None] | None = None

    def defer_admission(self, writer: GroupWriter, job: Callable[[Connection], None], within_s: float) -> None:
        """Hold the admission's transaction for the call's end (decision 0053); it is queued
        alone at the first syscall, or once the call has run `within_s`, whichever comes first."""
        loop = asyncio.get_running_loop()
        self.deferred, self._writer = job, writer
        self.admit_by = loop.time() + within_s
        self._bound = loop.call_later(within_s, self.write_admission)

    def hand_over_admission(self) -> tuple[Callable[[Connection], None], float, asyncio.Future[None]] | None:
        """The deferred admission, for the call this one makes before it is written (decision
        0057): that call writes it first in its own admission's transaction, within this one's
        bound. From now on this call's `durable` waits for the returned future, which the
        callee settles (`settle_carried`). None when the admission is written or queued already."""
        if self.deferred is None:
            return None
        admit_by = self.admit_by
        job = self.take_admission()
        assert job is not None
        carried: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Read by whoever awaits it; this keeps an unawaited failure out of asyncio's "never retrieved" log.
        carried.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.admitted = carried
        return job, admit_by, carried

    def settle_carried(self, error: BaseException | None = None) -> None:
        """Tell the caller whose admission rides in this one's that it is on record (or, with
        `error`, that it will not be: this call ended without its admission written)."""
        carried = self.carried
        if carried is None or carried.done():
            return
        if error is None:
            carried.set_result(None)
        else:
            carried.set_exception(error)

    def write_admission(self) -> None:
        """Queue a deferred admission on its own (not awaited: `durable` waits for it)."""
        job = self.take_admission()
        if job is not None:
            assert self._writer is not None
            self.admitted = self._writer.queue(job)

    def take_admission(self) -> Callable[[Connection], None] | None:
        """The deferred admission, now the caller's to write; None if it was queued already."""
        job, self.deferred = self.deferred, None
        if self._bound is not None:
            self._bound.cancel()
            self._bound = None
        return job

    async def durable(self) -> None:
        """Wait until the admission is committed; raises if it could not be."""
        self.write_admission()
        if self.admitted is not None:
            # Shielded: a cancelled caller must not cancel the commit of a call that ran.
            await asyncio.shield(self.admitted)
        # Every write of this admission carries the caller's before it (Admitted.before).
        self.settle_carried()

    def sink(self, stream: str, level: str, message: str) -> None:
        self.logs.append((datetime.now(timezone.utc), storable_text(stream), storable_text(level), storable_text(message)))


@dataclass(frozen=True)
class QueuedRun:
    """A background invocation the runner has claimed (status running, attempt counted)."""

    id: str
    user_id: int
    user_name: str
    timezone: str
    agent: str
    function: str
    args: dict[str, Any]
    caller: str
    attempt: int
    max_attempts: int
    trigger: dict[str, Any] | None


_INVOCATIONS = table(Invocation)
# The columns start_row fills, all of them: the hot statement computes no defaults.
START_COLUMNS = (
    "id", "user_id", "agent", "function", "args", "caller", "parent_id", "status", "attempt", "created_at",
    "started_at", "trace_id", "background", "max_attempts", "run_after", "trigger", "node",
)
INSERT_INVOCATION = HotStatement(insert(_INVOCATIONS), START_COLUMNS)
# What the end sets (_FINISH_INVOCATION), for a row written once, already finished (Admitted.ended).
END_COLUMNS = ("status", "result", "finished_at", "error_code", "error_message", "run_after")
_INSERT_FINISHED = HotStatement(
    insert(_INVOCATIONS), START_COLUMNS + tuple(c for c in END_COLUMNS if c not in START_COLUMNS)
)
# Only a running row is finished: a cancelled one keeps "cancelled" whatever its worker did.
_FINISH_INVOCATION = HotStatement(
    update(_INVOCATIONS)
    # ... and only by the attempt that ran: one a dead node's lease handed to another node
    # (kernel/cluster/) is never overwritten by the old attempt waking up late.
    .where(_INVOCATIONS.c.id == bindparam("run_id"), _INVOCATIONS.c.status == "running",
           _INVOCATIONS.c.attempt == bindparam("run_attempt"))
    .values(
        status=bindparam("status"), result=bindparam("result"), finished_at=bindparam("finished_at"),
        error_code=bindparam("error_code"), error_message=bindparam("error_message"),
        run_after=bindparam("run_after"),
    ),
    ("run_id", "run_attempt", "status", "result", "finished_at", "error_code", "error_message", "run_after"),
)
_INSERT_LOG = HotStatement(insert(table(InvocationLog)), ("invocation_id", "at", "stream", "level", "message"))


def new_invocation_id() -> str:
    """"inv_" and 32 hex digits: the milliseconds since the epoch (12), then 80 random bits (20),
    from the source uuid4 draws on. Made in time order, ids keep every b-tree keyed by one (the
    invocations' key; invocation_id in the spans, logs, audit and model requests) growing at its
    right edge instead of taking a page anywhere per call (issue 23). Nobody reads an invocation
    by its id alone without owning it (reads.check_own), so the time in it gives nothing away."""
    return f"inv_{time.time_ns() // 1_000_000:012x}{os.urandom(10).hex()}"


def start_row(
    who: Principal, run: Run, agent: str, function: str, args: dict[str, Any], caller: Caller, node: str | None
) -> dict[str, Any]:
    """The invocations row an admitted call inserts (INSERT_INVOCATION), in the admission's transaction."""
    now = datetime.now(timezone.utc)
    return dict(
        id=run.id, user_id=who.user_id, agent=agent, function=function, args=args,
        caller=(caller.agent or caller.kind)[:64], parent_id=caller.parent_id,
        status="queued" if run.queued else "running",
        # A queued invocation has had no attempt yet; the runner counts each one it starts.
        attempt=0 if run.queued else 1, created_at=now, started_at=None if run.queued else now,
        trace_id=run.trace_id,
        background=run.background, max_attempts=run.max_attempts, run_after=None, trigger=run.trigger,
        node=None if run.queued else node,
    )


def end_job(
    run: Run, status: str, value: Any, error: DreamerError | None, retry_delay_s: float
) -> Callable[[Connection], None]:
    """Finishes the row (or puts it back in the queue for a retry) and writes its last log lines."""
    values = _end_values(run, status, value, error, retry_delay_s)
    write_logs = logs_job(run)

    def finish(conn: Connection) -> None:
        _FINISH_INVOCATION.execute(conn, values)
        write_logs(conn)

    return finish


def _end_values(
    run: Run, status: str, value: Any, error: DreamerError | None, retry_delay_s: float
) -> dict[str, Any]:
    now = datetime.now(timezone.utc)
    return {
        "run_id": run.id, "run_attempt": run.attempt, "status": status, "result": value,
        "finished_at": None if status == "queued" else now,
        "error_code": error.code if error else None, "error_message": error.message if error else None,
        # "queued" after a failed attempt: the next one waits for its retry delay.
        "run_after": now + retry_delay(run.attempt, retry_delay_s) if status == "queued" else None,
    }


class Admitted:
    """An admission's transaction: the invocation's row as it starts (`start_row`), then the
    rest of the decision's records (its audit entry). Called with a connection, it writes
    both. When it waits for the call's end (decision 0053), `ended` writes the row once, as
    it ends, instead of inserting it running and updating it in the same transaction."""

    def __init__(
        self, start: dict[str, Any], rest: Callable[[Connection], None],
        before: Callable[[Connection], None] | None = None,
    ) -> None:
        self.start = start
        self.rest = rest
        # The caller's admission, when it rides in this one's transaction (decision 0057): written
        # first, in every way this admission is written, so the log keeps the caller's entry first.
        self.before = before

    def __call__(self, conn: Connection) -> None:
        if self.before is not None:
            self.before(conn)
        INSERT_INVOCATION.execute(conn, self.start)  # first of its own: it takes SQLite's write lock
        self.rest(conn)

    def ended(
        self, run: Run, status: str, value: Any, error: DreamerError | None, retry_delay_s: float
    ) -> Callable[[Connection], None]:
        """The admission and the end in one transaction (decision 0053): the row inserted
        with its end's values, then the audit entry, then the last log lines. The same rows
        as the admission followed by `end_job`'s update: that update finds the row its own
        transaction inserted, running, of this attempt, and sets exactly these columns."""
        start = self.start
        if (status not in ("succeeded", "failed") or start["status"] != "running"
                or start["id"] != run.id or start["attempt"] != run.attempt):
            return after(self, end_job(run, status, value, error, retry_delay_s))
        end = _end_values(run, status, value, error, retry_delay_s)
        row = self.start | {column: end[column] for column in END_COLUMNS}
        write_logs = logs_job(run)

        before = self.before

        def admitted_and_ended(conn: Connection) -> None:
            if before is not None:
                before(conn)
            _INSERT_FINISHED.execute(conn, row)
            self.rest(conn)
            write_logs(conn)

        return admitted_and_ended


def ended(
    admission: Callable[[Connection], None], run: Run, status: str, value: Any, error: DreamerError | None,
    retry_delay_s: float,
) -> Callable[[Connection], None]:
    """A deferred admission and the call's end, one transaction (decision 0053)."""
    if isinstance(admission, Admitted):
        return admission.ended(run, status, value, error, retry_delay_s)
    return after(admission, end_job(run, status, value, error, retry_delay_s))


def after(first: Callable[[Connection], None], then: Callable[[Connection], None]) -> Callable[[Connection], None]:
    """Both jobs in one transaction, `first` first."""

    def both(conn: Connection) -> None:
        first(conn)
        then(conn)

    return both


def logs_job(run: Run) -> Callable[[Connection], None]:
    """Writes the lines collected so far; the attempt's next lines start a new batch."""
    logs = [
        {"invocation_id": run.id, "at": at, "stream": stream, "level": level, "message": message}
        for at, stream, level, message in run.logs
    ]
    run.logs.clear()

    def write(conn: Connection) -> None:
        if logs:
            _INSERT_LOG.execute(conn, logs)

    return write


def interrupted_on_restart(store: Store, node: str | None = None) -> int:
    """Mark direct invocations left running by a kernel that died; returns how many.
    (Background ones are the runner's: see dreamer.kernel.runs.queue.recover.)
    With `node`, only those that node ran (its own at start, a dead node's on takeover)."""
    with store.session() as s:
        stale = update(Invocation).where(Invocation.status.in_(("queued", "running")), Invocation.background.is_(False))
        if node is not None:
            stale = stale.where(Invocation.node == node)
        return rowcount(s.execute(
            stale
            .values(
                status="failed",
                error_code="interrupted",
                error_message="the kernel stopped while this invocation ran",
                finished_at=datetime.now(timezone.utc),
            )
        ))
