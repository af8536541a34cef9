"""The builder's loop: `dreamer test` (the bundle's own tests, in the sandbox) and `dreamer dev`
(install the folder on the local kernel, reinstall on every change, print its calls and logs)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from dreamer.cli.client import Client, CLIError
from dreamer.cli.commands.bundles import pack_folder, write_functions
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, cell_text
from dreamer.cli.review import read_review, render_review
from rich.markup import escape


def _bundle_folder(path: Path, command: str) -> Path:
    if not (path / "agent.yaml").is_file():
        raise CLIError("invalid_bundle", f"there is no agent.yaml in {path}; `dreamer {command}` takes a bundle folder.")
    return path


def test(
    path: Annotated[Path, typer.Argument(help="The bundle folder (default: the current folder).")] = Path("."),
    json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Run the bundle's own tests (tests/ with pytest) inside the sandbox."""
    out = Output(json_out)
    archive = pack_folder(_bundle_folder(path, "test"))
    with client(user) as api:
        answer = api.test_bundle(archive)
    if json_out:
        out.json(answer)
    else:
        out.out.print(escape(cell_text(answer.get("output")).rstrip()))
    if not answer.get("passed"):
        if not json_out:
            out.err.print(f"[bold red]error:[/] the tests failed (pytest exit code {answer.get('exit_code')}).")
        raise typer.Exit(1)


def _snapshot(folder: Path) -> str:
    from dreamer.contracts.archive import DEFAULT_EXCLUDES, tree_digest

    # functions.json is what the loop itself writes; a change there is not the builder's.
    return tree_digest(folder, exclude=(*DEFAULT_EXCLUDES, "functions.json"))


def _stage(api: Client, folder: Path, user: str | None, out: Output, first: bool) -> tuple[str, str]:
    """Stages the folder; returns the staged bundle's id and the agent's name."""
    write_functions(folder, user)
    staged = api.stage_bundle(pack_folder(folder))
    review = read_review(staged)
    if first:
        render_review(out.out, review, [])
        out.say("[dim]dev approves the review for you: this is your own agent on your own kernel.[/]")
    return str(staged["bundle_id"]), review.name


def _show_call(api: Client, row: dict[str, Any], out: Output) -> None:
    detail = api.invocation(str(row["id"]))
    args = cell_text(detail.get("args"))
    line = f"{detail.get('function')}({escape(args)}) [{escape(cell_text(detail.get('status')))}]"
    if detail.get("error"):
        line += f" {escape(cell_text(detail['error'].get('message')))}"
    else:
        line += f" → {escape(cell_text(detail.get('result'))[:300])}"
    out.say(f"[bold]call[/] {line}")
    for log in detail.get("logs") or []:
        out.say(f"  [dim]{escape(cell_text(log.get('stream') or log.get('level')))}[/] {escape(cell_text(log.get('message')))}")


def dev(
    path: Annotated[Path, typer.Argument(help="The bundle folder (default: the current folder).")] = Path("."),
    interval: Annotated[float, typer.Option("--interval", min=0.2, help="Seconds between looks at the folder.")] = 1.0,
    stop_after: Annotated[float | None, typer.Option("--stop-after", help="Stop after this many seconds (for scripts).")] = None,
    json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Run the agent on the local kernel: reinstall on every change, show its calls and logs. Ctrl-C stops."""
    out = Output(json_out)
    folder = _bundle_folder(path, "dev")
    deadline = time.monotonic() + stop_after if stop_after else None
    with client(user) as api:
        bundle_id, name = _stage(api, folder, user, out, first=True)
        # The calls already on record are noted before the install: a call made the moment the
        # install answers is this session's and must be shown, not taken for an old one.
        seen = {str(r["id"]) for r in api.invocations(name, 200)}
        api.install(bundle_id, [])
        state = _snapshot(folder)
        out.say(f"Watching {escape(str(folder))}; call it with `dreamer call {escape(name)} ...`.")
        try:
            while deadline is None or time.monotonic() < deadline:
                time.sleep(interval)
                current = _snapshot(folder)
                if current != state:
                    state = current
                    try:
                        api.install(_stage(api, folder, user, out, first=False)[0], [])
                        out.say(f"[green]Reloaded[/] {escape(name)}.")
                    except CLIError as exc:
                        # A broken edit is reported and the loop goes on: the next save may fix it.
                        out.err.print(f"[bold red]error:[/] {escape(exc.message)}")
                rows = [r for r in api.invocations(name, 50) if str(r["id"]) not in seen and r.get("status") != "running"]
                for row in reversed(rows):
                    seen.add(str(row["id"]))
                    _show_call(api, row, out)
        except KeyboardInterrupt:
            pass
    out.say("Stopped watching.")


def register(app: typer.Typer) -> None:
    app.command("test")(guarded(test))
    app.command("dev")(guarded(dev))
