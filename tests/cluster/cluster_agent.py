"""The agent the cluster test and benchmark install for each user (code, manifest lines)."""

from __future__ import annotations

CODE = '''
import fcntl, os, time
from pathlib import Path
from dreamer.sdk import Context, function

DATA = Path(os.environ.get("DREAMER_DATA_DIR", "/data"))

@function
def double(ctx: Context, n: int) -> int:
    """A direct call: cheap, no side effects."""
    return n * 2

def _exclusive(ctx: Context, key: str, work) -> dict:
    """Holds an exclusive lock on lock-KEY while `work` runs. A second attempt of the same run
    on any node while the first still runs finds the lock taken and leaves overlap-KEY-ATTEMPT
    behind (the lock dies with its process, so an attempt killed with its node does not count)."""
    handle = open(DATA / f"lock-{key}", "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        (DATA / f"overlap-{key}-{ctx.attempt}").write_text(ctx.invocation_id)
        raise RuntimeError(f"attempt {ctx.attempt} of {key} found another attempt running")
    work()
    with open(DATA / "done.log", "a") as log:
        log.write(f"{key} {ctx.attempt}\\n")
    handle.close()
    return {"key": key, "attempt": ctx.attempt}

@function(background=True, retries=4)
def slow(ctx: Context, key: str, seconds: float = 0.5) -> dict:
    """A non-idempotent background run of a few seconds."""
    return _exclusive(ctx, key, lambda: time.sleep(seconds))

@function(background=True, retries=4)
def hold(ctx: Context, key: str) -> dict:
    """A background run that works until the file go-KEY appears (at most two minutes)."""
    def wait() -> None:
        deadline = time.monotonic() + 120
        while not (DATA / f"go-{key}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return _exclusive(ctx, key, wait)

@function
def block(ctx: Context, key: str) -> str:
    """A direct call that works until the file go-KEY appears (at most two minutes)."""
    deadline = time.monotonic() + 120
    while not (DATA / f"go-{key}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return key

@function
def tick(ctx: Context, fired: dict) -> str:
    """The cron trigger's entrypoint."""
    return fired.get("scheduled_for", "")

@function
def hook(ctx: Context, request: dict) -> dict:
    """The webhook trigger's entrypoint."""
    return {"say": (request.get("json") or {}).get("say")}
'''

TRIGGERS = """triggers:
  - {type: cron, schedule: "* * * * *", entrypoint: tick, name: every-minute}
  - {type: webhook, entrypoint: hook, name: incoming}
"""
