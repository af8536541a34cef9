"""`dreamer users add NAME` (and `users list`): people on this installation."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, make_table

users_app = typer.Typer(help="Manage the users of this installation (administrators only).", no_args_is_help=True)


def add(
    name: Annotated[str, typer.Argument(help="The new user's name.")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Add a user and print their API token (shown this once)."""
    out = Output(json_out)
    with client(user) as api:
        created = api.add_user(name)
    if json_out:
        out.json(created)
        return
    token = str(created.get("token", "")) if isinstance(created, dict) else ""
    out.say(f"Added the user [bold]{escape(name)}[/].")
    out.say(f"Their API token (shown only now): [bold]{escape(token)}[/]")
    out.say("They use it like this:")
    out.say(f"  export DREAMER_TOKEN={escape(token)}")
    out.say("  dreamer agents")


def list_users(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List the users."""
    out = Output(json_out)
    with client(user) as api:
        listed = api.users()
    if json_out:
        out.json(listed)
        return
    items = [u for u in listed if isinstance(u, dict)] if isinstance(listed, list) else []
    out.table(make_table(["name", "admin"], [[u.get("name"), bool(u.get("is_admin"))] for u in items]))


def register(app: typer.Typer) -> None:
    users_app.command("add")(guarded(add))
    users_app.command("list")(guarded(list_users))
    app.add_typer(users_app, name="users")
