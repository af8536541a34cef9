"""`dreamer nodes`: the kernels serving this installation, their health and whom they serve."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer
from rich.markup import escape

from dreamer.cli.client import CLIError
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, make_table


class NodesAction(str, Enum):
    drain = "drain"


def nodes(
    action: Annotated[NodesAction | None, typer.Argument(
        help="`drain NAME`: the node stops taking requests and background work and hands its users over (then stop it).")] = None,
    name: Annotated[str | None, typer.Argument(help="With drain: the node's name.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """List the nodes of a multi-node installation (started with `dreamer up --node NAME`), or drain one."""
    out = Output(json_out)
    if action is NodesAction.drain:
        if not name:
            raise CLIError("invalid_argument", "say which node: `dreamer nodes drain NAME` (`dreamer nodes` lists them)")
        with client(user) as api:
            drained = api.drain_node(name)
        if json_out:
            out.json(drained)
        else:
            out.say(f"Node {escape(name)} is draining: within one heartbeat it takes no new requests or background "
                    "runs and hands its users over one at a time; stop it once `dreamer nodes` shows it holds none.")
        return
    with client(user) as api:
        answer = api.nodes()
    if json_out:
        out.json(answer)
        return
    body: dict[str, Any] = answer if isinstance(answer, dict) else {}
    if not body.get("clustered"):
        out.say("This kernel runs alone (no --node); `dreamer up --node NAME --advertise URL` on PostgreSQL makes it one of several.")
        return
    rows = [
        [
            n.get("name"), n.get("health"), "yes" if n.get("leader") else "", f"{n.get('heartbeat_age_s')} s",
            n.get("advertise"), ", ".join(str(u) for u in n.get("holds") or []) or "-",
            ", ".join(str(u) for u in n.get("users") or []) or "-",
        ]
        for n in body.get("nodes") or [] if isinstance(n, dict)
    ]
    out.table(make_table(["node", "health", "leader", "heartbeat", "address", "holds users", "served (10 min)"], rows))
    out.note(f"[dim]answered by {escape(str(body.get('node')))}; a node is lost when its heartbeat is older than "
             f"{body.get('lease_s')} s[/]")


def register(app: typer.Typer) -> None:
    app.command("nodes")(guarded(nodes))
