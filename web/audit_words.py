"""An audit entry as a sentence: "Sidekick ran grocery's “add items”", "watch tried to fetch
http://example.com/ and was stopped", instead of `functions.call grocery.add_items`.

The entries are the kernel's (kernel/audit/log.py): an actor ("user:me", "agent:watch",
"sidekick for user:me", "trigger:cron", "admin:root as me"), an action (a dotted name), a
target and a decision. An action this table does not know reads as its words ("nodes drain
a"), so a new one is never hidden, only plainer than it could be.
"""

from __future__ import annotations

import re
from typing import Any

_METHOD = re.compile(r"^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\S+)$")


def _function(target: str) -> str:
    """'grocery.add_items' -> 'grocery's “add items”'."""
    agent, dot, function = target.partition(".")
    return f"{agent}'s “{function.replace('_', ' ')}”" if dot and function else target


def _url(target: str) -> str:
    """'GET https://x/' -> 'https://x/'; another method is said: 'POST to https://x/'."""
    found = _METHOD.match(target)
    if not found:
        return target
    method, url = found.groups()
    return url if method in ("GET", "HEAD") else f"{method} to {url}"


def _version(target: str) -> str:
    """'notes@1.2.0' -> 'notes 1.2.0'."""
    name, at, version = target.partition("@")
    return f"{name} {version}" if at else target


def _connection(target: str) -> str:
    return f"the data connection {target.removeprefix('data:')}"


# action -> (what was done, what was tried, how the target {t} is shown).
_ACTIONS: dict[str, tuple[str, str, Any]] = {
    "functions.call": ("ran {t}", "run {t}", _function),
    "agents.call": ("called {t}", "call {t}", _function),
    "net.fetch": ("fetched {t}", "fetch {t}", _url),
    "net.response": ("got an answer from {t}", "read the answer from {t}", _url),
    "memory.read": ("read what you told Sidekick", "read what you told Sidekick", None),
    "memory.write": ("saved something to Sidekick's memory", "save something to Sidekick's memory", None),
    "memory.delete": ("deleted something from Sidekick's memory", "delete something from Sidekick's memory", None),
    "llm.complete": ("used the AI model {t}", "use the AI model {t}", None),
    "sidekick.model_call": ("used the AI model", "use a call the AI model asked for ({t})", None),
    "tasks.create": ("gave the AI model a task", "give the AI model a task", None),
    "tasks.done": ("finished a task", "finish a task", None),
    "posts.create": ("posted to your feed", "post to your feed", None),
    "data.query": ("queried {t}", "query {t}", _connection),
    "data.page": ("read more rows of {t}", "read more rows of {t}", _connection),
    "database.write": ("changed {t}'s own data", "change {t}'s own data", None),
    "tools.call": ("used the tool {t}", "use the tool {t}", None),
    "tools.enable": ("turned on the tool {t}", "turn on the tool {t}", None),
    "tools.headers": ("changed how the tool {t} signs in", "change how the tool {t} signs in", None),
    "install": ("installed {t}", "install {t}", _version),
    "upgrade": ("upgraded {t}", "upgrade {t}", _version),
    "rollback": ("went back to {t}", "go back to {t}", _version),
    "uninstall": ("uninstalled {t}", "uninstall {t}", _version),
    # The scope itself is shown beside the sentence, as code.
    "grants.grant": ("gave {t} a permission", "give {t} a permission", None),
    "grants.revoke": ("took a permission back from {t}", "take a permission back from {t}", None),
    "sessions.open": ("signed in", "sign in", None),
    "sessions.revoke": ("signed a browser out", "sign a browser out", None),
    "sessions.locked": ("was locked out after too many wrong passwords", "sign in too many times", None),
    "tokens.create": ("made an API token", "make an API token", None),
    "tokens.revoke": ("withdrew an API token", "withdraw an API token", None),
    "users.add": ("added the user {t}", "add the user {t}", None),
    "users.remove": ("removed the user {t}", "remove the user {t}", None),
    "users.password": ("set {t}'s password", "set {t}'s password", None),
    "users.timezone": ("set the time zone", "set the time zone", None),
    "triggers.fire": ("started {t}", "start {t}", _function),
    "triggers.update": ("changed the trigger {t}", "change the trigger {t}", _function),
    "triggers.chain_budget": ("started {t}", "start {t} once more in a chain of events", _function),
    "events.emit": ("sent the event {t}", "send the event {t}", None),
    "gateway.settings": ("changed the tool gateway's settings", "change the tool gateway's settings", None),
    "nodes.drain": ("drained the kernel node {t}", "drain the kernel node {t}", None),
    "learned.promote": ("shared what it learned with everyone", "share what it learned", None),
    "learned.unpromote": ("stopped sharing what it learned", "stop sharing what it learned", None),
}


def who(actor: str) -> str:
    """'user:me' -> 'You', 'agent:watch' -> 'watch', 'sidekick for user:me' -> 'Sidekick'."""
    if actor.startswith("user:"):
        return "You"
    if actor.startswith("admin:"):
        return f"The administrator ({actor.removeprefix('admin:').split(' as ')[0]})"
    if actor.startswith("sidekick"):
        return "Sidekick"
    if actor.startswith("agent:"):
        return actor.removeprefix("agent:")
    if actor.startswith("trigger:"):
        kind = actor.removeprefix("trigger:").split(" for ")[0]  # "cron", or the trigger's "agent.name"
        named = {"cron": "A schedule", "webhook": "A webhook", "event": "An event"}.get(kind)
        return named or (f"The trigger {_function(kind)}" if "." in kind else "A trigger")
    if actor.startswith("web:"):
        return "Someone"
    return actor or "Someone"


def audit_sentence(entry: dict[str, Any]) -> str:
    """What the entry says happened, in one sentence without a full stop."""
    actor, action = str(entry.get("actor") or ""), str(entry.get("action") or "")
    target = str(entry.get("target") or "")
    done, tried, shape = _ACTIONS.get(action, (f"{action.replace('.', ' ').replace('_', ' ')} {{t}}", "", None))
    shown = shape(target) if shape else target
    subject = who(actor)
    if entry.get("decision") == "allow" or not tried:
        return f"{subject} {done.format(t=shown)}".strip()
    return f"{subject} tried to {tried.format(t=shown)} and was stopped".strip()
