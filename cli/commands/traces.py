"""`dreamer traces export|opt-out|opt-in|setting`: take traces out for training (issue 20)."""

from __future__ import annotations

import os
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from dreamer.cli.client import CLIError
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.output import Output

traces_app = typer.Typer(help="Export your traces for training, or keep them out of every export.", no_args_is_help=True)


class Format(str, Enum):
    agentlightning = "agentlightning"
    otlp = "otlp"
    triplets = "triplets"


def export(
    format: Annotated[Format, typer.Option("--format", "-f", help="agentlightning (v1 rollouts and events), "
                                           "otlp (OTLP/JSON spans with agentlightning.* attributes) or triplets.")]
    = Format.agentlightning,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Write to FILE (default: stdout).")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only what started since: 7d, 24h, 30m or an ISO date.")]
    = None,
    all_users: Annotated[bool, typer.Option("--all-users", help="Every user's traces (the administrator only).")] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Export traces as JSON lines, one rollout (or triplet) a line, secrets taken out."""
    out = Output(json_out)
    params: dict[str, Any] = {"format": format.value, "since": since, "all_users": "true" if all_users else None}
    lines = 0
    size = 0
    with client(user) as api:
        chunks = api.export_traces(params)
        if out_file is None:
            sink = sys.stdout.buffer
            for chunk in chunks:
                sink.write(chunk)
                lines += chunk.count(b"\n")
                size += len(chunk)
            sink.flush()
            if json_out:
                return  # stdout holds the export itself; a summary would break its lines
            out.note(f"{lines} line(s), {size} bytes of {format.value}.")
            return
        target = out_file.expanduser()
        if target.is_dir():
            raise CLIError("invalid_argument", f"--out {target} is a folder; give a file name")
        # Written beside the target and renamed at the end: a failed export leaves no half file.
        fd, tmp = tempfile.mkstemp(prefix=".traces-", dir=str(target.parent if str(target.parent) else "."))
        try:
            with os.fdopen(fd, "wb") as sink:
                for chunk in chunks:
                    sink.write(chunk)
                    lines += chunk.count(b"\n")
                    size += len(chunk)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    summary = {"format": format.value, "out": str(target), "lines": lines, "bytes": size}
    if json_out:
        out.json(summary)
    else:
        out.say(f"Wrote {lines} line(s) of {format.value} to {target} ({size} bytes).")


def opt_out(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Keep your traces out of every training export (also stops keeping new prompts for one)."""
    _setting(True, json_out, user)


def opt_in(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Let your traces be exported for training again."""
    _setting(False, json_out, user)


def setting(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Whether your traces are kept out of training exports."""
    _setting(None, json_out, user)


def _setting(value: bool | None, json_out: bool, user: str | None) -> None:
    out = Output(json_out)
    with client(user) as api:
        answer = api.export_setting(value)
    if json_out:
        out.json(answer)
        return
    name = answer.get("user", "you") if isinstance(answer, dict) else "you"
    off = isinstance(answer, dict) and answer.get("opt_out") is True
    out.say(f"{name}: traces are {'kept out of' if off else 'included in'} training exports.")


def register(app: typer.Typer) -> None:
    for name, fn in (("export", export), ("opt-out", opt_out), ("opt-in", opt_in), ("setting", setting)):
        traces_app.command(name)(guarded(fn))
    app.add_typer(traces_app, name="traces")
