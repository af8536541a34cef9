"""The tool registry: each user's installed tool servers, their live sessions, and calls.

Sessions are opened on first use and kept warm per (user, server); a server that
crashed is started again on the next call, one that does not answer in time is
stopped (its call fails with `timeout`) without holding up any other user's or
server's calls, and a server that cannot start is not retried for a few seconds,
so a crash loop cannot become a fork loop. Every call, allowed or refused, is one
audit entry with the size of its arguments, its duration and its outcome.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import jsonschema
from jsonschema.exceptions import SchemaError
from sqlalchemy import select

from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.integrity import check_bundle
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.permissions.gate import Decision, decide
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec
from dreamer.kernel.sandbox.runtime import current_runtime
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Grant, ToolBundle, ToolInstallation, User
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.tools import web
from dreamer.kernel.tools.naming import qualified, split
from dreamer.kernel.tools.sessions import ToolSession, TransportFactory, result_value
from dreamer.kernel.tools.transport import Fault, remote_http, sandboxed_stdio

log = logging.getLogger("dreamer.tools")

MAX_ARGS_BYTES = 1024 * 1024
# After a server failed to start, calls fail fast with the same error for this long.
START_BACKOFF_S = 2.0
# Time kept back from an agent's deadline so its code can still handle a tool timeout.
DEADLINE_RESERVE_S = 0.25
TOOLSERVER_MODULE = "dreamer.sdk.toolserver"


@dataclass(frozen=True)
class InstalledTool:
    server: str
    version: str
    title: str
    description: str
    publisher: str
    bundle_path: Path
    manifest: dict[str, Any]
    tools: list[dict[str, Any]]
    skills: list[dict[str, Any]]
    disabled: frozenset[str]
    headers: dict[str, str]
    installed_at: datetime
    digest: str = ""  # the bundle's tree_digest, checked whenever its server starts

    @property
    def url(self) -> str | None:
        return (self.manifest.get("server") or {}).get("url")

    @property
    def builtin(self) -> str | None:
        return (self.manifest.get("server") or {}).get("builtin")

    def view(self) -> dict[str, Any]:
        """What `dreamer tools` shows; never the headers' values."""
        return {
            "name": self.server, "version": self.version, "kind": "tool", "title": self.title,
            "description": self.description, "publisher": self.publisher,
            "transport": "streamable-http" if self.url else "kernel" if self.builtin else "stdio",
            "url": self.url,
            "tools": [
                {**{k: t[k] for k in ("name", "description", "annotations")}, "qualified": qualified(self.server, t["name"]),
                 "enabled": t["name"] not in self.disabled}
                for t in self.tools
            ],
            "skills": [{"name": s["name"], "description": s["description"]} for s in self.skills],
            "headers": sorted(self.headers),
        }


@dataclass(frozen=True)
class Caller:
    """Who calls a tool: the user themselves (CLI, API, gateway, Sidekick) or one of their agents."""

    actor: str  # as written to the audit log
    agent: str | None = None
    invocation_id: str | None = None
    deadline: float | None = None
    # The agent's syscall context, for built-in tools that use other syscalls' checks (web → net.fetch).
    syscall: Any = None


def installed_tool(row: ToolInstallation, bundle: ToolBundle) -> InstalledTool:
    m = bundle.manifest
    return InstalledTool(
        server=row.server, version=bundle.version, title=m.get("title", row.server),
        description=m.get("description", ""), publisher=bundle.publisher, bundle_path=Path(bundle.path),
        manifest=m, tools=list(bundle.tools), skills=list(bundle.skills), disabled=frozenset(row.disabled or []),
        headers=dict(row.headers or {}), installed_at=row.installed_at, digest=bundle.digest,
    )


def stdio_argv(command: list[str]) -> list[str]:
    """`python -m MODULE ...` runs the kernel's own interpreter through the toolserver launcher;
    any other command runs as written (it sees only what the sandbox shows)."""
    python = current_runtime().python
    if command[0] in ("python", "python3"):
        rest = command[1:]
        if len(rest) >= 2 and rest[0] == "-m":
            return [python, "-S", "-m", TOOLSERVER_MODULE, *rest[1:]]
        if rest and not rest[0].startswith("-"):
            return [python, "-S", str(Path("/agent") / rest[0]), *rest[1:]]
        return [python, "-S", *rest]
    return list(command)


class ToolRegistry:
    def __init__(
        self, settings: Settings, store: Store, sandbox: Sandbox, cache: InstallCache | None = None,
        writer: GroupWriter | None = None,
    ) -> None:
        self.settings = settings
        self.cache = cache
        self.writer = writer  # the kernel's group writer: audit entries share its commits
        self.store = store
        self.sandbox = sandbox
        self._sessions: dict[tuple[str, str, str], ToolSession] = {}
        self._locks: dict[tuple[str, str, str], asyncio.Lock] = {}
        self._failed: dict[tuple[str, str, str], tuple[float, DreamerError]] = {}
        self._reaper: asyncio.Task[None] | None = None
        self.started = 0  # servers started since boot, for tests

    # -- what is installed -----------------------------------------------------------

    def installed(self, user_id: int, server: str) -> InstalledTool:
        with self.store.session() as s:
            row = s.execute(
                select(ToolInstallation, ToolBundle)
                .join(ToolBundle, ToolBundle.id == ToolInstallation.bundle_id)
                .where(ToolInstallation.user_id == user_id, ToolInstallation.server == server)
            ).first()
        if row is None:
            raise DreamerError("not_found", f"you have no tool server named {server!r}; `dreamer tools` lists yours")
        return installed_tool(*row)

    def installed_all(self, user_id: int) -> list[InstalledTool]:
        with self.store.session() as s:
            rows = s.execute(
                select(ToolInstallation, ToolBundle)
                .join(ToolBundle, ToolBundle.id == ToolInstallation.bundle_id)
                .where(ToolInstallation.user_id == user_id)
                .order_by(ToolInstallation.server)
            ).all()
        return [installed_tool(*row) for row in rows]

    # -- calls -------------------------------------------------------------------------

    async def call(self, user_id: int, user_name: str, name: str, args: Any, caller: Caller) -> Any:
        """Check, validate, call and audit one tool call; the tool's value or a DreamerError."""
        started = time.monotonic()
        server, tool = split(name)
        size = _size(args)
        detail: dict[str, Any] = {"args_bytes": size}
        scope = f"tool:{server}.{tool}"
        # A person (no agent) needs no grant: the decision is theirs, logged under the scope.
        decision = Decision(caller.actor, scope, scope)
        try:
            if caller.agent is not None:
                decision = decide(self._grants(user_id, caller.agent), caller.agent, scope, self._declared(user_id, caller.agent))
                decision.require(f"use the tool {name}")
            if not isinstance(args, dict):
                raise DreamerError("invalid_argument", f"the arguments of {name} must be a JSON object")
            if size > MAX_ARGS_BYTES:
                raise DreamerError("payload_too_large", f"the arguments of {name} are larger than {MAX_ARGS_BYTES // 1024} KiB")
            inst = self.installed(user_id, server)
            if tool in inst.disabled:
                raise DreamerError(
                    "tool_disabled",
                    f"the tool {name} is disabled by the user (`dreamer tools enable {server} {tool}` switches it on)",
                )
            if inst.builtin:
                value = await self._builtin(user_id, name, tool, args, caller)
            else:
                session = await self.session(user_name, inst)
                info = session.tools.get(tool)
                if info is not None and inst.tools and tool not in {t["name"] for t in inst.tools}:
                    # Only what the user reviewed at install may be called; a server that grew a tool since needs a new version.
                    info = None
                if info is None and tool in session.refused:
                    raise DreamerError("conflict", f"{name} cannot be used: {session.refused[tool]}")
                if info is None:
                    raise DreamerError("not_found", f"the {server} tool server has no tool {tool!r}; its tools are: {', '.join(session.tools) or 'none'}")
                validate_args(name, info.input_schema, args)
                result = await session.call(tool, args, self._timeout(caller))
                value = result_value(result, name)
        except DreamerError as exc:
            denied = exc.code in ("permission_denied", "tool_disabled")
            detail |= {"elapsed_ms": _ms(started), "outcome": exc.code}
            await self._audit(user_id, caller, name, decision, "deny" if denied else "allow", detail)
            raise
        detail |= {"elapsed_ms": _ms(started), "outcome": "ok", "result_bytes": _size(value)}
        await self._audit(user_id, caller, name, decision, "allow", detail)
        return value

    async def _builtin(self, user_id: int, name: str, tool: str, args: dict[str, Any], caller: Caller) -> Any:
        info = web.TOOLS.get(tool)
        if info is None:
            raise DreamerError("not_found", f"the web tool has no tool {tool!r}; its tools are: {', '.join(web.TOOLS)}")
        validate_args(name, info.input_schema, args)
        context = caller.syscall
        if context is None:
            invoker = SimpleNamespace(settings=self.settings, cache=self.cache, store=self.store, writer=self.writer)
            context = web.UserFetch(invoker, SimpleNamespace(user_id=user_id), caller.actor)
        return await web.call(tool, args, context)

    def _grants(self, user_id: int, agent: str) -> frozenset[str]:
        if self.cache is not None:
            return self.cache.grants(user_id, agent)
        with self.store.session() as s:
            return frozenset(s.scalars(select(Grant.scope).where(Grant.user_id == user_id, Grant.agent == agent)))

    def _declared(self, user_id: int, agent: str) -> frozenset[str] | None:
        # Only with the install cache (the kernel's case): it holds the manifests.
        return self.cache.declared(user_id, agent) if self.cache is not None else None

    def _timeout(self, caller: Caller) -> float:
        timeout = self.settings.tool_call_timeout_s
        if caller.deadline is not None:
            timeout = min(timeout, caller.deadline - time.monotonic() - DEADLINE_RESERVE_S)
            if timeout <= 0:
                raise DreamerError("timeout", "the invocation has no time left for a tool call")
        return timeout

    async def _audit(
        self, user_id: int, caller: Caller, name: str, decision: Decision, outcome: Literal["allow", "deny"],
        detail: dict[str, Any],
    ) -> None:
        def entry(conn: Any) -> None:
            decision.audit(
                conn, user_id=user_id, actor=caller.actor, action="tools.call", target=name,
                decision=outcome, detail=detail, invocation_id=caller.invocation_id,
            )

        if self.writer is not None:
            await self.writer.write(entry)
            return
        with self.store.session() as s:
            entry(s)

    # -- sessions ----------------------------------------------------------------------

    async def session(self, user_name: str, inst: InstalledTool) -> ToolSession:
        """The warm session of this user's server, started when there is none (or it died)."""
        key = (user_name, inst.server, _key_digest(inst))
        live = self._sessions.get(key)
        if live is not None and live.alive:
            return live
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            live = self._sessions.get(key)
            if live is not None and live.alive:
                return live
            if live is not None:
                self._sessions.pop(key, None)
                await live.close()
            failed = self._failed.get(key)
            if failed is not None and time.monotonic() - failed[0] < START_BACKOFF_S:
                raise failed[1]
            session = ToolSession(inst.server, self._transport(user_name, inst))
            self.started += 1
            try:
                await session.open(self.settings.tool_connect_timeout_s)
            except DreamerError as exc:
                self._failed[key] = (time.monotonic(), exc)
                raise
            self._failed.pop(key, None)
            self._sessions[key] = session
            self.start_reaper()
            if inst.url and not inst.tools and session.tools:
                self._remember_tools(inst, session)
            return session

    def _remember_tools(self, inst: InstalledTool, session: ToolSession) -> None:
        """A remote server whose tools could not be listed at install (it wanted the user's
        headers) gets them recorded on first connection, for `dreamer tools`, Sidekick and /mcp."""
        with self.store.session() as s:
            row = s.scalar(select(ToolBundle).where(
                ToolBundle.name == inst.server, ToolBundle.version == inst.version, ToolBundle.digest == inst.digest))
            if row is not None and not row.tools:
                row.tools = [t.as_dict() for t in session.tools.values()]

    def _transport(self, user_name: str, inst: InstalledTool) -> TransportFactory:
        server = inst.manifest.get("server") or {}
        if server.get("url"):
            url, headers = server["url"], inst.headers
            cap = self.settings.limits.within(inst.manifest.get("limits")).max_message_bytes
            private = self._installed_by_admin(user_name)
            return lambda fault: remote_http(
                inst.server, url, headers, fault, timeout=self.settings.tool_call_timeout_s, max_bytes=cap,
                private_allowed=private,
            )
        check_bundle(inst.bundle_path, inst.digest, f"the tool server {inst.server} {inst.version}")
        data = self.settings.tool_data_dir(user_name, inst.server)
        data.mkdir(parents=True, exist_ok=True)
        return self.stdio_transport(inst.server, inst.bundle_path, server["command"], data, inst.manifest.get("limits"))

    def _installed_by_admin(self, user_name: str) -> bool:
        """A remote server may use a loopback or private address only for an administrator
        (who installed it for themselves)."""
        with self.store.session() as s:
            return bool(s.scalar(select(User.is_admin).where(User.name == user_name)))

    def stdio_transport(
        self, name: str, bundle: Path, command: list[str], data: Path, limits: dict[str, Any] | None = None
    ) -> TransportFactory:
        limits_ = self.settings.limits.within(limits)
        spec = SandboxSpec(
            bundle_dir=bundle, data_dir=data, env={"DREAMER_TOOL": name}, limits=limits_, argv=stdio_argv(command),
        )
        return lambda fault: sandboxed_stdio(
            self.sandbox, spec, fault, label=name, max_line_bytes=limits_.max_message_bytes
        )

    async def evict(self, user_name: str, server: str | None = None) -> None:
        """Stop a user's sessions (of one server): after an upgrade, uninstall or new headers."""
        for key in [k for k in self._sessions if k[0] == user_name and server in (None, k[1])]:
            session = self._sessions.pop(key)
            await session.close()
        for key in [k for k in self._failed if k[0] == user_name and server in (None, k[1])]:
            self._failed.pop(key, None)

    def start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def _reap_forever(self) -> None:
        while self._sessions:
            await asyncio.sleep(min(30.0, max(self.settings.warm_seconds / 4, 0.5)))
            now = time.monotonic()
            for key, session in list(self._sessions.items()):
                if not session.alive or now - session.last_used > self.settings.warm_seconds:
                    self._sessions.pop(key, None)
                    await session.close()

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        sessions = list(self._sessions.values())
        self._sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)

    def live(self) -> int:
        return sum(1 for s in self._sessions.values() if s.alive)


def validate_args(name: str, schema: dict[str, Any], args: dict[str, Any]) -> None:
    """The arguments against the tool's input schema, before anything reaches the server."""
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
    except SchemaError:
        raise DreamerError("tool_error", f"{name} declares an input schema that is not valid JSON Schema; it cannot be called") from None
    error = jsonschema.exceptions.best_match(cls(schema).iter_errors(args))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        place = f"argument {where!r}" if where else "the arguments"
        raise DreamerError("invalid_argument", f"{name}: {place}: {_short(error.message)}")


def _key_digest(inst: InstalledTool) -> str:
    """A session belongs to one bundle version and one set of headers: changing either starts afresh."""
    text = json.dumps([str(inst.bundle_path), sorted(inst.headers.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace"))
    except (TypeError, ValueError):
        return 0


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["Caller", "Fault", "InstalledTool", "ToolRegistry", "validate_args"]
