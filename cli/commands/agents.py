"""`dreamer agents`, `call` and `database`: using what is installed."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape

from dreamer.cli.client import CLIError
from dreamer.cli.commands.common import JsonOpt, UserOpt, YesOpt, client, confirm, guarded
from dreamer.cli.output import Output, cell_text, make_table


def agents(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List your installed agents."""
    out = Output(json_out)
    with client(user) as api:
        listed = api.agents()
    if json_out:
        out.json(listed)
        return
    items = [a for a in listed if isinstance(a, dict)] if isinstance(listed, list) else []
    if not items:
        out.say("No agents are installed; `dreamer install PATH` installs one.")
        return
    rows = []
    for agent in items:
        functions = [f.get("name") for f in agent.get("functions", []) if isinstance(f, dict)]
        rows.append([
            agent.get("name"),
            agent.get("version"),
            ", ".join(str(name) for name in functions if name),
            ", ".join(_grant_names(agent.get("grants"))),
        ])
    out.table(make_table(["name", "version", "functions", "grants"], rows))


def _grant_names(grants: Any) -> list[str]:
    if not isinstance(grants, list):
        return []
    return [cell_text(g.get("scope") if isinstance(g, dict) else g) for g in grants]


def parse_args(text: str | None) -> dict[str, Any]:
    """The call's arguments: a JSON object, checked before anything is sent."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CLIError("invalid_argument", f"arguments must be a JSON object: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(value, dict):
        raise CLIError("invalid_argument", f"arguments must be a JSON object: got {_json_kind(value)}, not an object such as {{\"name\": \"value\"}}")
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(type(value), "something else")


def call(
    agent: Annotated[str, typer.Argument(help="The agent's name.")],
    function: Annotated[str, typer.Argument(help="The function to call.")],
    args: Annotated[str | None, typer.Argument(metavar="[JSON]", help='Arguments as a JSON object, e.g. \'{"items": ["milk"]}\'.')] = None,
    yes: YesOpt = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Call an agent's function and print its result (one that changes or deletes something asks first)."""
    out = Output(json_out)
    arguments = parse_args(args)
    with client(user) as api:
        try:
            answer = api.call(agent, function, arguments)
        except CLIError as err:
            if err.code != "confirmation_required":
                raise
            # The kernel refused because the function is marked confirm: ask the person, then say so.
            confirm(
                f"{agent}.{function} changes or deletes something. Run it?",
                yes,
                f"{agent}.{function} changes or deletes something; pass --yes to run it non-interactively",
            )
            answer = api.call(agent, function, arguments, confirm=True)
    answer = answer if isinstance(answer, dict) else {"result": answer, "invocation_id": None}
    result, invocation_id = answer.get("result"), answer.get("invocation_id")
    if answer.get("status") == "queued":
        if json_out:
            out.json({"result": None, "invocation_id": invocation_id, "status": "queued"})
            return
        out.say(f"Queued as {escape(str(invocation_id))}; `dreamer logs --run {escape(str(invocation_id))}` follows it.")
        return
    if json_out:
        out.json({"result": result, "invocation_id": invocation_id})
        return
    out.pretty_json(result)
    if invocation_id:
        out.note(f"[dim]invocation {escape(str(invocation_id))} (`dreamer logs --run {escape(str(invocation_id))}`)[/]")


def database(
    agent: Annotated[str, typer.Argument(help="The agent whose database to query.")],
    query: Annotated[str, typer.Option("--query", "-q", metavar="SQL", help="One SQL statement.")],
    yes: YesOpt = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Run SQL against an agent's own database (statements that change data ask first)."""
    out = Output(json_out)
    if not query.strip():
        raise CLIError("invalid_argument", "--query needs an SQL statement.")
    with client(user) as api:
        try:
            answer = api.database(agent, query, confirm=False)
        except CLIError as err:
            if err.code != "confirmation_required":
                raise
            confirm(
                f"This statement changes data in {agent}'s database. Run it?",
                yes,
                "this statement changes data; pass --yes to run it non-interactively",
            )
            answer = api.database(agent, query, confirm=True)
    answer = answer if isinstance(answer, dict) else {}
    columns = [cell_text(c) for c in answer.get("columns") or []]
    rows = answer.get("rows") or []
    changes = answer.get("changes")
    if json_out:
        out.json({"columns": columns, "rows": rows, "changes": changes})
        return
    if columns:
        table_rows = [_cells(row, columns) for row in rows]
        out.table(make_table(columns, table_rows))
        out.say(f"[dim]{len(rows)} row{'s' if len(rows) != 1 else ''}[/]")
    if changes:
        out.say(f"{changes} row{'s' if changes != 1 else ''} changed.")
    elif not columns:
        out.say("Done; no rows changed.")


def _cells(row: Any, columns: list[str]) -> list[Any]:
    if isinstance(row, dict):
        return [row.get(c) for c in columns]
    return list(row) if isinstance(row, (list, tuple)) else [row]


def register(app: typer.Typer) -> None:
    app.command("agents")(guarded(agents))
    app.command("call")(guarded(call))
    app.command("database")(guarded(database))
