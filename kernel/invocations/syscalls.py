"""The syscall table: what a running agent may ask the kernel for.

Each syscall is a handler `async (SyscallContext, params) -> result`. The context
knows who the agent runs for and where it sits in the call chain, and offers
`require(scope)`, the one way a handler checks a grant: it reads the grants fresh
(so a revocation takes effect on the next syscall) and audits the decision either way.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.manifest import IDENT_RE, NAME_RE
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.data.syscall import TABLE as DATA_SYSCALLS
from dreamer.kernel.llm.syscall import llm_complete
from dreamer.kernel.memory.syscall import memory_read, memory_write
from dreamer.kernel.net.fetch import net_fetch
from dreamer.kernel.invocations.rewards import rewards_emit
from dreamer.kernel.permissions.gate import decide
from dreamer.contracts.scopes import parse_scope
from dreamer.kernel.posts.feed import posts_create
from dreamer.kernel.posts.notices import missing_grant_notice
from dreamer.kernel.tools.syscall import tools_call, tools_list

if TYPE_CHECKING:
    from dreamer.kernel.invocations.invoker import Invoker
    from dreamer.kernel.invocations.principal import Caller, Principal


@dataclass(frozen=True)
class SyscallContext:
    invoker: "Invoker"
    who: "Principal"
    caller: "Caller"  # the running agent as a caller: its name, the chain, its invocation, the deadline
    invocation_id: str
    unattended: bool = False  # a background or trigger run: nobody sees its errors as they happen

    @property
    def agent(self) -> str:
        assert self.caller.agent is not None
        return self.caller.agent

    def require(self, scope: str, *, action: str, target: str, detail: dict[str, Any] | None = None) -> str:
        """The grant that allows `scope` for the running agent; audits and raises
        permission_denied when there is none."""
        decision = self.invoker.cache.decide(self.who.user_id, self.agent, scope)
        who, invocation_id = self.who, self.invocation_id
        # Synchronous on purpose, like _audit's: the entry is committed before the handler goes on.
        self.invoker.writer.write_now(lambda conn: decision.audit(
            conn, user_id=who.user_id, actor=f"agent:{decision.agent}", action=action, target=target,
            detail=detail or {}, invocation_id=invocation_id,
        ))
        # A refusal in a run nobody watches would reach only its log: tell the user, with the grant
        # offered, when a grant could allow it (an undeclared scope is for the builder to add).
        if not decision.allowed and decision.grantable and self.unattended:
            if missing_grant_notice(self.invoker.store, user_id=who.user_id, agent=self.agent, scope=scope,
                                    action=action, target=target, invocation_id=invocation_id):
                self.invoker.feed.posted(who.user_id)
        return decision.require(f"{action.split('.')[-1]} {target}")

    def record(
        self, *, action: str, target: str, decision: Literal["allow", "deny"] = "allow", detail: dict[str, Any] | None = None,
    ) -> None:
        """An audit entry for something a handler did (an outcome, not a permission check)."""
        self._audit(action=action, target=target, scope=None, decision=decision, detail=detail)

    def _audit(
        self, *, action: str, target: str, scope: str | None, decision: Literal["allow", "deny"], detail: dict[str, Any] | None
    ) -> None:
        # Synchronous on purpose: the entry is committed before the handler goes on.
        # It goes through the writer thread, so it never waits on SQLite's busy handler.
        who, agent, invocation_id = self.who, self.agent, self.invocation_id
        self.invoker.writer.write_now(
            lambda conn: audit(
                conn, user_id=who.user_id, actor=f"agent:{agent}", action=action, target=target, scope=scope,
                decision=decision, detail=detail or {}, invocation_id=invocation_id,
            )
        )


Handler = Callable[[SyscallContext, dict[str, Any]], Awaitable[Any]]


async def agents_call(ctx: SyscallContext, params: dict[str, Any]) -> Any:
    agent, function, args = params.get("agent"), params.get("function"), params.get("args", {})
    if not isinstance(agent, str) or not isinstance(function, str):
        raise DreamerError("invalid_argument", "agents.call needs 'agent' and 'function' strings")
    # Checked before anything parses them into a scope: these are the agent's words.
    if not re.fullmatch(NAME_RE, agent) or not re.fullmatch(IDENT_RE, function):
        raise DreamerError(
            "invalid_argument", f"{ctx.agent} may not call {agent[:80]!r}.{function[:80]!r}: that is not an agent function name"
        )
    outcome = await ctx.invoker.invoke(ctx.who, agent, function, args or {}, ctx.caller)
    return {"value": outcome.value, "invocation_id": outcome.invocation_id}


async def grants_check(ctx: SyscallContext, params: dict[str, Any]) -> dict[str, Any]:
    """Whether the running agent holds a scope, so it can skip an optional step instead of
    trying it and being refused. Not audited: it reads the agent's own grants and
    reaches nothing; what it then does with a scope is checked and audited as always."""
    scope = params.get("scope")
    if not isinstance(scope, str) or not scope or len(scope) > 500:
        raise DreamerError("invalid_argument", "grants.check needs 'scope', a scope such as memory:read")
    try:
        parse_scope(scope)
    except ValueError as exc:
        raise DreamerError("invalid_argument", f"{scope[:80]!r} is not a scope: {exc}") from None
    decision = decide(ctx.invoker.cache.grants(ctx.who.user_id, ctx.agent), ctx.agent, scope)
    return {"granted": decision.allowed, "by": decision.holder}


def default_table() -> dict[str, Handler]:
    """The syscalls served from this module and kernel/data. Modules that add one register it here;
    those whose modules import the invoker (events.emit, tasks.create) join in invocations/table.py."""
    return {
        "agents.call": agents_call,
        "grants.check": grants_check,
        "rewards.emit": rewards_emit,
        "net.fetch": net_fetch,
        "llm.complete": llm_complete,
        "memory.read": memory_read,
        "memory.write": memory_write,
        "posts.create": posts_create,
        "tools.call": tools_call,
        "tools.list": tools_list,
        **DATA_SYSCALLS,
    }

