"""Per-user quotas: how much of the installation one account may hold, and the one
way a refusal is worded (issue 14, finding 5).

The limits come from Settings.quotas (DREAMER_QUOTA_*). Each check measures what the
user holds now and raises `quota_exceeded` (HTTP 429) with one sentence naming the
quota, the use, the limit and what to do; nothing has been written when it raises.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dreamer.kernel.config import Quotas, Settings
from dreamer.contracts.errors import DreamerError

MB = 1024 * 1024
STAGING_HINT = "install or discard the bundles you uploaded (they are kept an hour), or ask the administrator to raise DREAMER_QUOTA_STAGING_MB"

# What each quota counts, as a person would say it.
LABELS: dict[str, str] = {
    "queued": "background invocations waiting to run",
    "staging_mb": "MB of uploaded bundles waiting for approval",
    "data_mb": "MB of agent data on disk",
    "feed_posts": "posts in the feed",
    "workers": "sandboxes running at once",
    "memory_mb": "MB of sandbox memory at once",
}


def exceeded(quota: str, used: int | float, limit: int, hint: str) -> DreamerError:
    """The refusal of every quota, in one shape."""
    shown = f"{used:.0f}" if isinstance(used, float) else str(used)
    return DreamerError(
        "quota_exceeded",
        f"your account would hold {shown} {LABELS[quota]}, over its quota of {limit}; {hint}",
        quota=quota, used=used, limit=limit,
    )


def installation_full(total: int) -> DreamerError:
    """The installation-wide sandbox cap: no single user's doing, so not worded as theirs."""
    return DreamerError(
        "quota_exceeded",
        f"the installation already runs {total} sandboxes at once, its limit (DREAMER_WORKERS_TOTAL); try again shortly",
        quota="workers_total", limit=total,
    )


def disk_bytes(root: Path) -> int:
    """Space a folder takes on disk, counted in allocated blocks: a million one-byte
    files cost what they really cost, and a sparse file only what it has written."""
    measured = _walk([str(root)], None)
    assert measured is not None  # no budget, so the walk always finishes
    return measured[0]


def _walk(roots: list[str], budget: int | None) -> tuple[int, int] | None:
    """(bytes on disk, entries visited) of the folders in `roots`, or None once more than
    `budget` entries would be visited (the walk stops there)."""
    total = entries_seen = 0
    stack = list(roots)
    while stack:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                entries_seen += 1
                if budget is not None and entries_seen > budget:
                    return None
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += info.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return total, entries_seen


def _data_paths(users_dir: str, user: str) -> list[str]:
    """The folders `agents/*/data` and `tools/*/data` of the user that exist (as pathlib's
    glob finds them: hidden names included, symlinked folders followed), by os.scandir:
    a tenth of what the glob costs, and this runs at the start of every call."""
    base = os.path.join(users_dir, user)
    found = []
    for kind in ("agents", "tools"):
        try:
            entries = os.scandir(os.path.join(base, kind))
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if not entry.is_dir():
                        continue
                except OSError:
                    continue
                path = os.path.join(entry.path, "data")
                if os.path.exists(path):
                    found.append(path)
    return found


def data_folders(settings: Settings, user: str) -> list[Path]:
    """Every folder the user's agents and tool servers write: their /data folders."""
    return [Path(path) for path in _data_paths(os.fspath(settings.users_dir), user)]


def data_bytes(settings: Settings, user: str) -> int:
    measured = _measure(_data_paths(os.fspath(settings.users_dir), user), None)
    assert measured is not None  # no budget, so the walk always finishes
    return sum(measured[0].values())


def agent_data_path(users_dir: str, user: str, agent: str) -> str:
    """An agent's data folder spelt as `_data_paths` spells it (from `users_dir` as a string:
    this runs after every call, and joining pathlib objects there cost a third of the walk)."""
    return os.path.join(users_dir, user, "agents", agent, "data")


def _measure(folders: list[str], budget: int | None) -> tuple[dict[str, int], int] | None:
    """Bytes on disk of each folder and the entries walked, or None past `budget` entries."""
    sizes: dict[str, int] = {}
    walked = 0
    for folder in folders:
        one = _walk([folder], None if budget is None else budget - walked)
        if one is None:
            return None
        sizes[folder], entries = one
        walked += entries
    return sizes, walked


# A user whose data is this many files and folders or fewer is measured on the event loop
# (a few syscalls); a larger one in a thread, as a million small files would hold the
# loop. An inline walk gives up at this many entries and the thread measures instead.
INLINE_ENTRIES = 256


DATA_HINT = (
    "delete some of your agents' data (or uninstall one with `dreamer uninstall NAME --purge`), "
    "or ask the administrator to raise DREAMER_QUOTA_DATA_MB"
)


class DataMeter:
    """Each user's agent data on disk, measured folder by folder and shared for a moment,
    so a call costs a dictionary lookup and the walk of the folder its agent wrote; a user
    with many files is measured in a thread, never on the event loop."""

    def __init__(self, settings: Settings, fresh_s: float = 1.0) -> None:
        self.settings = settings
        self.users_dir = os.fspath(settings.users_dir)  # Settings are frozen: spelt once
        self.fresh_s = fresh_s
        # user -> (when every folder was last walked, bytes of each folder)
        self._known: dict[str, tuple[float, dict[str, int]]] = {}
        # Folders a call may have written since: walked again before the next answer.
        self._stale: dict[str, set[str]] = {}
        self._pending: dict[str, asyncio.Future[tuple[dict[str, int], int] | None]] = {}
        self._large: set[str] = set()  # users whose last walk passed INLINE_ENTRIES

    async def used(self, user: str) -> int:
        known = self._known.get(user)
        if known is not None and time.monotonic() - known[0] < self.fresh_s:
            stale = self._stale.pop(user, None)
            if not stale:
                return sum(known[1].values())
            if user not in self._large:
                walked = _measure(sorted(stale), INLINE_ENTRIES)
                if walked is not None:
                    known[1].update(walked[0])
                    return sum(known[1].values())
            self._known.pop(user, None)  # too many files to walk here: all of them, in a thread
        pending = self._pending.get(user)
        if pending is None:
            # Whatever was marked stale so far is covered by the walk that starts now.
            self._stale.pop(user, None)
            folders = _data_paths(self.users_dir, user)
            if user not in self._large:
                # Most users hold a few files: walking them here costs less than the thread hop.
                small = _measure(folders, INLINE_ENTRIES)
                if small is not None:
                    self._known[user] = (time.monotonic(), small[0])
                    return sum(small[0].values())
            pending = asyncio.ensure_future(asyncio.to_thread(_measure, folders, None))
            self._pending[user] = pending
            try:
                measured = await pending
                assert measured is not None
                self._known[user] = (time.monotonic(), measured[0])
                if measured[1] > INLINE_ENTRIES:
                    self._large.add(user)
                else:
                    self._large.discard(user)
            finally:
                self._pending.pop(user, None)
            return sum(measured[0].values())
        measured = await asyncio.shield(pending)
        assert measured is not None
        return sum(measured[0].values())

    def forget(self, user: str, agent: str | None = None) -> None:
        """A call of the user's has ended, and may have written: the next check walks the
        agent's data folder again (every folder of the user, without `agent`)."""
        if agent is None:
            self._known.pop(user, None)
        else:
            self._stale.setdefault(user, set()).add(agent_data_path(self.users_dir, user, agent))

    async def check(self, user: str) -> None:
        """Refuse to start work for a user whose data is over the quota."""
        used = await self.used(user)
        if used > self.settings.quotas.data_mb * MB:
            raise exceeded("data_mb", used / MB, self.settings.quotas.data_mb, DATA_HINT)

    async def watch(
        self, user: str, stop: Callable[[], None], *, agent: str | None = None, wait_first: bool = True
    ) -> DreamerError:
        """While a call runs: once the user's data goes over the quota, call `stop` (which kills
        the worker) and answer the refusal the call ends with. Cancelled when the call ends.
        Each look walks `agent`'s data folder afresh (the one the running call writes).
        Without `wait_first` the first look is at once (the caller waited the moment already)."""
        while True:
            if wait_first:
                await asyncio.sleep(self.fresh_s)
            wait_first = True
            if agent is not None:
                self.forget(user, agent)
            used = await self.used(user)
            if used > self.settings.quotas.data_mb * MB:
                stop()
                return exceeded("data_mb", used / MB, self.settings.quotas.data_mb,
                                "the call was stopped; " + DATA_HINT)


def staging_bytes(settings: Settings, user_id: int) -> int:
    """Uploads of this user unpacked in staging (their folders are named bdl_<id>x…)."""
    root = settings.staging_dir
    if not root.is_dir():
        return 0
    return sum(disk_bytes(work) + 4096 for work in root.glob(f"bdl_{user_id}x*"))


def staging_room(settings: Settings, user_id: int) -> int:
    """Bytes this user may still unpack into staging; refuses when there is none."""
    used = staging_bytes(settings, user_id)
    room = settings.quotas.staging_mb * MB - used
    if room <= 0:
        raise exceeded("staging_mb", used / MB, settings.quotas.staging_mb, STAGING_HINT)
    return room


def staging_full(room: int) -> DreamerError:
    """An upload that would unpack past what the staging quota has left."""
    return DreamerError(
        "quota_exceeded",
        f"this bundle unpacks to more than the {room / MB:.1f} MB left of your staging quota; {STAGING_HINT}",
        quota="staging_mb",
    )


def usage_view(quotas: Quotas) -> dict[str, int]:
    return {name: getattr(quotas, name) for name in LABELS}


__all__ = ["LABELS", "MB", "DataMeter", "exceeded", "installation_full", "staging_room", "staging_full", "account_usage", "disk_bytes", "data_folders", "data_bytes", "usage_view"]


async def account_usage(settings: Settings, store: Any, pool: Any, user_id: int, user_name: str) -> dict[str, Any]:
    """What one user holds against each quota, and the quota: `dreamer users show`, `dreamer doctor`."""
    from sqlalchemy import func, select

    from dreamer.kernel.store.models import Invocation, Post

    with store.session() as s:
        queued = s.scalar(select(func.count()).select_from(Invocation).where(
            Invocation.user_id == user_id, Invocation.status == "queued")) or 0
        posts = s.scalar(select(func.count()).select_from(Post).where(Post.user_id == user_id)) or 0
    data = await asyncio.to_thread(data_bytes, settings, user_name)
    staging = await asyncio.to_thread(staging_bytes, settings, user_id)
    sandboxes = pool.use(user_name)
    used = {
        "queued": queued, "staging_mb": round(staging / MB, 1), "data_mb": round(data / MB, 1),
        "feed_posts": posts, "workers": sandboxes.workers, "memory_mb": sandboxes.memory_mb,
    }
    return {"user": user_name, "used": used, "quotas": usage_view(settings.quotas)}
