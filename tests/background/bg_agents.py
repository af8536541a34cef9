"""Agent code for the background tests (a module of its own, importable by a unique name)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

# Background functions whose life the tests follow. `hold` waits for a file the test
# writes into the agent's data folder, so a test decides when it may finish.
WORKER = '''
import os, time
from pathlib import Path
from dreamer.sdk import Context, function

DATA = Path(os.environ.get("DREAMER_DATA_DIR", "/data"))

@function(background=True)
def chatty(ctx: Context, lines: int = 3) -> dict:
    """Logs a few lines, slowly enough to be followed."""
    for i in range(lines):
        ctx.log(f"line {i}")
        time.sleep(0.2)
    return {"attempt": ctx.attempt, "id": ctx.invocation_id}

@function(background=True, retries=2)
def flaky(ctx: Context, fail_times: int) -> dict:
    """Fails its first attempts."""
    ctx.log(f"attempt {ctx.attempt}")
    if ctx.attempt <= fail_times:
        raise RuntimeError(f"attempt {ctx.attempt} fails on purpose")
    return {"attempt": ctx.attempt}

@function(background=True)
def refuses(ctx: Context) -> str:
    """Fails with an error no retry can fix."""
    return ctx.call("nobody-here", "nothing")

def _hold(ctx: Context, key: str) -> dict:
    (DATA / f"started-{key}-{ctx.attempt}").write_text(ctx.invocation_id)
    deadline = time.monotonic() + 25
    while not (DATA / f"go-{key}").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"nobody let {key} go")
        time.sleep(0.05)
    return {"key": key, "attempt": ctx.attempt}

@function(background=True, retries=1)
def hold(ctx: Context, key: str) -> dict:
    """Waits for the file go-KEY; one retry."""
    return _hold(ctx, key)

@function(background=True)
def hold_once(ctx: Context, key: str) -> dict:
    """Waits for the file go-KEY; no retry."""
    return _hold(ctx, key)

@function
def now(ctx: Context) -> str:
    """A direct (not background) function."""
    return "direct"
'''


def data_dir(home: Path, agent: str, user: str = "me") -> Path:
    return home / "users" / user / "agents" / agent / "data"


def wait_status(client: httpx.Client, run_id: str, wanted: set[str], timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        run = client.get(f"/v1/invocations/{run_id}").json()
        if run.get("status") in wanted:
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"{run_id} stayed {run.get('status')}, not {wanted}: {run}")
        time.sleep(0.1)


def wait_file(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


def write_agent(root: Path, name: str, code: str, extra_yaml: str, required: list[str], version: str = "0.1.0") -> Path:
    """A test bundle whose agent.yaml carries triggers or events (write_bundle plus YAML)."""
    from kernelproc import write_bundle

    folder = write_bundle(root, name, code, required=required, version=version)
    with (folder / "agent.yaml").open("a") as f:
        f.write(extra_yaml)
    return folder


# Saves articles: emits article.saved, takes webhooks and shared text/links, posts to the feed.
SAVER = '''
from dreamer.sdk import Context, function

@function(exported=True)
def save(ctx: Context, title: str) -> list:
    """Saves an article and tells whoever subscribes."""
    return ctx.emit_event("article.saved", {"title": title})

@function
def shout(ctx: Context, undeclared: bool = False) -> list:
    """Emits an event it does not declare when asked to."""
    return ctx.emit_event("article.deleted" if undeclared else "article.saved", {"title": "x"})

@function
def on_hook(ctx: Context, request: dict) -> dict:
    """Receives webhooks."""
    ctx.post(f"webhook said {request['json']['say']}", priority="urgent", attachments=[{"method": request["method"]}])
    return {"trigger": ctx.trigger, "headers": sorted(request["headers"]), "query": request["query"]}

@function
def on_share(ctx: Context, content: dict) -> dict:
    """Receives what the user shares."""
    return content
'''
SAVER_YAML = """events: [article.saved]
triggers:
  - {type: webhook, entrypoint: on_hook, name: incoming}
  - {type: input, entrypoint: on_share, name: shared, content_types: [text/plain, text/uri-list]}
"""

SUMMARISER = '''
from dreamer.sdk import Context, function

@function
def summarise(ctx: Context, event: dict) -> str:
    """Summarises saved articles into the feed."""
    ctx.post(f"summary of {event['data']['title']} (from {event['agent']})")
    return event["event"]

@function
def morning(ctx: Context, fired: dict) -> dict:
    """Runs every morning."""
    return {"fired": fired, "attempt": ctx.attempt}
'''
SUMMARISER_YAML = """triggers:
  - {type: event, event: saver.article.saved, entrypoint: summarise, name: on-save}
  - {type: cron, schedule: "0 7 * * 1-5", entrypoint: morning, name: morning}
"""
