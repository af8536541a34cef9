"""`dreamer chat`: talk to Sidekick, once (`dreamer chat TEXT`) or in a terminal session."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

import typer
from rich.markup import escape

from dreamer.cli.client import CLIError, Client
from dreamer.cli.commands.common import JsonOpt, UserOpt, client, guarded
from dreamer.cli.config import load_config
from dreamer.cli.output import Output

# One-shots a little apart are one session of use: `dreamer chat "…"` continues the
# conversation the previous one used (so "yes" answers its open question, and the web's
# history gains one entry, not one per command) until it has been quiet this long.
FOLLOW_UP_SECONDS = 30 * 60


def _state_file(user: str | None) -> Path:
    return load_config().home / f"cli-chat-{user or 'self'}.json"


def _recent_conversation(user: str | None) -> str | None:
    """The conversation the last one-shot used, if it was used in the last FOLLOW_UP_SECONDS."""
    try:
        state = json.loads(_state_file(user).read_text())
        recent = time.time() - float(state.get("at", 0)) < FOLLOW_UP_SECONDS
    except (OSError, ValueError, TypeError):
        return None
    found = state.get("conversation_id")
    return found if recent and isinstance(found, str) and found else None


def _forget(user: str | None) -> None:
    try:
        _state_file(user).unlink(missing_ok=True)
    except OSError:
        pass


def _remember(user: str | None, done: dict[str, Any]) -> None:
    try:
        path = _state_file(user)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(
            {"conversation_id": done.get("conversation_id"), "waiting": done.get("pending") is not None, "at": time.time()}
        ))
    except OSError:
        pass  # only a convenience: the next message then starts a new conversation


def _stream_turn(api: Client, out: Output, text: str, conversation: str | None) -> dict[str, Any]:
    done: dict[str, Any] = {}
    open_line = False  # streamed text waiting for its newline
    for name, data in api.chat_events(text, conversation):
        if name == "text":
            out.say_part(escape(data.get("delta", "")))
            open_line = True
            continue
        if open_line:
            out.say("")
            open_line = False
        if name == "tool_call":
            args = json.dumps(data.get("args", {}), ensure_ascii=False)
            out.note(f"→ {data['agent']}.{data['function']} {args}")
        elif name == "error":
            out.say(f"[red]{escape(data.get('message', 'failed'))}[/]")
        elif name == "done":
            done = data
    if open_line:
        out.say("")
    return done


def _exists(api: Client, conversation_id: str) -> bool:
    try:
        api.get(f"/v1/conversations/{quote(conversation_id, safe='')}")
    except CLIError as exc:
        if exc.code == "not_found":
            return False
        raise
    return True


def chat(
    text: Annotated[str | None, typer.Argument(help="What to ask; omit it for a conversation in the terminal.")] = None,
    conversation: Annotated[str | None, typer.Option("--conversation", help="Continue this conversation id.")] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new conversation instead of continuing the recent one.")] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Talk to Sidekick: it turns what you say into calls of your agents' functions."""
    out = Output(json_out)
    remembered = None if (new or conversation) else _recent_conversation(user)
    conversation = conversation or remembered
    with client(user) as api:
        if text is not None:
            if remembered is not None and not _exists(api, remembered):
                _forget(user)  # deleted meanwhile (in the web app, say): this one starts afresh
                conversation = None
            if json_out:
                done = api.chat(text, conversation)
                _remember(user, done)
                out.json({"reply": done.get("reply"), "calls": [
                    {k: c.get(k) for k in ("agent", "function", "args", "ok", "result", "error", "invocation_id") if k in c}
                    for c in done.get("calls", [])
                ], "pending": done.get("pending"), "conversation_id": done.get("conversation_id"),
                    "turn_id": done.get("turn_id")})  # what `dreamer feedback ID up|down` rates
                return
            done = _stream_turn(api, out, text, conversation)
            _remember(user, done)
            return
        out.note("Talking to Sidekick. Empty line or Ctrl-D to leave.")
        while True:
            try:
                line = input("you> ")
            except EOFError:
                return
            if not line.strip():
                return
            done = _stream_turn(api, out, line, conversation)
            conversation = done.get("conversation_id") or conversation
            _remember(user, done)


def register(app: typer.Typer) -> None:
    app.command("chat")(guarded(chat))
