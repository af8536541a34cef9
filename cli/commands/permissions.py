"""`dreamer permissions`, `grant` and `revoke`: what each agent may do, changed one scope at a time."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, make_table, risk, short_time


def permissions(
    agent: Annotated[str | None, typer.Argument(help="Only this agent's permissions.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """List the permissions agents ask for and which are granted."""
    out = Output(json_out)
    with client(user) as api:
        listed = api.permissions(agent)
    if json_out:
        out.json(listed)
        return
    items = [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
    if not items:
        out.say(f"{escape(agent)} asks for no permissions." if agent else "No agent asks for any permission.")
        return
    rows = [
        [
            p.get("agent"),
            p.get("scope"),
            risk(p.get("risk")),
            "required" if p.get("required") else "optional",
            _granted(p),
            p.get("sentence"),
        ]
        for p in items
    ]
    out.table(make_table(["agent", "scope", "risk", "need", "granted", "what it allows"], rows))


def _granted(row: dict[str, Any]) -> str:
    if not row.get("granted"):
        return "no"
    when = short_time(row.get("granted_at"))
    return f"yes ({when})" if when else "yes"


def grant(
    agent: Annotated[str, typer.Argument(help="The agent.")],
    scope: Annotated[str, typer.Argument(help="The scope to grant, e.g. net:api.example.com.")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Grant one of an agent's permissions."""
    out = Output(json_out)
    with client(user) as api:
        row = api.grant(agent, scope)
    if json_out:
        out.json(row)
        return
    out.say(f"Granted [bold]{escape(_scopes(row, scope))}[/] to {escape(agent)}.")
    for r in row if isinstance(row, list) else []:
        if isinstance(r, dict) and r.get("opens"):
            out.say(escape(str(r["opens"])))


def revoke(
    agent: Annotated[str, typer.Argument(help="The agent.")],
    scope: Annotated[str, typer.Argument(help="The scope to take back.")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Revoke one of an agent's permissions (takes effect on its next call)."""
    out = Output(json_out)
    with client(user) as api:
        row = api.revoke(agent, scope)
    if json_out:
        out.json(row)
        return
    out.say(f"Revoked [bold]{escape(_scopes(row, scope))}[/] from {escape(agent)}.")


def _scopes(answer: Any, asked: str) -> str:
    """The scopes the kernel actually changed: a broad scope (agent:grocery) may cover several."""
    rows = answer if isinstance(answer, list) else [answer]
    names = [r["scope"] for r in rows if isinstance(r, dict) and isinstance(r.get("scope"), str)]
    return ", ".join(names) or asked


def register(app: typer.Typer) -> None:
    app.command("permissions")(guarded(permissions))
    app.command("grant")(guarded(grant))
    app.command("revoke")(guarded(revoke))
