"""Jinja2 templates for the pages, with the filters they share."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from dreamer.contracts.manifest import NO_DESCRIPTION, PLACEHOLDER_DESCRIPTION, shown_description
from dreamer.contracts.reply_text import error_words
from dreamer.kernel.users.sessions import SignedIn
from dreamer.web import wording
from dreamer.web.audit_words import audit_sentence

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html


def _when(value: str | None) -> str:
    """'3 min ago' for a recent ISO time, else the date."""
    if not value:
        return "never"
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return value
    at = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    seconds = (datetime.now(timezone.utc) - at).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86_400:
        return f"{int(seconds // 3600)} h ago"
    return at.strftime("%d %b %Y, %H:%M")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _plain(examples: list[str]) -> list[str]:
    """Examples a person can say as written: not templates with {slots}, [options] or (alternatives)."""
    return [e for e in examples or [] if isinstance(e, str) and not any(c in e for c in "{[(|")]


templates.env.filters["when"] = _when
templates.env.filters["plain"] = _plain
templates.env.filters["pretty"] = _pretty
templates.env.filters["call_sentence"] = wording.call_sentence
templates.env.filters["calls_summary"] = wording.calls_summary
templates.env.filters["run_sentence"] = wording.run_sentence
templates.env.filters["outcome"] = wording.outcome_word
templates.env.filters["audit_sentence"] = audit_sentence
templates.env.filters["described"] = shown_description
templates.env.filters["error_words"] = error_words  # an agent's error without its exception names
# install.js reads gallery listings and reviews with the same rule (the page carries both texts).
templates.env.globals["placeholder_description"] = PLACEHOLDER_DESCRIPTION
templates.env.globals["no_description"] = NO_DESCRIPTION


def page(request: Request, name: str, who: SignedIn | None, status: int = 200, **context: Any) -> HTMLResponse:
    response = templates.TemplateResponse(
        request, name, {"who": who, "section": name.split(".")[0], **context}, status_code=status
    )
    secret = getattr(request.state, "new_session_secret", None)
    if secret:  # this request signed a lone local user in
        from dreamer.web.auth import set_session_cookie

        set_session_cookie(response, request, secret)
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'"
    )
    return response
