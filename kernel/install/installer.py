"""Install, upgrade and uninstall: stage → review → approve.

A bundle is first unpacked into staging and checked completely (manifest,
files, functions.json — built in the sandbox when absent). Only an approval of
that staged bundle copies it into bundles/NAME/VERSION and records the
installation and its grants in one transaction, so a refusal or a crash never
leaves half an install behind.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.archive import BundleLimits, extract, install_copy, pack, remove_tree, tree_digest
from dreamer.kernel.bundles.agenttests import run_agent_tests
from dreamer.kernel.bundles.build import describe_bundle
from dreamer.kernel.bundles.descriptions import DescriptionCache
from dreamer.contracts.functions import dump_functions, load_functions
from dreamer.contracts.manifest import Manifest, load_manifest
from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.install.integrity import bundle_folder, check_bundle
from dreamer.kernel.install.names import check_name_free
from dreamer.kernel.install.registry import InstalledAgent, find_installed, get_installed, grants_of, list_installed
from dreamer.kernel.install.overlap import overlap_warnings
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.install import snapshots
from dreamer.kernel.permissions.folders import bounds_for
from dreamer.kernel.permissions.review import review, scope_rows, upgrade_diff
from dreamer.contracts.scopes import Scope, ScopeError, parse_scope
from dreamer.kernel.sandbox.base import Sandbox
from dreamer.kernel.sandbox.mounts import fs_grants
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, BundleVersion, Grant, Installation, utcnow
from dreamer.kernel.users.quotas import staging_full, staging_room
from dreamer.kernel.workers.pool import WorkerPool

if TYPE_CHECKING:
    from dreamer.kernel.tools.install import ToolInstaller

STAGE_TTL_S = 3600

_T = TypeVar("_T")
# What runs on an unpacked bundle in a throwaway folder: (sandbox, settings, bundle, manifest, scratch).
_InScratch = Callable[[Sandbox, Settings, Path, Manifest, Path], Awaitable[_T]]


class Installer:
    def __init__(
        self, settings: Settings, store: Store, sandbox: Sandbox, pool: WorkerPool, cache: InstallCache | None = None
    ) -> None:
        self.settings = settings
        self.store = store
        self.sandbox = sandbox
        self.pool = pool
        self.cache = cache or InstallCache(store)
        self.descriptions = DescriptionCache()  # a bundle's functions by its content (no sandbox per sign-up)
        self._lock = asyncio.Lock()  # installs are rare; one at a time keeps bundles/ consistent
        self.tools: ToolInstaller | None = None  # tool bundles (kind: tool), set by Kernel.build
        # Called after an install, upgrade or uninstall (the kernel syncs the agent's triggers).
        self.on_change: Callable[[Principal, str], Awaitable[None]] | None = None
        # The starter bundles' folders and the built-in tool servers' names (set by Kernel.build):
        # agents and tool servers share one namespace (kernel/install/names.py).
        self.shipped_folders: frozenset[Path] = frozenset()
        self.builtin_tools: frozenset[str] = frozenset()

    # -- stage --------------------------------------------------------------------------

    async def build(self, archive: bytes, who: Principal | None = None) -> list[dict[str, Any]]:
        """Describe a bundle's functions by importing it in the sandbox (`dreamer build`);
        for a tool bundle, its server's tools (tools.json)."""
        return await self._in_scratch(archive, "building", self._describe, who)

    async def _describe(
        self, sandbox: Sandbox, settings: Settings, bundle: Path, manifest: Manifest, scratch: Path
    ) -> list[dict[str, Any]]:
        if manifest.kind == "tool":
            return await self._tools().build(bundle, manifest, scratch)
        return [f.model_dump() for f in await describe_bundle(sandbox, settings, bundle, manifest, scratch)]

    async def test(self, archive: bytes, who: Principal | None = None) -> dict[str, Any]:
        """Run the bundle's own tests/ with pytest in the sandbox (`dreamer test`)."""
        return await self._in_scratch(archive, "testing", run_agent_tests, who)

    async def _in_scratch(self, archive: bytes, doing: str, run: _InScratch[_T], who: Principal | None = None) -> _T:
        """Unpack into a throwaway folder, run `run(sandbox, settings, bundle, manifest, scratch)`, delete it."""
        work = self._new_stage_dir(who)
        try:
            bundle, manifest = _unpack(archive, work, doing, self._staging_room(who))
            return await run(self.sandbox, self.settings, bundle, manifest, work / "data")
        finally:
            shutil.rmtree(work, ignore_errors=True)

    async def stage(self, who: Principal, archive: bytes, provenance: dict[str, Any] | None = None) -> dict[str, Any]:
        """Unpack and check a bundle and answer with its review. `provenance` is set only by
        the gallery installer, after it verified the publisher's signature (gallery/verify.py)."""
        self._sweep_stale()
        room = self._staging_room(who)
        work = self._new_stage_dir(who)
        try:
            bundle, manifest = _unpack(archive, work, "installing", room)
            if manifest.kind == "tool":
                return await self._tools().stage(who, work, bundle, manifest)
            digest = tree_digest(bundle)
            functions = load_functions(bundle)
            if functions is None:
                built = await self.descriptions.describe(
                    digest, lambda: describe_bundle(self.sandbox, self.settings, bundle, manifest, work / "data"))
                (bundle / "functions.json").write_text(dump_functions(built))
                functions = load_functions(bundle)
                digest = tree_digest(bundle)  # what is placed holds the functions.json just written
            specs = functions or []
            fn_dicts = [f.model_dump() for f in specs]
            by_name = {f.name: f for f in specs}
            for trigger in manifest.triggers:
                if trigger.entrypoint not in by_name:
                    raise DreamerError(
                        "invalid_bundle", f"agent.yaml: trigger {trigger.name!r} names entrypoint "
                        f"{trigger.entrypoint!r}, which is not a function in functions.json"
                    )
                if by_name[trigger.entrypoint].confirm:
                    raise DreamerError(
                        "invalid_bundle", f"agent.yaml: trigger {trigger.name!r} names {trigger.entrypoint}, which is marked "
                        "confirm; a trigger cannot ask the user, so it may not run a function that needs their confirmation"
                    )
                required = by_name[trigger.entrypoint].parameters.get("required") or []
                if len(required) > 1:
                    raise DreamerError(
                        "invalid_bundle", f"agent.yaml: trigger {trigger.name!r}: entrypoint {trigger.entrypoint} "
                        f"needs {len(required)} arguments, but a trigger passes at most one (what fired it)"
                    )
            manifest_dict = manifest.model_dump(mode="json", exclude_none=True)
            staged = {
                "bundle_id": work.name,
                "user_id": who.user_id,
                "created": time.time(),
                "digest": digest,
                "manifest": manifest_dict,
                "functions": fn_dicts,
                "provenance": provenance,
            }
            (work / "staged.json").write_text(json.dumps(staged))
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        with self.store.session() as s:
            current = find_installed(s, who.user_id, manifest.name)
            granted = {g.scope for g in grants_of(s, who.user_id, manifest.name)} if current else set()
            warnings = overlap_warnings(manifest.name, specs, list_installed(s, who.user_id))
        upgrade = None
        if current is not None:
            upgrade = upgrade_diff(current.manifest, current.functions, manifest, specs, granted)
        shown = review(manifest, specs, self.settings.limits)
        shown["warnings"] = warnings
        if provenance is not None:
            shown.update(publisher_verified=True, publisher_fingerprint=provenance["fingerprint"],
                         gallery=provenance["gallery"])
        return {
            "bundle_id": work.name,
            "manifest": manifest_dict,
            "functions": fn_dicts,
            "review": shown,
            "upgrade": upgrade,
        }

    # -- approve --------------------------------------------------------------------------

    def _tools(self) -> "ToolInstaller":
        if self.tools is None:
            raise DreamerError("not_available", "this kernel has no tool registry")
        return self.tools

    async def approve(
        self, who: Principal, bundle_id: str, without: list[str], grant: list[str] | tuple[str, ...] = (),
        *, shipped: bool = False,
    ) -> InstalledAgent | dict[str, Any]:
        """Install the staged bundle with its required scopes and, of its optional ones, only those
        the user turned on (`grant`: `--grant SCOPE`, a switch in the web review). On an upgrade the
        optional scopes granted before stay, unless named in `without`. `shipped`: a starter bundle
        of this installation (install_folder), the only kind that may share a name with a tool server."""
        work = self._stage_dir(bundle_id)
        staged_file = work / "staged.json"
        if not staged_file.is_file():
            raise DreamerError("not_found", f"no staged bundle {bundle_id!r}; upload it again")
        staged = json.loads(staged_file.read_text())
        if staged["user_id"] != who.user_id:
            raise DreamerError("not_found", f"no staged bundle {bundle_id!r}; upload it again")
        # staged.json is the kernel's own file, written by stage() from the validated manifest.
        manifest = Manifest.model_validate(staged["manifest"])
        if manifest.kind == "tool":
            return await self._tools().approve(who, work, staged, without, shipped=shipped)
        name, version = manifest.name, manifest.version
        required, optional = list(manifest.permissions.required), list(manifest.permissions.optional)
        for scope in without:
            if scope in required:
                raise DreamerError("invalid_argument", f"{scope} is required by {name} and cannot be left out")
            if scope not in optional:
                raise DreamerError("invalid_argument", f"{name} does not ask for {scope}, so there is nothing to leave out")
        turned_on = _turned_on(name, required, optional, grant)

        provenance = staged.get("provenance") or {}
        async with self._lock:
            # Before anything is written: a refused name leaves nothing behind.
            with self.store.session() as s:
                check_name_free(s, who.user_id, name, "agent", builtin_tools=self.builtin_tools, shipped=shipped)
            await self.pool.evict(who.user_name, name)
            self._snapshot_before_upgrade(who, name, version)
            dest = self._place_bundle(work / "bundle", name, version, staged["digest"])
            with self.store.session() as s:
                # Keyed by content: a row is written once and never changed, so what another
                # user runs or may roll back to stays exactly what they approved.
                bv = s.scalar(select(BundleVersion).where(
                    BundleVersion.name == name, BundleVersion.version == version,
                    BundleVersion.digest == staged["digest"]))
                if bv is None:
                    bv = BundleVersion(
                        name=name, version=version, kind=manifest.kind, digest=staged["digest"],
                        publisher=manifest.publisher, manifest=staged["manifest"], functions=staged["functions"],
                        path=str(dest),
                    )
                    s.add(bv)
                    s.flush()
                inst = s.scalar(
                    select(Installation).where(Installation.user_id == who.user_id, Installation.agent == name)
                )
                previous = {g.scope for g in grants_of(s, who.user_id, name)}
                declared = set(required) | set(optional)
                if inst is None:
                    inst = Installation(user_id=who.user_id, agent=name, bundle_id=bv.id)
                    s.add(inst)
                    s.flush()
                    wanted = set(required) | (turned_on - set(without))
                    action = "install"
                else:
                    old_declared = set(previous)
                    old = s.get(BundleVersion, inst.bundle_id)
                    if old is not None:
                        old_declared = set(Manifest.model_validate(old.manifest).permissions.all)
                    # Keep what was granted and still declared; newly required scopes were shown
                    # in the upgrade review being approved now; optional ones only when turned on.
                    wanted = (previous & declared) | set(required) | ((set(required) - old_declared) - set(without))
                    wanted |= turned_on
                    wanted -= set(without)
                    # Folders the user chose under a declared fs:* stay while it is declared.
                    wanted |= {g for g in previous if _admitted(g, declared)}
                    inst.bundle_id = bv.id
                    inst.updated_at = utcnow()
                    action = "upgrade"
                wanted = {w for w in wanted if not parse_scope(w).is_chooser}  # fs:* names no folder to grant
                # Provenance is this user's: another user's install of the same files leaves it alone.
                inst.source, inst.publisher_fingerprint = provenance.get("gallery"), provenance.get("fingerprint")
                if fs_grants(wanted):  # a manifest may name a folder itself: the same bounds apply
                    bounds = bounds_for(self.settings, s, who.user_id)
                    for w in fs_grants(wanted):
                        bounds.check(parse_scope(w))
                s.execute(delete(Grant).where(Grant.user_id == who.user_id, Grant.agent == name))
                s.add_all(Grant(user_id=who.user_id, agent=name, scope=scope) for scope in sorted(wanted))
                audit(
                    s, user_id=who.user_id, actor=who.actor, action=action, target=f"{name}@{version}",
                    decision="allow",
                    detail={"granted": sorted(wanted), "declined": sorted(declared - wanted), "digest": staged["digest"],
                            **({"verified_publisher": provenance} if provenance else {})},
                )
            self.cache.forget(who.user_id, name)
            shutil.rmtree(work, ignore_errors=True)
        self.settings.agent_data_dir(who.user_name, name).mkdir(parents=True, exist_ok=True)
        if self.on_change is not None:
            await self.on_change(who, name)
        with self.store.session() as s:
            return get_installed(s, who.user_id, name)

    def _snapshot_before_upgrade(self, who: Principal, name: str, version: str) -> None:
        """An upgrade to another version keeps what it replaces, for `rollback` (snapshots.py)."""
        with self.store.session() as s:
            inst = s.scalar(select(Installation).where(Installation.user_id == who.user_id, Installation.agent == name))
            old = s.get(BundleVersion, inst.bundle_id) if inst is not None else None
            if inst is None or old is None or old.version == version:
                return
            grants = [g.scope for g in grants_of(s, who.user_id, name)]
            kept = snapshots.Kept(old.version, old.id, old.digest, inst.source, inst.publisher_fingerprint)
        snapshots.take(self.settings.agent_data_dir(who.user_name, name), kept, grants)

    async def rollback(self, who: Principal, agent: str) -> InstalledAgent:
        """Back to the version before the latest upgrade, with its grants and its data."""
        data = self.settings.agent_data_dir(who.user_name, agent)
        async with self._lock:
            with self.store.session() as s:
                current = get_installed(s, who.user_id, agent)
                snap = snapshots.read(data, agent)
                old = s.get(BundleVersion, snap.bundle_id)
                if old is None or old.name != agent or old.version != snap.version or not Path(old.path).is_dir():
                    raise DreamerError(
                        "not_found", f"{agent} {snap.version} is no longer on this kernel, so there is nothing to roll back to"
                    )
                if snap.digest and old.digest != snap.digest:
                    raise DreamerError(
                        "digest_mismatch", f"{agent} {snap.version} on this kernel is not the one you had; nothing was rolled back"
                    )
                # The files must still be the ones approved back then, before anything is switched.
                check_bundle(Path(old.path), old.digest, f"{agent} {snap.version}")
            await self.pool.evict(who.user_name, agent)
            snapshots.restore(data)
            with self.store.session() as s:
                inst = s.scalar(select(Installation).where(Installation.user_id == who.user_id, Installation.agent == agent))
                assert inst is not None
                inst.bundle_id, inst.updated_at = snap.bundle_id, utcnow()
                inst.source, inst.publisher_fingerprint = snap.source, snap.publisher_fingerprint
                s.execute(delete(Grant).where(Grant.user_id == who.user_id, Grant.agent == agent))
                s.add_all(Grant(user_id=who.user_id, agent=agent, scope=scope) for scope in snap.grants)
                audit(
                    s, user_id=who.user_id, actor=who.actor, action="rollback", target=f"{agent}@{snap.version}",
                    decision="allow", detail={"from": current.version, "granted": snap.grants, "data_from": snap.taken_at},
                )
            self.cache.forget(who.user_id, agent)
        if self.on_change is not None:
            await self.on_change(who, agent)
        with self.store.session() as s:
            return get_installed(s, who.user_id, agent)

    async def install_folder(self, who: Principal, folder: Path) -> InstalledAgent | dict[str, Any]:
        """Install a local folder without a person reviewing it (the starter agents).

        Nobody approved anything, so only what cannot hurt is granted: required scopes
        and optional ones that are not high risk and cost no money (never `llm`, `net:*`,
        `fs:*`, `memory:read`, nor a `!confirm` approval).
        The user can grant the rest later (`dreamer grant notes net:*`).
        """
        staged = await self.stage(who, pack(folder))
        optional = Manifest.model_validate(staged["manifest"]).permissions.optional
        harmless = [s for s in optional if starter_may_hold(s)]
        shipped = folder.resolve() in self.shipped_folders
        return await self.approve(who, staged["bundle_id"], without=[], grant=harmless, shipped=shipped)

    # -- uninstall ---------------------------------------------------------------------------

    async def uninstall(self, who: Principal, agent: str, purge: bool) -> dict[str, Any]:
        if self.tools is not None and self.cache.agent(who.user_id, agent) is None:
            # No agent of that name: a tool server may have it (tools have their own names).
            try:
                self.tools.registry.installed(who.user_id, agent)
            except DreamerError:
                pass
            else:
                return await self.tools.uninstall(who, agent, purge)
        async with self._lock:
            with self.store.session() as s:
                installed = get_installed(s, who.user_id, agent)
                s.execute(delete(Grant).where(Grant.user_id == who.user_id, Grant.agent == agent))
                s.execute(delete(Installation).where(Installation.user_id == who.user_id, Installation.agent == agent))
                audit(
                    s, user_id=who.user_id, actor=who.actor, action="uninstall", target=f"{agent}@{installed.version}",
                    decision="allow", detail={"purge": purge},
                )
            self.cache.forget(who.user_id, agent)
            await self.pool.evict(who.user_name, agent)
            # A later install starts a new history; the kept data stays unless purged.
            snapshots.drop(self.settings.agent_data_dir(who.user_name, agent))
            if purge:
                shutil.rmtree(self.settings.agent_data_dir(who.user_name, agent).parent, ignore_errors=True)
        if self.on_change is not None:
            await self.on_change(who, agent)
        return {"uninstalled": agent, "purged": purge}

    # -- grants -------------------------------------------------------------------------------

    def permissions(self, who: Principal, agent: str | None = None) -> list[dict[str, Any]]:
        with self.store.session() as s:
            agents = [get_installed(s, who.user_id, agent)] if agent else list_installed(s, who.user_id)
            used = last_used(s, who.user_id, [a.name for a in agents])
            rows = []
            for a in agents:
                grants = {g.scope: g for g in grants_of(s, who.user_id, a.name)}
                listed = scope_rows(a.required, a.optional)
                declared = {row["scope"] for row in listed}
                # Folders granted under a declared fs:* are listed after the declared scopes.
                listed += scope_rows([], sorted(set(grants) - declared))
                for row in listed:
                    g = grants.get(row["scope"])
                    rows.append(
                        {
                            "agent": a.name, "scope": row["scope"], "sentence": row["sentence"], "risk": row["risk"],
                            "required": row["required"], "granted": g is not None,
                            "granted_at": g.granted_at.isoformat() if g else None,
                            "last_used_at": used.get((a.name, row["scope"])),
                        }
                    )
            return rows

    async def grant(self, who: Principal, agent: str, scope: str) -> list[dict[str, Any]]:
        wanted = _parse(scope)
        with self.store.session() as s:
            installed = get_installed(s, who.user_id, agent)
            declared = [*installed.required, *installed.optional]
            # A grant names a declared scope, or a broader one that covers declared scopes:
            # `grant recipes agent:grocery` re-grants every declared agent:grocery.* scope.
            if wanted.is_chooser:
                raise DreamerError("invalid_argument", f"{scope} names no folder; grant a folder, e.g. {wanted.kind}:/home/me/project")
            matching = [d for d in declared if d == scope or wanted.covers(parse_scope(d))]
            if not matching and wanted.confirm and any(parse_scope(d).covers(wanted.plain) for d in declared):
                # The user's own approval of a confirm=True function for a caller that may call it.
                matching = [scope]
            if not matching and (_admitted(scope, declared) or any(parse_scope(d).covers(wanted) for d in declared)):
                # A folder the user chose under a declared fs:* / fs.ro:*, or less than the agent
                # asks for (`net:127.0.0.1` under a declared `net:*`).
                matching = [scope]
            if not matching:
                raise DreamerError(
                    "invalid_argument",
                    f"{agent} does not ask for {scope}; an agent can only be granted scopes its manifest declares "
                    f"({', '.join(declared) or 'none'})",
                )
            # A folder is checked against the user's bounds now, and again when a worker binds it.
            folders = fs_grants(matching)
            opens: dict[str, str] = {}
            if folders:
                bounds = bounds_for(self.settings, s, who.user_id)
                opens = {d: bounds.opens(parse_scope(d)) for d in folders}
            have = {g.scope for g in grants_of(s, who.user_id, agent)}
            for d in matching:
                if d not in have:
                    s.add(Grant(user_id=who.user_id, agent=agent, scope=d))
            audit(s, user_id=who.user_id, actor=who.actor, action="grants.grant", target=agent,
                  scope=scope, decision="allow", detail={"scopes": matching})
        self.cache.forget(who.user_id, agent)
        if fs_grants(matching):
            # Workers keep the folders they started with; let go of the ones without this one.
            await self.pool.evict(who.user_name, agent)
        rows = [r for r in self.permissions(who, agent) if r["scope"] in matching]
        for r in rows:
            if r["scope"] in opens:
                r["opens"] = opens[r["scope"]]
        return rows

    async def revoke(self, who: Principal, agent: str, scope: str) -> list[dict[str, Any]]:
        wanted = _parse(scope)
        with self.store.session() as s:
            get_installed(s, who.user_id, agent)
            held = grants_of(s, who.user_id, agent)
            # Revoking a broad scope revokes every narrower grant it covers.
            # Taking back a call also takes back any approval to run it unconfirmed.
            gone = [g for g in held if g.scope == scope or wanted.covers(parse_scope(g.scope))
                    or wanted.covers(parse_scope(g.scope).plain)]
            if not gone:
                raise DreamerError("not_found", f"{agent} holds no grant covered by {scope}")
            for g in gone:
                s.delete(g)
            audit(s, user_id=who.user_id, actor=who.actor, action="grants.revoke", target=agent,
                  scope=scope, decision="allow", detail={"scopes": [g.scope for g in gone]})
            revoked = [g.scope for g in gone]
        self.cache.forget(who.user_id, agent)
        if fs_grants(revoked):
            # A folder is bound when a worker starts: stop the workers that have it
            # (a busy one when its call ends), so the next call runs without it.
            await self.pool.evict(who.user_name, agent)
        return [r for r in self.permissions(who, agent) if r["scope"] in revoked]

    # -- internals --------------------------------------------------------------------------------

    def _place_bundle(self, src: Path, name: str, version: str, digest: str) -> Path:
        """Copy the approved files to their content address. A folder already there with the
        same digest is reused; one with other content (a crash, a tampered copy) is not what
        that address names, so it is replaced. No upload can touch another digest's folder,
        so there is no "already installed with different contents" answer to learn from."""
        dest = bundle_folder(self.settings.bundles_dir, name, version, digest)
        if dest.exists():
            if tree_digest(dest) == digest:
                return dest
            remove_tree(dest)
        install_copy(src, dest)
        return dest

    def _new_stage_dir(self, who: Principal | None = None) -> Path:
        # The owner's id is part of the name, so their staging use is measured by a glob.
        self.settings.staging_dir.mkdir(parents=True, exist_ok=True)
        owner = f"{who.user_id}x" if who is not None else ""
        work = self.settings.staging_dir / ("bdl_" + owner + uuid.uuid4().hex)
        work.mkdir()
        return work

    def _staging_room(self, who: Principal | None) -> int | None:
        """Bytes the user may still unpack into staging (None: no owner, no quota); refuses at none."""
        if who is None:
            return None
        return staging_room(self.settings, who.user_id)

    def _stage_dir(self, bundle_id: str) -> Path:
        if not bundle_id.startswith("bdl_") or not bundle_id[4:].isalnum():
            raise DreamerError("invalid_argument", f"{bundle_id!r} is not a staged bundle id")
        return self.settings.staging_dir / bundle_id

    def _sweep_stale(self) -> None:
        root = self.settings.staging_dir
        if not root.is_dir():
            return
        for work in root.iterdir():
            try:
                if time.time() - work.stat().st_mtime > STAGE_TTL_S:
                    shutil.rmtree(work, ignore_errors=True)
            except OSError:
                continue


def starter_may_hold(scope: str) -> bool:
    """Whether a starter agent, installed without a review, may hold this optional scope."""
    parsed = parse_scope(scope)
    return parsed.risk != "high" and scope != "llm" and not parsed.is_chooser and not scope.endswith("!confirm")


def last_used(session: Session, user_id: int, agents: list[str]) -> dict[tuple[str, str], str]:
    """(agent, scope) → when the agent last used that grant: its newest allowed syscall in the audit log."""
    if not agents:
        return {}
    actors = {f"agent:{a}": a for a in agents}
    rows = session.execute(
        select(AuditEntry.actor, AuditEntry.scope, func.max(AuditEntry.at))
        .where(AuditEntry.user_id == user_id, AuditEntry.actor.in_(list(actors)), AuditEntry.decision == "allow",
               AuditEntry.scope.is_not(None))
        .group_by(AuditEntry.actor, AuditEntry.scope)
    )
    # The query keeps only rows whose scope is set.
    return {(actors[actor], scope): at.isoformat() for actor, scope, at in rows if scope is not None}


def _unpack(archive: bytes, work: Path, doing: str, room: int | None = None) -> tuple[Path, Manifest]:
    """Unpack; `room` (the user's staging quota left) lowers the unpacked-size ceiling."""
    limits = BundleLimits()
    if room is None or room >= limits.max_total_bytes:
        bundle = extract(archive, work / "bundle", limits)
    else:
        try:
            bundle = extract(archive, work / "bundle", BundleLimits(max_total_bytes=room))
        except DreamerError as exc:
            if exc.code == "invalid_bundle" and (f"past {room} bytes" in exc.message or "expands to more than" in exc.message):
                raise staging_full(room) from None
            raise
    return bundle, load_manifest(bundle)


def _turned_on(name: str, required: list[str], optional: list[str], grant: list[str] | tuple[str, ...]) -> set[str]:
    """The optional scopes the user asked for at install; anything else is refused, so a typo
    never installs with less (or more) than the user meant."""
    chosen: set[str] = set()
    for scope in grant:
        if scope in required:
            continue  # granted anyway
        if scope in optional and parse_scope(scope).is_chooser:
            raise DreamerError(
                "invalid_argument", f"{scope} names no folder; after installing, grant a folder with "
                f"`dreamer grant {name} {parse_scope(scope).kind}:/path/to/folder`"
            )
        if scope not in optional and not _admitted(scope, optional):
            raise DreamerError(
                "invalid_argument", f"{name} does not ask for {scope}; its optional permissions are: "
                f"{', '.join(optional) or 'none'}"
            )
        chosen.add(scope)
    return chosen


def _parse(scope: str) -> Scope:
    try:
        return parse_scope(scope)
    except ScopeError as exc:
        raise DreamerError("invalid_argument", str(exc)) from None


def _admitted(scope: str, declared: set[str] | list[str]) -> bool:
    """Whether `scope` is a folder the user may grant under a declared fs:* / fs.ro:*."""
    try:
        wanted = parse_scope(scope)
    except ScopeError:
        return False
    return any(parse_scope(d).admits(wanted) for d in declared)
