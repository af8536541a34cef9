"""Query results kept in the kernel: the model and the user get pages, the rest stays here.

Each result has an id the agent can page through or export; results are kept per
user, a bounded number of them, oldest dropped first. The cache maps (connection,
role, secured SQL, data version) to a result, so asking again while the data has not
changed does not run the query again.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from dreamer.kernel.errors import DreamerError

MAX_RESULTS = 64  # each up to MAX_ROWS rows: a bound on what the kernel holds
CACHE_SECONDS = 300.0


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

    def page(self, page: int, size: int) -> dict[str, Any]:
        pages = max(1, -(-len(self.rows) // size))
        if page < 1 or page > pages:
            raise DreamerError("invalid_argument", f"page {page} does not exist; this result has pages 1 to {pages}")
        start = (page - 1) * size
        return {
            "query_id": self.id, "columns": self.columns, "rows": self.rows[start:start + size],
            "page": page, "pages": pages, "page_size": size, "total_rows": len(self.rows),
            "truncated": self.truncated,
        }


class Results:
    def __init__(self) -> None:
        self._by_id: OrderedDict[str, Result] = OrderedDict()
        self._cache: dict[tuple[str, str, str, str], str] = {}
        self._lock = threading.Lock()

    def cached(self, key: tuple[str, str, str, str], user_id: int) -> Result | None:
        with self._lock:
            rid = self._cache.get(key)
            result = self._by_id.get(rid) if rid else None
            if result is None or result.user_id != user_id or time.monotonic() - result.created > CACHE_SECONDS:
                return None
            self._by_id.move_to_end(result.id)
            return result

    def keep(self, key: tuple[str, str, str, str], **fields: Any) -> Result:
        result = Result(id="q_" + secrets.token_hex(8), created=time.monotonic(), **fields)
        with self._lock:
            self._by_id[result.id] = result
            self._cache[key] = result.id
            while len(self._by_id) > MAX_RESULTS:
                old_id, _ = self._by_id.popitem(last=False)
                self._cache = {k: v for k, v in self._cache.items() if v != old_id}
        return result

    def get(self, query_id: str, user_id: int) -> Result:
        with self._lock:
            result = self._by_id.get(query_id) if isinstance(query_id, str) else None
        if result is None or result.user_id != user_id:
            raise DreamerError("not_found", f"there is no result {str(query_id)[:40]!r} (results are kept for a while; run the query again)")
        return result
