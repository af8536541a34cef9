"""What a bundle's functions are, remembered by the bundle's content.

Describing a bundle that ships no functions.json means starting a sandboxed worker that
imports the agent (about half a second on two cores). The starter agents ship none, and
every new account installs all of them, so without this a sign-up started six sandboxes
to learn six descriptions the kernel already had: the same content, under the same SDK,
describes the same functions. The key is the bundle's tree digest (it covers agent.yaml and
every file). The cache lives as long as the kernel process, as its warm workers do, so an
SDK changed on disk is seen by both after a restart. Only a description that succeeded is
kept: a bundle that failed to import is tried again and says why again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

from dreamer.contracts.functions import FunctionSpec

# Distinct bundle contents seen by one kernel process are few (the starters, a user's own
# agents and their versions); the bound only keeps a flood of uploads from growing memory.
DEFAULT_ENTRIES = 256


class DescriptionCache:
    """Descriptions by bundle digest, least recently used first out."""

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self._entries = entries
        self._kept: OrderedDict[str, tuple[FunctionSpec, ...]] = OrderedDict()
        self.described = 0  # how many times a sandbox was started to describe (for tests and benchmarks)

    async def describe(self, digest: str, run: Callable[[], Awaitable[list[FunctionSpec]]]) -> list[FunctionSpec]:
        kept = self._kept.get(digest)
        if kept is not None:
            self._kept.move_to_end(digest)
            # Copies: a caller that changes a spec must not change what the next install sees.
            return [spec.model_copy(deep=True) for spec in kept]
        self.described += 1
        specs = await run()
        self._kept[digest] = tuple(spec.model_copy(deep=True) for spec in specs)
        while len(self._kept) > self._entries:
            self._kept.popitem(last=False)
        return specs
