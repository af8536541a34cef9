"""Waking the open feed streams of a user when a post is written for them.

Posts are written on the kernel's event loop (posts.create) and from wherever a syscall
checks a grant (the missing-grant notice); a stream waits on the loop that serves it. So a
post wakes each waiting stream through its own loop's call_soon_threadsafe, from any thread.
A stream listens before it reads the store, so a post written between its read and its
wait still wakes it.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field


@dataclass
class Listening:
    user_id: int
    loop: asyncio.AbstractEventLoop
    event: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class FeedSignal:
    _waiting: dict[int, set[int]] = field(default_factory=dict)  # user id -> ids of Listening
    _listening: dict[int, Listening] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def posted(self, user_id: int) -> None:
        """A post was written for the user: wake their streams."""
        with self._lock:
            woken = [self._listening[key] for key in self._waiting.get(user_id, ())]
        for listener in woken:
            try:
                listener.loop.call_soon_threadsafe(listener.event.set)
            except RuntimeError:  # that loop has closed; its stream is gone
                pass

    def listen(self, user_id: int) -> Listening:
        """Start listening (on the running loop); pair with `stop`."""
        listener = Listening(user_id, asyncio.get_running_loop())
        with self._lock:
            self._listening[id(listener)] = listener
            self._waiting.setdefault(user_id, set()).add(id(listener))
        return listener

    def stop(self, listener: Listening) -> None:
        with self._lock:
            self._listening.pop(id(listener), None)
            held = self._waiting.get(listener.user_id)
            if held is not None:
                held.discard(id(listener))
                if not held:
                    del self._waiting[listener.user_id]
