"""What a person sees before approving an install or an upgrade."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dreamer.contracts.functions import FunctionSpec
from dreamer.contracts.manifest import Manifest
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


def limit_rows(asked: Mapping[str, Any] | None, ceiling: Limits) -> list[dict[str, Any]]:
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


def review(manifest: Manifest, functions: Sequence[FunctionSpec], ceiling: Limits | None = None) -> dict[str, Any]:
    perms = manifest.permissions
    return {
        "name": manifest.name,
        "title": manifest.title,
        "version": manifest.version,
        "kind": manifest.kind,
        "publisher": manifest.publisher,
        # The gallery (issue 9) verifies publishers; a local bundle's publisher is only its claim.
        "publisher_verified": False,
        "description": manifest.description,
        "scopes": scope_rows(perms.required, perms.optional),
        "functions": [
            {"name": f.name, "description": f.description, "exported": f.exported, "confirm": f.confirm}
            for f in functions
        ],
        # As staged.json keeps them (the JSON form, unset fields left out).
        "triggers": [t.model_dump(mode="json", exclude_none=True) for t in manifest.triggers],
        "limits": limit_rows(manifest.asked_limits, ceiling or Limits()),
    }


def upgrade_diff(
    old_manifest: Manifest, old_functions: Sequence[FunctionSpec], new_manifest: Manifest,
    new_functions: Sequence[FunctionSpec], granted: set[str],
) -> dict[str, Any]:
    """Only what changed between the installed version and the offered one."""
    old_s, new_s = set(old_manifest.permissions.all), set(new_manifest.permissions.all)
    old_f = {f.name for f in old_functions}
    new_f = {f.name for f in new_functions}
    new_required = set(new_manifest.permissions.required)
    added = sorted(new_s - old_s)
    return {
        "from_version": old_manifest.version,
        "to_version": new_manifest.version,
        "scopes_added": scope_rows([s for s in added if s in new_required], [s for s in added if s not in new_required]),
        "scopes_removed": sorted(old_s - new_s),
        "functions_added": sorted(new_f - old_f),
        "functions_removed": sorted(old_f - new_f),
        "needs_approval": bool(added),
        "kept_grants": sorted(granted & new_s),
    }
