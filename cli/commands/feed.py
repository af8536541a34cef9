"""`dreamer feed`: what your agents posted for you."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, cell_text, short_time


def feed(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="How many posts.")] = 20,
    clear: Annotated[bool, typer.Option("--clear", help="Delete your posts (frees your feed quota).")] = False,
    agent: Annotated[str | None, typer.Option("--agent", help="With --clear: only this agent's posts.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Show your feed, newest first: what your agents posted (urgent ones marked)."""
    out = Output(json_out)
    if clear:
        with client(user) as api:
            done = api.clear_feed(agent)
        if json_out:
            out.json(done)
        else:
            out.say(f"Deleted {cell_text(done.get('deleted') if isinstance(done, dict) else 0)} posts.")
        return
    with client(user) as api:
        posts = api.feed(limit)
    if json_out:
        out.json(posts)
        return
    items = [p for p in posts if isinstance(p, dict)] if isinstance(posts, list) else []
    if not items:
        out.say("Your feed is empty; agents with the notify grant post here.")
        return
    for post in items:
        mark = "[bold red]urgent[/] " if post.get("priority") == "urgent" else ""
        out.say(f"{mark}[bold]{escape(cell_text(post.get('agent')))}[/] [dim]{escape(short_time(post.get('created_at')))}[/]")
        out.say(escape(str(post.get("text") or "")))
        for item in post.get("attachments") or []:
            out.say(f"  [dim]attachment:[/] {escape(cell_text(item))}")


def register(app: typer.Typer) -> None:
    app.command("feed")(guarded(feed))
