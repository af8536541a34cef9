"""Text every store backend can hold."""

from __future__ import annotations


def storable_text(value: str) -> str:
    """No NUL (PostgreSQL refuses it) and no lone surrogates (not encodable as UTF-8,
    yet json.loads lets them through from a hostile request)."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value
