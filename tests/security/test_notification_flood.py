"""A stdio tool server that floods notifications (issue 24, finding 12).

A real server in the real sandbox writes 200,000 log notifications in one call. The
kernel hands at most its per-server allowance to the session (a burst, then a rate a
second), drops the rest before parsing them, counts both, and warns once; the call
still answers, another server's calls keep answering, and the event loop every user
shares is never held for a second.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from dreamer.kernel.config import Settings
from dreamer.kernel.sandbox import get_sandbox
from dreamer.kernel.tools.registry import ToolRegistry
from dreamer.kernel.tools.sessions import ToolSession, result_value
from dreamer.kernel.tools.transport import NOTIFICATION_BURST, NOTIFICATIONS_PER_S

BUNDLES = Path(__file__).resolve().parents[1] / "tools" / "bundles"
FLOOD = 200_000
pytestmark = pytest.mark.timeout(300)


def _session(registry: ToolRegistry, data: Path) -> ToolSession:
    data.mkdir(exist_ok=True)
    return ToolSession("echo", registry.stdio_transport("echo", BUNDLES / "echo", ["python", "-m", "echo_server", "ok"], data))


def test_a_notification_flood_is_dropped_counted_and_costs_nobody(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> tuple[ToolSession, float, float, list[str]]:
        registry = ToolRegistry(Settings(home=tmp_path, database_url="sqlite://", sandbox="bwrap"), None, get_sandbox("bwrap"))  # type: ignore[arg-type]
        flooding, good = _session(registry, tmp_path / "a"), _session(registry, tmp_path / "b")
        await flooding.open(30)
        await good.open(30)
        worst_gap, stop = 0.0, asyncio.Event()

        async def ticker() -> None:  # how long the shared event loop is ever held
            nonlocal worst_gap
            last = time.monotonic()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.monotonic()
                worst_gap, last = max(worst_gap, now - last), now

        answers: list[str] = []

        async def the_other_server() -> None:
            while not stop.is_set():
                answers.append(result_value(await good.call("say", {"text": "still here"}, 30), "echo.say")["text"])
                await asyncio.sleep(0.05)

        started = time.monotonic()
        side = [asyncio.ensure_future(ticker()), asyncio.ensure_future(the_other_server())]
        try:
            answer = await flooding.call("notify_flood", {"count": FLOOD}, 120)
            await asyncio.sleep(0.5)  # the reader may still be dropping the tail of the flood
        finally:
            stop.set()
            await asyncio.gather(*side)
        took = time.monotonic() - started
        assert result_value(answer, "echo.notify_flood") == FLOOD
        await flooding.close()
        await good.close()
        return flooding, took, worst_gap, answers

    with caplog.at_level(logging.WARNING, logger="dreamer.tools"):
        session, took, worst_gap, answers = asyncio.run(main())
    fault = session.fault
    # Everything was seen: handed on or dropped, and most of it dropped.
    assert fault.notifications_passed + fault.notifications_dropped == FLOOD
    assert fault.notifications_passed <= NOTIFICATION_BURST + NOTIFICATIONS_PER_S * took + 1
    assert fault.notifications_dropped >= FLOOD - (NOTIFICATION_BURST + NOTIFICATIONS_PER_S * took + 1)
    warnings = [r.getMessage() for r in caplog.records if "notifications a second" in r.getMessage()]
    assert warnings == [f"the echo tool server sends more than {NOTIFICATIONS_PER_S} notifications a second; the rest are dropped"]
    assert answers and set(answers) == {"still here"}
    assert worst_gap < 1.0, f"the event loop was held for {worst_gap:.2f} s"
