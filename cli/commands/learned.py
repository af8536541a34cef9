"""`dreamer feedback ID up|down [--note]`, and `dreamer learned [list|delete|promote|off|on]`:
rating Sidekick's answers and invocations, and what Sidekick learned from your corrections."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from dreamer.cli.client import CLIError, Client
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, make_table

learned_app = typer.Typer(
    help="What Sidekick learned from your corrections (picks, rephrasings, undos, thumbs down): list, delete, opt out."
)


def feedback(
    target: Annotated[str, typer.Argument(metavar="ID", help="A Sidekick answer (turn_…, shown by `dreamer chat --json`) "
                                                             "or an invocation (inv_…, see `dreamer logs`).")],
    rating: Annotated[str, typer.Argument(metavar="up|down", help="Thumbs up or thumbs down.")],
    note: Annotated[str | None, typer.Option("--note", help="A word on what was good or wrong.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Rate one of your Sidekick answers or invocations; kept as a reward next to the agents' own."""
    if rating not in ("up", "down"):
        raise CLIError("invalid_argument", f"a rating is \"up\" or \"down\", not {rating!r}")
    out = Output(json_out)
    with client(user) as api:
        body: dict[str, Any] = {"target": target, "rating": rating}
        if note is not None:
            body["note"] = note
        rated = api.post("/v1/feedback", body)
    if json_out:
        out.json(rated)
        return
    done = rated if isinstance(rated, dict) else {}
    also = done.get("invocations") or []
    where = f" (and on {len(also)} invocation{'s' if len(also) != 1 else ''} it made)" if target.startswith("turn_") and also else ""
    out.say(f"Thanks: thumbs {rating} kept on {escape(target)}{where}.")
    if done.get("learned") and rating == "down":
        out.say("Sidekick will not route those words there again (see `dreamer learned`).")


def _listing(api: Client, all_users: bool) -> dict[str, Any]:
    found = api.get("/v1/learned", all="true" if all_users else None)
    return found if isinstance(found, dict) else {"learning": True, "examples": []}


def _show(out: Output, listing: dict[str, Any], all_users: bool) -> None:
    if out.json_mode:
        out.json(listing)
        return
    items = [x for x in listing.get("examples") or [] if isinstance(x, dict)]
    if not listing.get("learning", True):
        out.say("Learning is off for you: Sidekick keeps nothing new from your corrections (`dreamer learned on`).")
    if not items:
        out.say("Sidekick has learned nothing from your corrections yet.")
        return
    heads = ["id", "when you say", "", "function", "from", "for"] + (["user"] if all_users else [])
    rows = [[x.get("id"), escape(str(x.get("phrase"))), "→" if x.get("kind") == "prefer" else "never →",
             f"{x.get('agent')}.{x.get('function')}", x.get("source"), "everyone" if x.get("everyone") else "you"]
            + ([x.get("user")] if all_users else []) for x in items]
    out.table(make_table(heads, rows))


def overview(
    ctx: typer.Context,
    all_users: Annotated[bool, typer.Option("--all", help="Every user's examples (administrator).")] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """List what Sidekick learned for you (the same as `dreamer learned list`)."""
    if ctx.invoked_subcommand is not None:
        return
    out = Output(json_out)
    with client(user) as api:
        _show(out, _listing(api, all_users), all_users)


def list_learned(
    all_users: Annotated[bool, typer.Option("--all", help="Every user's examples (administrator).")] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """List what Sidekick learned for you, and what the administrator promoted to everyone."""
    out = Output(json_out)
    with client(user) as api:
        _show(out, _listing(api, all_users), all_users)


ExampleArg = Annotated[int, typer.Argument(metavar="ID", min=1, max=2**31 - 1, help="The example's id (see `dreamer learned`).")]


def delete(example_id: ExampleArg, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Forget one learned example."""
    out = Output(json_out)
    with client(user) as api:
        gone = api.delete(f"/v1/learned/{example_id}")
    if json_out:
        out.json(gone)
        return
    out.say(f"Forgot learned example #{example_id}.")


def promote(
    example_id: ExampleArg,
    undo: Annotated[bool, typer.Option("--undo", help="Take the promotion back: it routes only its user's messages.")] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Administrator: let one user's example route every user's messages."""
    out = Output(json_out)
    with client(user) as api:
        done = api.post(f"/v1/learned/{example_id}/promote", {"everyone": not undo})
    if json_out:
        out.json(done)
        return
    x = done if isinstance(done, dict) else {}
    who = "its user only" if undo else "everyone"
    out.say(f"#{example_id} \"{escape(str(x.get('phrase')))}\" → {x.get('agent')}.{x.get('function')} now applies to {who}.")


def _setting(on: bool, json_out: bool, user: str | None) -> None:
    out = Output(json_out)
    with client(user) as api:
        done = api.put("/v1/learned/settings", {"learning": on})
    if json_out:
        out.json(done)
        return
    out.say("Learning is on: Sidekick learns from your corrections." if on else
            "Learning is off: Sidekick keeps nothing new from your corrections (what it learned stays until you delete it).")


def learning_off(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Opt out: Sidekick keeps nothing new from your corrections and ratings."""
    _setting(False, json_out, user)


def learning_on(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Opt back in to learning from your corrections."""
    _setting(True, json_out, user)


def register(app: typer.Typer) -> None:
    app.command("feedback")(guarded(feedback))
    learned_app.callback(invoke_without_command=True)(guarded(overview))
    learned_app.command("list")(guarded(list_learned))
    learned_app.command("delete")(guarded(delete))
    learned_app.command("promote")(guarded(promote))
    learned_app.command("off")(guarded(learning_off))
    learned_app.command("on")(guarded(learning_on))
    app.add_typer(learned_app, name="learned")
