"""The kernel: builds every kernel service once and owns their lifetimes.

The parts above the kernel (Sidekick, the web app, the gallery client, the starter
agents) are built by the composition root in host/ and handed in through the
interfaces in kernel/ports.py; this module imports none of them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from dreamer.kernel.users.revocation import Revocations
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.cluster.runtime import ClusterRuntime
from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.data.demo import DEMO_CONNECTION, SCOPES_FILE, build_demo
from dreamer.kernel.data.scopes import parse_scopes
from dreamer.kernel.data.queries import DataService
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.install.installer import Installer
from dreamer.kernel.invocations.invoker import Invoker
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.invocations.records import interrupted_on_restart
from dreamer.kernel.invocations.table import syscall_table
from dreamer.kernel.llm.gateway import Gateway
from dreamer.kernel.ports import ChatService, GalleryAccess, NoStarters, StarterCatalogue, TaskRunner
from dreamer.kernel.runs.runner import BackgroundRunner
from dreamer.kernel.sandbox import get_sandbox
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ApiToken, AuditEntry, Installation, User
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.tasks.syscall import stop_all as stop_tasks
from dreamer.kernel.triggers.cron import CronScheduler
from dreamer.kernel.triggers.manager import TriggerService
from dreamer.kernel.tools.install import ToolInstaller
from dreamer.kernel.tools.registry import ToolRegistry
from dreamer.kernel.tracing import setup_tracing
from dreamer.kernel.users.accounts import TokenCache, create_user, delete_account, hash_token, new_token, user_for_token
from dreamer.kernel.workers.pool import WorkerPool

log = logging.getLogger("dreamer.kernel")

LOCAL_USER = "me"


@dataclass
class Kernel:
    settings: Settings
    store: Store
    pool: WorkerPool
    invoker: Invoker
    installer: Installer
    tokens: TokenCache = field(default_factory=TokenCache)
    revocations: Revocations = field(default_factory=Revocations)  # wakes open streams to recheck their credential
    # Set by the composition root (host/build.py); None in a kernel built without one.
    chat: ChatService | None = None
    task_runner: TaskRunner | None = None
    gallery: GalleryAccess | None = None
    starters: StarterCatalogue = field(default_factory=NoStarters)
    runner: BackgroundRunner = field(init=False)
    triggers: TriggerService = field(init=False)
    data: DataService = field(init=False)
    llm: Gateway | None = None
    tools: ToolRegistry | None = None
    tracer_provider: TracerProvider | None = None
    cluster: ClusterRuntime | None = None  # set when this kernel is one node of several (settings.node)

    def __post_init__(self) -> None:
        self.data = self.invoker.data = DataService(self.store)
        self.runner = BackgroundRunner(
            self.store, self.invoker,
            per_user=self.settings.background_per_user, per_agent=self.settings.background_per_agent,
            total=self.settings.background_total,
        )
        self.invoker.on_queued = self.runner.wake
        self.invoker.syscalls = syscall_table()
        self.invoker.kernel = self
        self.triggers = TriggerService(self)
        self.installer.on_change = self.triggers.sync_agent
        if self.settings.node:
            self.cluster = ClusterRuntime(self)
            self.runner.node = self.settings.node

    @classmethod
    def build(cls, settings: Settings) -> "Kernel":
        settings.home.mkdir(parents=True, exist_ok=True)
        store = Store(settings.database_url)
        sandbox = get_sandbox(settings.sandbox)
        pool = WorkerPool(
            sandbox,
            max_per_key=settings.max_workers_per_agent,
            warm_seconds=settings.warm_seconds,
            max_log_bytes=settings.limits.max_log_bytes,
            quotas=settings.quotas,
            max_total=settings.workers_total,
        )
        writer = GroupWriter(store)
        provider = setup_tracing(store, settings.otlp_endpoint, writer=writer)
        tracer = provider.get_tracer("dreamer.kernel")
        cache = InstallCache(store)
        kernel = cls(
            settings=settings,
            store=store,
            pool=pool,
            invoker=Invoker(settings, store, pool, tracer, cache, writer),
            installer=Installer(settings, store, sandbox, pool, cache),
        )
        kernel.llm = kernel.invoker.llm = Gateway.from_home(settings.home, store, tracer=tracer)
        kernel.tools = kernel.invoker.tools = ToolRegistry(settings, store, sandbox, cache, kernel.invoker.writer)
        kernel.installer.tools = ToolInstaller(kernel.tools)
        kernel.tracer_provider = provider
        return kernel

    async def start(self) -> None:
        cluster = self.cluster
        if cluster is None:
            await self._start_services()
            return
        # One node at a time through the first-start steps; the node joins before it serves.
        await asyncio.to_thread(cluster.lock_start)
        try:
            await self._start_services()
        finally:
            cluster.unlock_start()
        await cluster.start()

    async def _start_services(self) -> None:
        self.store.migrate()
        cluster = self.cluster
        if cluster is not None:
            cluster.join()
        node = self.settings.node
        lost = interrupted_on_restart(self.store, node=node)
        if lost:
            log.warning("%d invocations were interrupted by the last shutdown and are marked failed", lost)
        self._ensure_demo_data()
        self.triggers.cron = CronScheduler(self.triggers)
        if cluster is not None:
            self.triggers.cron.on_change = cluster.cron_changed
        self.triggers.cron.start(leading=cluster is None)
        await self._bootstrap_local_user()
        self.pool.start_reaper()
        self.runner.start()

    async def stop(self) -> None:
        if self.cluster is not None:
            await self.cluster.stop()
        await stop_tasks()
        if self.triggers.cron is not None:
            self.triggers.cron.stop()
        await self.runner.stop()
        if self.chat is not None:
            self.chat.close()
        await self.pool.close()
        if self.tools is not None:
            await self.tools.close()
        if self.llm is not None:
            await self.llm.aclose()
        provider = self.tracer_provider
        if provider is not None:
            provider.shutdown()  # its last spans go through the writer, so before the writer closes
        self.invoker.writer.close()
        self.store.dispose()

    def chat_service(self) -> ChatService:
        """Sidekick's chat, or the one refusal of a kernel built without it."""
        if self.chat is None:
            raise DreamerError("not_available", "this kernel was built without Sidekick; start it with `dreamer up`")
        return self.chat

    def flush_traces(self) -> None:
        """Make every finished span readable from the store."""
        provider = self.tracer_provider
        if provider is not None:
            provider.force_flush(timeout_millis=5000)

    async def add_user(self, name: str) -> tuple[User, str]:
        """A user with their token and every starter agent, or no user at all: a starter that
        fails to install takes the half-made account (its rows, files and workers) away again."""
        with self.store.session() as s:
            user, token = create_user(s, name)
        try:
            await self.install_starters(user)
        except BaseException as exc:
            await self._undo_user(user)
            if isinstance(exc, DreamerError):
                raise DreamerError(
                    exc.code, f"the user {name} was not created, because a starter agent failed to install: {exc.message}"
                ) from None
            if isinstance(exc, Exception):
                log.exception("installing the starter agents for the new user %s failed; the user was removed", name)
                raise DreamerError(
                    "internal", f"the user {name} was not created, because a starter agent failed to install "
                    f"({type(exc).__name__}); the kernel log has the details"
                ) from exc
            raise
        return user, token

    async def remove_user(self, who: Principal, name: str, purge: bool) -> Path:
        """Remove a user at once (rows, credentials, cached agents, workers, tool servers);
        their folder, returned, goes too with `purge`. The removal is audited; the log keeps theirs."""
        with self.store.session() as s:
            user_id, agents = delete_account(s, who, name)
            audit(s, user_id=who.user_id, actor=who.actor, action="users.remove", target=name, decision="allow",
                  detail={"purge": purge})
        self.tokens.clear()
        self.revocations.bump()
        for agent in agents:  # an id may be given again to a new user: nothing cached may outlive this one
            self.installer.cache.forget(user_id, agent)
        await self.invoker.pool.evict(name)
        if self.tools is not None:
            await self.tools.evict(name)
        folder = self.settings.users_dir / name
        if purge:
            shutil.rmtree(folder, ignore_errors=True)
        return folder

    async def _undo_user(self, user: User) -> None:
        await self.pool.evict(user.name)
        if self.tools is not None:
            await self.tools.evict(user.name)
        with self.store.session() as s:
            agents = list(s.scalars(select(Installation.agent).where(Installation.user_id == user.id)))
            s.execute(delete(User).where(User.id == user.id))  # installations, grants, tokens: ON DELETE CASCADE
        for agent in agents:
            self.installer.cache.forget(user.id, agent)
        shutil.rmtree(self.settings.users_dir / user.name, ignore_errors=True)

    def use_starters(self, starters: StarterCatalogue) -> None:
        """The catalogue new users get; its bundles may take names reserved for built-in tools."""
        self.starters = starters
        self.installer.shipped_folders = frozenset(f.resolve() for f in starters.folders())
        self.installer.builtin_tools = frozenset(f.name for f in starters.tool_folders())

    async def install_starters(self, user: User) -> None:
        who = Principal(user.id, user.name, user.timezone)
        for folder in self.starters.folders():
            await self.installer.install_folder(who, folder)

    def _ensure_demo_data(self) -> None:
        """The demo HR database and its connection, made once per installation (the sql-explorer's starter data)."""
        try:
            described = self.data.describe(DEMO_CONNECTION)
        except DreamerError:
            described = None
        if described is not None:
            # A newer packaged scopes file (its semantic model rides along) replaces an older one.
            packaged = SCOPES_FILE.read_text()
            if parse_scopes(packaged).version > described["scopes_version"]:
                self.data.set_scopes(DEMO_CONNECTION, packaged)
            return
        path = build_demo(self.settings.home / "data" / f"{DEMO_CONNECTION}.db")
        self.data.add(DEMO_CONNECTION, f"sqlite:///{path}", scopes=SCOPES_FILE.read_text(),
                      description="Demo HR data: employees, attendance, approved leave and absences (generated).")

    async def _bootstrap_local_user(self) -> None:
        """First start: the local administrator `me`, its token in credentials, the starter agents.

        Each step checks what is already there, so a kernel killed half-way through
        its first start finishes the job on the next one.
        """
        creds = self.settings.credentials_path
        with self.store.session() as s:
            me = s.scalar(select(User).where(User.name == LOCAL_USER))
            token = None
            if me is None:
                me, token = create_user(s, LOCAL_USER, is_admin=True)
            elif not _credentials_valid(s, creds):
                token = new_token()
                s.add(ApiToken(user_id=me.id, token_hash=hash_token(token), label="local"))
            installed_before = s.scalar(
                select(AuditEntry.seq).where(AuditEntry.user_id == me.id, AuditEntry.action.in_(("install", "uninstall")))
            ) is not None or s.scalar(select(Installation.id).where(Installation.user_id == me.id)) is not None
        if not installed_before:
            await self.install_starters(me)
        if token is not None:
            write_credentials(creds, f"http://{self.settings.host}:{self.settings.port}", LOCAL_USER, token)


def _credentials_valid(session: Session, path: Path) -> bool:
    try:
        token = json.loads(path.read_text())["token"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return user_for_token(session, token) is not None


def write_credentials(path: Path, url: str, user: str, token: str) -> None:
    """Written 0600 from the first byte: the token is as good as the user's password."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"url": url, "user": user, "token": token}, f)
    os.replace(tmp, path)
