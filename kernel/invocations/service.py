"""Running a function: who may call what, the call chain, and the syscall path.

Every call — from a user through the API or from an agent through `ctx.call` —
comes through `Invoker.invoke`. The checks happen here, in the kernel, before
any worker sees the request; each decision is written to the audit log.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import shlex
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode, Tracer
from sqlalchemy import Connection, bindparam, func, insert, select, update

from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.config import Limits, Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.install.integrity import check_bundle
from dreamer.kernel.install.registry import InstalledAgent
from dreamer.kernel.invocations.syscalls import Handler, SyscallContext, default_table
from dreamer.kernel.permissions.folders import bounds_for
from dreamer.kernel.permissions.gate import Decision, decide
from dreamer.kernel.runs.retry import RETRIABLE, retry_delay
from dreamer.kernel.sandbox.base import SandboxSpec
from dreamer.kernel.sandbox.mounts import fs_grants, mounts_for
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Invocation, InvocationLog
from dreamer.kernel.store.text import storable_text
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.users.quotas import DataMeter, exceeded
from dreamer.kernel.workers.pool import WorkerKey, WorkerPool

if TYPE_CHECKING:
    from dreamer.kernel.llm.gateway import Gateway
    from dreamer.kernel.tools.registry import ToolRegistry


@dataclass(frozen=True)
class Principal:
    """The user a request acts for, and who really sent it (an admin acting as them)."""

    user_id: int
    user_name: str
    timezone: str = "UTC"
    via: str | None = None  # the admin's name when acting as another user

    @property
    def actor(self) -> str:
        return f"admin:{self.via} as {self.user_name}" if self.via else f"user:{self.user_name}"


@dataclass(frozen=True)
class Caller:
    kind: Literal["user", "agent", "sidekick", "trigger"]
    agent: str | None = None
    chain: tuple[str, ...] = ()  # agents on the call stack, outermost first
    parent_id: str | None = None
    deadline: float | None = None  # time.monotonic() by which the outermost call must end
    # kind "trigger": {"type", "name", "depth"} of the trigger that fired.
    trigger: dict[str, Any] | None = None
    # The user confirmed this very call (Sidekick after their yes, the CLI after its prompt
    # or --yes, an API request with "confirm": true). Needed by functions marked confirm=True.
    confirmed: bool = False


@dataclass
class Outcome:
    value: Any
    invocation_id: str
    status: str = "succeeded"  # or "queued": a background function answers at once


@dataclass
class _Run:
    """What one invocation collects while it runs."""

    id: str
    logs: list[tuple[datetime, str, str, str]] = field(default_factory=list)
    queued: bool = False  # admitted as a background invocation: the runner will run it
    attempt: int = 1
    max_attempts: int = 1
    background: bool = False
    trigger: dict[str, Any] | None = None

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


# Statements with bound parameters compile once; the hot path runs them as Core.
_INVOCATIONS = Invocation.__table__
_INSERT_INVOCATION = insert(_INVOCATIONS)
# Only a running row is finished: a cancelled one keeps "cancelled" whatever its worker did.
_FINISH_INVOCATION = (
    update(_INVOCATIONS)
    .where(_INVOCATIONS.c.id == bindparam("run_id"), _INVOCATIONS.c.status == "running")
    .values(
        status=bindparam("status"), result=bindparam("result"), finished_at=bindparam("finished_at"),
        error_code=bindparam("error_code"), error_message=bindparam("error_message"),
        run_after=bindparam("run_after"),
    )
)
_INSERT_LOG = insert(InvocationLog.__table__)


def unconfirmed(target: str, kind: str) -> DreamerError:
    """The one refusal of a confirm=True function called without the user's confirmation."""
    how = {
        "trigger": "a trigger cannot ask you, so it may not run it",
        "sidekick": "Sidekick asks you before it runs it",
    }.get(kind, 'confirm it: `dreamer call` asks you (or pass --yes); an API request needs "confirm": true')
    return DreamerError("confirmation_required", f"{target} changes or deletes something and runs only when you confirm; {how}")


def new_invocation_id() -> str:
    return "inv_" + uuid.uuid4().hex


class Invoker:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        pool: WorkerPool,
        tracer: Tracer,
        cache: InstallCache | None = None,
        writer: GroupWriter | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        # The call path's records go through one writer thread (group commit).
        self.writer = writer or GroupWriter(store)
        self.pool = pool
        self.tracer = tracer
        self.cache = cache or InstallCache(store)
        self.disk = DataMeter(settings)
        self.syscalls: dict[str, Handler] = default_table()
        self.llm: Gateway | None = None  # the model gateway, set by Kernel.build; llm.complete uses it
        self.tools: ToolRegistry | None = None  # the tool registry, set by Kernel.build; tools.call uses it
        self.data: Any = None  # the DataService (kernel/data), set by Kernel.build; the data.* syscalls use it
        self.on_queued: Callable[[], None] = lambda: None  # wakes the background runner (set by Kernel)
        self.live: dict[str, _Run] = {}  # running invocations, for following their logs live
        self.kernel: Any = None  # the Kernel, for syscalls that need its other services (events)

    async def invoke(
        self, who: Principal, agent: str, function: str, args: dict[str, Any], caller: Caller
    ) -> Outcome:
        """Run a function and return its value; a background function is queued and
        answers at once with status "queued" (the runner runs it: `run_queued`)."""
        if not isinstance(args, dict):
            raise DreamerError("invalid_argument", "arguments must be a JSON object")
        _check_text(args)
        run = _Run(id=new_invocation_id(), trigger=caller.trigger)
        started = time.monotonic()
        with self.tracer.start_as_current_span(
            f"invoke_agent {agent}",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "dreamer.function": function,
                "dreamer.invocation_id": run.id,
                "dreamer.user": who.user_name,
                "dreamer.caller": caller.agent or "user",
            },
        ) as span:
            try:
                installed = await self._admit(who, run, agent, function, args, caller)
            except DreamerError as exc:
                span.set_status(Status(StatusCode.ERROR, exc.message))
                span.set_attribute("error.type", exc.code)
                raise
            if run.queued:
                span.set_attribute("dreamer.status", "queued")
                self.on_queued()
                return Outcome(value=None, invocation_id=run.id, status="queued")
            return await self._execute(who, run, installed, agent, function, args, caller, started, span)

    async def run_queued(self, queued: QueuedRun) -> str:
        """Run one attempt of a background invocation the runner claimed; return the status
        it ended in (succeeded, failed, or queued again for a retry)."""
        who = Principal(queued.user_id, queued.user_name, queued.timezone)
        run = _Run(
            id=queued.id, attempt=queued.attempt, max_attempts=queued.max_attempts, background=True,
            trigger=queued.trigger,
        )
        caller = Caller("trigger" if queued.trigger else "user", trigger=queued.trigger)
        started = time.monotonic()
        with self.tracer.start_as_current_span(
            f"invoke_agent {queued.agent}",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": queued.agent,
                "dreamer.function": queued.function,
                "dreamer.invocation_id": run.id,
                "dreamer.user": who.user_name,
                "dreamer.caller": queued.caller,
                "dreamer.attempt": queued.attempt,
            },
        ) as span:
            try:
                # Still installed, still has the function: an uninstall while it waited ends it here.
                installed = self._installed(who, queued.agent)
                installed.function(queued.function)
            except DreamerError as exc:
                await self._record_end(run, "failed", None, exc)
                return "failed"
            try:
                await self._execute(who, run, installed, queued.agent, queued.function, queued.args, caller, started, span)
            except DreamerError as exc:
                return "queued" if _retrying(run, exc) else "failed"
            return "succeeded"

    async def _execute(
        self, who: Principal, run: _Run, installed: InstalledAgent, agent: str, function: str,
        args: dict[str, Any], caller: Caller, started: float, span: Any,
    ) -> Outcome:
        self.live[run.id] = run
        try:
            return await self._execute_in_worker(who, run, installed, agent, function, args, caller, started, span)
        finally:
            self.live.pop(run.id, None)

    async def _execute_in_worker(
        self, who: Principal, run: _Run, installed: InstalledAgent, agent: str, function: str,
        args: dict[str, Any], caller: Caller, started: float, span: Any,
    ) -> Outcome:
        limits = self.limits_of(installed)
        # The callee's granted folders; read on every call, so a revocation applies to the next one.
        folders = fs_grants(self.cache.grants(who.user_id, agent))
        # A user's call gets the callee's own timeout (a background attempt its longer
        # one); a nested call keeps what is left of its chain's, whatever the callee allows.
        budget = limits.background_timeout_s if run.background else limits.call_timeout_s
        deadline = caller.deadline or started + budget
        timeout = max(0.01, deadline - time.monotonic())
        inner = Caller("agent", agent, (*caller.chain, agent), run.id, deadline)

        async def syscalls(method: str, params: dict[str, Any]) -> Any:
            return await self._syscall(who, inner, run, method, params)

        try:
            # A user over their data quota starts nothing until they free some space.
            await self.disk.check(who.user_name)
            key = WorkerKey(who.user_name, agent, str(installed.bundle_path), _digest(folders))
            spec = lambda: self._spec(who, installed, limits, folders)  # noqa: E731
            async with self.pool.lease(key, spec, timeout=timeout) as worker, self._watching_disk(who, worker):
                result = await worker.request(
                    "invoke",
                    {
                        "invocation_id": run.id,
                        "function": function,
                        "args": args,
                        "user": {"id": who.user_id, "name": who.user_name, "timezone": who.timezone},
                        "caller": caller.agent,  # None when a person or Sidekick called
                        "attempt": run.attempt,
                        "trigger": {"type": run.trigger.get("type"), "name": run.trigger.get("name")}
                        if run.trigger else None,
                    },
                    timeout=max(0.01, deadline - time.monotonic()),
                    syscalls=syscalls,
                    sink=run.sink,
                    what=f"{agent}.{function}",
                )
            value = result.get("value") if isinstance(result, dict) else None
            _check_text(value, f"the results of {agent}.{function}", "result_invalid")
        except DreamerError as exc:
            span.set_status(Status(StatusCode.ERROR, exc.message))
            span.set_attribute("error.type", exc.code)
            await self._record_end(run, "queued" if _retrying(run, exc) else "failed", None, exc)
            raise DreamerError(exc.code, exc.message, invocation_id=run.id) from None
        except BaseException as exc:  # cancelled request, kernel shutting down
            # Queued, not awaited: this task is being cancelled; the writer commits it.
            if run.background:
                # The runner decides: cancelled by the user, or re-queued by its retry policy.
                self.writer.submit(self._logs_job(run))
            else:
                self.writer.submit(
                    self._end_job(run, "failed", None, DreamerError("internal", f"interrupted: {type(exc).__name__}"))
                )
            raise
        await self._record_end(run, "succeeded", value, None)
        return Outcome(value=value, invocation_id=run.id)

    @contextlib.asynccontextmanager
    async def _watching_disk(self, who: Principal, worker: Any) -> AsyncIterator[None]:
        """Stop the worker once the user's data passes the quota mid-call (one call could
        otherwise write many files, each within the per-file limit), and say why."""
        watch = asyncio.ensure_future(self.disk.watch(who.user_name, worker.kill))
        try:
            yield
        except DreamerError:
            if watch.done() and not watch.cancelled():
                raise watch.result() from None
            raise
        finally:
            watch.cancel()

    # -- checks ------------------------------------------------------------------------

    async def _admit(
        self, who: Principal, run: _Run, agent: str, function: str, args: dict[str, Any], caller: Caller
    ) -> InstalledAgent:
        """Check the call, then audit the decision and record the invocation in one transaction."""
        target = f"{agent}.{function}"
        if caller.kind in ("user", "sidekick", "trigger"):
            installed = self._installed(who, agent)
            spec = installed.function(function)
            if caller.kind == "sidekick" and not spec.get("exported"):
                # Sidekick reaches agents only through what they export, like other agents do.
                raise DreamerError("permission_denied", f"{target} is not exported, so Sidekick cannot call it")
            if spec.get("confirm") and not caller.confirmed:
                raise unconfirmed(target, caller.kind)
            self._queue_if_background(who, run, agent, spec, caller)
            start = self._start_row(who, run, agent, function, args, caller)
            actor = {
                "sidekick": f"sidekick for {who.actor}",
                "trigger": f"trigger:{agent}.{(caller.trigger or {}).get('name', '')} for {who.actor}"[:100],
            }.get(caller.kind, who.actor)

            def admitted(conn: Connection) -> None:
                audit(conn, user_id=who.user_id, actor=actor, action="functions.call", target=target,
                      decision="allow", invocation_id=run.id)
                conn.execute(_INSERT_INVOCATION, start)

            await self.writer.write(admitted)
            return installed

        assert caller.agent is not None
        decision = self.cache.decide(who.user_id, caller.agent, f"agent:{agent}.{function}")
        refusal = self._refusal(who, agent, function, caller, decision)
        actor = f"agent:{caller.agent}"
        if isinstance(refusal, DreamerError):
            reason = refusal.code
            # A refusal for another reason (a cycle, depth, not exported) is still a deny in the log.
            refused = decision if not decision.allowed else Decision(decision.agent, decision.wanted, None)

            def denied(conn: Connection) -> None:
                refused.audit(conn, user_id=who.user_id, actor=actor, action="agents.call", target=target,
                              detail={"reason": reason}, invocation_id=caller.parent_id)

            # Committed before raising: a denial is a decision the log must keep.
            await self.writer.write(denied)
            raise refusal
        installed, spec, holder = refusal
        self._queue_if_background(who, run, agent, spec, caller)
        start = self._start_row(who, run, agent, function, args, caller)

        def allowed_call(conn: Connection) -> None:
            decision.audit(conn, user_id=who.user_id, actor=actor, action="agents.call", target=target,
                           invocation_id=caller.parent_id, detail={"invocation_id": run.id})
            conn.execute(_INSERT_INVOCATION, start)

        await self.writer.write(allowed_call)
        return installed

    def _queue_if_background(self, who: Principal, run: _Run, agent: str, spec: dict[str, Any], caller: Caller) -> None:
        # Triggered runs are always background invocations, whatever the function says.
        run.queued = run.background = bool(spec.get("background")) or caller.kind == "trigger"
        run.max_attempts = 1 + int(spec.get("retries") or 0)
        if run.queued:
            # A leaked webhook URL or a runaway agent must not grow the queue without end,
            # and one user's backlog must not grow the store for everyone.
            with self.store.session() as s:
                rows = s.execute(
                    select(Invocation.agent, func.count())
                    .where(Invocation.status == "queued", Invocation.user_id == who.user_id)
                    .group_by(Invocation.agent)
                ).all()
            mine, waiting = sum(n for _, n in rows), next((n for a, n in rows if a == agent), 0)
            if waiting >= self.settings.max_queued_per_agent:
                raise DreamerError(
                    "conflict", f"{agent} already has {waiting} invocations waiting to run; try again once some have run"
                )
            if mine >= self.settings.quotas.queued:
                raise exceeded(
                    "queued", mine + 1, self.settings.quotas.queued,
                    "cancel some with `dreamer cancel ID` or try again once some have run",
                )

    def _installed(self, who: Principal, agent: str) -> InstalledAgent:
        found = self.cache.agent(who.user_id, agent)
        if found is None:
            raise DreamerError("not_found", f"you have no agent named {agent!r}; `dreamer agents` lists yours")
        return found

    def _refusal(
        self, who: Principal, agent: str, function: str, caller: Caller, decision: Decision
    ) -> DreamerError | tuple[InstalledAgent, dict[str, Any], str]:
        """Why an agent's call must be refused, or what it is allowed to reach and by which grant."""
        target = f"{agent}.{function}"
        if agent in caller.chain:
            return DreamerError("call_cycle", f"call cycle refused: {' → '.join((*caller.chain, agent))}")
        if len(caller.chain) >= self.settings.max_call_depth:
            return DreamerError(
                "depth_exceeded",
                f"call chain deeper than {self.settings.max_call_depth} agents refused at {caller.agent} → {agent}",
            )
        if decision.holder is None:
            return decision.refusal(f"call {target}", grant=f"agent:{agent}")
        holder = decision.holder
        try:
            installed = self._installed(who, agent)
            spec = installed.function(function)
        except DreamerError as exc:
            return exc
        if not spec.get("exported"):
            return DreamerError("permission_denied", f"{target} is not exported, so other agents cannot call it")
        if spec.get("confirm"):
            # No person is asked when an agent calls: only the user's approval of this function
            # for this caller (a grant the user gives; a manifest can only ask for it) stands in.
            approval = f"{decision.wanted}!confirm"
            assert caller.agent is not None
            if not decide(self.cache.grants(who.user_id, caller.agent), caller.agent, approval).allowed:
                return DreamerError(
                    "permission_denied",
                    f"{caller.agent} may not run {target} on its own: {target} changes or deletes something, so it needs "
                    f"your confirmation, and you have not approved it for {caller.agent} "
                    f"(approve it with `dreamer grant {caller.agent} {approval}`)",
                )
        return installed, spec, holder

    # -- syscalls ----------------------------------------------------------------------

    async def _syscall(self, who: Principal, inner: Caller, run: _Run, method: str, params: dict[str, Any]) -> Any:
        with self.tracer.start_as_current_span(
            f"execute_tool {method}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": method,
                "dreamer.invocation_id": run.id,
                "dreamer.agent": inner.agent or "",
            },
        ) as span:
            try:
                handler = self.syscalls.get(method)
                if handler is None:
                    raise DreamerError("not_available", f"syscall {method} is not available in this kernel")
                unattended = run.background or run.trigger is not None
                return await handler(SyscallContext(self, who, inner, run.id, unattended), params)
            except DreamerError as exc:
                span.set_status(Status(StatusCode.ERROR, exc.message))
                span.set_attribute("error.type", exc.code)
                raise

    # -- sandbox ------------------------------------------------------------------------

    def limits_of(self, installed: InstalledAgent) -> Limits:
        """What the agent asked for in agent.yaml, capped at the installation's ceilings."""
        return self.settings.limits.within(installed.manifest.get("limits"))

    def _spec(self, who: Principal, installed: InstalledAgent, limits: Limits, folders: list[str]) -> SandboxSpec:
        """Called only when a worker starts: the granted folders and the bundle's files are checked then."""
        check_bundle(installed.bundle_path, installed.digest, f"{installed.name} {installed.version}")
        try:
            mounts = []
            if folders:
                # The user's bounds are read again here: an allowed root may be gone since the grant.
                with self.store.session() as s:
                    bounds = bounds_for(self.settings, s, who.user_id)
                mounts = mounts_for(folders, bounds)
        except DreamerError as exc:
            scope = shlex.quote(str(exc.details.get("scope", "SCOPE")))
            raise DreamerError(
                exc.code,
                f"{installed.name} cannot start: {exc.message} (`dreamer revoke {installed.name} {scope}` takes the grant back)",
            ) from None
        data = self.settings.agent_data_dir(who.user_name, installed.name)
        data.mkdir(parents=True, exist_ok=True)
        return SandboxSpec(
            bundle_dir=installed.bundle_path,
            data_dir=data,
            env={"DREAMER_AGENT": installed.name, "DREAMER_ENTRY": installed.entry or ""},
            limits=limits,
            mounts=mounts,
        )

    # -- bookkeeping ----------------------------------------------------------------------

    def _start_row(
        self, who: Principal, run: _Run, agent: str, function: str, args: dict[str, Any], caller: Caller
    ) -> dict[str, Any]:
        ctx = trace.get_current_span().get_span_context()
        now = datetime.now(timezone.utc)
        return dict(
            id=run.id, user_id=who.user_id, agent=agent, function=function, args=args,
            caller=(caller.agent or caller.kind)[:64], parent_id=caller.parent_id,
            status="queued" if run.queued else "running",
            # A queued invocation has had no attempt yet; the runner counts each one it starts.
            attempt=0 if run.queued else 1, created_at=now, started_at=None if run.queued else now,
            trace_id=format(ctx.trace_id, "032x") if ctx.is_valid else None,
            background=run.background, max_attempts=run.max_attempts, run_after=None, trigger=run.trigger,
        )

    def _end_job(self, run: _Run, status: str, value: Any, error: DreamerError | None) -> Callable[[Connection], None]:
        now = datetime.now(timezone.utc)
        values: dict[str, Any] = {
            "run_id": run.id, "status": status, "result": value,
            "finished_at": None if status == "queued" else now,
            "error_code": error.code if error else None, "error_message": error.message if error else None,
            # "queued" after a failed attempt: the next one waits for its retry delay.
            "run_after": now + retry_delay(run.attempt, self.settings.retry_delay_s) if status == "queued" else None,
        }
        write_logs = self._logs_job(run)

        def finish(conn: Connection) -> None:
            conn.execute(_FINISH_INVOCATION, values)
            write_logs(conn)

        return finish

    @staticmethod
    def _logs_job(run: _Run) -> Callable[[Connection], None]:
        """Writes the lines collected so far; the attempt's next lines start a new batch."""
        logs = [
            {"invocation_id": run.id, "at": at, "stream": stream, "level": level, "message": message}
            for at, stream, level, message in run.logs
        ]
        run.logs.clear()

        def write(conn: Connection) -> None:
            if logs:
                conn.execute(_INSERT_LOG, logs)

        return write

    async def _record_end(self, run: _Run, status: str, value: Any, error: DreamerError | None) -> None:
        await self.writer.write(self._end_job(run, status, value, error))


def _retrying(run: _Run, error: DreamerError | None = None) -> bool:
    """Whether a failed attempt of a background invocation goes back to the queue."""
    if not run.background or run.attempt >= run.max_attempts:
        return False
    return error is None or error.code in RETRIABLE


def _digest(folders: list[str]) -> str:
    """Names a set of granted folders in a worker key ("" for the many agents without)."""
    return hashlib.sha256("\n".join(folders).encode()).hexdigest()[:16] if folders else ""


def _check_text(value: Any, what: str = "arguments", code: str = "invalid_argument", depth: int = 0) -> None:
    """JSON may escape lone surrogates (\\ud800) that no UTF-8 store or pipe can carry."""
    if depth > 64:
        raise DreamerError(code, f"{what} are nested more than 64 levels deep")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise DreamerError(code, f"{what} contain text that is not valid Unicode") from None
    elif isinstance(value, float) and not math.isfinite(value):
        raise DreamerError(code, f"{what} contain NaN or Infinity, which JSON does not allow")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, what, code, depth + 1)
            _check_text(item, what, code, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_text(item, what, code, depth + 1)


def interrupted_on_restart(store: Store) -> int:
    """Mark direct invocations left running by a kernel that died; returns how many.
    (Background ones are the runner's: see dreamer.kernel.runs.queue.recover.)"""
    with store.session() as s:
        result = s.execute(
            update(Invocation)
            .where(Invocation.status.in_(("queued", "running")), Invocation.background.is_(False))
            .values(
                status="failed",
                error_code="interrupted",
                error_message="the kernel stopped while this invocation ran",
                finished_at=datetime.now(timezone.utc),
            )
        )
        return result.rowcount or 0
