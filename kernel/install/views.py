"""The user's installed agents as the API and the pages show them: each with its functions,
its grants and where it came from."""

from __future__ import annotations

from typing import Any

from dreamer.kernel.install.registry import InstalledAgent, get_installed, grants_of, list_installed
from dreamer.kernel.store.db import Store


def agent_view(a: InstalledAgent, grants: list[str]) -> dict[str, Any]:
    """The shape `dreamer agents --json` promises (design.md section 8)."""
    return {
        "name": a.name,
        "version": a.version,
        "kind": a.kind,
        "title": a.title,
        "description": a.description,
        "publisher": a.publisher,
        # Where it came from: {"gallery", "fingerprint"} when a gallery's signature was verified.
        "verified_publisher": {"gallery": a.source, "fingerprint": a.publisher_fingerprint} if a.source else None,
        "functions": [
            {
                "name": f.name,
                "description": f.description,
                "exported": f.exported,
                "background": f.background,
                "confirm": f.confirm,
                "parameters": f.parameters,
                "examples": list(f.examples),
                "reply": list(f.reply),  # how its result reads (dreamer.sdk.replies)
            }
            for f in a.functions
        ],
        "grants": grants,
        "permissions": {"required": a.required, "optional": a.optional},
        "installed_at": a.installed_at.isoformat(),
    }


def installed_agents(store: Store, user_id: int) -> list[dict[str, Any]]:
    """Every agent the user installed, with its grants."""
    with store.session() as s:
        grants: dict[str, list[str]] = {}
        for g in grants_of(s, user_id):
            grants.setdefault(g.agent, []).append(g.scope)
        return [agent_view(a, grants.get(a.name, [])) for a in list_installed(s, user_id)]


def installed_agent(store: Store, user_id: int, agent: str) -> dict[str, Any]:
    """One of the user's agents with its grants; not found when they have none of that name."""
    with store.session() as s:
        return agent_view(get_installed(s, user_id, agent), [g.scope for g in grants_of(s, user_id, agent)])
