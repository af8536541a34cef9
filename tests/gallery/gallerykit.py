"""Helpers for the gallery tests: a gallery served in-process (uvicorn in a thread on a free port),
signed test bundles, publishers. A module of its own (not conftest) so tests import it by a unique name."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import uvicorn
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from dreamer.contracts.gallery_client import GalleryClient
from dreamer.contracts.signing import public_key_text
from dreamer.contracts.archive import pack

FUNCTIONS = {
    "format": 1,
    "functions": [
        {"name": "add_items", "description": "Add items to the shopping list.", "exported": True,
         "parameters": {"type": "object", "properties": {"items": {"type": "array"}}},
         "examples": ["add {items} to my grocery list"]},
    ],
}


def make_bundle(root: Path, name: str, *, version: str = "1.0.0", publisher: str = "alice",
                title: str | None = None, description: str = "Keeps your shopping list.",
                required: list[str] | None = None, functions: dict | None = None) -> Path:
    folder = root / f"{name}-{version}"
    module = name.replace("-", "_")
    (folder / module).mkdir(parents=True)
    (folder / module / "__init__.py").write_text("")
    (folder / module / "server.py").write_text(
        "from dreamer.sdk import Context, function\n\n"
        "@function(exported=True, examples=['add {items} to my grocery list'])\n"
        "def add_items(ctx: Context, items: list[str]) -> dict:\n"
        "    \"\"\"Add items to the shopping list.\"\"\"\n"
        "    return {'added': items}\n"
    )
    (folder / "README.md").write_text(f"# {name}\n")
    (folder / "functions.json").write_text(json.dumps(functions or FUNCTIONS))
    (folder / "agent.yaml").write_text(
        f"name: {name}\nversion: {version}\nkind: agent\ntitle: {title or name.title()}\n"
        f"description: {description}\npublisher: {publisher}\nentry: {module}.server\n"
        f"permissions:\n  required: {json.dumps(required or [])}\n  optional: []\n"
    )
    return folder


class Publisher:
    def __init__(self, name: str, key: Ed25519PrivateKey, token: str) -> None:
        self.name, self.key, self.token = name, key, token


class Served:
    def __init__(self, app, url: str) -> None:
        self.app, self.url = app, url


def serve(app) -> Iterator[Served]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off",
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the gallery did not start"
        time.sleep(0.02)
    try:
        yield Served(app, f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(10)


def register(http: Served, name: str) -> Publisher:
    key = Ed25519PrivateKey.generate()
    answer = GalleryClient(http.url).register(name, public_key_text(key.public_key()))
    return Publisher(name, key, answer["token"])


def client_for(http: Served, token: str | None = None) -> GalleryClient:
    return GalleryClient(http.url, token)


def archive_of(folder: Path) -> bytes:
    return pack(folder)
