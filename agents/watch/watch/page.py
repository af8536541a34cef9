"""What of a page is compared: its readable text, and the passage around the watched words.

Plain functions, no SDK, so they can be checked without a kernel.
"""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser

_SKIP = frozenset({"script", "style", "noscript", "template", "head", "svg"})
_BLOCK = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "td", "title"})
PASSAGE_CHARS = 240


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skipping = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skipping += 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self.skipping:
            self.skipping -= 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def readable(body: str, content_type: str = "") -> str:
    """The text a person reads, one line per block, spaces collapsed."""
    if "html" in content_type or body.lstrip()[:1] == "<":
        reader = _Text()
        reader.feed(body)
        reader.close()
        body = "".join(reader.parts)
    lines = (" ".join(line.split()) for line in body.splitlines())
    return "\n".join(line for line in lines if line)


def passage(text: str, what: str) -> str | None:
    """The line holding the first match of `what` as whole words (any case, any spacing), or None:
    "enrollment open" is not found in "enrollment opens soon"."""
    words = what.split()
    if not words:
        return None
    body = r"\s+".join(re.escape(w) for w in words)
    start = r"\b" if re.match(r"\w", words[0]) else ""
    end = r"\b" if re.search(r"\w$", words[-1]) else ""
    pattern = re.compile(start + body + end, re.IGNORECASE)
    for line in text.splitlines():
        if pattern.search(line):
            return line[:PASSAGE_CHARS]
    return None


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
