"""Worker memory as PSS and USS (kernel/workers/procmem.py), read from the real /proc."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dreamer.kernel.workers.procmem import descendants, parse_rollup, process_memory, tree_memory


def test_a_live_process_has_uss_below_pss_below_rss() -> None:
    found = process_memory(os.getpid())
    assert found is not None
    assert 0 < found.uss_kb <= found.pss_kb <= found.rss_kb


def test_a_child_interpreter_shares_library_pages_so_its_uss_is_below_its_rss() -> None:
    # Another interpreter maps the same libpython and libc pages: RSS counts them, USS does not.
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert child.pid in descendants(os.getpid())
        own = process_memory(child.pid)
        assert own is not None and own.uss_kb < own.rss_kb
        assert tree_memory(os.getpid()).pss_kb >= own.pss_kb
    finally:
        child.communicate(b"")


def test_a_gone_process_measures_nothing() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_memory(child.pid) is None


def test_a_rollup_without_rss_or_pss_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_rollup("00400000-ffffffffff601000 ---p 00000000 00:00 0 [rollup]\nPrivate_Dirty: 12 kB\n")
