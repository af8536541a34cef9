"""Checking what a person (or Sidekick) hands to the notes agent.

Every refusal is a BadRequest carrying one sentence the user can act on; the
worker reports it with kind invalid_argument.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit, urlunsplit

from dreamer.sdk import InvalidArgument

MAX_NOTE_CHARS = 20_000
# An article's text is kept whole so search can find any passage of it.
MAX_ARTICLE_CHARS = 200_000
MAX_TITLE_CHARS = 300
MAX_URL_CHARS = 2_000
MAX_QUERY_CHARS = 200
MAX_TAGS = 20
MAX_TAG_CHARS = 40

# Tags are short words: "work", "to-read", "q3_plans"; a leading "#" is dropped.
_TAG = re.compile(r"[^\W_][\w-]*", re.UNICODE)
# Hashtags inside a note's text become tags too ("call the bank #errands").
HASHTAG = re.compile(r"(?<![\w#])#([^\W_][\w-]*)", re.UNICODE)
_KEEP_CONTROLS = {"\n", "\t", "\r"}


class BadRequest(InvalidArgument, ValueError):
    """Input a function refuses: the caller gets kind invalid_argument and this one sentence."""


def _check_characters(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # json.loads lets lone surrogates through; SQLite cannot store them.
        raise BadRequest(f"The {what} contains characters that are not valid text; send plain UTF-8 text.") from None
    if any(unicodedata.category(ch) == "Cc" and ch not in _KEEP_CONTROLS for ch in text):
        raise BadRequest(f"The {what} contains control characters; use plain text.")


def note_text(text: str) -> str:
    if not isinstance(text, str):
        raise BadRequest("The note must be text.")
    text = text.strip()
    if not text:
        raise BadRequest("There is nothing to save: the note is empty.")
    if len(text) > MAX_NOTE_CHARS:
        raise BadRequest(
            f"A note can be at most {MAX_NOTE_CHARS:,} characters long and this one has {len(text):,}; "
            "split it up, or keep a long text with save_article."
        )
    _check_characters(text, "note")
    return text


def tags(values: list[str] | None, text: str = "") -> list[str]:
    """Lower-case tags without '#', each once, in the order given; hashtags in `text` come last."""
    if values is None:
        values = []
    if not isinstance(values, list):
        raise BadRequest("Give the tags as a list of words.")
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise BadRequest(f"Each tag must be a word; got {type(value).__name__}.")
        tag = value.strip().lstrip("#").strip().casefold()
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS or not _TAG.fullmatch(tag):
            raise BadRequest(
                f"The tag {value[:50]!r} is not usable; a tag is one word of at most {MAX_TAG_CHARS} "
                "letters, digits, '-' or '_', such as 'work' or 'to-read'."
            )
        if tag not in out:
            out.append(tag)
    for found in HASHTAG.findall(text):
        tag = found.casefold()
        if len(tag) <= MAX_TAG_CHARS and tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise BadRequest(f"A note can have at most {MAX_TAGS} tags; this one has {len(out)}.")
    return out


def query(text: str) -> str:
    if not isinstance(text, str):
        raise BadRequest("Say what to search for as text.")
    text = " ".join(text.split())
    if not text:
        raise BadRequest("Say what to search for, for example 'dentist' or '#work'.")
    if len(text) > MAX_QUERY_CHARS:
        raise BadRequest(f"A search can be at most {MAX_QUERY_CHARS} characters long; this one has {len(text)}.")
    _check_characters(text, "search")
    return text


def limit(value: int, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest("The limit must be a whole number.")
    if not 1 <= value <= most:
        raise BadRequest(f"The limit must be between 1 and {most}; got {value}.")
    return value


def url(value: str) -> str:
    """An http(s) URL with a host, without its #fragment (the same page either way)."""
    if not isinstance(value, str):
        raise BadRequest("The article's address must be text, such as https://example.com/story.")
    value = value.strip()
    if not value:
        raise BadRequest("Give the article's address, such as https://example.com/story.")
    if len(value) > MAX_URL_CHARS:
        raise BadRequest(f"That address is {len(value):,} characters long; at most {MAX_URL_CHARS:,} are accepted.")
    if any(ch.isspace() for ch in value):
        raise BadRequest("An address cannot contain spaces; give one address such as https://example.com/story.")
    _check_characters(value, "address")
    if "://" not in value and re.match(r"[\w-]+(\.[\w-]+)+(/|$)", value):
        value = "https://" + value  # "example.com/story", as people say it
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise BadRequest(f"{value[:80]!r} is not a web address I can read.") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadRequest(f"{value[:80]!r} is not a web address; give one that starts with https:// or http://.")
    # Host names ignore case; a user:password part does not, so leave that alone.
    netloc = parts.netloc if "@" in parts.netloc else parts.netloc.lower()
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, ""))


def title(value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest("The title must be text.")
    value = " ".join(value.split())
    if len(value) > MAX_TITLE_CHARS:
        raise BadRequest(f"A title can be at most {MAX_TITLE_CHARS} characters long; this one has {len(value)}.")
    _check_characters(value, "title")
    return value or None


def article_text(value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest("The article's text must be text.")
    value = value.strip()
    if len(value) > MAX_ARTICLE_CHARS:
        raise BadRequest(
            f"An article's text can be at most {MAX_ARTICLE_CHARS:,} characters long; this one has {len(value):,}."
        )
    _check_characters(value, "article's text")
    return value or None
