"""The one way a dreamer service opens its SQL database: SQLite (a file, the default)
or PostgreSQL, with the same URL rules, SQLite pragmas and units of work everywhere.

The kernel's Store adds its Alembic schema on top (kernel/store/db.py); the gallery keeps
its own schema in the same kind of database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from dreamer.contracts.errors import DreamerError

# Constraint names that are the same on SQLite and PostgreSQL, so migrations can name them.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


# How long a SQLite writer waits for another writer before giving up.
SQLITE_BUSY_TIMEOUT_MS = 30_000



def normalize_url(url: str) -> URL:
    """Parse a database URL and pick our driver; refuse anything but SQLite or PostgreSQL."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise DreamerError(
            "invalid_argument", f"The database URL {url!r} is not a valid SQLAlchemy URL."
        ) from None
    backend = parsed.get_backend_name()
    if backend == "postgres":  # the Heroku-style alias SQLAlchemy no longer accepts
        parsed = parsed.set(drivername="postgresql")
        backend = "postgresql"
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        return parsed
    if backend == "sqlite":
        return parsed
    raise DreamerError(
        "invalid_argument",
        f"The database URL must name SQLite or PostgreSQL, not {backend!r}.",
    )


def _is_memory(url: URL) -> bool:
    return url.database in (None, "", ":memory:") or "mode=memory" in str(url)


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        # busy_timeout first, so switching to WAL also waits for other connections.
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        # In WAL mode NORMAL never corrupts the file; a power cut may lose the last
        # commits, not the audit chain's integrity. FULL costs an fsync per call.
        cursor.execute("PRAGMA synchronous = NORMAL")
    finally:
        cursor.close()


class Database:
    """An engine and a session factory; the schema is the owner's (Alembic for the kernel)."""

    def __init__(self, url: str) -> None:
        self.url: URL = normalize_url(url)
        self.backend: str = self.url.get_backend_name()
        kwargs: dict[str, Any] = {}
        if self.backend == "sqlite":
            if _is_memory(self.url):
                # One shared connection, or each thread would see its own empty database.
                kwargs["poolclass"] = StaticPool
                kwargs["connect_args"] = {"check_same_thread": False}
            else:
                folder = Path(self.url.database or "").expanduser().resolve().parent
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    raise DreamerError(
                        "invalid_argument",
                        f"Cannot create the database folder {folder}: {error.strerror or error}.",
                    ) from None
        else:
            kwargs["pool_pre_ping"] = True
        self.engine: Engine = create_engine(self.url, **kwargs)
        if self.backend == "sqlite":
            event.listen(self.engine, "connect", _sqlite_on_connect)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def safe_url(self) -> str:
        """The URL with any password masked, for messages and logs."""
        return self.url.render_as_string(hide_password=True)

    @property
    def is_memory(self) -> bool:
        return self.is_sqlite and _is_memory(self.url)

    @property
    def is_sqlite(self) -> bool:
        return self.backend == "sqlite"

    @property
    def is_postgresql(self) -> bool:
        return self.backend == "postgresql"

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A unit of work: committed when the block ends, rolled back if it raises."""
        session = self._sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def dispose(self) -> None:
        self.engine.dispose()
