"""`dreamer users add NAME`, `users list`, `users show [NAME]`, `users passwd NAME`: people on this installation."""

from __future__ import annotations

from typing import Annotated

import sys
from urllib.parse import quote

import typer
from rich.markup import escape

from dreamer.cli.commands.common import JsonOpt, UserOpt, YesOpt, client, confirm, guarded
from dreamer.cli.commands.quotas_view import headings, used_of
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


def show(
    name: Annotated[str | None, typer.Argument(help="The user (yourself when left out; anyone for an administrator).")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Show what a user holds against each of their quotas."""
    out = Output(json_out)
    with client(user) as api:
        who = name or str((api.me() or {}).get("name", ""))
        answer = api.get(f"/v1/users/{quote(who, safe='')}/quota")
    if json_out:
        out.json(answer)
        return
    report = answer if isinstance(answer, dict) else {}
    used = report.get("used") if isinstance(report.get("used"), dict) else {}
    quotas = report.get("quotas") if isinstance(report.get("quotas"), dict) else {}
    out.say(f"Quotas of [bold]{escape(str(report.get('user') or who))}[/] (used / quota):")
    out.table(make_table(headings(), [used_of(used, quotas)]))


def passwd(
    name: Annotated[str, typer.Argument(help="Whose web sign-in password to set.")],
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input instead of asking.")
    ] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Set the password NAME signs in to the web app with (ends that user's browser sessions)."""
    out = Output(json_out)
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    elif sys.stdin.isatty():
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    else:
        out.error("invalid_argument", "No terminal to ask for the password; pass it with --password-stdin.")
        raise typer.Exit(2)
    with client(user) as api:
        done = api.set_password(name, password)
    if json_out:
        out.json(done)
        return
    out.say(f"Set the web password of [bold]{escape(name)}[/]; they sign in at the kernel's address with it.")


def timezone(
    zone: Annotated[str | None, typer.Argument(metavar="[ZONE]", help="An IANA name such as Europe/Paris; leave out to show yours.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Show or set your time zone; cron triggers run in it."""
    out = Output(json_out)
    with client(user) as api:
        answer = api.request("PATCH", "/v1/me", json_body={"timezone": zone}) if zone else api.me()
    if json_out:
        out.json(answer)
        return
    name = answer.get("timezone") if isinstance(answer, dict) else None
    out.say(f"Your time zone is {escape(str(name or 'UTC'))}.")


def remove(
    name: Annotated[str, typer.Argument(help="The user to remove.")],
    purge: Annotated[bool, typer.Option("--purge", help="Also delete their files under $DREAMER_HOME/users/NAME.")] = False,
    yes: YesOpt = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Remove a user: their tokens and sessions stop working at once (open streams end), and their
    agents, grants, tool servers, conversations, memory and invocations are deleted. Their files
    are kept unless --purge; the audit log keeps what they did."""
    what = "and delete their files" if purge else "(their files are kept)"
    confirm(f"Remove {name} {what}?", yes, f"removing {name} cannot be undone; pass --yes to do it non-interactively")
    out = Output(json_out)
    with client(user) as api:
        answer = api.delete(f"/v1/users/{name}", purge=str(purge).lower())
    if json_out:
        out.json(answer)
        return
    data = answer.get("data") if isinstance(answer, dict) else None
    out.say(
        f"Removed [bold]{escape(name)}[/]: their tokens and sessions no longer work, and their agents, grants, "
        f"tool servers, conversations, memory and invocations are deleted. Their files: {escape(str(data))}."
    )


tokens_app = typer.Typer(help="Your API tokens: list, create and revoke them.", no_args_is_help=True)


def tokens_list(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List your API tokens (their values are never kept, only when they were made)."""
    out = Output(json_out)
    with client(user) as api:
        listed = api.get("/v1/tokens")
    if json_out:
        out.json(listed)
        return
    items = [t for t in listed if isinstance(t, dict)] if isinstance(listed, list) else []
    out.table(make_table(["id", "label", "created"], [[t.get("id"), t.get("label"), t.get("created_at")] for t in items]))


def tokens_create(
    label: Annotated[str, typer.Option("--label", help="What the token is for, e.g. laptop.")] = "cli",
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Create an API token and print it (shown this once)."""
    out = Output(json_out)
    with client(user) as api:
        made = api.post("/v1/tokens", {"label": label})
    if json_out:
        out.json(made)
        return
    out.say(f"Token {escape(str(made.get('id')))} ({escape(label)}), shown only now: [bold]{escape(str(made.get('token')))}[/]")


def tokens_revoke(
    token_id: Annotated[int, typer.Argument(help="The token's id (from `dreamer tokens list`).")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Revoke a token: requests and open streams made with it are refused from now on."""
    out = Output(json_out)
    with client(user) as api:
        answer = api.delete(f"/v1/tokens/{token_id}")
    if json_out:
        out.json(answer)
        return
    out.say(f"Revoked token {token_id}; anything using it is refused from now on.")


def register(app: typer.Typer) -> None:
    app.command("timezone")(guarded(timezone))
    users_app.command("remove")(guarded(remove))
    tokens_app.command("list")(guarded(tokens_list))
    tokens_app.command("create")(guarded(tokens_create))
    tokens_app.command("revoke")(guarded(tokens_revoke))
    app.add_typer(tokens_app, name="tokens")
    users_app.command("add")(guarded(add))
    users_app.command("list")(guarded(list_users))
    users_app.command("show")(guarded(show))
    users_app.command("passwd")(guarded(passwd))
    app.add_typer(users_app, name="users")
