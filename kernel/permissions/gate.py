"""The permission gate: the one place a grant is decided, audited and refused.

Every check of an agent's grants in the kernel goes through `decide` (the syscalls'
`ctx.require`, agents.call, tools.call, tools.list, tasks.create, triggers firing,
grants.check). A `Decision` then writes the one audit entry of that check (`audit`,
inside the caller's own transaction: agents.call commits it with the invocation's
first row, tools.call with the call's outcome) and makes the one refusal sentence
(`refusal`), which always says how to get what was missing: `dreamer grant` when the
agent's manifest asks for the scope and the user has not granted it, or the line to add
under `permissions:` in agent.yaml when the manifest does not ask for it at all (a grant
the manifest does not ask for is refused, so that hint would only lead to a second error).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from dreamer.kernel.audit.log import append, append_entry
from dreamer.contracts.errors import DreamerError
from dreamer.contracts.scopes import ScopeError, parse_scope


@dataclass(frozen=True)
class Decision:
    """Whether `agent` may do what `wanted` names, and by which of its grants."""

    agent: str
    wanted: str
    holder: str | None  # the granted scope that covers `wanted`; None: refused
    # What the agent's manifest asks for (required and optional); None: not known here.
    declared: frozenset[str] | None = None

    @property
    def allowed(self) -> bool:
        return self.holder is not None

    @property
    def verdict(self) -> Literal["allow", "deny"]:
        return "allow" if self.holder is not None else "deny"

    @property
    def grantable(self) -> bool:
        """Whether the user could allow this with a grant: the manifest asks for `wanted` (or is
        not known here). An undeclared scope is the builder's to add, not the user's to grant;
        an approval (`agent:X.f!confirm`) is the user's to give wherever the manifest asks to call X.f."""
        if self.declared is None or covering(self.declared, self.wanted) is not None:
            return True
        wanted = parse_scope(self.wanted)
        return wanted.confirm and covering(self.declared, wanted.plain.text) is not None

    def refusal(self, doing: str, grant: str | None = None) -> DreamerError:
        """The refusal: `{agent} may not {doing}: … (grant it with `dreamer grant …`)`, or,
        when the manifest does not ask for `wanted`, `… (add `SCOPE` under `permissions:` …)`;
        for an approval of a confirm=True function, `… needs your confirmation … (approve it with …)`.

        `grant` is the scope the hint suggests when a wider one is the usual grant
        (agents.call suggests `agent:NAME` for a refused `agent:NAME.function`). The
        manifest hint names `wanted` itself: the narrowest line that makes the call work."""
        wanted = parse_scope(self.wanted)
        if wanted.confirm and self.grantable:
            # Running a confirm=True function unasked: only the user's approval for this caller stands in.
            call = f"{wanted.target}.{wanted.member}"
            return DreamerError(
                "permission_denied",
                f"{self.agent} may not {doing}: {call} changes or deletes something, so it needs your "
                f"confirmation, and you have not approved it for {self.agent} "
                f"(approve it with `dreamer grant {self.agent} {grant or self.wanted}`)",
            )
        if not self.grantable:
            return DreamerError(
                "permission_denied",
                f"{self.agent} may not {doing}: its agent.yaml does not ask for {self.wanted} "
                f"(add `{self.wanted}` under `permissions:` in agent.yaml, then reinstall the agent)",
            )
        return DreamerError(
            "permission_denied",
            f"{self.agent} may not {doing}: the user has not granted {self.wanted} "
            f"(grant it with `dreamer grant {self.agent} {grant or self.wanted}`)",
        )

    def require(self, doing: str, grant: str | None = None) -> str:
        """The covering grant, or the refusal raised."""
        if self.holder is None:
            raise self.refusal(doing, grant)
        return self.holder

    def audit(
        self,
        conn: Session | Connection,
        *,
        user_id: int | None,
        actor: str,
        action: str,
        target: str,
        decision: Literal["allow", "deny"] | None = None,
        detail: dict[str, Any] | None = None,
        invocation_id: str | None = None,
        write_locked: bool = False,
    ) -> None:
        """The decision's audit entry, in the caller's transaction. Its scope is the grant
        that allowed it, or the scope that was missing. `decision` overrides the verdict
        only where the call was allowed but its outcome is what the log must show
        (tools.call refused by a disabled tool). `write_locked`: see audit.log.append_entry."""
        fields: dict[str, Any] = dict(
            user_id=user_id, actor=actor, action=action, target=target, scope=self.holder or self.wanted,
            decision=decision or self.verdict, detail=detail, invocation_id=invocation_id,
        )
        if isinstance(conn, Session):
            append(conn, **fields)
        else:
            append_entry(conn, write_locked=write_locked, **fields)


def covering(granted: Iterable[str], wanted: str) -> str | None:
    """The granted scope that covers `wanted`, or None; a malformed grant covers nothing.

    Raises ScopeError (a ValueError) when `wanted` itself is not a scope."""
    want = parse_scope(wanted)
    for text in granted:
        try:
            scope = parse_scope(text)
        except ScopeError:
            continue
        if scope.covers(want):
            return text
    return None


def decide(granted: Iterable[str], agent: str, wanted: str, declared: Iterable[str] | None = None) -> Decision:
    """The gate: what `agent`, holding `granted`, may do about `wanted`. `declared`, the
    scopes its manifest asks for, only chooses which hint a refusal gives."""
    return Decision(agent, wanted, covering(granted, wanted), None if declared is None else frozenset(declared))
