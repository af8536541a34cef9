"""Finding 5 of issue 14: per-user quotas, through a real kernel (bwrap).

An attacker with an ordinary account tries to hold more than their share: sandboxes at
once (many agents, builds and tests too), their memory, the feed, staging space (small
uploads that unpack big), and disk through /data (big files, many small files, SQLite).
Each is refused with one sentence naming the quota, nothing is half-written, and the
other user's work goes on.
"""

from __future__ import annotations

import io
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "background"))  # bg_agents

from bg_agents import data_dir, write_agent
from kernelproc import KernelProc, start_kernel, write_bundle

pytestmark = pytest.mark.timeout(400)
MB = 1024 * 1024

QUOTAS = {
    "DREAMER_QUOTA_WORKERS": "3", "DREAMER_QUOTA_MEMORY_MB": "3000", "DREAMER_QUOTA_FEED_POSTS": "5",
    "DREAMER_QUOTA_STAGING_MB": "3", "DREAMER_QUOTA_DATA_MB": "8", "DREAMER_WORKERS_TOTAL": "5",
}

HOG = '''
import os, sqlite3, time
from pathlib import Path
from dreamer.sdk import Context, function

DATA = Path(os.environ.get("DREAMER_DATA_DIR", "/data"))

@function
def ok(ctx: Context) -> str:
    """Does nothing."""
    return "ok"

@function
def hold(ctx: Context, key: str) -> str:
    """Holds its worker until the file go-KEY appears."""
    (DATA / f"started-{key}").write_text("")
    deadline = time.monotonic() + 25
    while not (DATA / f"go-{key}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return key

@function
def post(ctx: Context, n: int) -> dict:
    """Posts n times; stops at the first refusal."""
    for i in range(n):
        try:
            ctx.post(f"post {i}")
        except Exception as exc:
            return {"posted": i, "error": str(exc)}
    return {"posted": n, "error": None}

@function
def fill(ctx: Context, mb: int, pause: float = 0.05) -> int:
    """Writes 1 MB files, each within the per-file limit."""
    for i in range(mb):
        (DATA / f"blob-{i}").write_bytes(os.urandom(1024 * 1024))
        time.sleep(pause)
    return mb

@function
def many(ctx: Context, n: int) -> int:
    """Writes n one-byte files."""
    folder = DATA / "many"
    folder.mkdir(exist_ok=True)
    for i in range(n):
        (folder / str(i)).write_bytes(b"x")
    return n

@function
def grow(ctx: Context, mb: int) -> int:
    """Grows a SQLite database in /data."""
    db = sqlite3.connect(DATA / "grow.sqlite")
    db.execute("CREATE TABLE IF NOT EXISTS t (b BLOB)")
    for _ in range(mb):
        db.execute("INSERT INTO t VALUES (?)", (os.urandom(1024 * 1024),))
        db.commit()
        time.sleep(0.05)
    return mb

@function
def wipe(ctx: Context) -> int:
    """Deletes everything in /data."""
    import shutil
    n = 0
    for p in DATA.iterdir():
        shutil.rmtree(p) if p.is_dir() else p.unlink()
        n += 1
    return n
'''


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str]]:
    root = tmp_path_factory.mktemp("quotas")
    kernel = start_kernel(root / "home", {"DREAMER_SANDBOX": "bwrap", **QUOTAS})
    try:
        for name, limits in (("hog", "limits:\n  memory_mb: 512\n"), ("hog2", "limits:\n  memory_mb: 512\n"),
                             ("big", "")):
            done = kernel.cli("install", str(write_agent(root, name, HOG, limits, ["notify"])), "--yes")
            assert done.returncode == 0, done.stderr + done.stdout
        bob = kernel.cli_json("users", "add", "bob")["token"]
        done = kernel.cli("install", str(write_agent(root / "bob", "hog", HOG, "limits:\n  memory_mb: 512\n", ["notify"])),
                          "--yes", token=bob)
        assert done.returncode == 0, done.stderr + done.stdout
        yield kernel, bob
    finally:
        kernel.stop()


def _call(k: KernelProc, agent: str, function: str, args: dict, token: str | None = None) -> httpx.Response:
    with k.client(token) as c:
        return c.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args})


def _refusal(answer: httpx.Response, quota_words: str) -> str:
    assert answer.status_code == 429, answer.text
    error = answer.json()["error"]
    assert error["code"] == "quota_exceeded" and quota_words in error["message"], error
    return error["message"]


def _holding(
    k: KernelProc, calls: list[tuple[str, str]], token: str | None = None, user: str = "me"
) -> tuple[list[threading.Thread], list[httpx.Response]]:
    """Start direct calls of hold that keep their workers busy; wait until each runs."""
    answers: list[httpx.Response] = []
    threads = [threading.Thread(target=lambda a=a, key=key: answers.append(_call(k, a, "hold", {"key": key}, token)))
               for a, key in calls]
    for t in threads:
        t.start()
    for agent, key in calls:
        deadline = time.monotonic() + 60
        while not (data_dir(k.home, agent, user) / f"started-{key}").exists():
            assert time.monotonic() < deadline, f"{agent} hold {key} never started"
            time.sleep(0.05)
    return threads, answers


def _release(k: KernelProc, calls: list[tuple[str, str]], threads: list[threading.Thread], user: str = "me") -> None:
    for agent, key in calls:
        (data_dir(k.home, agent, user) / f"go-{key}").write_text("")
    for t in threads:
        t.join(30)


def test_sandboxes_at_once_are_capped_per_user_with_builds_and_tests_counted(k: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, bob = k
    calls = [("hog", "w1"), ("hog", "w2"), ("hog2", "w3")]
    threads, _ = _holding(kernel, calls)
    try:
        message = _refusal(_call(kernel, "hog2", "ok", {}), "sandboxes running at once, over its quota of 3")
        assert "DREAMER_QUOTA_WORKERS" in message
        # A build or a test run is a sandbox too.
        archive = _archive(write_bundle(tmp_path, "tiny", HOG))
        with kernel.client() as c:
            _refusal(c.post("/v1/build", content=archive), "sandboxes running at once")
            _refusal(c.post("/v1/test", content=archive), "sandboxes running at once")
        # Bob's calls are his own business: two more sandboxes fit the installation's five.
        assert _call(kernel, "grocery", "list_items", {}, bob).status_code == 200
    finally:
        _release(kernel, calls, threads)
    # Idle warm workers make room for new ones: the quota counts what is held, not what was.
    assert _call(kernel, "big", "ok", {}).status_code == 200


def test_sandbox_memory_is_capped_per_user(k: tuple[KernelProc, str]) -> None:
    kernel, _ = k
    calls = [("big", "m1")]  # 2048 MB of the 3000
    threads, _ = _holding(kernel, calls)
    try:
        assert _call(kernel, "hog", "ok", {}).status_code == 200  # 512 more fits
        _refusal(_call(kernel, "big", "ok", {}), "MB of sandbox memory at once, over its quota of 3000")
    finally:
        _release(kernel, calls, threads)


def test_the_installation_total_is_capped(k: tuple[KernelProc, str]) -> None:
    """Five sandboxes at most on the whole installation: idle ones make room, busy ones do not."""
    kernel, bob = k
    mine = [("hog", "t1"), ("hog", "t2"), ("hog2", "t3")]
    bobs = [("hog", "b1"), ("hog", "b2")]
    threads, _ = _holding(kernel, mine)
    theirs, _ = _holding(kernel, bobs, bob, "bob")
    try:
        message = _refusal(_call(kernel, "hog", "ok", {}, bob), "the installation already runs 5 sandboxes at once")
        assert "your account" not in message  # not bob's quota: his is 3
    finally:
        _release(kernel, mine, threads)
        _release(kernel, bobs, theirs, "bob")
    assert _call(kernel, "hog", "ok", {}, bob).status_code == 200


def test_the_feed_is_capped_per_user(k: tuple[KernelProc, str]) -> None:
    kernel, _ = k
    result = _call(kernel, "hog", "post", {"n": 8}).json()["result"]
    assert result["posted"] == 5 and "posts in the feed, over its quota of 5" in result["error"]
    assert len(kernel.cli_json("feed", "--limit", "50")) == 5
    assert kernel.cli_json("feed", "--clear")["deleted"] == 5
    assert _call(kernel, "hog", "post", {"n": 2}).json()["result"] == {"posted": 2, "error": None}


def _archive(folder: Path, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name)
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(f"{folder.name}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_staging_is_capped_per_user_however_small_the_upload(k: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, bob = k
    # 1.2 MB of zeros: an upload of a few KB that unpacks a thousand times bigger.
    archive = _archive(write_bundle(tmp_path, "stager", HOG), {"blob.bin": bytes(1200 * 1024)})
    assert len(archive) < 20_000
    with kernel.client() as c:
        assert c.post("/v1/bundles", content=archive).status_code == 201
        assert c.post("/v1/bundles", content=archive).status_code == 201
        message = _refusal(c.post("/v1/bundles", content=archive), "left of your staging quota")
        assert "DREAMER_QUOTA_STAGING_MB" in message
        # Nothing half-unpacked is left behind by the refusal.
        staged = sorted(p.name for p in (kernel.home / "staging").iterdir())
        assert len([n for n in staged if not n.startswith(".")]) == 2, staged
    with kernel.client(bob) as c:
        assert c.post("/v1/bundles", content=archive).status_code == 201  # bob has his own quota
    shown = kernel.cli_json("users", "show")
    assert shown["quotas"]["staging_mb"] == 3 and 2.3 <= shown["used"]["staging_mb"] <= 3


@pytest.mark.parametrize("attack", [
    ("fill", {"mb": 40, "pause": 0.1}),  # big files, each under the per-file limit, in one call (10 MB/s)
    ("many", {"n": 4000}),  # many one-byte files: counted by the blocks they take
    ("grow", {"mb": 40}),  # a SQLite database growing
])
def test_agent_data_on_disk_is_capped_per_user(k: tuple[KernelProc, str], attack: tuple[str, dict]) -> None:
    kernel, bob = k
    function, args = attack
    answer = _call(kernel, "hog", function, args)
    if answer.status_code == 200:
        # The call finished before the meter looked: the next one is refused.
        answer = _call(kernel, "hog", "ok", {})
    message = _refusal(answer, "MB of agent data on disk, over its quota of 8")
    assert "dreamer uninstall NAME --purge" in message
    # Stopped well before the 40 MB it meant to write.
    used = sum(p.stat().st_blocks * 512 for p in data_dir(kernel.home, "hog").rglob("*"))
    assert used < 30 * MB
    _refusal(_call(kernel, "hog2", "ok", {}), "MB of agent data on disk")  # every agent of this user
    assert _call(kernel, "grocery", "list_items", {}, bob).status_code == 200  # bob's are not
    # Shown to the user, and to the administrator by doctor.
    assert kernel.cli_json("users", "show")["used"]["data_mb"] > 8
    doctor = kernel.cli_json("doctor")["quotas"]
    assert doctor["per_user"]["data_mb"] == 8 and {u["user"] for u in doctor["users"]} == {"me", "bob"}
    # Freeing space (here by hand) lets work start again. The folder's contents go, not the
    # folder: a warm worker holds it bound as /data, and a folder made anew would be another.
    import shutil

    for entry in data_dir(kernel.home, "hog").iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    time.sleep(1.2)  # the meter's moment
    assert _call(kernel, "hog", "ok", {}).status_code == 200
