"""Whether a call may start: the agent is installed and has the function, the caller may
reach it (grant, export, confirmation, no cycle, depth), the queue has room; then the
decision is audited and the invocation row inserted in one transaction.

Nothing reaches a worker before `Admission.admit` has said yes. A refusal, and the
admission of a background run, is committed before `admit` returns; the admission of a
call that runs now is queued in the writer and runs alongside the call (decision 0051):
`Run.durable` holds its answer and its syscalls until it has committed.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, func, select

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.functions import FunctionSpec
from dreamer.kernel.audit.log import append_entry as audit
from dreamer.kernel.config import Settings
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.install.registry import InstalledAgent
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.invocations.records import Admitted, Run, start_row
from dreamer.kernel.permissions.gate import Decision
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Invocation
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.users.quotas import exceeded

# How long an allowed call's admission may wait to share the transaction of the call's end
# (decision 0053). It bounds the crash window in which the call may have changed its own
# data folder with no record of it; a syscall ends the wait at once.
ADMISSION_DEFERRED_AT_MOST_S = 0.02


def unconfirmed(target: str, kind: str) -> DreamerError:
    """The one refusal of a confirm=True function called without the user's confirmation."""
    how = {
        "trigger": "a trigger cannot ask you, so it may not run it",
        "sidekick": "Sidekick asks you before it runs it",
    }.get(kind, 'confirm it: `dreamer call` asks you (or pass --yes); an API request needs "confirm": true')
    return DreamerError("confirmation_required", f"{target} changes or deletes something and runs only when you confirm; {how}")


class Admission:
    def __init__(self, settings: Settings, store: Store, cache: InstallCache, writer: GroupWriter) -> None:
        self.settings = settings
        self.store = store
        self.cache = cache
        self.writer = writer
        self.deferred_at_most_s = ADMISSION_DEFERRED_AT_MOST_S

    async def admit(
        self, who: Principal, run: Run, agent: str, function: str, args: dict[str, Any], caller: Caller,
        node: str | None, parent: Run | None = None,
    ) -> InstalledAgent:
        """Check the call, then audit the decision and record the invocation in one transaction.
        `parent`: the calling agent's run, whose admission may still wait to be written (0057)."""
        target = f"{agent}.{function}"
        if caller.kind in ("user", "sidekick", "trigger"):
            installed = self.installed(who, agent)
            spec = installed.function(function)
            if caller.kind == "sidekick" and not spec.exported:
                # Sidekick reaches agents only through what they export, like other agents do.
                raise DreamerError("permission_denied", f"{target} is not exported, so Sidekick cannot call it")
            if spec.confirm and not caller.confirmed:
                raise unconfirmed(target, caller.kind)
            self._queue_if_background(who, run, agent, spec, caller)
            start = start_row(who, run, agent, function, args, caller, node)
            actor = {
                "sidekick": f"sidekick for {who.actor}",
                "trigger": f"trigger:{agent}.{(caller.trigger or {}).get('name', '')} for {who.actor}"[:100],
            }.get(caller.kind, who.actor)

            def admitted(conn: Connection) -> None:
                # After the row (Admitted): its write takes SQLite's write lock, which the audit chain needs.
                audit(conn, user_id=who.user_id, actor=actor, action="functions.call", target=target,
                      decision="allow", invocation_id=run.id, write_locked=True)

            await self._record(run, Admitted(start, admitted))
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

            # The caller's admission first: the denial's entry names the caller's invocation.
            if parent is not None:
                await parent.durable()
            # Committed before raising: a denial is a decision the log must keep.
            await self.writer.write(denied)
            raise refusal
        installed, spec, holder = refusal
        self._queue_if_background(who, run, agent, spec, caller)
        start = start_row(who, run, agent, function, args, caller, node)

        def allowed_call(conn: Connection) -> None:
            decision.audit(conn, user_id=who.user_id, actor=actor, action="agents.call", target=target,
                           invocation_id=caller.parent_id, detail={"invocation_id": run.id}, write_locked=True)

        if run.queued or parent is None:
            if parent is not None:
                await parent.durable()  # a background run's admission is written now, after its caller's
            await self._record(run, Admitted(start, allowed_call))
            return installed
        # A call that runs now carries its caller's admission if that still waits (decision 0057):
        # one transaction fewer, and the caller's bound still holds for both.
        handed = parent.hand_over_admission()
        if handed is None:
            await self._record(run, Admitted(start, allowed_call))
            return installed
        before, admit_by, carried = handed
        run.carried = carried
        within_s = max(0.0, min(self.deferred_at_most_s, admit_by - asyncio.get_running_loop().time()))
        run.defer_admission(self.writer, Admitted(start, allowed_call, before), within_s)
        return installed

    async def _record(self, run: Run, job: Callable[[Connection], None]) -> None:
        if run.queued:
            # The runner picks a background run from the store: it must be there first,
            # and "queued" is an answer, so it is durable before it is said.
            await self.writer.write(job)
        else:
            # Written with the call's end, in one transaction, unless a syscall or the
            # bound comes first (decision 0053); the answer waits for it either way.
            run.defer_admission(self.writer, job, self.deferred_at_most_s)

    def _queue_if_background(self, who: Principal, run: Run, agent: str, spec: FunctionSpec, caller: Caller) -> None:
        # Triggered runs are always background invocations, whatever the function says.
        run.queued = run.background = spec.background or caller.kind == "trigger"
        run.max_attempts = 1 + spec.retries
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

    def installed(self, who: Principal, agent: str) -> InstalledAgent:
        found = self.cache.agent(who.user_id, agent)
        if found is None:
            raise DreamerError("not_found", f"you have no agent named {agent!r}; `dreamer agents` lists yours")
        return found

    def _refusal(
        self, who: Principal, agent: str, function: str, caller: Caller, decision: Decision
    ) -> DreamerError | tuple[InstalledAgent, FunctionSpec, str]:
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
            installed = self.installed(who, agent)
            spec = installed.function(function)
        except DreamerError as exc:
            return exc
        if not spec.exported:
            return DreamerError("permission_denied", f"{target} is not exported, so other agents cannot call it")
        if spec.confirm:
            # No person is asked when an agent calls: only the user's approval of this function
            # for this caller (a grant the user gives; a manifest can only ask for it) stands in.
            assert caller.agent is not None
            approval = self.cache.decide(who.user_id, caller.agent, f"{decision.wanted}!confirm")
            if not approval.allowed:
                return approval.refusal(f"run {target} on its own")
        return installed, spec, holder


def check_text(value: Any, what: str = "arguments", code: str = "invalid_argument", depth: int = 0) -> None:
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
            check_text(key, what, code, depth + 1)
            check_text(item, what, code, depth + 1)
    elif isinstance(value, list):
        for item in value:
            check_text(item, what, code, depth + 1)
