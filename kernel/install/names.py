"""One namespace per user for agents and tool servers.

`/mcp`, Sidekick and scopes name both the same way (`files.read_file` is a tool of the
`files` server or a function of a `files` agent), so an agent named like a tool server
would answer in its place. An install that would give one name to both is refused, in
both directions; the built-in tool servers' names are never an agent's. The one
exception is a pair shipped together with dreamer itself (the starter `calendar` agent
and the `calendar` tool it fronts): no user uploaded either.
"""

from __future__ import annotations

from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import Installation, ToolInstallation


def check_name_free(
    session: Session, user_id: int, name: str, kind: Literal["agent", "tool"], *,
    builtin_tools: frozenset[str], shipped: bool,
) -> None:
    """Refuse, in one sentence, an install that would give `name` to an agent and a tool server."""
    if shipped:
        return
    if kind == "agent":
        if name in builtin_tools:
            raise DreamerError(
                "conflict",
                f"{name} is the name of a built-in tool server, and agents and tool servers share one namespace; "
                "choose another name in agent.yaml",
            )
        taken = session.scalar(select(ToolInstallation.id).where(
            ToolInstallation.user_id == user_id, ToolInstallation.server == name))
        if taken is not None:
            raise DreamerError(
                "conflict",
                f"you already have a tool server named {name}, and agents and tool servers share one namespace; "
                f"choose another name in agent.yaml (or `dreamer uninstall {name}` first)",
            )
        return
    taken = session.scalar(select(Installation.id).where(Installation.user_id == user_id, Installation.agent == name))
    if taken is not None:
        raise DreamerError(
            "conflict",
            f"you already have an agent named {name}, and agents and tool servers share one namespace; "
            f"choose another name in agent.yaml (or `dreamer uninstall {name}` first)",
        )
