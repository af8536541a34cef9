"""A model's answer streams into the chat as it is written: a fake model provider (a real HTTP
server speaking the OpenAI wire format, tests/fakes/llm_server.py) sends its text in pieces a
moment apart, and the page shows the bubble growing, piece by piece, before the answer ends."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, chromium_missing
from kernelproc import KernelProc, start_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))
from llm_server import FakeLLMServer, Text

why = chromium_missing()
pytestmark = [pytest.mark.skipif(why is not None, reason=why or ""), pytest.mark.timeout(400)]

PIECES = ["Tomatoes ripen faster ", "in a paper bag ", "next to a banana, ", "because the banana ", "gives off ethylene."]
PACE_S = 0.6  # between the stream's events: far longer than the page needs to draw a piece

# Every text the answer's bubble showed while it was still streaming, in order.
RECORD = """() => {
  window.seen = [];
  new MutationObserver(() => {
    const bubble = document.querySelector(".msg.assistant:last-child .bubble");
    if (bubble && bubble.classList.contains("streaming") && bubble.textContent !== window.seen.at(-1))
      window.seen.push(bubble.textContent);
  }).observe(document.getElementById("messages"), { childList: true, subtree: true, characterData: true });
}"""


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def kernel(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("streaming") / "home", fake.kernel_env(), wait_s=240)
    yield k
    k.stop()


@pytest.fixture(params=[{"width": 1280, "height": 860}, {"width": 390, "height": 844}], ids=["1280", "390"])
def page(request: pytest.FixtureRequest, kernel: KernelProc) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=kernel.url, viewport=request.param)
        context.set_default_timeout(30_000)
        yield context.new_page()
        context.close()
        browser.close()


def test_the_answer_grows_in_the_page_before_it_ends(page: Any, fake: FakeLLMServer) -> None:
    fake.reset()
    fake.script(Text("".join(PIECES), chunks=PIECES, pace=PACE_S))
    page.goto("/")
    assert page.locator("#offline-banner").count() == 0  # the model answers, not the offline planner
    page.evaluate(RECORD)
    page.fill("#message", "how do I ripen tomatoes?")
    page.press("#message", "Enter")
    page.wait_for_function("() => !document.getElementById('send').disabled && !document.querySelector('.bubble.streaming')")
    final = page.locator(".msg.assistant").last.locator(".bubble").inner_text()
    assert final == "".join(PIECES)
    seen = [s for s in page.evaluate("window.seen") if s]
    # Each piece showed on its own while the stream was open: the text grew, never jumped back.
    assert seen == ["".join(PIECES[: n + 1]) for n in range(len(PIECES))], seen
    assert fake.pending == 0 and len(fake.requests) == 1 and fake.requests[0].stream
