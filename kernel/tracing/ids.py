"""The kernel's trace ids begin with the time they were made.

A trace id is 128 bits: here the first 48 are the Unix time in milliseconds and the other 80
are random, drawn as the SDK's own generator draws them. The spans table's index on
(trace_id, span_id) then grows at its right edge: a batch of spans writes its entries into
the last pages of that b-tree instead of one page per span anywhere in it, and the commit and
the checkpoint after it write those pages again (issue 23). Eighty random bits keep two traces
of one millisecond apart, and the rightmost 56 are random, as W3C Trace Context's "random"
flag promises (`is_trace_id_random` stays true). Span ids are the SDK's: 64 random bits.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

_RANDOM_BITS = 80


class TimeOrderedIds(RandomIdGenerator):
    def __init__(self, clock_ns: Callable[[], int] = time.time_ns) -> None:
        self._clock_ns = clock_ns

    def generate_trace_id(self) -> int:
        # Never the invalid id 0: the time part is not zero.
        return (self._clock_ns() // 1_000_000) << _RANDOM_BITS | random.getrandbits(_RANDOM_BITS)
