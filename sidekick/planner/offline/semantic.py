"""Matching by meaning: how close a message is to each function's description and examples.

Each function is represented by a few unit vectors (its description's first
sentence and its examples with the slots left out, each from wordllama's static
embeddings); a message's closeness to a function is its best cosine with them.
Vectors are cached per function (a digest of its agent, name, description and
examples), so installing one agent embeds only that agent's functions.

Requests no installed agent can serve are recognised the same way: OUTSIDE holds
everyday requests of other kinds (lights, weather, travel, timers, music...). A
message much closer to those than to any function is not a request for these
agents. An agent that does serve them (a weather agent) has its own examples,
which are closer still, so the outside class never hides a real function.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from dreamer.sidekick.planner.base import Tool
from dreamer.sidekick.planner.language import embeddings
from dreamer.sidekick.planner.language.outside import GOODS, OUTSIDE
from dreamer.sidekick.planner.offline.memo import SameObjects
from dreamer.sidekick.planner.offline.templates import expand

MAX_TEXTS_PER_TOOL = 24  # vectors per function: the description and its first examples' expansions
CACHE_SIZE = 20000  # functions whose vectors are kept

_cache: OrderedDict[str, np.ndarray] = OrderedDict()
_lock = threading.Lock()
_outside: np.ndarray | None = None


_keys: SameObjects[str] = SameObjects(size=4096)


def tool_key(tool: Tool) -> str:
    """A digest of what a function's vectors are made from, remembered for the same Tool object."""
    return _keys.get((tool,), lambda: _tool_key(tool))


def _tool_key(tool: Tool) -> str:
    blob = repr((tool.agent, tool.function, tool.description, tuple(tool.examples)))
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def tool_texts(tool: Tool) -> list[str]:
    """What a function is said to do, as plain phrases: its summary, then its examples without slots."""
    texts = [tool.summary]
    for example in tool.examples:
        for pieces in expand(example[:300])[:2]:
            words: list[str] = []
            for p in pieces:
                if p.slot:
                    continue
                words.append(p.choices[0] if p.choices else (p.text or ""))
            phrase = " ".join(" ".join(words).split())
            if phrase and phrase not in texts:
                texts.append(phrase)
        if len(texts) >= MAX_TEXTS_PER_TOOL:
            break
    return texts[:MAX_TEXTS_PER_TOOL]


def tool_vectors(tool: Tool) -> np.ndarray:
    key = tool_key(tool)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    vectors = embeddings.embed(tool_texts(tool))
    with _lock:
        _cache[key] = vectors
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return vectors


def outside_vectors() -> np.ndarray:
    global _outside
    if _outside is None:
        _outside = embeddings.embed(list(OUTSIDE))
    return _outside


_GOODS = np.array(GOODS, dtype=bool)

_spaces: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
CLOSENESS_CACHE = 4096  # texts whose closeness is kept: a message's rereadings, and messages said again
_closeness: OrderedDict[tuple[str, str], tuple[list[float], float, float]] = OrderedDict()


_space_digests: SameObjects[str] = SameObjects()


def space_digest(tools: Sequence[Tool]) -> str:
    """A digest of a tool list's vectors' sources, remembered for the same tools."""
    return _space_digests.get(tools, lambda: hashlib.blake2b(
        "".join(tool_key(t) for t in tools).encode(), digest_size=16).hexdigest())


def space(tools: Sequence[Tool]) -> tuple[np.ndarray, np.ndarray]:
    """All vectors of a tool list in one matrix, and where each tool's rows start (cached per list)."""
    digest = space_digest(tools)
    with _lock:
        found = _spaces.get(digest)
        if found is not None:
            _spaces.move_to_end(digest)
            return found
    blocks = [tool_vectors(t) for t in tools]
    sizes = [max(len(b), 1) for b in blocks]
    blocks = [b if len(b) else np.zeros((1, embeddings.DIM), dtype=np.float32) for b in blocks]
    matrix = np.vstack(blocks) if blocks else np.zeros((0, embeddings.DIM), dtype=np.float32)
    starts = np.cumsum([0, *sizes[:-1]]).astype(np.intp)
    with _lock:
        _spaces[digest] = (matrix, starts)
        while len(_spaces) > 16:
            _spaces.popitem(last=False)
    return matrix, starts


class Closeness:
    """A message's closeness by meaning to each tool (by position in the tool list) and to OUTSIDE."""

    def __init__(self, text: str, tools: Sequence[Tool]) -> None:
        self.ok = embeddings.available()
        self.by_tool: list[float] = [0.0] * len(tools)
        self.outside = 0.0
        self.outside_services = 0.0
        if not self.ok or not text.strip() or not tools:
            return
        # The planner's rereadings of a message ask about the same words again: four in ten are repeats.
        key = (text, space_digest(tools))
        with _lock:
            found = _closeness.get(key)
            if found is not None:
                _closeness.move_to_end(key)
        if found is None:
            vector = embeddings.embed([text])[0]
            matrix, starts = space(tools)
            near = outside_vectors() @ vector
            # ... and to the domains whose things are not goods a shop sells (outside.GOODS)
            found = ([float(v) for v in np.maximum.reduceat(matrix @ vector, starts)], float(np.max(near)),
                     float(np.max(np.where(_GOODS, -1.0, near))))
            with _lock:
                _closeness[key] = found
                while len(_closeness) > CLOSENESS_CACHE:
                    _closeness.popitem(last=False)
        self.by_tool = list(found[0])
        self.outside, self.outside_services = found[1], found[2]

    def best(self) -> tuple[int, float, float]:
        """The closest tool, its closeness, and the next closest tool's (of another function)."""
        if not self.by_tool:
            return -1, 0.0, 0.0
        order = sorted(range(len(self.by_tool)), key=lambda n: self.by_tool[n], reverse=True)
        second = self.by_tool[order[1]] if len(order) > 1 else 0.0
        return order[0], self.by_tool[order[0]], second
