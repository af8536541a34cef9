"""`dreamer triggers`, `dreamer trigger run|pause|resume|schedule|secret`, `dreamer share`."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from dreamer.cli.client import CLIError
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, cell_text, make_table, short_time

trigger_app = typer.Typer(help="Fire, pause, resume or reschedule one of an agent's triggers.", no_args_is_help=True)

AgentArg = Annotated[str, typer.Argument(help="The agent.")]
NameArg = Annotated[str, typer.Argument(help="The trigger's name (see `dreamer triggers AGENT`).")]


def _detail(t: dict[str, Any], url: str) -> str:
    kind = t.get("type")
    if kind == "cron":
        nxt = short_time(t.get("next_run")) if t.get("next_run") else "—"
        return f"{cell_text(t.get('schedule'))} (next {nxt})"
    if kind == "webhook":
        return f"POST {url}{cell_text(t.get('path'))}" + (" (signed)" if t.get("signed") else "")
    if kind == "event":
        return f"on {cell_text(t.get('event'))}"
    if kind == "input":
        return ", ".join(cell_text(c) for c in t.get("content_types") or [])
    return ""


def triggers(
    agent: Annotated[str | None, typer.Argument(help="Only this agent's triggers.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """List your agents' triggers: cron schedules, webhook URLs, events, shared input."""
    out = Output(json_out)
    with client(user) as api:
        listed = api.triggers(agent)
        url = api.url
    if json_out:
        out.json(listed)
        return
    items = [t for t in listed if isinstance(t, dict)] if isinstance(listed, list) else []
    if not items:
        out.say("No triggers." if agent is None else f"{escape(agent)} has no triggers.")
        return
    rows = [
        [t.get("agent"), t.get("name"), t.get("type"), t.get("entrypoint"), "paused" if t.get("paused") else "on", _detail(t, url)]
        for t in items
    ]
    out.table(make_table(["agent", "trigger", "type", "runs", "state", "when"], rows))


def run(agent: AgentArg, name: NameArg, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Fire a trigger now (for testing; works while it is paused too)."""
    out = Output(json_out)
    with client(user) as api:
        answer = api.trigger_run(agent, name)
    if json_out:
        out.json(answer)
        return
    run_id = escape(cell_text(answer.get("invocation_id")))
    out.say(f"Queued as {run_id}; `dreamer logs --run {run_id}` follows it.")


def _change(agent: str, name: str, changes: dict[str, Any], json_out: bool, user: str | None, said: str) -> None:
    out = Output(json_out)
    with client(user) as api:
        answer = api.trigger_update(agent, name, changes)
    if json_out:
        out.json(answer)
        return
    out.say(said)
    if isinstance(answer, dict) and answer.get("type") == "cron" and answer.get("next_run"):
        out.say(f"next run {escape(short_time(answer.get('next_run')))}")


def pause(agent: AgentArg, name: NameArg, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Stop a trigger from firing until it is resumed."""
    _change(agent, name, {"paused": True}, json_out, user, f"Paused {escape(agent)}'s trigger {escape(name)!r}.")


def resume(agent: AgentArg, name: NameArg, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Let a paused trigger fire again."""
    _change(agent, name, {"paused": False}, json_out, user, f"Resumed {escape(agent)}'s trigger {escape(name)!r}.")


def schedule(
    agent: AgentArg,
    name: NameArg,
    cron: Annotated[str, typer.Argument(metavar="CRON", help='A crontab line in your time zone, e.g. "0 7 * * 1-5"; "default" restores the agent\'s own.')],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Give a cron trigger your own schedule."""
    value = "" if cron.strip().lower() == "default" else cron
    _change(agent, name, {"schedule": value}, json_out, user, f"{escape(agent)}'s trigger {escape(name)!r} now runs on {escape(cron)!r}.")


def secret(
    agent: AgentArg,
    name: NameArg,
    value: Annotated[str | None, typer.Argument(metavar="[SECRET]", help="At least 16 characters; leave out with --clear.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Stop requiring a signature.")] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Require webhook requests to be signed (HMAC-SHA256 of the body with SECRET)."""
    if not clear and not value:
        raise CLIError("invalid_argument", "give the SECRET, or --clear to stop requiring a signature")
    _change(agent, name, {"secret": "" if clear else value}, json_out, user,
            "Webhook signatures are " + ("no longer required." if clear else "now required (X-Dreamer-Signature: sha256=<hex>)."))


def share(
    content: Annotated[str | None, typer.Argument(metavar="[TEXT|URL]", help="Text, or a URL starting with http(s)://.")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", exists=True, dir_okay=False, help="Share a file instead.")] = None,
    to: Annotated[str | None, typer.Option("--to", metavar="AGENT", help="Only this agent.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Share text, a link or a file with the agents that accept it."""
    out = Output(json_out)
    if (content is None) == (file is None):
        raise CLIError("invalid_argument", "share one thing: TEXT or URL, or --file PATH")
    body: dict[str, Any] = {"agent": to}
    if file is not None:
        data = file.read_bytes()
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        body["file"] = {"name": file.name, "content_type": kind, "base64": base64.b64encode(data).decode()}
    elif content is not None and content.strip().lower().startswith(("http://", "https://")):
        body["url"] = content.strip()
    else:
        body["text"] = content
    with client(user) as api:
        answer = api.share({k: v for k, v in body.items() if v is not None})
    if json_out:
        out.json(answer)
        return
    for item in answer.get("routed", []) if isinstance(answer, dict) else []:
        if item.get("invocation_id"):
            out.say(f"→ {escape(cell_text(item.get('agent')))} ({escape(cell_text(item.get('invocation_id')))})")
        else:
            out.say(f"[red]✗ {escape(cell_text(item.get('agent')))}:[/] {escape(cell_text((item.get('error') or {}).get('message')))}")


def register(app: typer.Typer) -> None:
    app.command("triggers")(guarded(triggers))
    app.command("share")(guarded(share))
    for name, fn in (("run", run), ("pause", pause), ("resume", resume), ("schedule", schedule), ("secret", secret)):
        trigger_app.command(name)(guarded(fn))
    app.add_typer(trigger_app, name="trigger")
