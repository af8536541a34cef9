"""`dreamer doctor`: which sandboxes work on this machine (and why not), and what the kernel runs on."""

from __future__ import annotations

from typing import Any

import typer
from rich.markup import escape
from rich.text import Text

from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.commands.quotas_view import headings, used_of
from dreamer.cli.output import Output, cell_text, make_table


def doctor(json_out: JsonOpt = False, user: UserOpt = None,
           model: bool = typer.Option(True, "--model/--no-model",
                                      help="Ask each configured model a question and for a tool call (a few tokens).")) -> None:
    """Probe every sandbox backend and the configured model for real; report the kernel's store and version.

    Exits 1 when the sandbox the kernel uses cannot start a worker, or a configured model does not answer.
    """
    out = Output(json_out)
    with client(user) as api:
        answer = api.get("/v1/doctor", model=None if model else "false")
    report: dict[str, Any] = answer if isinstance(answer, dict) else {}
    sandbox = report.get("sandbox") if isinstance(report.get("sandbox"), dict) else {}
    active = sandbox.get("active")
    backends = [b for b in sandbox.get("backends") or [] if isinstance(b, dict)]
    if json_out:
        out.json(report)
    else:
        rows = [
            [
                f"{cell_text(b.get('name'))}{' (active)' if b.get('name') == active else ''}",
                Text("yes" if b.get("ok") else "no", style="green" if b.get("ok") else "red"),
                b.get("reason"),
            ]
            for b in backends
        ]
        out.table(make_table(["sandbox", "works", "why"], rows))
        if sandbox.get("seccomp"):
            out.say(f"bwrap workers: {escape(cell_text(sandbox.get('seccomp')))}")
        store = report.get("store") if isinstance(report.get("store"), dict) else {}
        out.say(f"store: {escape(cell_text(store.get('backend')))} at {escape(cell_text(store.get('url')))}")
        out.say(f"model: {escape(_model_line(report.get('llm')))}")
        for found in _probes(report):
            ok = found.get("answers") and found.get("tools")
            variants = ", ".join(cell_text(v) for v in found.get("variants") or [])
            out.say(f"  {'[green]ok[/]' if ok else '[red]problem[/]'} {escape(cell_text(found.get('model')))} "
                    f"({escape(variants)}): {escape(cell_text(found.get('detail')))}")
        out.say(f"kernel version: {escape(cell_text(report.get('version')))}")
        quotas = report.get("quotas") if isinstance(report.get("quotas"), dict) else None
        if quotas:
            per_user = quotas.get("per_user") if isinstance(quotas.get("per_user"), dict) else {}
            out.say(f"quotas: {escape(cell_text(quotas.get('workers_running')))} of "
                    f"{escape(cell_text(quotas.get('workers_total')))} sandboxes running; each user (used / quota):")
            rows = [[u.get("user"), *used_of(u, per_user)] for u in quotas.get("users") or [] if isinstance(u, dict)]
            out.table(make_table(["user", *headings()], rows))
    if not any(b.get("name") == active and b.get("ok") for b in backends):
        if not json_out:
            out.note(f"[bold red]The active sandbox ({escape(cell_text(active))}) cannot start workers.[/]")
        raise typer.Exit(1)
    silent = [cell_text(p.get("model")) for p in _probes(report) if not p.get("answers")]
    if silent:
        if not json_out:
            out.note(f"[bold red]The configured model does not answer: {escape(', '.join(silent))}.[/]")
        raise typer.Exit(1)


def _probes(report: dict[str, Any]) -> list[dict[str, Any]]:
    llm = report.get("llm") if isinstance(report.get("llm"), dict) else {}
    return [p for p in llm.get("probe") or [] if isinstance(p, dict)]


def _model_line(llm: object) -> str:
    """One line on the model gateway: provider, models, where, budget; or why there is none."""
    if not isinstance(llm, dict):
        return "unknown (the kernel did not say)"
    provider = cell_text(llm.get("provider"))
    if not llm.get("available"):
        return f"{provider} ({cell_text(llm.get('problem') or 'no model is configured')})"
    models = llm.get("models") if isinstance(llm.get("models"), dict) else {}
    named = ", ".join(f"{cell_text(v)}={cell_text(m)}" for v, m in models.items())
    where = f" at {cell_text(llm.get('base_url'))}" if llm.get("base_url") else ""
    budget = llm.get("budget_usd")
    limit = "no budget limit" if budget is None else f"budget ${cell_text(budget)} per user per month"
    return f"{provider}{where} ({named}); {limit}"


def register(app: typer.Typer) -> None:
    app.command("doctor")(guarded(doctor))
