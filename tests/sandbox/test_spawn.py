"""kernel/sandbox/spawn.py: a worker's stdin, stdout and stderr are pipes on either event loop
(decision 0054), and its exit is reported as asyncio reports it."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from dreamer.kernel.sandbox.spawn import create_process

PIPE = asyncio.subprocess.PIPE
LOOPS: dict[str, Callable[[Coroutine[Any, Any, Any]], Any]] = {"asyncio": asyncio.run, "uvloop": uvloop.run}

SHOW_FDS = "import os, sys; sys.stderr.write(' '.join(os.readlink(f'/proc/self/fd/{n}') for n in (0, 1, 2)))"


@pytest.mark.parametrize("loop", LOOPS)
def test_the_three_descriptors_are_pipes(loop: str) -> None:
    async def main() -> list[str]:
        process = await create_process(sys.executable, "-c", SHOW_FDS, stdin=PIPE, stdout=PIPE, stderr=PIPE, limit=2**16)
        _, err = await process.communicate()
        assert process.returncode == 0
        return err.decode().split()

    kinds = LOOPS[loop](main())
    assert len(kinds) == 3 and all(kind.startswith("pipe:") for kind in kinds), kinds


@pytest.mark.parametrize("loop", LOOPS)
def test_lines_go_both_ways_and_the_exit_status_is_read(loop: str) -> None:
    echo = "import sys\nfor line in sys.stdin: sys.stdout.write(line.upper()); sys.stdout.flush()\nsys.exit(3)"

    async def main() -> tuple[bytes, int]:
        process = await create_process(sys.executable, "-c", echo, stdin=PIPE, stdout=PIPE, stderr=PIPE, limit=2**16)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"hello\n")
        await process.stdin.drain()
        line = await process.stdout.readline()
        process.stdin.close()
        return line, await asyncio.wait_for(process.wait(), 10)

    assert LOOPS[loop](main()) == (b"HELLO\n", 3)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_killed_child_reports_its_signal(loop: str) -> None:
    async def main() -> int:
        process = await create_process(
            sys.executable, "-c", "import time; time.sleep(60)", stdin=PIPE, stdout=PIPE, stderr=PIPE, limit=2**16,
            start_new_session=True,
        )
        process.kill()
        return await asyncio.wait_for(process.wait(), 10)

    assert LOOPS[loop](main()) == -signal.SIGKILL


@pytest.mark.parametrize("loop", LOOPS)
def test_a_program_that_cannot_start_raises_as_the_loop_would(loop: str) -> None:
    async def main() -> None:
        await create_process("/nonexistent/program", stdin=PIPE, stdout=PIPE, stderr=PIPE, limit=2**16)

    with pytest.raises(FileNotFoundError):
        LOOPS[loop](main())


@pytest.mark.parametrize("loop", LOOPS)
def test_without_pidfds_a_thread_waits_for_the_child(loop: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pidfds(pid: int) -> int:
        raise OSError("pidfd_open: not on this kernel")

    monkeypatch.setattr("os.pidfd_open", no_pidfds)

    async def main() -> int:
        process = await create_process(sys.executable, "-c", "raise SystemExit(7)", stdin=PIPE, stdout=PIPE, stderr=PIPE, limit=2**16)
        return await asyncio.wait_for(process.wait(), 10)

    assert LOOPS[loop](main()) == 7
