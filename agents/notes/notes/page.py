"""Readable text out of a fetched web page.

`ctx.fetch` returns a Response (status, lowercase headers, `.text` decoded with
the declared charset); a dict or plain string with the same parts is read too,
so this module can be checked without a network. HTML is reduced to its title
and the text a person would read (no scripts, styles, navigation or markup).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from .clean import MAX_ARTICLE_CHARS, MAX_TITLE_CHARS
from .summary import clip

# Elements whose text is never the article.
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "nav", "footer", "form", "button", "iframe"})
# Elements that end a line of text.
_BLOCK = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article",
     "header", "blockquote", "pre", "figcaption", "table", "dd", "dt", "hr", "main", "aside"}
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "source", "wbr", "area", "base", "col", "embed", "track"})


class FetchFailed(Exception):
    """The page could not be read; the message says why in a few words."""


@dataclass(frozen=True)
class Page:
    title: str | None
    text: str


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skipping = 0
        self.in_title = False
        self.title: list[str] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIP and tag not in _VOID:
            self.skipping += 1
        if tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIP and self.skipping:
            self.skipping -= 1
        if tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.skipping:
            self.parts.append(data)


def from_html(html: str) -> Page:
    reader = _Reader()
    try:
        reader.feed(html)
        reader.close()
    except (AssertionError, ValueError):  # HTMLParser gives up on some broken markup; keep what it read
        pass
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", "".join(reader.parts))]
    title = " ".join("".join(reader.title).split()) or None
    return Page(title=clip(title, MAX_TITLE_CHARS) if title else None, text="\n\n".join(p for p in paragraphs if p))


def _field(value: Any, *names: str) -> Any:
    for name in names:
        if isinstance(value, dict) and name in value:
            return value[name]
        if not isinstance(value, dict) and hasattr(value, name):
            return getattr(value, name)
    return None


def from_fetch(answer: Any) -> Page:
    """The page in whatever `ctx.fetch` returned; FetchFailed when it holds no readable text."""
    status = _field(answer, "status", "status_code")
    if isinstance(status, int) and not 200 <= status < 300:
        raise FetchFailed(f"the site answered with status {status}")
    body = answer if isinstance(answer, (str, bytes)) else _field(answer, "text", "body", "content")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body.strip():
        raise FetchFailed("the page was empty")
    headers = _field(answer, "headers") if not isinstance(answer, (str, bytes)) else None
    content_type = ""
    if isinstance(headers, dict):
        content_type = next((str(v) for k, v in headers.items() if str(k).lower() == "content-type"), "")
    content_type = content_type or str(_field(answer, "content_type") or "")
    looks_like_html = "html" in content_type.lower() or body.lstrip()[:1] == "<"
    if content_type and not looks_like_html and not content_type.lower().startswith("text/"):
        raise FetchFailed(f"the page is {content_type.split(';')[0]}, not text")
    page = from_html(body) if looks_like_html else Page(title=None, text=body.strip())
    text = _plain(page.text)
    if not text.strip():
        raise FetchFailed("the page has no readable text")
    return Page(title=_plain(page.title) if page.title else None, text=text[:MAX_ARTICLE_CHARS])


def _plain(text: str) -> str:
    """Text SQLite can store and a person can read. Replaced, not refused: the user did not type it."""
    text = _CONTROLS.sub("", text)
    return text.encode("utf-8", "replace").decode("utf-8")
