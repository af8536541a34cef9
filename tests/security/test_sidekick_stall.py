"""Nothing one user sends Sidekick delays another user (issue 24, findings 2 and 3).

A real kernel with two users. While the first sends the reported regex attack,
long messages that cost the planner about half a second of CPU each, and installs
an agent with hundreds of examples (its index is built on the next message), a
second user polls /healthz and their own conversations; every answer must come
within a second of the slowest answer the same user gets while nothing costly runs (the
machine's own noise: on a shared CI machine other tests compete for the cores). Before the fix, planning ran on the event loop: four long
messages in flight kept the second user waiting about two seconds, and the
attack twenty.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundles"))
from costly_examples import costly_functions
from kernelproc import KernelProc, start_kernel, write_bundle

ATTACK = "x " + "please " * 25 + "y"
LONG = ("add milk and eggs and bread to my grocery list, then plan dinner for friday and save a note that "
        "the key is under the mat. " * 60)[:7900]
BOUND_S = 1.0
pytestmark = pytest.mark.timeout(600)  # a kernel on a busy shared machine can take minutes to start


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str]]:
    root = tmp_path_factory.mktemp("stall")
    # The planning process warm before the first message, as a kernel's is by default: the stall measured is the messages'.
    kernel = start_kernel(root / "home", {"DREAMER_SANDBOX": "bwrap", "DREAMER_SIDEKICK_WARM": "1"}, wait_s=240)  # a busy machine starts slowly
    try:
        other = kernel.cli_json("users", "add", "bystander")["token"]
        yield kernel, other
    finally:
        kernel.stop()


class Poller(threading.Thread):
    """The other user: /healthz and their conversations, over and over; the slowest answer wins."""

    def __init__(self, kernel: KernelProc, token: str) -> None:
        super().__init__(daemon=True)
        self.kernel, self.token = kernel, token
        self.worst = 0.0
        self.count = 0
        self.errors: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        with self.kernel.client(self.token) as client:
            while not self.halt.wait(0.05):
                for path in ("/healthz", "/v1/conversations"):
                    start = time.perf_counter()
                    try:
                        status = client.get(path, timeout=30).status_code
                        if status != 200:
                            self.errors.append(f"{path}: HTTP {status}")
                    except httpx.HTTPError as exc:
                        self.errors.append(f"{path}: {exc}")
                    self.worst = max(self.worst, time.perf_counter() - start)
                    self.count += 1


def _chat(kernel: KernelProc, text: str, out: list[dict]) -> None:
    with kernel.client() as client:
        response = client.post("/v1/chat", json={"message": text, "stream": False}, timeout=120)
        out.append({"status": response.status_code, **(response.json() if response.content else {})})


def _quiet(kernel: KernelProc, other: str, seconds: float = 3.0) -> float:
    """The other user's slowest answer while nothing costly runs: what the machine itself adds
    (on a shared CI machine, other tests' processes). The bound is on the delay beyond it."""
    poller = Poller(kernel, other)
    poller.start()
    time.sleep(seconds)
    poller.halt.set()
    poller.join(30)
    assert not poller.errors, poller.errors[:3]
    return poller.worst


def _while_polled(kernel: KernelProc, other: str, work: list[threading.Thread]) -> Poller:
    poller = Poller(kernel, other)
    poller.start()
    time.sleep(0.3)
    for t in work:
        t.start()
    for t in work:
        t.join(180)
    poller.halt.set()
    poller.join(30)
    return poller


def test_messages_that_cost_the_planner_do_not_delay_another_user(kernel: tuple[KernelProc, str]) -> None:
    k, other = kernel
    _chat(k, "what's on my grocery list", [])  # the embedding model and the starters' index are ready
    noise = _quiet(k, other)
    answers: list[dict] = []
    work = [threading.Thread(target=_chat, args=(k, text, answers)) for text in [ATTACK, LONG, LONG, LONG, LONG, ATTACK]]
    started = time.perf_counter()
    poller = _while_polled(k, other, work)
    took = time.perf_counter() - started
    assert len(answers) == 6 and all(a["status"] == 200 for a in answers), answers
    assert not poller.errors, poller.errors[:3]
    assert poller.count > 4
    print(f"6 costly messages in {took:.1f} s; the other user's slowest answer {poller.worst * 1000:.0f} ms"
          f" ({noise * 1000:.0f} ms with nothing costly running)")
    assert poller.worst < BOUND_S + noise


def test_an_agent_with_many_examples_does_not_delay_another_user(
    kernel: tuple[KernelProc, str], tmp_path: Path
) -> None:
    k, other = kernel
    # Within the install limits (300 examples, 1,200 phrases), yet several times the starters' index.
    folder = write_bundle(tmp_path, "wordy", "from dreamer.sdk import function\n")
    (folder / "functions.json").write_text(json.dumps(costly_functions(functions=10, examples=30, groups=2)))
    done = k.cli("install", str(folder), "--yes")
    assert done.returncode == 0, done.stderr + done.stdout
    noise = _quiet(k, other)
    answers: list[dict] = []
    work = [threading.Thread(target=_chat, args=(k, text, answers)) for text in
            ["please do add the item3x4 of the outside review, part two hello", LONG]]
    poller = _while_polled(k, other, work)
    assert all(a["status"] == 200 for a in answers), answers
    assert not poller.errors, poller.errors[:3]
    print(f"index build for 1,200 phrases: the other user's slowest answer {poller.worst * 1000:.0f} ms"
          f" ({noise * 1000:.0f} ms with nothing costly running)")
    assert poller.worst < BOUND_S + noise


def test_the_reviews_bundle_is_refused_at_install(kernel: tuple[KernelProc, str], tmp_path: Path) -> None:
    k, _ = kernel
    folder = write_bundle(tmp_path, "costly", "from dreamer.sdk import function\n")
    (folder / "functions.json").write_text(json.dumps(costly_functions()))
    done = k.cli("install", str(folder), "--yes")
    assert done.returncode != 0
    said = done.stderr + done.stdout
    assert "limit of 48" in said and "fewer groups of alternatives" in said, said


def test_a_look_alike_agent_is_flagged_in_the_review(
    kernel: tuple[KernelProc, str], tmp_path: Path
) -> None:
    # Issue 24, finding 10: an agent copying grocery's examples. The review warns (test_meaning.py shows
    # Sidekick keeping an established agent's phrases).
    k, _ = kernel
    fixture = json.loads((Path(__file__).resolve().parents[1] / "sidekick" / "tools.json").read_text())
    grocery = next(a for a in fixture if a["name"] == "grocery")
    folder = write_bundle(tmp_path, "grocery-plus", "from dreamer.sdk import function\n")
    (folder / "functions.json").write_text(json.dumps({"format": 1, "functions": grocery["functions"]}))
    done = k.cli("install", str(folder), "--yes")
    assert done.returncode == 0, done.stderr + done.stdout
    shown = " ".join((done.stdout + done.stderr).split())
    assert "Warning:" in shown and "your agent grocery (by dreamer)" in shown, shown
    staged = k.cli_json("agents")
    assert any(a["name"] == "grocery-plus" for a in staged)  # installed: the warning informs, it does not refuse
