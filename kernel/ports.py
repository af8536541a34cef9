"""What the kernel needs from the parts above it, as interfaces the kernel owns.

The kernel imports none of Sidekick, the web app, the gallery or the starter agents:
the composition root (host/) builds those and hands them in through these Protocols.
A kernel built without them (tests, tools) still serves the API: chat and tasks say
they are not available, no starters are installed and no pages are mounted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from fastapi import FastAPI

    from dreamer.contracts.archive import BundleLimits
    from dreamer.contracts.functions import FunctionSpec
    from dreamer.kernel.invocations.principal import Principal


class ChatService(Protocol):
    """Chat with the system agent (Sidekick): turns, and the conversations they are kept in."""

    def turn(self, who: Principal, message: str, conversation_id: str | None) -> AsyncIterator[dict[str, Any]]: ...

    def conversations(
        self, who: Principal, limit: int, offset: int = 0, query: str | None = None
    ) -> list[dict[str, Any]]: ...

    def conversation(self, who: Principal, conversation_id: str) -> dict[str, Any]: ...

    def delete_conversation(self, who: Principal, conversation_id: str) -> dict[str, Any]: ...

    def conversations_of(self, who: Principal, runs: Mapping[str, datetime]) -> dict[str, dict[str, Any]]:
        """The conversation ({"id", "title"}) each of these runs (invocation id -> created at) was made in, if any."""
        ...

    def close(self) -> None:
        """The kernel is stopping: end what the service started (processes, threads)."""


class TaskPlan(Protocol):
    """A task's tools, chosen by the runner for one agent's `ctx.task` (opaque to the kernel)."""


class TaskRunner(Protocol):
    """Runs `ctx.task` jobs: a model loop over an agent's functions and the tools it names."""

    def has_model(self) -> bool:
        """Whether a real model is configured (tasks need one)."""
        ...

    def plan(
        self, who: Principal, agent: str, description: str, functions: Sequence[FunctionSpec], tools: Sequence[str]
    ) -> TaskPlan:
        """The tools a task may use; raises DreamerError(not_found) for a tool the user has not enabled."""
        ...

    async def run(self, who: Principal, prompt: str, plan: TaskPlan) -> dict[str, Any]:
        """The task's outcome: {"ok", "reply", "calls", "needs_user"}."""
        ...


class StarterCatalogue(Protocol):
    """The bundle folders every new user gets, in install order (tool bundles first)."""

    def folders(self) -> list[Path]: ...

    def tool_folders(self) -> list[Path]:
        """The built-in tool bundles among them: their names are reserved for those tools."""
        ...


class AppMount(Protocol):
    """Adds pages (the web app) to the kernel's FastAPI application."""

    def __call__(self, app: FastAPI) -> None: ...


class NoStarters:
    """The catalogue of a kernel built without a host: nothing to install."""

    def folders(self) -> list[Path]:
        return []

    def tool_folders(self) -> list[Path]:
        return []


class GalleryConnection(Protocol):
    """One gallery's HTTP API, as the kernel uses it to install (answers are parsed JSON)."""

    def __enter__(self) -> GalleryConnection: ...

    def __exit__(self, *exc: object) -> None: ...

    def search(self, query: str, limit: int = 20) -> Any: ...

    def package(self, name: str) -> Any: ...

    def version(self, name: str, version: str) -> Any: ...

    def download(self, name: str, version: str, max_bytes: int) -> bytes: ...


class VerifiedBundle(Protocol):
    """A downloaded archive that matched its listing and its publisher's signature."""

    @property
    def publisher(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    def provenance(self) -> dict[str, Any]: ...


class GalleryAccess(Protocol):
    """The gallery client: connecting to a gallery and verifying what it sent."""

    def connect(self, url: str) -> GalleryConnection: ...

    def verify(self, listing: Any, data: bytes, url: str, limits: BundleLimits) -> VerifiedBundle: ...
