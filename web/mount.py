"""The web app's place in the kernel. The real app (chat, install review,
permissions) is issue 8; until then / says so plainly and points at the API."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dreamer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1d2430}
h1{font-size:1.6rem;margin-bottom:.2rem} code{background:#f2f4f7;padding:.1rem .3rem;border-radius:4px}
.muted{color:#5b6472} a{color:#2f5bd3}
</style></head><body>
<h1>dreamer kernel is running</h1>
<p class="muted">The web app (chat with Sidekick, install review, permissions) is not built yet.</p>
<p>Use the command line meanwhile: <code>dreamer agents</code>, <code>dreamer call grocery list_items</code>,
<code>dreamer permissions</code>, <code>dreamer audit verify</code>.</p>
<p>The HTTP API is described at <a href="/docs">/docs</a> (OpenAPI: <a href="/openapi.json">/openapi.json</a>).</p>
</body></html>"""


def mount_web(app: FastAPI) -> None:
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index() -> str:
        return PAGE
