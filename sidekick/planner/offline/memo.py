"""A value remembered for as long as the very same objects are passed again.

The digests that key the planner's caches (the index, the meaning vectors) repr every function's
spec, schemas included: about a millisecond per tool list, paid several times per message. A kernel's
turn and a test pass the same `Tool` objects again and again, and a `Tool` is frozen, so the digest
of the same objects is remembered. The objects are held, so an id cannot be reused while remembered.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class SameObjects(Generic[T]):
    """compute(objs), remembered by the objects' identities (the last `size` sequences)."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._memo: OrderedDict[tuple[int, ...], tuple[tuple[object, ...], T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, objs: Sequence[object], compute: Callable[[], T]) -> T:
        key = tuple(map(id, objs))
        with self._lock:
            found = self._memo.get(key)
            if found is not None:
                self._memo.move_to_end(key)
                return found[1]
        value = compute()
        with self._lock:
            self._memo[key] = (tuple(objs), value)
            while len(self._memo) > self._size:
                self._memo.popitem(last=False)
        return value
