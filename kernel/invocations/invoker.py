"""Running a function: admission, the worker that runs it, and the syscall path.

Every call — from a user through the API or from an agent through `ctx.call` —
comes through `Invoker.invoke`. The checks (admission.py) happen here, in the kernel,
before any worker sees the request; each decision is written to the audit log, and the
invocation's rows are written by records.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import shlex
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode, Tracer
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.config import Limits, Settings
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.install.integrity import check_bundle
from dreamer.kernel.install.registry import InstalledAgent
from dreamer.kernel.invocations.admission import Admission, check_text
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.invocations.records import Outcome, QueuedRun, Run, end_job, ended, logs_job, new_invocation_id
from dreamer.kernel.invocations.syscalls import Handler, SyscallContext, default_table
from dreamer.kernel.permissions.folders import bounds_for
from dreamer.kernel.posts.signal import FeedSignal
from dreamer.kernel.runs.retry import RETRIABLE
from dreamer.kernel.sandbox.base import SandboxSpec
from dreamer.kernel.sandbox.mounts import fs_grants, mounts_for
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.tracing.spans import ending
from dreamer.kernel.users.quotas import DataMeter
from dreamer.kernel.workers.pool import WorkerKey, WorkerPool

if TYPE_CHECKING:
    from dreamer.kernel.llm.gateway import Gateway
    from dreamer.kernel.tools.registry import ToolRegistry


# Syscalls served before the call's admission is on record (0057): grants.check reads the agent's
# own grants, writes nothing and reaches nothing; agents.call's callee writes the admission first
# in its own transaction, and its answer waits for that commit.
ADMISSION_NOT_FIRST = frozenset({"agents.call", "grants.check"})
# Syscalls that write no data folder but the running agent's own: the disk meter walks only its
# folder after the call (a called agent's folder is forgotten by that call's own end).
OWN_DATA_ONLY = frozenset({"agents.call", "grants.check"})


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
        self.live: dict[str, Run] = {}  # running invocations, for following their logs live
        self.node: str | None = settings.node  # written on each row it runs (kernel/cluster/)
        self.kernel: Any = None  # the Kernel, for syscalls that need its other services (events)
        self.feed = FeedSignal()  # wakes the user's open feed streams when a post is written
        self.admission = Admission(settings, store, self.cache, self.writer)

    async def invoke(
        self, who: Principal, agent: str, function: str, args: dict[str, Any], caller: Caller
    ) -> Outcome:
        """Run a function and return its value; a background function is queued and
        answers at once with status "queued" (the runner runs it: `run_queued`)."""
        if not isinstance(args, dict):
            raise DreamerError("invalid_argument", "arguments must be a JSON object")
        check_text(args)
        run = Run(id=new_invocation_id(), trigger=caller.trigger)
        started = time.monotonic()
        # A call from an agent is part of its caller's chain, which is counted already and
        # waits for it: at load 1 its commits stay on the loop like the chain's others (0052).
        serving = contextlib.nullcontext() if caller.kind == "agent" else self.writer.serving()
        # The call's span is made current only around its syscalls, where its children are
        # made (`_execute_in_worker`); `ending` ends it as `use_span` would (kernel/tracing/spans.py).
        with serving, ending(self.tracer.start_span(
            f"invoke_agent {agent}",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "dreamer.function": function,
                "dreamer.invocation_id": run.id,
                "dreamer.user": who.user_name,
                "dreamer.caller": caller.agent or "user",
            },
        )) as span:
            context = span.get_span_context()
            run.trace_id = format(context.trace_id, "032x") if context.is_valid else None
            # The calling agent's run: its admission may still wait, and then rides in this one's (0057).
            parent = self.live.get(caller.parent_id) if caller.kind == "agent" and caller.parent_id else None
            try:
                installed = await self.admission.admit(who, run, agent, function, args, caller, self.node, parent)
            except DreamerError as exc:
                span.set_status(Status(StatusCode.ERROR, exc.message))
                span.set_attribute("error.type", exc.code)
                raise
            if run.queued:
                span.set_attribute("dreamer.status", "queued")
                self.on_queued()
                return Outcome(value=None, invocation_id=run.id, status="queued")
            try:
                try:
                    outcome = await self._execute(who, run, installed, agent, function, args, caller, started, span)
                except DreamerError:
                    # A failure is an answer too: said only once the admission is on record (0051).
                    await run.durable()
                    raise
                await run.durable()
                return outcome
            finally:
                # Settled by `durable` once on record; a call that ends otherwise (its admission
                # could not be written, or it was cancelled) must not leave its caller waiting.
                run.settle_carried(DreamerError("internal", f"the admission of {agent}.{function}'s caller was not written"))

    async def run_queued(self, queued: QueuedRun) -> str:
        """Run one attempt of a background invocation the runner claimed; return the status
        it ended in (succeeded, failed, or queued again for a retry)."""
        who = Principal(queued.user_id, queued.user_name, queued.timezone)
        run = Run(
            id=queued.id, attempt=queued.attempt, max_attempts=queued.max_attempts, background=True,
            trigger=queued.trigger,
        )
        caller = Caller("trigger" if queued.trigger else "user", trigger=queued.trigger)
        started = time.monotonic()
        with ending(self.tracer.start_span(
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
        )) as span:
            try:
                # Still installed, still has the function: an uninstall while it waited ends it here.
                installed = self.admission.installed(who, queued.agent)
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
        self, who: Principal, run: Run, installed: InstalledAgent, agent: str, function: str,
        args: dict[str, Any], caller: Caller, started: float, span: Any,
    ) -> Outcome:
        self.live[run.id] = run
        try:
            return await self._execute_in_worker(who, run, installed, agent, function, args, caller, started, span)
        finally:
            self.live.pop(run.id, None)

    async def _execute_in_worker(
        self, who: Principal, run: Run, installed: InstalledAgent, agent: str, function: str,
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
            # Nothing the call asks the kernel for happens before its admission is on record (0051),
            # except a pure read of its own grants; a nested call carries it instead (0057).
            if method not in ADMISSION_NOT_FIRST:
                await run.durable()
            if method not in OWN_DATA_ONLY:
                # A tool server (or any other service) may write its own data folder for this
                # call: the disk meter walks all of the user's folders after it, not only the agent's.
                run.beyond_own_data = True
            # The call's span is the parent of what the syscall makes (its span, a nested call's,
            # a model request's); what the syscall raises is the syscall span's, not the call's.
            with trace.use_span(span, record_exception=False, set_status_on_exception=False):
                if method != "agents.call":
                    return await self._syscall(who, inner, run, method, params)
                # The answer, a failure too, is said only once this call's admission is on record:
                # carried by the callee's first transaction, or written alone if it was not.
                try:
                    answer = await self._syscall(who, inner, run, method, params)
                except Exception:
                    await run.durable()
                    raise
                await run.durable()
                return answer

        try:
            # A user over their data quota starts nothing until they free some space.
            await self.disk.check(who.user_name)
            key = WorkerKey(who.user_name, agent, str(installed.bundle_path), _digest(folders))
            # Built only if the pool has to start a worker.
            spec = functools.partial(self._spec, who, installed, limits, folders)
            async with self.pool.lease(key, spec, timeout=timeout) as worker, self._watching_disk(who, worker, run, agent):
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
            check_text(value, f"the results of {agent}.{function}", "result_invalid")
        except DreamerError as exc:
            span.set_status(Status(StatusCode.ERROR, exc.message))
            span.set_attribute("error.type", exc.code)
            await self._record_end(run, "queued" if _retrying(run, exc) else "failed", None, exc)
            raise DreamerError(exc.code, exc.message, invocation_id=run.id) from None
        except BaseException as exc:  # cancelled request, kernel shutting down
            # Queued, not awaited: this task is being cancelled; the writer commits it.
            if run.background:
                # The runner decides: cancelled by the user, or re-queued by its retry policy.
                self.writer.submit(logs_job(run))
            else:
                interrupted = DreamerError("internal", f"interrupted: {type(exc).__name__}")
                admission = run.take_admission()
                self.writer.submit(
                    end_job(run, "failed", None, interrupted, self.settings.retry_delay_s) if admission is None
                    else ended(admission, run, "failed", None, interrupted, self.settings.retry_delay_s)
                )
            raise
        await self._record_end(run, "succeeded", value, None)
        return Outcome(value=value, invocation_id=run.id)

    @contextlib.asynccontextmanager
    async def _watching_disk(self, who: Principal, worker: Any, run: Run, agent: str) -> AsyncIterator[None]:
        """Stop the worker once the user's data passes the quota mid-call (one call could
        otherwise write many files, each within the per-file limit), and say why."""
        # Most calls end within the meter's moment: the watch starts only once one outlasts
        # it (a timer costs a fraction of a task that is created and cancelled on every call).
        loop = asyncio.get_running_loop()
        watch: asyncio.Task[DreamerError] | None = None

        def start_watch() -> None:
            nonlocal watch
            watch = loop.create_task(self.disk.watch(who.user_name, worker.kill, agent=agent, wait_first=False))

        timer = loop.call_later(self.disk.fresh_s, start_watch)
        try:
            yield
        except DreamerError:
            if watch is not None and watch.done() and not watch.cancelled():
                raise watch.result() from None
            raise
        finally:
            timer.cancel()
            if watch is not None:
                watch.cancel()
            # A measurement taken before the call would let the next call start although
            # this one filled the quota (a burst of small files ends before the meter looks).
            # The agent's worker writes its own data folder; an agent it called forgets its own.
            self.disk.forget(who.user_name, None if run.beyond_own_data else agent)

    # -- syscalls ----------------------------------------------------------------------

    async def _syscall(self, who: Principal, inner: Caller, run: Run, method: str, params: dict[str, Any]) -> Any:
        # What start_as_current_span does, one generator fewer: the handler's spans are its children.
        with trace.use_span(self.tracer.start_span(
            f"execute_tool {method}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": method,
                "dreamer.invocation_id": run.id,
                "dreamer.agent": inner.agent or "",
            },
        ), end_on_exit=True) as span:
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
        return self.settings.limits.within(installed.manifest.asked_limits)

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

    async def _record_end(self, run: Run, status: str, value: Any, error: DreamerError | None) -> None:
        admission = run.take_admission()
        if admission is None:
            await self.writer.write(end_job(run, status, value, error, self.settings.retry_delay_s))
            return
        # One transaction for the admission and the end (decision 0053), the row written once
        # as it ends. Queued, not written by `write`: it records a call that ran, so it
        # is written even if this request is cancelled while it waits; the answer waits for
        # it through `durable`.
        run.admitted = self.writer.queue(ended(admission, run, status, value, error, self.settings.retry_delay_s))
        try:
            await run.durable()
        except Exception:
            # The end failed for a reason of its own and took the admission with it: the
            # admission is a decision the log keeps, so it is written alone before the failure is said.
            run.admitted = self.writer.queue(admission)
            await run.durable()
            raise


def _retrying(run: Run, error: DreamerError | None = None) -> bool:
    """Whether a failed attempt of a background invocation goes back to the queue."""
    if not run.background or run.attempt >= run.max_attempts:
        return False
    return error is None or error.code in RETRIABLE


def _digest(folders: list[str]) -> str:
    """Names a set of granted folders in a worker key ("" for the many agents without)."""
    return hashlib.sha256("\n".join(folders).encode()).hexdigest()[:16] if folders else ""
