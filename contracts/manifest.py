"""agent.yaml: the manifest of a bundle, validated at the edge with pydantic.

Every error names the file and the field, because the person reading it is a
builder looking at their own YAML.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dreamer.contracts.names import IDENT_RE as IDENT_RE
from dreamer.contracts.names import MODULE_RE as MODULE_RE
from dreamer.contracts.names import NAME_RE as NAME_RE
from dreamer.contracts.names import SEMVER_RE as SEMVER_RE
from dreamer.contracts.errors import DreamerError
from dreamer.contracts.scopes import ScopeError, parse_scope
from dreamer.contracts.triggers import ScheduleError, check_content_type, check_event, check_schedule
from dreamer.sdk.templates import PLACEHOLDER_DESCRIPTION as PLACEHOLDER_DESCRIPTION

# The name rules live in dreamer.contracts.names; re-exported here for this module's importers.
MAX_MANIFEST_BYTES = 64 * 1024


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def _scopes(values: list[str]) -> list[str]:
    for value in values:
        try:
            parse_scope(value)
        except ScopeError as exc:
            raise ValueError(str(exc)) from None
    if len(set(values)) != len(values):
        raise ValueError("a scope is listed twice")
    return values


class Permissions(_Strict):
    """`permissions:` — the scopes the agent asks for.

    required: granted at install or the install does not happen (the user approves them all).
    optional: shown at install with a switch each; the agent checks `ctx.granted(scope)`
        and does without. A scope neither lists can never be granted, so a call needing it
        is refused with the line to add here.
    """

    required: list[str] = Field(default_factory=list, max_length=100)
    optional: list[str] = Field(default_factory=list, max_length=100)

    _check_required = field_validator("required")(classmethod(lambda cls, v: _scopes(v)))
    _check_optional = field_validator("optional")(classmethod(lambda cls, v: _scopes(v)))

    @model_validator(mode="after")
    def _disjoint(self) -> "Permissions":
        both = set(self.required) & set(self.optional)
        if both:
            raise ValueError(f"scopes both required and optional: {', '.join(sorted(both))}")
        # Running a confirm=True function unasked is the user's own decision, never a condition of installing.
        unasked = [s for s in self.required if parse_scope(s).confirm]
        if unasked:
            raise ValueError(f"{', '.join(unasked)} can only be optional: the user decides whether a function "
                             "marked confirm may run without asking them")
        return self

    @property
    def all(self) -> list[str]:
        return [*self.required, *self.optional]


# strict: YAML `true` or "512" is a mistake to report, not a number to guess.
def _limit(low: float, high: float) -> Any:
    return Field(default=None, strict=True, ge=low, le=high)


class AgentLimits(_Strict):
    """`limits:` — what the agent asks for; each value is capped at the installation's
    ceiling (DREAMER_LIMIT_<NAME>), so asking for more than that gets the ceiling.

    memory_mb: the worker's memory (address space), in MB.
    cpu_seconds: CPU time per worker.
    file_mb: the largest file it may write, in MB.
    open_files: open file descriptors.
    processes: processes and threads.
    call_timeout_s: one call's wall-clock limit.
    background_timeout_s: the same for a background function.
    """

    memory_mb: int | None = _limit(64, 1024 * 1024)
    cpu_seconds: int | None = _limit(1, 7 * 24 * 3600)
    file_mb: int | None = _limit(1, 1024 * 1024)
    open_files: int | None = _limit(16, 1024 * 1024)
    processes: int | None = _limit(8, 100_000)
    call_timeout_s: float | None = _limit(0.1, 7 * 24 * 3600)
    background_timeout_s: float | None = _limit(0.1, 7 * 24 * 3600)


TRIGGER_FIELDS = {"cron": {"schedule"}, "webhook": set(), "input": {"content_types"}, "event": {"event"}}


class Trigger(_Strict):
    """One entry of `triggers:` (needs the `schedule` permission).

    type: cron, webhook, input or event.
    entrypoint: the function it runs (in the background).
    name: how the user sees it.
    schedule: (cron) a crontab line, in the user's time zone.
    event: (event) the `AGENT.EVENT` it listens for.
    content_types: (input) the MIME types it accepts.
    """

    type: Literal["cron", "webhook", "input", "event"]
    entrypoint: Annotated[str, Field(pattern=IDENT_RE)]
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f/]+$")]
    schedule: str | None = None
    event: str | None = None
    content_types: list[str] | None = Field(default=None, max_length=20)

    @model_validator(mode="after")
    def _fields_of_type(self) -> "Trigger":
        needed = TRIGGER_FIELDS[self.type]
        for extra in ("schedule", "event", "content_types"):
            value = getattr(self, extra)
            if extra in needed and not value:
                raise ValueError(f"a {self.type} trigger needs '{extra}'")
            if extra not in needed and value is not None:
                raise ValueError(f"a {self.type} trigger takes no '{extra}'")
        try:
            if self.schedule is not None:
                self.schedule = check_schedule(self.schedule)
            if self.event is not None:
                check_event(self.event, qualified=True)
            if self.content_types is not None:
                self.content_types = [check_content_type(c) for c in self.content_types]
        except ScheduleError as exc:
            raise ValueError(str(exc)) from None
        return self


class Server(_Strict):
    """`server:` (tool bundles) — how to reach the MCP server: exactly one of them.

    command: a command run inside the user's sandbox (stdio).
    url: a remote streamable-HTTP server (its headers and secrets are set by the user
        in the kernel, never in a bundle).
    builtin: a server the kernel provides (`web`).
    """

    command: Annotated[list[Annotated[str, Field(min_length=1, max_length=1000)]], Field(min_length=1, max_length=64)] | None = None
    url: Annotated[str, Field(pattern=r"^https?://[^\s]+$", max_length=2000)] | None = None
    # A server the kernel itself provides (kernel/tools/web.py): today only `web`.
    builtin: Literal["web"] | None = None

    @model_validator(mode="after")
    def _one(self) -> "Server":
        if sum(x is not None for x in (self.command, self.url, self.builtin)) != 1:
            raise ValueError("a server needs exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        if self.command is not None and any("\0" in part for part in self.command):
            raise ValueError("the command may not contain NUL bytes")
        return self


class Manifest(_Strict):
    """agent.yaml, at the top of a bundle.

    name: the agent's name (lowercase letters, digits, dashes), unique per user.
    version: semver; installing a higher one is an upgrade.
    kind: `agent` (the default) or `tool`.
    title: how people see it.
    description: what it does, in a sentence or two (shown at install and in the gallery).
    publisher: who publishes it (a gallery account).
    entry: the module defining the `@function`s (`hello.server`); agents only.
    server: how to run a tool bundle's MCP server; tool bundles only.
    permissions: what it asks for (required and optional scopes).
    limits: the resources it asks for.
    triggers: cron, webhook, input and event triggers.
    events: the events it may emit with `ctx.emit_event`.
    """

    name: Annotated[str, Field(pattern=NAME_RE)]
    version: Annotated[str, Field(pattern=SEMVER_RE)]
    kind: Literal["agent", "tool"] = "agent"
    title: Annotated[str, Field(min_length=1, max_length=100)]
    description: Annotated[str, Field(min_length=1, max_length=2000)]
    publisher: Annotated[str, Field(pattern=NAME_RE)]
    entry: Annotated[str, Field(pattern=MODULE_RE, max_length=200)] | None = None
    server: Server | None = None
    permissions: Permissions = Field(default_factory=Permissions)
    limits: AgentLimits | None = None
    triggers: list[Trigger] = Field(default_factory=list, max_length=50)
    events: list[str] = Field(default_factory=list, max_length=50)  # the events this agent emits

    @field_validator("events")
    @classmethod
    def _event_names(cls, value: list[str]) -> list[str]:
        for name in value:
            check_event(name, qualified=False)
        if len(set(value)) != len(value):
            raise ValueError("an event is listed twice")
        return value

    @property
    def asked_limits(self) -> dict[str, float]:
        """The `limits:` fields it sets, by their manifest names (the kernel caps each at its ceiling)."""
        return {} if self.limits is None else self.limits.model_dump(exclude_none=True)

    @model_validator(mode="after")
    def _kind_fields(self) -> "Manifest":
        if self.kind == "agent" and not self.entry:
            raise ValueError("an agent needs 'entry', the module that defines its functions")
        names = [t.name for t in self.triggers]
        if len(set(names)) != len(names):
            raise ValueError("two triggers have the same name; each needs its own")
        if self.triggers and "schedule" not in self.permissions.all:
            raise ValueError("an agent with triggers must ask for the 'schedule' permission (required or optional)")
        if self.kind == "tool" and self.server is None:
            raise ValueError("a tool needs 'server' (command or url)")
        if self.kind == "tool" and (self.permissions.all or self.triggers or self.entry):
            # Agents hold the grants (tool:, net:, ...); the server itself runs with none.
            raise ValueError("a tool bundle declares no permissions, triggers or entry; the agents that use it do")
        if self.kind == "agent" and self.server is not None:
            raise ValueError("'server' belongs to tool bundles (kind: tool)")
        return self


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def parse_manifest(text: str, source: str = "agent.yaml") -> Manifest:
    """Parse and validate manifest text; raise DreamerError(invalid_bundle) naming the field."""
    if len(text.encode()) > MAX_MANIFEST_BYTES:
        raise DreamerError("invalid_bundle", f"{source}: the manifest is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise DreamerError("invalid_bundle", f"{source}: not valid YAML{line}") from None
    if not isinstance(data, dict):
        raise DreamerError("invalid_bundle", f"{source}: the manifest must be a mapping of fields")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        msg = first["msg"].removeprefix("Value error, ")
        if first["type"] == "string_pattern_mismatch":
            msg = f"{first['input']!r} does not have the required form"
        elif first["type"] == "extra_forbidden":
            msg = "unknown field"
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise DreamerError("invalid_bundle", f"{source}: field '{_where(first['loc'])}': {msg}{more}") from None


def load_manifest(bundle_dir: Path) -> Manifest:
    path = bundle_dir / "agent.yaml"
    if not path.is_file():
        raise DreamerError("invalid_bundle", f"{bundle_dir.name}: no agent.yaml at the top of the bundle")
    return parse_manifest(path.read_text(encoding="utf-8", errors="replace"), "agent.yaml")


def same_file_name(name: str) -> bool:
    return re.fullmatch(NAME_RE, name) is not None


NO_DESCRIPTION = "No description yet"


def shown_description(description: object) -> str:
    """A manifest's description as people read it: the scaffold's placeholder (`dreamer init`
    writes it; a gallery may still list a bundle published with it) or nothing is "No description yet"."""
    text = description.strip() if isinstance(description, str) else ""
    return NO_DESCRIPTION if not text or text == PLACEHOLDER_DESCRIPTION else text
