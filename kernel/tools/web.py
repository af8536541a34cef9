"""The built-in `web` tool: fetch a URL and return its readable text.

It is served by the kernel itself rather than by a server in a sandbox, because every
fetch must pass kernel/net's checks exactly as `ctx.fetch` does: an agent needs both
`tool:web.fetch` and a `net:<host>` grant for the address, every hop is audited, and
private addresses stay out of reach. A person calling it (CLI, API, MCP gateway) may
fetch any public address, and no private one.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any, Literal

from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.net.fetch import net_fetch
from dreamer.kernel.tools.sessions import ToolInfo

MAX_CHARS = 20_000
FETCH_BYTES = 2 * 1024 * 1024

TOOLS = {
    "fetch": ToolInfo(
        name="fetch",
        description="Fetch a web page (http or https) and return its title and readable text.",
        input_schema={
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The page's address."},
                "max_chars": {"type": "integer", "minimum": 100, "maximum": 100_000, "default": MAX_CHARS},
            },
            "required": ["url"],
            "additionalProperties": False,
        },
        annotations={"read_only_hint": True, "open_world_hint": True},
    )
}

_SKIP = {"script", "style", "noscript", "template", "svg", "head"}
_BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "header", "footer", "pre", "blockquote"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP:
            self._skip += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP and self._skip:
            self._skip -= 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skip:
            self.parts.append(data)


def readable(body: str, content_type: str) -> tuple[str, str]:
    """(title, text) of a page: HTML without its markup, scripts and styles; other text as is."""
    if "html" not in content_type.lower() and not body.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        return "", body.strip()
    parser = _Text()
    parser.feed(body)
    parser.close()
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in "".join(parser.parts).split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return html.unescape(" ".join("".join(parser.title).split())), text


@dataclass
class UserFetch:
    """What net_fetch needs from its caller, for a person rather than an agent: every hop is
    audited as theirs, and no grant names a private address, so none is reachable."""

    invoker: Any
    who: Any
    actor: str
    agent: str = "you"
    invocation_id: str | None = None
    caller: Any = field(default_factory=lambda: SimpleNamespace(deadline=None))

    def require(self, scope: str, *, action: str, target: str, detail: dict[str, Any] | None = None) -> str:
        self.record(action=action, target=target, detail=detail)
        return scope

    def record(self, *, action: str, target: str, decision: Literal["allow", "deny"] = "allow", detail: dict[str, Any] | None = None) -> None:
        def entry(conn: Any) -> None:
            audit(conn, user_id=self.who.user_id, actor=self.actor, action=action, target=target,
                  decision=decision, detail=detail or {})

        # Synchronous like SyscallContext's: committed before the fetch goes on.
        if self.invoker.writer is not None:
            self.invoker.writer.write_now(entry)
            return
        with self.invoker.store.session() as s:
            entry(s)


async def call(tool: str, args: dict[str, Any], context: Any) -> dict[str, Any]:
    if tool != "fetch":
        raise DreamerError("not_found", f"the web tool has no tool {tool!r}; its tools are: fetch")
    limit = int(args.get("max_chars") or MAX_CHARS)
    answer = await net_fetch(context, {"url": args["url"], "method": "GET", "max_bytes": FETCH_BYTES})
    body = answer["body"]
    if not isinstance(body, str):
        raise DreamerError("tool_error", f"{answer['url'][:200]} is not text ({answer['headers'].get('content-type', 'no content type')})")
    title, text = readable(body, answer["headers"].get("content-type", ""))
    return {
        "url": answer["url"], "status": answer["status"], "title": title,
        "text": text[:limit], "truncated": len(text) > limit,
    }
