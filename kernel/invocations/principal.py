"""Who a call acts for and who is calling: the two values every call carries down the path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Principal:
    """The user a request acts for, and who really sent it (an admin acting as them)."""

    user_id: int
    user_name: str
    timezone: str = "UTC"
    via: str | None = None  # the admin's name when acting as another user

    @property
    def actor(self) -> str:
        return f"admin:{self.via} as {self.user_name}" if self.via else f"user:{self.user_name}"


@dataclass(frozen=True)
class Caller:
    kind: Literal["user", "agent", "sidekick", "trigger"]
    agent: str | None = None
    chain: tuple[str, ...] = ()  # agents on the call stack, outermost first
    parent_id: str | None = None
    deadline: float | None = None  # time.monotonic() by which the outermost call must end
    # kind "trigger": {"type", "name", "depth"} of the trigger that fired.
    trigger: dict[str, Any] | None = None
    # The user confirmed this very call (Sidekick after their yes, the CLI after its prompt
    # or --yes, an API request with "confirm": true). Needed by functions marked confirm=True.
    confirmed: bool = False
