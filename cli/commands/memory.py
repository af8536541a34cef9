"""`dreamer memory [list]`, `memory add TEXT`, `memory forget ID`: what Sidekick remembers about you."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from dreamer.cli.client import Client
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, make_table, short_time

memory_app = typer.Typer(
    help="What Sidekick remembers about you: list it, add a fact, forget one. Agents read it only with memory:read."
)


def _list(api: Client) -> list[dict[str, Any]]:
    listed = api.get("/v1/memories")
    return [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []


def _show(out: Output, items: list[dict[str, Any]]) -> None:
    if out.json_mode:
        out.json(items)
        return
    if not items:
        out.say('Sidekick remembers nothing about you yet. Tell it (`dreamer chat "I\'m vegetarian"`) or '
                "use `dreamer memory add TEXT`.")
        return
    rows = [[m.get("id"), m.get("text"), _source(m.get("source")), short_time(m.get("created_at"))] for m in items]
    out.table(make_table(["id", "fact", "from", "since"], rows))


def _source(source: Any) -> str:
    return "you" if source == "user" else str(source or "").removeprefix("agent:")


def overview(
    ctx: typer.Context,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """List what Sidekick remembers about you (the same as `dreamer memory list`)."""
    if ctx.invoked_subcommand is not None:
        return
    out = Output(json_out)
    with client(user) as api:
        _show(out, _list(api))


def list_memories(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List what Sidekick remembers about you, oldest first."""
    out = Output(json_out)
    with client(user) as api:
        _show(out, _list(api))


def add(
    text: Annotated[str, typer.Argument(help="The fact, e.g. \"I'm vegetarian\".")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Tell Sidekick a fact to remember."""
    out = Output(json_out)
    with client(user) as api:
        added = api.post("/v1/memories", {"text": text})
    if json_out:
        out.json(added)
        return
    fact = added if isinstance(added, dict) else {}
    if fact.get("created") is False:
        out.say(f"Sidekick already remembers that (#{fact.get('id')}).")
    else:
        out.say(f"Remembered [bold]#{fact.get('id')}[/]: {escape(str(fact.get('text', text)))}")


def forget(
    memory_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The memory's id (see `dreamer memory`).")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Make Sidekick forget one fact."""
    out = Output(json_out)
    with client(user) as api:
        gone = api.delete(f"/v1/memories/{memory_id}")
    if json_out:
        out.json(gone)
        return
    fact = gone if isinstance(gone, dict) else {}
    out.say(f"Forgot #{memory_id}: {escape(str(fact.get('text', '')))}")


def register(app: typer.Typer) -> None:
    memory_app.callback(invoke_without_command=True)(guarded(overview))
    memory_app.command("list")(guarded(list_memories))
    memory_app.command("add")(guarded(add))
    memory_app.command("forget")(guarded(forget))
    app.add_typer(memory_app, name="memory")
