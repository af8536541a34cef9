"""Invocation ids are made in time order (issue 23): every b-tree keyed by one then grows at
its right edge. Their shape is the one clients already read: "inv_" and 32 hex digits."""

from __future__ import annotations

import re

import pytest

from dreamer.kernel.invocations import records
from dreamer.kernel.invocations.records import new_invocation_id


def test_an_invocation_id_is_its_millisecond_then_80_random_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_765_000_000_123_456_789]
    monkeypatch.setattr(records.time, "time_ns", lambda: now[0])
    same = [new_invocation_id() for _ in range(50)]
    assert all(re.fullmatch(r"inv_[0-9a-f]{32}", i) for i in same)
    assert {int(i[4:16], 16) for i in same} == {1_765_000_000_123}
    assert len({i[16:] for i in same}) == 50  # apart within one millisecond
    now[0] += 1_000_000
    later = new_invocation_id()
    assert later > max(same)  # as text too: the order the b-trees keep
