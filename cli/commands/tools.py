"""`dreamer tools` and `dreamer call-tool`: the user's tool servers (MCP) and their tools."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from dreamer.cli.client import CLIError
from dreamer.cli.commands.agents import parse_args
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, cell_text, make_table

tools_app = typer.Typer(help="Your tool servers (MCP) and their tools.", invoke_without_command=True)


@tools_app.callback()
@guarded
def tools(ctx: typer.Context, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List your installed tool servers and their tools."""
    if ctx.invoked_subcommand is not None:
        return
    out = Output(json_out)
    with client(user) as api:
        listed = api.tools()
    if json_out:
        out.json(listed)
        return
    servers = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    if not servers:
        out.say("No tool servers are installed; `dreamer install PATH` installs one.")
        return
    rows = []
    for server in servers:
        for tool in server.get("tools") or []:
            if isinstance(tool, dict):
                state = "on" if tool.get("enabled", True) else "off (disabled by you)"
                lines = cell_text(tool.get("description")).strip().splitlines()
                rows.append([tool.get("qualified"), cell_text(server.get("version")), state, lines[0] if lines else ""])
    out.table(make_table(["tool", "version", "state", "description"], rows))


def _switch(server: str, tool: str, enabled: bool, json_out: bool, user: str | None) -> None:
    out = Output(json_out)
    with client(user) as api:
        answer = api.switch_tool(server, tool, enabled)
    if json_out:
        out.json(answer)
        return
    out.say(f"{escape(server)}.{escape(tool)} is {'on' if enabled else 'off'}.")


@tools_app.command("enable")
@guarded
def enable(server: str, tool: str, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Switch a tool back on."""
    _switch(server, tool, True, json_out, user)


@tools_app.command("disable")
@guarded
def disable(server: str, tool: str, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Switch a tool off: agents calling it get a `tool_disabled` error."""
    _switch(server, tool, False, json_out, user)


@tools_app.command("uninstall")
@guarded
def uninstall(
    server: str,
    purge: Annotated[bool, typer.Option("--purge", help="Also delete the tool's data.")] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Uninstall a tool server (an agent of the same name is not touched)."""
    out = Output(json_out)
    with client(user) as api:
        answer = api.delete(f"/v1/tools/{server}", purge=str(purge).lower())
    if json_out:
        out.json(answer)
        return
    out.say(f"Uninstalled the tool server {escape(server)}" + (" and deleted its data." if purge else "; its data is kept."))


@tools_app.command("headers")
@guarded
def headers(
    server: str,
    header: Annotated[list[str] | None, typer.Argument(metavar="NAME:VALUE", help="Headers for a remote server (none clears them).")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Set the headers (e.g. Authorization) the kernel sends to a remote tool server for you."""
    values: dict[str, str] = {}
    for item in header or []:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise CLIError("invalid_argument", f"{item!r} is not NAME:VALUE")
        values[name.strip()] = value.strip()
    out = Output(json_out)
    with client(user) as api:
        answer = api.set_tool_headers(server, values)
    if json_out:
        out.json(answer)
        return
    out.say(f"{escape(server)} now gets {len(values)} header{'s' if len(values) != 1 else ''} from the kernel.")


def call_tool(
    server: Annotated[str, typer.Argument(help="The tool server's name.")],
    tool: Annotated[str, typer.Argument(help="The tool to call.")],
    args: Annotated[str | None, typer.Argument(metavar="[JSON]", help="Arguments as a JSON object.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Call a tool as yourself and print its result."""
    out = Output(json_out)
    arguments = parse_args(args)
    with client(user) as api:
        answer = api.call_tool(server, tool, arguments)
    answer = answer if isinstance(answer, dict) else {"result": answer}
    if json_out:
        out.json({"result": answer.get("result"), "tool": f"{server}.{tool}"})
        return
    out.pretty_json(answer.get("result"))


def register(app: typer.Typer) -> None:
    app.add_typer(tools_app, name="tools")
    app.command("call-tool")(guarded(call_tool))
