"""Installing a tool bundle: list its tools at stage time, record it on approval.

A staged tool bundle's server is started once (a stdio server in a sandbox with a
scratch data folder; a remote one over HTTP without the user's headers) so the review
can show its tools. Approval copies the bundle read-only into tool-bundles/NAME/VERSION
and records it, with the tools the user left out switched off, in one transaction.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select

from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.archive import install_copy, remove_tree, tree_digest
from dreamer.contracts.manifest import Manifest
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.integrity import bundle_folder
from dreamer.kernel.install.names import check_name_free
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.store.models import ToolBundle, ToolInstallation, utcnow
from dreamer.kernel.tools import web
from dreamer.kernel.tools.naming import split
from dreamer.kernel.tools.registry import ToolRegistry
from dreamer.kernel.tools.review import qualified_scope, tool_review
from dreamer.kernel.tools.sessions import ToolSession
from dreamer.kernel.tools.skills import load_skills
from dreamer.kernel.tools.remote import checked_headers, remote_target

MAX_HEADERS = 20
MAX_TOOLS_FILE_BYTES = 1024 * 1024


class _ToolSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    description: str = Field(default="", max_length=2000)
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    annotations: dict[str, Any] = Field(default_factory=dict)


class _ToolsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[1]
    tools: list[_ToolSpec] = Field(max_length=256)


def load_tools_file(bundle: Path) -> list[dict[str, Any]] | None:
    """A tool bundle's tools.json, validated, or None when it has none."""
    path = bundle / "tools.json"
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_TOOLS_FILE_BYTES:
        raise DreamerError("invalid_bundle", f"tools.json is larger than {MAX_TOOLS_FILE_BYTES // 1024} KiB")
    try:
        parsed = _ToolsFile.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise DreamerError("invalid_bundle", f"tools.json: field '{where}': {first['msg']}") from None
    names = [t.name for t in parsed.tools]
    if len({n.lower() for n in names}) != len(names):
        raise DreamerError("invalid_bundle", "tools.json lists a tool name twice")
    return [t.model_dump() for t in parsed.tools]


class ToolInstaller:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.settings = registry.settings
        self.store = registry.store
        self._lock = asyncio.Lock()

    async def stage(self, who: Principal, work: Path, bundle: Path, manifest: Manifest) -> dict[str, Any]:
        skills = [s.as_dict() for s in load_skills(bundle)]
        manifest_dict = manifest.model_dump(mode="json", exclude_none=True)
        tools, problems = await self._list(manifest_dict, bundle, work / "data")
        staged = {
            "bundle_id": work.name, "user_id": who.user_id, "created": time.time(), "digest": tree_digest(bundle),
            "manifest": manifest_dict, "functions": [], "tools": tools, "skills": skills,
        }
        (work / "staged.json").write_text(json.dumps(staged))
        upgrade = None
        try:
            current = self.registry.installed(who.user_id, manifest.name)
        except DreamerError:
            current = None
        if current is not None:
            old, new = {t["name"] for t in current.tools}, {t["name"] for t in tools}
            upgrade = {
                "from_version": current.version, "to_version": manifest.version,
                "added_functions": sorted(new - old), "removed_functions": sorted(old - new),
                "added_scopes": [], "removed_scopes": [], "needs_approval": True,
            }
        return {
            "bundle_id": work.name, "manifest": manifest_dict, "functions": [], "tools": tools,
            "review": tool_review(manifest_dict, tools, skills, problems), "upgrade": upgrade,
        }

    async def build(self, bundle: Path, manifest: Manifest, scratch: Path) -> list[dict[str, Any]]:
        """`dreamer build` of a tool bundle: its server's tools, listed live, for tools.json."""
        tools, problems = await self._probe(manifest.model_dump(mode="json", exclude_none=True), bundle, scratch)
        if problems:
            raise DreamerError("invalid_bundle", f"{manifest.name}: {problems[0]}")
        return tools

    async def _list(self, manifest: dict[str, Any], bundle: Path, scratch: Path) -> tuple[list[dict[str, Any]], list[str]]:
        """The tools to review: tools.json when the bundle ships one (made by `dreamer build`),
        else listed from the running server. Calls later go only to tools listed here."""
        shipped = load_tools_file(bundle)
        if shipped is not None:
            return shipped, []
        return await self._probe(manifest, bundle, scratch)

    async def _probe(self, manifest: dict[str, Any], bundle: Path, scratch: Path) -> tuple[list[dict[str, Any]], list[str]]:
        server = manifest["server"]
        if server.get("builtin"):
            return [t.as_dict() for t in web.TOOLS.values()], []
        if server.get("url"):
            # Nothing is sent before the user approves: the URL is only parsed now, and its
            # tools are listed on first use, through the address policy (kernel/tools/remote.py).
            remote_target(manifest["name"], server["url"])
            return [], [f"the tools of {manifest['name']} are listed when it is first used, after you approve it"]
        scratch.mkdir(parents=True, exist_ok=True)
        transport = self.registry.stdio_transport(manifest["name"], bundle, server["command"], scratch, manifest.get("limits"))
        session = ToolSession(manifest["name"], transport)
        try:
            await session.open(self.settings.tool_connect_timeout_s)
        except DreamerError as exc:
            raise DreamerError("invalid_bundle", f"{manifest['name']}: {exc.message}") from None
        finally:
            await session.close()
        if not session.tools and not session.problems:
            raise DreamerError("invalid_bundle", f"{manifest['name']}: its server declares no tools")
        return [t.as_dict() for t in session.tools.values()], session.problems

    async def approve(
        self, who: Principal, work: Path, staged: dict[str, Any], without: list[str], *, shipped: bool = False
    ) -> dict[str, Any]:
        manifest, tools = staged["manifest"], staged["tools"]
        name, version = manifest["name"], manifest["version"]
        names = {t["name"] for t in tools}
        disabled: set[str] = set()
        for scope in without:
            tool = scope.removeprefix(f"tool:{name}.")
            if tool == scope or tool not in names:
                raise DreamerError("invalid_argument", f"{name} has no tool {scope!r} to switch off; its tools are {', '.join(sorted(names)) or 'none'}")
            disabled.add(tool)
        async with self._lock:
            # Before anything is written: a refused name leaves nothing behind.
            with self.store.session() as s:
                check_name_free(s, who.user_id, name, "tool", builtin_tools=frozenset(), shipped=shipped)
            await self.registry.evict(who.user_name, name)
            dest = self._place(work / "bundle", name, version, staged["digest"])
            with self.store.session() as s:
                # Keyed by content like agent bundles: a row another user runs is never changed.
                tb = s.scalar(select(ToolBundle).where(
                    ToolBundle.name == name, ToolBundle.version == version, ToolBundle.digest == staged["digest"]))
                if tb is None:
                    tb = ToolBundle(name=name, version=version, digest=staged["digest"], publisher=manifest["publisher"],
                                    manifest=manifest, tools=tools, skills=staged["skills"], path=str(dest))
                    s.add(tb)
                    s.flush()
                row = s.scalar(select(ToolInstallation).where(ToolInstallation.user_id == who.user_id, ToolInstallation.server == name))
                action = "install" if row is None else "upgrade"
                if row is None:
                    row = ToolInstallation(user_id=who.user_id, server=name, bundle_id=tb.id, disabled=sorted(disabled), headers={})
                    s.add(row)
                else:
                    # Tools switched off before stay off; headers stay.
                    row.bundle_id, row.updated_at = tb.id, utcnow()
                    row.disabled = sorted((set(row.disabled or []) & names) | disabled)
                audit(
                    s, user_id=who.user_id, actor=who.actor, action=action, target=f"tool:{name}@{version}",
                    decision="allow", detail={"disabled": sorted(row.disabled), "digest": staged["digest"]},
                )
            shutil.rmtree(work, ignore_errors=True)
        self.settings.tool_data_dir(who.user_name, name).mkdir(parents=True, exist_ok=True)
        return self.registry.installed(who.user_id, name).view()

    async def uninstall(self, who: Principal, server: str, purge: bool) -> dict[str, Any]:
        async with self._lock:
            inst = self.registry.installed(who.user_id, server)
            with self.store.session() as s:
                row = s.scalar(select(ToolInstallation).where(ToolInstallation.user_id == who.user_id, ToolInstallation.server == server))
                if row is not None:
                    s.delete(row)
                audit(s, user_id=who.user_id, actor=who.actor, action="uninstall", target=f"tool:{server}@{inst.version}",
                      decision="allow", detail={"purge": purge})
            await self.registry.evict(who.user_name, server)
            if purge:
                shutil.rmtree(self.settings.tool_data_dir(who.user_name, server).parent, ignore_errors=True)
        return {"uninstalled": server, "kind": "tool", "purged": purge}

    async def switch(self, who: Principal, name: str, enabled: bool) -> dict[str, Any]:
        """Switch one tool (`server.tool`) on or off for this user; takes effect on the next call."""
        server, tool = split(name)
        inst = self.registry.installed(who.user_id, server)
        if tool not in {t["name"] for t in inst.tools}:
            raise DreamerError("not_found", f"{server} has no tool {tool!r}; `dreamer tools` lists its tools")
        with self.store.session() as s:
            row = s.scalar(select(ToolInstallation).where(ToolInstallation.user_id == who.user_id, ToolInstallation.server == server))
            assert row is not None
            off = set(row.disabled or [])
            off = off - {tool} if enabled else off | {tool}
            row.disabled, row.updated_at = sorted(off), utcnow()
            audit(s, user_id=who.user_id, actor=who.actor, action="tools.enable" if enabled else "tools.disable",
                  target=name, scope=qualified_scope(server, tool), decision="allow")
        return self.registry.installed(who.user_id, server).view()

    async def set_headers(self, who: Principal, server: str, headers: dict[str, str]) -> dict[str, Any]:
        """The headers sent to a remote server for this user (e.g. Authorization); replaces the old set."""
        inst = self.registry.installed(who.user_id, server)
        if not inst.url:
            raise DreamerError("invalid_argument", f"{server} runs in your sandbox over stdio; headers are only for remote servers")
        if len(headers) > MAX_HEADERS or any(
            not isinstance(k, str) or not isinstance(v, str) or not k or any(c in k + v for c in "\r\n\0") or len(k) + len(v) > 8192
            for k, v in headers.items()
        ):
            raise DreamerError("invalid_argument", f"headers must be at most {MAX_HEADERS} single-line name: value strings")
        headers = checked_headers(server, headers)
        with self.store.session() as s:
            row = s.scalar(select(ToolInstallation).where(ToolInstallation.user_id == who.user_id, ToolInstallation.server == server))
            assert row is not None
            row.headers, row.updated_at = dict(headers), utcnow()
            # Names only: the values are secrets and the audit log keeps everything forever.
            audit(s, user_id=who.user_id, actor=who.actor, action="tools.headers", target=server,
                  decision="allow", detail={"names": sorted(headers)})
        await self.registry.evict(who.user_name, server)
        return self.registry.installed(who.user_id, server).view()

    def _place(self, src: Path, name: str, version: str, digest: str) -> Path:
        """Copy to the content address (kernel/install/integrity.py); other content never shares it."""
        dest = bundle_folder(self.settings.tool_bundles_dir, name, version, digest)
        if dest.exists():
            if tree_digest(dest) == digest:
                return dest
            remove_tree(dest)
        install_copy(src, dest)
        return dest
