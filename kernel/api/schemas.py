"""Request bodies and response shapes of the HTTP API (pydantic at the edge)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field



class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CallBody(_Body):
    args: dict[str, Any] = Field(default_factory=dict)
    # A function marked confirm=True runs only when the request says the user confirmed it.
    confirm: bool = False


class InstallBody(_Body):
    bundle_id: str = Field(max_length=64)
    approve: bool
    without: list[str] = Field(default_factory=list, max_length=100)
    # Optional scopes the user turned on; every other optional scope stays off.
    grant: list[str] = Field(default_factory=list, max_length=100)


class ScopeBody(_Body):
    scope: str = Field(max_length=1100)


class UserBody(_Body):
    name: str = Field(max_length=64)


class QueryBody(_Body):
    query: str = Field(max_length=100_000)
    confirm: bool = False


class CallResult(BaseModel):
    result: Any
    invocation_id: str
    status: str = "succeeded"  # "queued" for a background function: follow it with GET /v1/invocations/{id}
