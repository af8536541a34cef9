"""`dreamer data [list]`, `data add NAME URL`, `data scopes NAME FILE`, `data remove NAME`: data connections
(administrator); `data export QUERY_ID`: download one of your own query results as CSV or XLSX (any user)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output, make_table

data_app = typer.Typer(
    help="Databases the sql-explorer may query, and who sees which rows (administrator only). "
    "Credentials stay in the kernel; agents get rows through the scope rules."
)


def _show(out: Output, items: list[dict[str, Any]]) -> None:
    if out.json_mode:
        out.json(items)
        return
    if not items:
        out.say("No data connections. Add one with `dreamer data add NAME URL --scopes FILE`.")
        return
    rows = [[c.get("name"), c.get("url"), c.get("schema"), c.get("scopes_version")] for c in items]
    out.table(make_table(["name", "url", "schema", "scopes version"], rows))


def overview(ctx: typer.Context, json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List the data connections (the same as `dreamer data list`)."""
    if ctx.invoked_subcommand is not None:
        return
    with client(user) as api:
        _show(Output(json_out), api.get("/v1/data") or [])


def list_connections(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List the data connections (URLs shown without passwords)."""
    with client(user) as api:
        _show(Output(json_out), api.get("/v1/data") or [])


def _read(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc}") from None


def add(
    name: Annotated[str, typer.Argument(help="A name agents use, e.g. hr (scope data:hr).")],
    url: Annotated[str, typer.Argument(help="sqlite:////path/file.db or postgresql://user:pw@host/db?schema=hr")],
    scopes: Annotated[Path | None, typer.Option("--scopes", help="The role scopes file (YAML).")] = None,
    description: Annotated[str, typer.Option("--description", help="What the data is, in words.")] = "",
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Declare a data connection; the URL and its credentials stay in the kernel."""
    with client(user) as api:
        added = api.post("/v1/data", {"name": name, "url": url, "scopes": _read(scopes), "description": description})
    out = Output(json_out)
    if json_out:
        out.json(added)
    else:
        out.say(f"Added data connection [bold]{escape(name)}[/]; agents need the grant data:{escape(name)}.")


def set_scopes(
    name: Annotated[str, typer.Argument(help="The connection.")],
    scopes: Annotated[Path, typer.Argument(help="The role scopes file (YAML) with a higher version.")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Replace a connection's role scopes file (its version must go up)."""
    with client(user) as api:
        changed = api.request("PUT", f"/v1/data/{name}/scopes", json_body={"scopes": _read(scopes)})
    out = Output(json_out)
    if json_out:
        out.json(changed)
    else:
        out.say(f"Scopes of [bold]{escape(name)}[/] are now version {changed.get('scopes_version')}.")


def remove(
    name: Annotated[str, typer.Argument(help="The connection.")],
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Remove a data connection (and, on PostgreSQL, the reader role the kernel made)."""
    with client(user) as api:
        gone = api.delete(f"/v1/data/{name}")
    out = Output(json_out)
    if json_out:
        out.json(gone)
    else:
        out.say(f"Removed data connection {escape(name)}.")


def export_result(
    query_id: Annotated[str, typer.Argument(help="The query_id a query returned (q_...), e.g. from sql-explorer.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="xlsx or csv.")] = "xlsx",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Where to write it (default: QUERY_ID.FORMAT).")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Download a whole query result of yours as an XLSX or CSV file."""
    if fmt not in ("xlsx", "csv"):
        raise typer.BadParameter("--format is xlsx or csv")
    with client(user) as api:
        body = api.download(f"/v1/data/results/{query_id}/export", format=fmt)
    path = output or Path(f"{query_id}.{fmt}")
    try:
        path.write_bytes(body)
    except OSError as exc:
        raise typer.BadParameter(f"cannot write {path}: {exc}") from None
    out = Output(json_out)
    if json_out:
        out.json({"query_id": query_id, "format": fmt, "file": str(path), "bytes": len(body)})
    else:
        out.say(f"Wrote {escape(str(path))} ({len(body):,} bytes).")


def register(app: typer.Typer) -> None:
    data_app.callback(invoke_without_command=True)(guarded(overview))
    data_app.command("list")(guarded(list_connections))
    data_app.command("add")(guarded(add))
    data_app.command("scopes")(guarded(set_scopes))
    data_app.command("remove")(guarded(remove))
    data_app.command("export")(guarded(export_result))
    app.add_typer(data_app, name="data")
