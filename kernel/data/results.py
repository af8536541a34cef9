"""Query results kept in the kernel: the model and the user get pages, the rest stays here.

Each result has an id the agent can page through or export; results are kept per
user, a bounded number for each user, their oldest dropped first, in this process's
memory only (not in the store): a restart loses them and another node of a cluster
does not see them, which the error for a missing id says. The cache maps
(user, connection, scope version, role, data version, secured SQL) to a result, so
asking again while neither the data nor the scopes changed does not run the query again.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from dreamer.contracts.errors import DreamerError

MAX_RESULTS = 64  # per user, each up to MAX_ROWS rows / MAX_RESULT_BYTES: a bound on what the kernel holds
CACHE_SECONDS = 300.0
# Results live in this kernel process's memory only: a restart loses them, and another kernel of a
# cluster never had them (docs/SCALING.md). An unknown id, or one of another user's, reads the same.
EXPIRED = ("that result ({query_id!r}) has expired; ask again: results are kept in the kernel's memory, so "
           "older ones are dropped, and a restart or another kernel of the cluster does not have them")


@dataclass
class Result:
    id: str
    user_id: int
    connection: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    written: str
    secured: str
    created: float
    truncated_by: str | None = None  # "rows" or "bytes": which cap cut it (kernel/data/caps.py)

    def page(self, page: int, size: int) -> dict[str, Any]:
        pages = max(1, -(-len(self.rows) // size))
        if page < 1 or page > pages:
            raise DreamerError("invalid_argument", f"page {page} does not exist; this result has pages 1 to {pages}")
        start = (page - 1) * size
        return {
            "query_id": self.id, "columns": self.columns, "rows": self.rows[start:start + size],
            "page": page, "pages": pages, "page_size": size, "total_rows": len(self.rows),
            "truncated": self.truncated, "truncated_by": self.truncated_by,
        }


class Results:
    """Each user's results in a store of their own, so one user's queries never push out another's
    `query_id` (issue 14 finding 9); the cache is per user too, keyed by what decides a result."""

    def __init__(self, per_user: int = MAX_RESULTS) -> None:
        self.per_user = per_user
        self._by_user: dict[int, OrderedDict[str, Result]] = {}
        self._cache: dict[int, dict[tuple[str, ...], str]] = {}
        self._lock = threading.Lock()

    def cached(self, key: tuple[str, ...], user_id: int) -> Result | None:
        with self._lock:
            mine = self._by_user.get(user_id)
            rid = self._cache.get(user_id, {}).get(key)
            if mine is None or not rid:
                return None
            result = mine.get(rid)
            if result is None or time.monotonic() - result.created > CACHE_SECONDS:
                return None
            mine.move_to_end(result.id)
            return result

    def keep(self, key: tuple[str, ...], *, user_id: int, **fields: Any) -> Result:
        result = Result(id="q_" + secrets.token_hex(8), created=time.monotonic(), user_id=user_id, **fields)
        with self._lock:
            mine = self._by_user.setdefault(user_id, OrderedDict())
            cache = self._cache.setdefault(user_id, {})
            mine[result.id] = result
            cache[key] = result.id
            while len(mine) > self.per_user:
                old_id, _ = mine.popitem(last=False)
                for k in [k for k, v in cache.items() if v == old_id]:
                    del cache[k]
        return result

    def get(self, query_id: str, user_id: int) -> Result:
        with self._lock:
            mine = self._by_user.get(user_id)
            result = mine.get(query_id) if mine is not None and isinstance(query_id, str) else None
        if result is None:
            raise DreamerError("not_found", EXPIRED.format(query_id=str(query_id)[:40]))
        return result
