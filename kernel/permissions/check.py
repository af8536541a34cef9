"""Whether a set of granted scopes allows a request."""

from __future__ import annotations

from collections.abc import Iterable

from dreamer.kernel.permissions.scopes import Scope, parse_scope


def allowed(granted: Iterable[str], wanted: str) -> str | None:
    """The granted scope that covers `wanted`, or None when nothing does."""
    want = parse_scope(wanted)
    for text in granted:
        try:
            scope: Scope = parse_scope(text)
        except ValueError:
            continue
        if scope.covers(want):
            return text
    return None
