"""GET /v1/feed/stream (a real kernel): each new post is pushed as it is written, from where
the reader says it stood (`after`, or the Last-Event-ID a reconnecting browser sends), one
user's posts only, and the stream ends at once when the credential that opened it is revoked."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator

import httpx
import pytest
from kernelproc import KernelProc, start_kernel, write_bundle

pytestmark = pytest.mark.timeout(400)
HERALD = '''
from dreamer.sdk import Context, function


@function(exported=True)
def shout(ctx: Context, text: str, urgent: bool = False) -> dict:
    """Post a message to the feed."""
    return {"id": ctx.post(text, priority="urgent" if urgent else "normal")}
'''
WAIT_S = 60  # a bound for a crowded machine, not a measurement


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    root = tmp_path_factory.mktemp("feedstream")
    k = start_kernel(root / "home", wait_s=240)
    k.herald = write_bundle(root, "herald", HERALD, required=["notify"])  # type: ignore[attr-defined]
    yield k
    k.stop()


def _user(kernel: KernelProc, name: str) -> str:
    token = str(kernel.cli_json("users", "add", name)["token"])  # type: ignore[index]
    done = kernel.cli("install", str(kernel.herald), "--yes", token=token)  # type: ignore[attr-defined]
    assert done.returncode == 0, done.stdout + done.stderr
    return token


def _shout(kernel: KernelProc, token: str, text: str, urgent: bool = False) -> int:
    with kernel.client(token) as c:
        r = c.post("/v1/agents/herald/functions/shout", json={"args": {"text": text, "urgent": urgent}})
    assert r.status_code == 200, r.text
    return int(r.json()["result"]["id"])


class Reader:
    """Reads one feed stream in a thread: each event as (name, id, data) on a queue, then ("<closed>", ...)."""

    def __init__(self, kernel: KernelProc, token: str, params: dict[str, str] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.events: queue.Queue[tuple[str, str, object]] = queue.Queue()
        self.opened = threading.Event()
        auth = {"Authorization": f"Bearer {token}"} | (headers or {})

        def read() -> None:
            try:
                with httpx.Client(base_url=kernel.url, headers=auth, timeout=httpx.Timeout(10, read=120)) as c:
                    with c.stream("GET", "/v1/feed/stream", params=params) as r:
                        assert r.status_code == 200, r.read()
                        name, ident, data = "message", "", ""
                        for line in r.iter_lines():
                            if line.startswith(":"):
                                self.opened.set()  # the stream's first comment: it is listening
                            elif line.startswith("event: "):
                                name = line[7:]
                            elif line.startswith("id: "):
                                ident = line[4:]
                            elif line.startswith("data: "):
                                data = line[6:]
                            elif line == "" and data:
                                self.events.put((name, ident, json.loads(data)))
                                name, ident, data = "message", "", ""
            except httpx.HTTPError:
                pass  # the kernel stopped with the stream still open (the end of the module)
            finally:
                self.opened.set()
                self.events.put(("<closed>", "", None))

        threading.Thread(target=read, daemon=True).start()
        assert self.opened.wait(WAIT_S)

    def next(self) -> tuple[str, str, object]:
        return self.events.get(timeout=WAIT_S)


def test_new_posts_are_pushed_and_only_the_users_own(kernel: KernelProc) -> None:
    ann, bob = _user(kernel, "ann"), _user(kernel, "bob")
    before = _shout(kernel, ann, "written before the stream opened")
    live = Reader(kernel, ann)  # without `after`: from now on
    _shout(kernel, bob, "bob's, never in ann's stream", urgent=True)
    made = _shout(kernel, ann, "the oven is still on", urgent=True)
    name, ident, post = live.next()
    assert (name, ident) == ("post", str(made))
    assert isinstance(post, dict) and post["text"] == "the oven is still on" and post["priority"] == "urgent"
    assert live.events.empty()  # bob's post and the one before never came
    # From where a reader stood: `after`, or the id a reconnecting EventSource sends back.
    for replay in (Reader(kernel, ann, params={"after": str(before - 1)}),
                   Reader(kernel, ann, headers={"Last-Event-ID": str(before - 1)})):
        assert [replay.next()[1], replay.next()[1]] == [str(before), str(made)]


def test_revoking_the_token_ends_the_stream(kernel: KernelProc) -> None:
    first = _user(kernel, "carl")
    made = kernel.cli_json("tokens", "create", "--label", "phone", token=first)
    stream = Reader(kernel, made["token"])  # type: ignore[index]
    assert kernel.cli("tokens", "revoke", str(made["id"]), token=first).returncode == 0  # type: ignore[index]
    name, _, said = stream.next()
    assert name == "error" and isinstance(said, dict) and said["code"] == "unauthorized" and "revoked" in said["message"]
    assert stream.next()[0] == "<closed>"
    with kernel.client(made["token"]) as c:  # type: ignore[index]
        assert c.get("/v1/feed/stream").status_code == 401
