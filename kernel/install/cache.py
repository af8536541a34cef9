"""What every call needs to know about an installation, kept in memory.

A call needs the callee's bundle (path, entry, function specs) and the caller's
grants. Reading them from the store each time was the largest cost of a warm call,
so the kernel — the only writer of installations and grants — keeps them here and
drops an entry whenever it changes one (install, upgrade, uninstall, grant, revoke).
A revocation therefore still takes effect on the very next call.

With several kernels on one database (kernel/cluster/) every node keeps its own cache:
`on_forget` tells the others (and returns once they dropped the entry too), and while a
node cannot hear the others the cache is switched off (`set_enabled`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from dreamer.kernel.install.registry import InstalledAgent, find_installed, grants_of
from dreamer.kernel.permissions.gate import Decision, decide
from dreamer.kernel.store.db import Store


class InstallCache:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._agents: dict[tuple[int, str], InstalledAgent | None] = {}
        self._grants: dict[tuple[int, str], frozenset[str]] = {}
        self._lock = threading.Lock()
        # Bumped by forget(): a read that started before a change must not be cached after it.
        self._generation: dict[tuple[int, str], int] = {}
        self._enabled = True
        self.on_forget: Callable[[int, str], None] | None = None  # set on a cluster node: tells the other nodes

    def agent(self, user_id: int, agent: str) -> InstalledAgent | None:
        key = (user_id, agent)
        try:
            return self._agents[key]
        except KeyError:
            pass
        seen = self._generation.get(key, 0)
        with self.store.session() as s:
            found = find_installed(s, user_id, agent)
        with self._lock:
            if self._enabled and self._generation.get(key, 0) == seen:
                self._agents[key] = found
        return found

    def grants(self, user_id: int, agent: str) -> frozenset[str]:
        key = (user_id, agent)
        try:
            return self._grants[key]
        except KeyError:
            pass
        seen = self._generation.get(key, 0)
        with self.store.session() as s:
            held = frozenset(g.scope for g in grants_of(s, user_id, agent))
        with self._lock:
            if self._enabled and self._generation.get(key, 0) == seen:
                self._grants[key] = held
        return held

    def declared(self, user_id: int, agent: str) -> frozenset[str] | None:
        """The scopes the installed agent's manifest asks for (required and optional), or
        None when it is not installed; refusals use it to say which fix applies."""
        found = self.agent(user_id, agent)
        return None if found is None else frozenset([*found.required, *found.optional])

    def decide(self, user_id: int, agent: str, wanted: str) -> Decision:
        """The permission gate for an installed agent: its grants, and its manifest for the hint."""
        return decide(self.grants(user_id, agent), agent, wanted, self.declared(user_id, agent))

    def forget(self, user_id: int, agent: str) -> None:
        """Call after any change to this user's installation of `agent` or its grants,
        once the change is committed."""
        self.forget_here(user_id, agent)
        if self.on_forget is not None:
            self.on_forget(user_id, agent)

    def forget_here(self, user_id: int, agent: str) -> None:
        """Drop the entry in this process only (what another node's change asks for)."""
        key = (user_id, agent)
        with self._lock:
            self._generation[key] = self._generation.get(key, 0) + 1
            self._agents.pop(key, None)
            self._grants.pop(key, None)

    def set_enabled(self, enabled: bool) -> None:
        """Off: nothing is kept, every read goes to the store. Either way, empty it now."""
        with self._lock:
            self._enabled = enabled
            for key in set(self._agents) | set(self._grants):
                self._generation[key] = self._generation.get(key, 0) + 1
            self._agents.clear()
            self._grants.clear()
