"""Permission scopes: parsing, the plain-language sentence and the risk of each.

A scope is what a user grants one agent: `agent:<name>[.<function>]`,
`agent:<name>.<function>!confirm` (the user approved that caller running a
function marked confirm=True without asking each time; only ever optional),
`tool:<server>[.<tool>]`, `net:<host-glob>`, `llm`, `memory:read`, `memory:write`,
`notify`, `schedule`, `fs:<path>`, `fs.ro:<path>`, `data:<connection>`.

`fs:*` / `fs.ro:*` in a manifest name no folder: they say the agent works on
folders the user chooses later (`dreamer grant coder fs:/home/me/src/app`). They
are never granted themselves; they admit a grant of one real folder.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Literal

from dreamer.contracts.names import IDENT, NAME

Risk = Literal["low", "medium", "high"]

_NAME = NAME
_IDENT = IDENT
_HOST_GLOB = r"(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\*"

_PATTERNS: dict[str, re.Pattern[str]] = {
    "agent": re.compile(rf"agent:(?P<target>{_NAME})(\.(?P<member>{_IDENT})(?P<confirm>!confirm)?)?"),
    "tool": re.compile(rf"tool:(?P<target>{_NAME})(\.(?P<member>{_IDENT}))?"),
    "net": re.compile(rf"net:(?P<target>{_HOST_GLOB})"),
    "llm": re.compile(r"llm"),
    "memory": re.compile(r"memory:(?P<target>read|write)"),
    "notify": re.compile(r"notify"),
    "schedule": re.compile(r"schedule"),
    "fs": re.compile(r"fs:(?P<target>\*|/[^\x00\n]{0,1023})"),
    "fs.ro": re.compile(r"fs\.ro:(?P<target>\*|/[^\x00\n]{0,1023})"),
    "data": re.compile(rf"data:(?P<target>{_NAME})"),
}


@dataclass(frozen=True)
class Scope:
    text: str
    kind: str
    target: str | None = None
    member: str | None = None
    # `agent:X.f!confirm`: may run X.f, marked confirm=True, without the user confirming each call.
    confirm: bool = False

    @property
    def risk(self) -> Risk:
        return _risk(self)

    @property
    def sentence(self) -> str:
        return _sentence(self)

    @property
    def is_chooser(self) -> bool:
        """`fs:*` / `fs.ro:*`: folders the user chooses later, not a folder."""
        return self.kind in ("fs", "fs.ro") and self.target == "*"

    @property
    def plain(self) -> "Scope":
        """The call this scope is about, without the `!confirm` approval."""
        if not self.confirm:
            return self
        return Scope(text=self.text.removesuffix("!confirm"), kind=self.kind, target=self.target, member=self.member)

    def admits(self, wanted: "Scope") -> bool:
        """Whether a declared `fs:*` / `fs.ro:*` lets the user grant the folder `wanted` names."""
        if not self.is_chooser or wanted.is_chooser:
            return False
        return wanted.kind == self.kind or (self.kind == "fs" and wanted.kind == "fs.ro")

    def covers(self, wanted: "Scope") -> bool:
        """Whether holding this scope allows what `wanted` asks for."""
        if self.kind != wanted.kind:
            return False
        if self.is_chooser or wanted.is_chooser:
            return self.text == wanted.text
        if wanted.confirm:
            # Only an approval of that very function covers running it unconfirmed:
            # `agent:grocery` lets a caller call grocery's functions, never `grocery.clear` unasked.
            return self.confirm and self.target == wanted.target and self.member == wanted.member
        if self.kind in ("agent", "tool"):
            return self.target == wanted.target and self.member in (None, wanted.member)
        if self.kind == "net":
            return fnmatch.fnmatchcase((wanted.target or "").lower(), (self.target or "").lower())
        if self.kind in ("fs", "fs.ro"):
            base = (self.target or "").rstrip("/") + "/"
            return (wanted.target or "") + "/" == base or (wanted.target or "").startswith(base)
        return self.target == wanted.target


class ScopeError(ValueError):
    pass


def parse_scope(text: object) -> Scope:
    if not isinstance(text, str) or not text:
        raise ScopeError(f"a scope must be a non-empty string, not {text!r}")
    kind = "fs.ro" if text.startswith("fs.ro:") else text.split(":", 1)[0]
    pattern = _PATTERNS.get(kind)
    if pattern is None:
        known = ", ".join(sorted(_PATTERNS))
        raise ScopeError(f"unknown scope {text!r}; scopes start with one of: {known}")
    match = pattern.fullmatch(text)
    if match is None:
        raise ScopeError(f"malformed scope {text!r}; see docs/ARCHITECTURE.md for the scope forms")
    groups = match.groupdict()
    if kind in ("fs", "fs.ro") and ".." in (groups.get("target") or "").split("/"):
        raise ScopeError(f"scope {text!r} may not contain '..'")
    return Scope(text=text, kind=kind, target=groups.get("target"), member=groups.get("member"),
                 confirm=bool(groups.get("confirm")))


def _risk(scope: Scope) -> Risk:
    if scope.kind in ("net", "fs", "data") or scope.confirm:
        return "high"
    if scope.kind == "memory":
        return "high" if scope.target == "read" else "medium"
    if scope.kind in ("llm", "schedule", "fs.ro", "tool"):
        return "medium"
    if scope.kind == "agent":
        return "medium" if scope.member is None else "low"
    return "low"


def _sentence(scope: Scope) -> str:
    t, m = scope.target, scope.member
    match scope.kind:
        case "agent":
            if scope.confirm:
                return (f"Run the {t} agent's {m} function without asking you first "
                        "(it is marked as changing or deleting something, so it normally needs your confirmation)")
            return f"Call the {t} agent's {m} function" if m else f"Call any exported function of the {t} agent"
        case "tool":
            return f"Use the {m} tool of {t}" if m else f"Use every tool of {t}"
        case "net":
            where = "any website" if t == "*" else t
            return f"Send and receive data over the internet to {where}"
        case "llm":
            return "Use the AI model on your behalf (this can cost money)"
        case "memory":
            return "Read what Sidekick remembers about you" if t == "read" else "Add to what Sidekick remembers about you"
        case "notify":
            return "Post messages to your feed"
        case "schedule":
            return "Run on its own, on a schedule or when triggered"
        case "fs":
            return "Read and change the folders you grant it later" if t == "*" else f"Read and change your files in {t}"
        case "fs.ro":
            return "Read the folders you grant it later" if t == "*" else f"Read your files in {t}"
        case "data":
            return f"Query the {t} database, seeing only the rows your role there allows"
    return scope.text


def describe(text: str) -> dict[str, str]:
    scope = parse_scope(text)
    return {"scope": scope.text, "risk": scope.risk, "sentence": scope.sentence}
