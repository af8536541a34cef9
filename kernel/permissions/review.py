"""What a person sees before approving an install or an upgrade."""

from __future__ import annotations

from typing import Any

from dreamer.kernel.config import AGENT_LIMITS, Limits
from dreamer.contracts.scopes import parse_scope


def scope_rows(required: list[str], optional: list[str]) -> list[dict[str, Any]]:
    rows = []
    for text, is_required in [*((r, True) for r in required), *((o, False) for o in optional)]:
        scope = parse_scope(text)
        rows.append(
            {
                "scope": text,
                "sentence": scope.sentence,
                "risk": scope.risk,
                "required": is_required,
                # Optional scopes are off unless the user turns them on (--grant, a web switch);
                # fs:* / fs.ro:* are never granted as such: the user grants folders later.
                "granted_by_default": is_required and not scope.is_chooser,
            }
        )
    return rows


def limit_rows(asked: dict[str, Any] | None, ceiling: Limits) -> list[dict[str, Any]]:
    """Each limit the agent will run under: what it asked for (or None), what it gets, the ceiling."""
    granted = ceiling.within(asked)
    return [
        {
            "name": name,
            "asked": (asked or {}).get(name),
            "granted": getattr(granted, field),
            "ceiling": getattr(ceiling, field),
        }
        for name, field in AGENT_LIMITS.items()
    ]


def review(manifest: dict[str, Any], functions: list[dict[str, Any]], ceiling: Limits | None = None) -> dict[str, Any]:
    perms = manifest.get("permissions", {})
    return {
        "name": manifest["name"],
        "title": manifest.get("title"),
        "version": manifest["version"],
        "kind": manifest.get("kind", "agent"),
        "publisher": manifest.get("publisher"),
        # The gallery (issue 9) verifies publishers; a local bundle's publisher is only its claim.
        "publisher_verified": False,
        "description": manifest.get("description"),
        "scopes": scope_rows(perms.get("required", []), perms.get("optional", [])),
        "functions": [
            {"name": f["name"], "description": f.get("description", ""), "exported": f.get("exported", False),
             "confirm": f.get("confirm", False)}
            for f in functions
        ],
        "triggers": manifest.get("triggers", []),
        "limits": limit_rows(manifest.get("limits"), ceiling or Limits()),
    }


def upgrade_diff(
    old_manifest: dict[str, Any], old_functions: list[dict[str, Any]], new_manifest: dict[str, Any],
    new_functions: list[dict[str, Any]], granted: set[str],
) -> dict[str, Any]:
    """Only what changed between the installed version and the offered one."""
    def scopes(m: dict[str, Any]) -> set[str]:
        p = m.get("permissions", {})
        return set(p.get("required", [])) | set(p.get("optional", []))

    old_s, new_s = scopes(old_manifest), scopes(new_manifest)
    old_f = {f["name"] for f in old_functions}
    new_f = {f["name"] for f in new_functions}
    new_required = set(new_manifest.get("permissions", {}).get("required", []))
    added = sorted(new_s - old_s)
    return {
        "from_version": old_manifest["version"],
        "to_version": new_manifest["version"],
        "scopes_added": scope_rows([s for s in added if s in new_required], [s for s in added if s not in new_required]),
        "scopes_removed": sorted(old_s - new_s),
        "functions_added": sorted(new_f - old_f),
        "functions_removed": sorted(old_f - new_f),
        "needs_approval": bool(added),
        "kept_grants": sorted(granted & new_s),
    }
