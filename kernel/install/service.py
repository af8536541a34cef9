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
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.bundles.archive import extract, install_copy, pack, remove_tree, tree_digest
from dreamer.kernel.bundles.agenttests import run_agent_tests
from dreamer.kernel.bundles.build import describe_bundle
from dreamer.kernel.bundles.functions import dump_functions, load_functions
from dreamer.kernel.bundles.manifest import Manifest, load_manifest
from dreamer.kernel.config import Settings
from dreamer.kernel.errors import DreamerError
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.install.registry import InstalledAgent, find_installed, get_installed, grants_of, list_installed
from dreamer.kernel.install.overlap import overlap_warnings
from dreamer.kernel.invocations.service import Principal
from dreamer.kernel.install import snapshots
from dreamer.kernel.permissions.review import review, scope_rows, upgrade_diff
from dreamer.kernel.permissions.scopes import ScopeError, parse_scope
from dreamer.kernel.sandbox.base import Sandbox
from dreamer.kernel.sandbox.mounts import fs_grants
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, BundleVersion, Grant, Installation, utcnow
from dreamer.kernel.workers.pool import WorkerPool

if TYPE_CHECKING:
    from dreamer.kernel.tools.install import ToolInstaller

STAGE_TTL_S = 3600


class Installer:
    def __init__(
        self, settings: Settings, store: Store, sandbox: Sandbox, pool: WorkerPool, cache: InstallCache | None = None
    ) -> None:
        self.settings = settings
        self.store = store
        self.sandbox = sandbox
        self.pool = pool
        self.cache = cache or InstallCache(store)
        self._lock = asyncio.Lock()  # installs are rare; one at a time keeps bundles/ consistent
        self.tools: ToolInstaller | None = None  # tool bundles (kind: tool), set by Kernel.build
        # Called after an install, upgrade or uninstall (the kernel syncs the agent's triggers).
        self.on_change: Callable[[Principal, str], Awaitable[None]] | None = None

    # -- stage --------------------------------------------------------------------------

    async def build(self, archive: bytes) -> list[dict[str, Any]]:
        """Describe a bundle's functions by importing it in the sandbox (`dreamer build`);
        for a tool bundle, its server's tools (tools.json)."""
        return await self._in_scratch(archive, "building", self._describe)

    async def _describe(self, sandbox: Sandbox, settings: Settings, bundle: Path, manifest: Manifest, scratch: Path) -> Any:
        if manifest.kind == "tool":
            return await self._tools().build(bundle, manifest, scratch)
        return await describe_bundle(sandbox, settings, bundle, manifest, scratch)

    async def test(self, archive: bytes) -> dict[str, Any]:
        """Run the bundle's own tests/ with pytest in the sandbox (`dreamer test`)."""
        return await self._in_scratch(archive, "testing", run_agent_tests)

    async def _in_scratch(self, archive: bytes, doing: str, run: Any) -> Any:
        """Unpack into a throwaway folder, run `run(sandbox, settings, bundle, manifest, scratch)`, delete it."""
        work = self._new_stage_dir()
        try:
            bundle, manifest = _unpack(archive, work, doing)
            return await run(self.sandbox, self.settings, bundle, manifest, work / "data")
        finally:
            shutil.rmtree(work, ignore_errors=True)

    async def stage(self, who: Principal, archive: bytes, provenance: dict[str, Any] | None = None) -> dict[str, Any]:
        """Unpack and check a bundle and answer with its review. `provenance` is set only by
        the gallery installer, after it verified the publisher's signature (gallery/verify.py)."""
        self._sweep_stale()
        work = self._new_stage_dir()
        try:
            bundle, manifest = _unpack(archive, work, "installing")
            if manifest.kind == "tool":
                return await self._tools().stage(who, work, bundle, manifest)
            functions = load_functions(bundle)
            if functions is None:
                specs = await describe_bundle(self.sandbox, self.settings, bundle, manifest, work / "data")
                (bundle / "functions.json").write_text(dump_functions(specs))
                functions = load_functions(bundle)
            fn_dicts = [f.model_dump() for f in functions or []]
            by_name = {f["name"]: f for f in fn_dicts}
            for trigger in manifest.triggers:
                if trigger.entrypoint not in by_name:
                    raise DreamerError(
                        "invalid_bundle", f"agent.yaml: trigger {trigger.name!r} names entrypoint "
                        f"{trigger.entrypoint!r}, which is not a function in functions.json"
                    )
                required = by_name[trigger.entrypoint].get("parameters", {}).get("required") or []
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
                "digest": tree_digest(bundle),
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
            warnings = overlap_warnings(manifest.name, fn_dicts, list_installed(s, who.user_id))
        upgrade = None
        if current is not None:
            upgrade = upgrade_diff(current.manifest, current.functions, manifest_dict, fn_dicts, granted)
        shown = review(manifest_dict, fn_dicts, self.settings.limits)
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

    async def approve(self, who: Principal, bundle_id: str, without: list[str]) -> InstalledAgent | dict[str, Any]:
        work = self._stage_dir(bundle_id)
        staged_file = work / "staged.json"
        if not staged_file.is_file():
            raise DreamerError("not_found", f"no staged bundle {bundle_id!r}; upload it again")
        staged = json.loads(staged_file.read_text())
        if staged["user_id"] != who.user_id:
            raise DreamerError("not_found", f"no staged bundle {bundle_id!r}; upload it again")
        manifest, functions = staged["manifest"], staged["functions"]
        if manifest.get("kind") == "tool":
            return await self._tools().approve(who, work, staged, without)
        name, version = manifest["name"], manifest["version"]
        required = list(manifest.get("permissions", {}).get("required", []))
        optional = list(manifest.get("permissions", {}).get("optional", []))
        for scope in without:
            if scope in required:
                raise DreamerError("invalid_argument", f"{scope} is required by {name} and cannot be left out")
            if scope not in optional:
                raise DreamerError("invalid_argument", f"{name} does not ask for {scope}, so there is nothing to leave out")

        async with self._lock:
            await self.pool.evict(who.user_name, name)
            self._snapshot_before_upgrade(who, name, version)
            dest = self._place_bundle(work / "bundle", name, version, staged["digest"], who)
            with self.store.session() as s:
                bv = s.scalar(select(BundleVersion).where(BundleVersion.name == name, BundleVersion.version == version))
                if bv is None:
                    bv = BundleVersion(name=name, version=version)
                    s.add(bv)
                bv.kind, bv.digest, bv.publisher = manifest.get("kind", "agent"), staged["digest"], manifest["publisher"]
                bv.manifest, bv.functions, bv.path = manifest, functions, str(dest)
                provenance = staged.get("provenance") or {}
                bv.source, bv.publisher_fingerprint = provenance.get("gallery"), provenance.get("fingerprint")
                s.flush()
                inst = s.scalar(
                    select(Installation).where(Installation.user_id == who.user_id, Installation.agent == name)
                )
                previous = {g.scope for g in grants_of(s, who.user_id, name)}
                declared = set(required) | set(optional)
                if inst is None:
                    inst = Installation(user_id=who.user_id, agent=name, bundle_id=bv.id)
                    s.add(inst)
                    wanted = set(required) | (set(optional) - set(without))
                    action = "install"
                else:
                    old_declared = set(previous)
                    old = s.get(BundleVersion, inst.bundle_id)
                    if old is not None:
                        p = old.manifest.get("permissions", {})
                        old_declared = set(p.get("required", [])) | set(p.get("optional", []))
                    # Keep what was granted and still declared; newly declared scopes were
                    # shown in the upgrade review that is being approved now.
                    wanted = (previous & declared) | set(required) | ((declared - old_declared) - set(without))
                    wanted -= set(without)
                    # Folders the user chose under a declared fs:* stay while it is declared.
                    wanted |= {g for g in previous if _admitted(g, declared)}
                    inst.bundle_id = bv.id
                    inst.updated_at = utcnow()
                    action = "upgrade"
                wanted = {w for w in wanted if not parse_scope(w).is_chooser}  # fs:* names no folder to grant
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
            old_version, old_id = old.version, old.id
        snapshots.take(self.settings.agent_data_dir(who.user_name, name), old_version, old_id, grants)

    async def rollback(self, who: Principal, agent: str) -> InstalledAgent:
        """Back to the version before the latest upgrade, with its grants and its data."""
        data = self.settings.agent_data_dir(who.user_name, agent)
        async with self._lock:
            with self.store.session() as s:
                current = get_installed(s, who.user_id, agent)
                snap = snapshots.read(data, agent)
                old = s.get(BundleVersion, snap.bundle_id)
                if old is None or old.name != agent or not Path(old.path).is_dir():
                    raise DreamerError(
                        "not_found", f"{agent} {snap.version} is no longer on this kernel, so there is nothing to roll back to"
                    )
            await self.pool.evict(who.user_name, agent)
            snapshots.restore(data)
            with self.store.session() as s:
                inst = s.scalar(select(Installation).where(Installation.user_id == who.user_id, Installation.agent == agent))
                assert inst is not None
                inst.bundle_id, inst.updated_at = snap.bundle_id, utcnow()
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
        and optional ones that are neither high risk nor cost money. The user can grant
        the rest later (`dreamer grant notes net:*`).
        """
        staged = await self.stage(who, pack(folder))
        optional = staged["manifest"].get("permissions", {}).get("optional", [])
        unreviewed = [s for s in optional if parse_scope(s).risk == "high" or s == "llm"]
        return await self.approve(who, staged["bundle_id"], without=unreviewed)

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
        return [r for r in self.permissions(who, agent) if r["scope"] in matching]

    async def revoke(self, who: Principal, agent: str, scope: str) -> list[dict[str, Any]]:
        wanted = _parse(scope)
        with self.store.session() as s:
            get_installed(s, who.user_id, agent)
            held = grants_of(s, who.user_id, agent)
            # Revoking a broad scope revokes every narrower grant it covers.
            gone = [g for g in held if g.scope == scope or wanted.covers(parse_scope(g.scope))]
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

    def _place_bundle(self, src: Path, name: str, version: str, digest: str, who: Principal) -> Path:
        dest = self.settings.bundles_dir / name / version
        if dest.exists():
            if tree_digest(dest) == digest:
                return dest
            with self.store.session() as s:
                bv = s.scalar(select(BundleVersion).where(BundleVersion.name == name, BundleVersion.version == version))
                others = []
                if bv is not None:
                    others = list(s.scalars(select(Installation.user_id).where(
                        Installation.bundle_id == bv.id, Installation.user_id != who.user_id)))
            if others:
                raise DreamerError(
                    "conflict",
                    f"{name} {version} is already installed on this kernel with different contents; "
                    "raise the version in agent.yaml",
                )
            remove_tree(dest)
        install_copy(src, dest)
        return dest

    def _new_stage_dir(self) -> Path:
        self.settings.staging_dir.mkdir(parents=True, exist_ok=True)
        work = self.settings.staging_dir / ("bdl_" + uuid.uuid4().hex)
        work.mkdir()
        return work

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
    return {(actors[actor], scope): at.isoformat() for actor, scope, at in rows}


def _unpack(archive: bytes, work: Path, doing: str) -> tuple[Path, Manifest]:  # noqa: ARG001
    bundle = extract(archive, work / "bundle")
    return bundle, load_manifest(bundle)


def _parse(scope: str):  # noqa: ANN202 - returns Scope
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
