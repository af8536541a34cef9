"""The install review as a person sees it: who publishes the bundle and what each permission allows.

The kernel's answer to POST /v1/bundles is read defensively: the manifest is
always there, so when the review lacks a field the manifest fills it in, and
a permission is never hidden because its description is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from dreamer.cli.output import cell_text, make_table, risk, safe_text


@dataclass(frozen=True)
class ScopeRow:
    scope: str
    risk: str = ""
    sentence: str = ""
    required: bool | None = None
    added: bool = False


@dataclass(frozen=True)
class LimitRow:
    name: str
    asked: float | None
    granted: float | None


# name in agent.yaml's `limits:` -> (what a person calls it, unit)
LIMIT_LABELS = {
    "memory_mb": ("memory", " MB"),
    "cpu_seconds": ("CPU time", " s"),
    "file_mb": ("file size", " MB"),
    "open_files": ("open files", ""),
    "processes": ("processes", ""),
    "call_timeout_s": ("time per call", " s"),
    "background_timeout_s": ("time per background run", " s"),
}


@dataclass(frozen=True)
class Upgrade:
    from_version: str
    to_version: str
    added_scopes: list[str] = field(default_factory=list)
    removed_scopes: list[str] = field(default_factory=list)
    added_functions: list[str] = field(default_factory=list)
    removed_functions: list[str] = field(default_factory=list)
    kept_grants: list[str] = field(default_factory=list)
    # An upgrade that asks for nothing new installs without asking again (design.md section 4).
    needs_approval: bool = True


@dataclass(frozen=True)
class Review:
    name: str
    version: str
    title: str
    publisher: str
    publisher_verified: bool | None
    description: str
    kind: str
    scopes: list[ScopeRow]
    functions: list[str]
    upgrade: Upgrade | None
    limits: list[LimitRow] = field(default_factory=list)
    publisher_fingerprint: str = ""
    gallery: str = ""
    yanked: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def needs_approval(self) -> bool:
        return self.upgrade is None or self.upgrade.needs_approval

    def will_grant(self, row: ScopeRow, without: list[str], grant: list[str] | tuple[str, ...] = ()) -> bool:
        """What the kernel will grant (kernel/install/installer.py decides; this says the same)."""
        if row.required:
            return True
        if self.kind == "tool":
            return row.scope not in without  # a tool server's tools are on unless switched off
        if _is_chooser(row.scope) or row.scope in without:
            return False
        if row.scope in grant:
            return True
        # Optional scopes are off unless turned on; an upgrade keeps what the user granted before.
        return self.upgrade is not None and row.scope in self.upgrade.kept_grants

    def granted_cell(self, row: ScopeRow, without: list[str], grant: list[str] | tuple[str, ...] = ()) -> str:
        if self.will_grant(row, without, grant):
            return "yes"
        if _is_chooser(row.scope):
            kind = row.scope.split(":", 1)[0]
            return f"no (after installing: dreamer grant {self.name} {kind}:/path/to/folder)"
        if row.scope in without:
            return "no (--without)"
        return f"no (turn on with --grant {row.scope})"


def _is_chooser(scope: str) -> bool:
    """`fs:*` / `fs.ro:*`: a folder chosen later, never granted by an install."""
    return scope in ("fs:*", "fs.ro:*")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pick(data: dict[str, Any], *paths: str) -> Any:
    """The first present value among dotted paths ("scopes.added", "added_scopes", ...)."""
    for path in paths:
        current: Any = data
        for part in path.split("."):
            current = current.get(part) if isinstance(current, dict) else None
        if current is not None:
            return current
    return None


def _names(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    names: list[str] = []
    for item in value:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict):
            name = item.get("scope") or item.get("name")
            if isinstance(name, str):
                names.append(name)
    return names


def _scope_row(item: Any, required: bool | None) -> ScopeRow | None:
    if isinstance(item, str):
        return ScopeRow(scope=item, required=required)
    if not isinstance(item, dict):
        return None
    scope = item.get("scope") or item.get("text") or item.get("name")
    if not isinstance(scope, str):
        return None
    req = item.get("required")
    if not isinstance(req, bool):
        level = item.get("level") or item.get("kind") or item.get("requirement")
        req = {"required": True, "optional": False}.get(level, required) if isinstance(level, str) else required
    return ScopeRow(
        scope=scope,
        risk=cell_text(item.get("risk")),
        sentence=cell_text(item.get("sentence") or item.get("description")),
        required=req,
        added=bool(item.get("added") or item.get("new")),
    )


def _review_rows(review: Any) -> list[ScopeRow]:
    rows: list[ScopeRow | None] = []
    if isinstance(review, list):
        rows = [_scope_row(item, None) for item in review]
    elif isinstance(review, dict):
        listed = _pick(review, "scopes", "permissions", "items")
        if isinstance(listed, list):
            rows = [_scope_row(item, None) for item in listed]
        else:
            holder = listed if isinstance(listed, dict) else review
            for key, req in (("required", True), ("optional", False)):
                if isinstance(holder.get(key), list):
                    rows += [_scope_row(item, req) for item in holder[key]]
    return [row for row in rows if row is not None]


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _limit_rows(value: Any) -> list[LimitRow]:
    rows = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            rows.append(LimitRow(item["name"], _number(item.get("asked")), _number(item.get("granted"))))
    return rows


def _with_requirement(row: ScopeRow, required: list[str], optional: list[str]) -> ScopeRow:
    if row.required is not None:
        return row
    if row.scope in required:
        return replace(row, required=True)
    if row.scope in optional:
        return replace(row, required=False)
    return row


def read_review(staged: dict[str, Any]) -> Review:
    manifest = _dict(staged.get("manifest"))
    review = staged.get("review")
    info = _dict(review)
    perms = _dict(manifest.get("permissions"))
    required = _names(perms.get("required"))
    optional = _names(perms.get("optional"))

    rows = _review_rows(review)
    seen = {row.scope for row in rows}
    # The manifest is the source of truth for what is asked; the review only explains it.
    for scope, req in [*((s, True) for s in required), *((s, False) for s in optional)]:
        if scope not in seen:
            rows.append(ScopeRow(scope=scope, required=req))
    rows = [_with_requirement(row, required, optional) for row in rows]

    upgrade_data = staged.get("upgrade")
    upgrade = None
    if isinstance(upgrade_data, dict):
        upgrade = Upgrade(
            from_version=cell_text(_pick(upgrade_data, "from_version", "from", "installed_version", "old_version", "previous.version")),
            to_version=cell_text(_pick(upgrade_data, "to_version", "to", "new_version", "version") or manifest.get("version")),
            added_scopes=_names(_pick(upgrade_data, "added_scopes", "scopes_added", "scopes.added", "permissions.added")),
            removed_scopes=_names(_pick(upgrade_data, "removed_scopes", "scopes_removed", "scopes.removed", "permissions.removed")),
            added_functions=_names(_pick(upgrade_data, "added_functions", "functions_added", "functions.added")),
            removed_functions=_names(_pick(upgrade_data, "removed_functions", "functions_removed", "functions.removed")),
            kept_grants=_names(_pick(upgrade_data, "kept_grants", "granted")),
            needs_approval=upgrade_data.get("needs_approval") is not False,
        )
        added = set(upgrade.added_scopes)
        rows = [replace(row, added=row.added or row.scope in added) for row in rows]

    functions = staged.get("functions")
    return Review(
        name=cell_text(manifest.get("name") or info.get("agent") or info.get("name") or "this agent"),
        version=cell_text(manifest.get("version") or info.get("version")),
        title=cell_text(manifest.get("title") or info.get("title")),
        publisher=cell_text(manifest.get("publisher") or info.get("publisher")),
        publisher_verified=info.get("publisher_verified") if isinstance(info.get("publisher_verified"), bool) else None,
        description=cell_text(manifest.get("description") or info.get("description")),
        kind=cell_text(manifest.get("kind") or "agent"),
        scopes=rows,
        functions=_names(functions),
        upgrade=upgrade,
        limits=_limit_rows(info.get("limits")),
        publisher_fingerprint=cell_text(info.get("publisher_fingerprint")),
        gallery=cell_text(info.get("gallery")),
        yanked=cell_text(info.get("yanked")),
        warnings=[cell_text(w) for w in info.get("warnings") or [] if isinstance(w, str)][:10],
    )


def render_review(
    console: Console, review: Review, without: list[str], grant: list[str] | tuple[str, ...] = (), *, source: str | None = None,
) -> None:
    """`source` names where a local bundle comes from ("the local folder ./hello"); a gallery's
    review names its gallery itself."""
    head = Text()
    head.append(safe_text(f"{review.name} {review.version}"), style="bold")
    if review.title and review.title != review.name:
        head.append(safe_text(f"  {review.title}"))
    console.print(head)
    if review.publisher:
        claim = " [dim](not verified)[/]" if review.publisher_verified is False else ""
        if review.publisher_verified and review.publisher_fingerprint:
            where = f" on {escape(review.gallery)}" if review.gallery else ""
            claim = f" [green](verified, key fingerprint {escape(review.publisher_fingerprint)}{where})[/]"
        console.print(f"Published by [bold]{escape(review.publisher)}[/]{claim}")
    console.print(f"From: {escape(source_line(review, source))}")
    if review.yanked:
        console.print(f"[bold yellow]This version was yanked by its publisher:[/] {escape(review.yanked)}")
    if review.description:
        console.print(escape(review.description))
    for warning in review.warnings:
        console.print(f"[bold yellow]Warning:[/] {escape(warning)}")
    if review.upgrade:
        _render_upgrade(console, review.upgrade)
    if review.functions:
        console.print(f"Functions: {escape(', '.join(review.functions))}")
    _render_limits(console, review.limits)
    if not review.scopes:
        console.print("It asks for no permissions.")
        return
    rows = []
    for row in review.scopes:
        granted = review.granted_cell(row, without, grant)
        need = {True: "required", False: "optional", None: ""}[row.required]
        scope = Text(safe_text(row.scope), style="bold" if row.added else "")
        if row.added:
            scope.append(" (new)", style="yellow")
        rows.append([scope, row.sentence, risk(row.risk), need, granted])
    console.print(make_table(["permission", "what it allows", "risk", "need", "granted"], rows, title="Permissions"))


def source_line(review: Review, source: str | None) -> str:
    """Where the bundle comes from, and whether anyone vouches for it."""
    if source:
        return f"{source} (not verified: it is not signed by a publisher)"
    if review.gallery or review.publisher_verified is not None:
        where = f"the gallery {review.gallery}" if review.gallery else "a gallery"
        verified = "publisher verified" if review.publisher_verified else "publisher not verified"
        return f"{where} ({verified})"
    return "a bundle from this machine (not verified)"


def _shown(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _render_limits(console: Console, rows: list[LimitRow]) -> None:
    """Only the limits the agent asks for; the others are the installation's, as for every agent."""
    parts = []
    for row in rows:
        if row.asked is None or row.granted is None:
            continue
        label, unit = LIMIT_LABELS.get(row.name, (row.name, ""))
        text = f"{label} {_shown(row.granted)}{unit}"
        if row.asked > row.granted:
            text += f" (asks for {_shown(row.asked)}; this installation allows at most {_shown(row.granted)})"
        parts.append(text)
    if parts:
        console.print(f"Limits: {escape(', '.join(parts))}")


def _render_upgrade(console: Console, upgrade: Upgrade) -> None:
    if upgrade.from_version == upgrade.to_version:
        console.print(f"Reinstall [bold]{escape(upgrade.to_version)}[/] (the version installed now)")
    else:
        console.print(f"Upgrade from [bold]{escape(upgrade.from_version)}[/] to [bold]{escape(upgrade.to_version)}[/]")
    for label, items in (
        ("New permissions", upgrade.added_scopes),
        ("Dropped permissions", upgrade.removed_scopes),
        ("New functions", upgrade.added_functions),
        ("Removed functions", upgrade.removed_functions),
    ):
        if items:
            console.print(f"  {label}: {escape(', '.join(items))}")
    if not upgrade.needs_approval:
        console.print("  It asks for no new permissions.")


def render_tool_review(console: Console, review: Any) -> None:
    """A tool bundle's own review: where its server runs, and per tool what it reaches and writes."""
    info = _dict(review)
    server = _dict(info.get("server"))
    if server.get("runs"):
        console.print(f"Its server runs {escape(cell_text(server.get('runs')))}.")
    if server.get("local_address"):
        console.print("[yellow]Its URL is a local or private address on the kernel's network.[/]")
    rows = [
        [cell_text(t.get("qualified")), cell_text(t.get("writes")), cell_text(t.get("reaches"))]
        for t in info.get("tools") or [] if isinstance(t, dict)
    ]
    if rows:
        console.print(make_table(["tool", "writes", "reaches"], rows, title="Tools"))
        console.print("[dim]'writes' and a remote server's reach come from the server's own annotations: hints, not checked.[/]")
    for problem in info.get("problems") or []:
        console.print(f"[yellow]{escape(cell_text(problem))}[/]")
    skills = [cell_text(s.get("name")) for s in info.get("skills") or [] if isinstance(s, dict)]
    if skills:
        console.print(f"Skills: {escape(', '.join(skills))}")
