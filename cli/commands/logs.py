"""`dreamer logs`: recent invocations, or one invocation's outcome and log lines."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, cell_text, make_table, short_time

STATUS_STYLE = {"ok": "green", "succeeded": "green", "done": "green", "error": "red", "failed": "red", "running": "yellow", "queued": "dim"}


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def duration(inv: dict[str, Any]) -> str:
    ms = inv.get("duration_ms")
    if not isinstance(ms, (int, float)):
        start, end = _when(inv.get("started_at")), _when(inv.get("finished_at"))
        if start is None or end is None:
            return ""
        ms = (end - start).total_seconds() * 1000
    return f"{ms:.0f} ms" if ms < 10_000 else f"{ms / 1000:.1f} s"


def error_text(inv: dict[str, Any]) -> str:
    err = inv.get("error")
    if isinstance(err, dict):
        code, message = err.get("code"), err.get("message")
        return f"{message} ({code})" if code and message else cell_text(message or code)
    if err:
        return cell_text(err)
    code, message = inv.get("error_code"), inv.get("error_message")
    return f"{message} ({code})" if code and message else cell_text(message or code)


def logs(
    run: Annotated[str | None, typer.Option("--run", metavar="ID", help="Show one invocation in full.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", metavar="A", help="Only this agent's invocations.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="How many invocations.")] = 20,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Show recent invocations, or with --run ID one invocation's result, error and logs."""
    out = Output(json_out)
    with client(user) as api:
        answer = api.invocation(run) if run else api.invocations(agent=agent, limit=limit)
        if run and isinstance(answer, dict) and answer.get("status") in ("queued", "running"):
            # Not over yet: follow its log lines live until it ends.
            if not json_out:
                out.say(f"[dim]following {escape(run)} ({escape(cell_text(answer.get('status')))}); Ctrl-C stops following, not the run[/]")
            for event, data in api.follow_logs(run):
                if event == "log" and not json_out:
                    out.say(escape(_log_line(data)))
                elif event == "end":
                    break
            answer = api.invocation(run)
            if not json_out:
                _show_run(out, answer if isinstance(answer, dict) else {}, with_logs=False)
                return
    if json_out:
        out.json(answer)
        return
    if run:
        _show_run(out, answer if isinstance(answer, dict) else {})
        return
    items = [i for i in answer if isinstance(i, dict)] if isinstance(answer, list) else []
    if not items:
        out.say("No invocations yet.")
        return
    rows = []
    for inv in items:
        status = cell_text(inv.get("status"))
        rows.append([
            inv.get("id"),
            f"{cell_text(inv.get('agent'))}.{cell_text(inv.get('function'))}",
            _styled(status),
            short_time(inv.get("started_at") or inv.get("created_at")),
            duration(inv),
        ])
    out.table(make_table(["id", "function", "status", "started", "duration"], rows))


def _styled(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def _show_run(out: Output, inv: dict[str, Any], with_logs: bool = True) -> None:
    status = cell_text(inv.get("status"))
    style = STATUS_STYLE.get(status, "bold")
    out.say(
        f"[bold]{escape(cell_text(inv.get('agent')))}.{escape(cell_text(inv.get('function')))}[/]"
        f"  [{style}]{escape(status)}[/]  {escape(cell_text(inv.get('id')))}"
    )
    started = short_time(inv.get("started_at") or inv.get("created_at"))
    took = duration(inv)
    if started:
        out.say(f"started {escape(started)}" + (f", took {escape(took)}" if took else ""))
    problem = error_text(inv)
    if problem:
        out.say(f"[red]error:[/] {escape(problem)}")
    elif "result" in inv:
        out.say("result:")
        out.pretty_json(inv.get("result"))
    attempt, most = inv.get("attempt"), inv.get("max_attempts")
    if inv.get("background") and isinstance(attempt, int) and isinstance(most, int):
        out.say(f"attempt {attempt} of at most {most}")
    if not with_logs:
        return
    lines = inv.get("logs") or []
    if lines:
        out.say("logs:")
        for line in lines:
            out.say(escape(_log_line(line)))
    else:
        out.say("[dim]no log lines[/]")


def _log_line(line: Any) -> str:
    if not isinstance(line, dict):
        return cell_text(line)
    at = short_time(line.get("at"))
    level = cell_text(line.get("level") or line.get("stream"))
    return " ".join(part for part in (at, level, cell_text(line.get("message"))) if part)


def cancel(
    run: Annotated[str, typer.Argument(metavar="ID", help="The background invocation to cancel.")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Cancel a queued or running background invocation."""
    out = Output(json_out)
    with client(user) as api:
        answer = api.cancel(run)
    if json_out:
        out.json(answer)
        return
    was = cell_text(answer.get("was")) if isinstance(answer, dict) else ""
    out.say(f"Cancelled {escape(run)}" + (f" (it was {escape(was)})." if was else "."))


def register(app: typer.Typer) -> None:
    app.command("logs")(guarded(logs))
    app.command("cancel")(guarded(cancel))
