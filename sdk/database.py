"""The agent's own SQLite database: $DREAMER_DATA_DIR/agent.db, one transaction per invocation.

The worker keeps one connection for its whole life (opened on first use) and
wraps each invocation in a transaction: it commits when the function returns
and rolls back when it raises, so a failed invocation leaves no half-written
rows. Schema changes (CREATE TABLE) are inside that transaction too, because
the transaction is opened explicitly rather than by sqlite3's implicit BEGIN,
which only starts before INSERT/UPDATE/DELETE.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

FILENAME = "agent.db"
BUSY_TIMEOUT_S = 10.0


class AgentDatabase:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILENAME
        self._conn: sqlite3.Connection | None = None

    @property
    def is_open(self) -> bool:
        return self._conn is not None

    def connection(self) -> sqlite3.Connection:
        """The connection, opened on first use, with a transaction open."""
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
            try:
                # WAL lets `dreamer database` read while an invocation writes.
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.Error:
                conn.close()
                raise
            conn.row_factory = sqlite3.Row
            self._conn = conn
        if not self._conn.in_transaction:
            # Also after agent code called ctx.db.commit(): the rest of the
            # invocation is again one transaction.
            self._conn.execute("BEGIN")
        return self._conn

    def commit(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            self._conn.commit()

    def rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            self._conn.rollback()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
