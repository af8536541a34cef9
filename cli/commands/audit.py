"""`dreamer audit [verify]`: read the hash-chained audit log, or check that nobody rewrote it."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, cell_text, make_table, short_time


class AuditAction(str, Enum):
    verify = "verify"


def audit(
    action: Annotated[
        AuditAction | None, typer.Argument(help="`verify` checks the hash chain instead of listing entries.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=10000, help="How many recent entries.")] = 50,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """List recent audit entries, or `dreamer audit verify` to check the log is intact."""
    out = Output(json_out)
    with client(user) as api:
        answer = api.audit_verify() if action is AuditAction.verify else api.audit(limit=limit)
    if action is AuditAction.verify:
        _verdict(out, answer if isinstance(answer, dict) else {})
        return
    if json_out:
        out.json(answer)
        return
    entries = [e for e in answer if isinstance(e, dict)] if isinstance(answer, list) else []
    if not entries:
        out.say("The audit log is empty.")
        return
    rows = [
        [
            e.get("seq"),
            short_time(e.get("at")),
            e.get("actor"),
            e.get("action"),
            e.get("target"),
            e.get("scope"),
            Text(cell_text(e.get("decision")), style="red" if e.get("decision") == "deny" else "green"),
        ]
        for e in entries
    ]
    out.table(make_table(["seq", "at", "actor", "action", "target", "scope", "decision"], rows))


def _verdict(out: Output, answer: dict[str, Any]) -> None:
    intact = answer.get("ok") is True
    if out.json_mode:
        out.json(answer)
    elif intact:
        out.say(f"Audit log intact: {cell_text(answer.get('entries'))} entries")
    else:
        reason = cell_text(answer.get("reason") or answer.get("error") or "its hash does not match its contents")
        where = f" at entry {cell_text(answer['first_bad'])}" if answer.get("first_bad") is not None else ""
        out.say(f"[bold red]Audit log TAMPERED{escape(where)}:[/] {escape(reason)}")
    if not intact:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("audit")(guarded(audit))
