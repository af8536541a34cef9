"""The data-quota meter (kernel/users/quotas.py DataMeter): what a call wrote counts at the
next check, other folders within the meter's moment, and a user with many files is walked
in a thread, never on the event loop."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from dreamer.kernel.config import load_settings
from dreamer.kernel.users import quotas
from dreamer.kernel.users.quotas import DataMeter, data_bytes, data_folders


def _home(tmp_path: Path):  # type: ignore[no-untyped-def]
    settings = load_settings(home=tmp_path / "home")
    for agent in ("grocery", "notes", ".hidden"):
        settings.agent_data_dir("me", agent).mkdir(parents=True)
    settings.tool_data_dir("me", "files").mkdir(parents=True)
    (settings.users_dir / "me" / "agents" / "not-a-folder").write_text("")
    return settings


def test_folders_are_the_ones_the_glob_found(tmp_path: Path) -> None:
    settings = _home(tmp_path)
    base = settings.users_dir / "me"
    globbed = [*base.glob("agents/*/data"), *base.glob("tools/*/data")]
    assert sorted(data_folders(settings, "me")) == sorted(globbed)


def test_a_calls_writes_count_at_the_next_check_and_others_within_the_moment(tmp_path: Path) -> None:
    settings = _home(tmp_path)
    meter = DataMeter(settings, fresh_s=30)  # no moment passes by itself in this test

    async def run() -> None:
        assert await meter.used("me") == data_bytes(settings, "me")
        (settings.agent_data_dir("me", "grocery") / "a").write_bytes(b"x" * 100_000)
        (settings.agent_data_dir("me", "notes") / "b").write_bytes(b"x" * 100_000)
        meter.forget("me", "grocery")  # grocery's call ended
        with_grocery = await meter.used("me")
        assert with_grocery >= 100_000 and with_grocery < data_bytes(settings, "me")
        meter.forget("me")  # a call that reached a tool server: every folder
        assert await meter.used("me") == data_bytes(settings, "me")
        (settings.tool_data_dir("me", "files") / "c").write_bytes(b"x" * 100_000)
        assert await meter.used("me") < data_bytes(settings, "me")  # within the moment
        when, sizes = meter._known["me"]
        meter._known["me"] = (when - 31, sizes)  # the moment passed: everything is walked again
        assert await meter.used("me") == data_bytes(settings, "me")

    asyncio.run(run())


def test_many_files_are_walked_in_a_thread(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    settings = _home(tmp_path)
    for i in range(quotas.INLINE_ENTRIES + 10):
        (settings.agent_data_dir("me", "notes") / f"f{i}").write_bytes(b"x")
    walked_on: list[bool] = []
    real = quotas._measure

    def spy(folders, budget):  # type: ignore[no-untyped-def]
        result = real(folders, budget)
        walked_on.append((threading.current_thread() is threading.main_thread(), result is not None))
        return result

    monkeypatch.setattr(quotas, "_measure", spy)
    meter = DataMeter(settings)

    expected = data_bytes(settings, "me")

    async def run() -> None:
        walked_on.clear()
        assert await meter.used("me") == expected
        # The inline walk gave up; the whole walk ran in a thread.
        assert walked_on == [(True, False), (False, True)]
        walked_on.clear()
        meter.forget("me", "notes")
        assert await meter.used("me") == expected
        assert walked_on == [(False, True)]  # known to be large: straight to the thread

    asyncio.run(run())


def test_another_users_files_neither_count_nor_move_a_user_off_the_loop(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A second user fills their folders with many files: the first user's measure stays their
    # own bytes, walked on the loop, and the second user's writes never mark the first's stale.
    settings = _home(tmp_path)
    settings.agent_data_dir("other", "notes").mkdir(parents=True)
    for i in range(quotas.INLINE_ENTRIES + 10):
        (settings.agent_data_dir("other", "notes") / f"f{i}").write_bytes(b"x" * 4096)
    threads: list[str] = []
    real = quotas._measure

    def spy(folders, budget):  # type: ignore[no-untyped-def]
        if threading.current_thread() is not threading.main_thread():
            threads.append(str(folders))
        return real(folders, budget)

    monkeypatch.setattr(quotas, "_measure", spy)
    meter = DataMeter(settings, fresh_s=30)

    async def run() -> None:
        assert await meter.used("other") == data_bytes(settings, "other")
        assert threads and all("/other/" in f for f in threads)
        threads.clear()
        mine = await meter.used("me")
        assert mine == data_bytes(settings, "me") and mine < data_bytes(settings, "other")
        meter.forget("other", "notes")
        assert await meter.used("me") == mine and "me" not in meter._stale
        assert threads == []  # the small user was never walked in a thread

    asyncio.run(run())
