"""The kernel store's engine, sessions and schema upgrades.

One `Store` per kernel process. SQLite (the default, a file under DREAMER_HOME) or
PostgreSQL (DREAMER_DATABASE_URL). Alembic owns the schema; `migrate()` runs on
every start and is a no-op when the schema is current.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from dreamer.kernel.errors import DreamerError

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

# How long a SQLite writer waits for another writer before giving up.
SQLITE_BUSY_TIMEOUT_MS = 30_000

# Arbitrary constant keys for PostgreSQL advisory locks; they only have to be
# distinct from each other and from anything else using advisory locks here.
PG_MIGRATE_LOCK = 0x6472_6D01  # "drm" 01
PG_AUDIT_LOCK = 0x6472_6D02  # "drm" 02


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


class Store:
    """The kernel database: an engine, a session factory and the schema upgrader."""

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

    def alembic_config(self) -> Config:
        """An Alembic configuration built in code: no alembic.ini at runtime."""
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        # Alembic interpolates %-signs in options; escape them in passwords.
        config.set_main_option(
            "sqlalchemy.url", self.url.render_as_string(hide_password=False).replace("%", "%%")
        )
        return config

    def migrate(self) -> None:
        """Upgrade the schema to the newest revision; safe to call on every start,
        also from two processes at once (the upgrade runs under a database lock)."""
        config = self.alembic_config()
        try:
            connection = self.engine.connect()
        except DBAPIError as error:
            reason = str(error.orig or error).strip().splitlines()[0].rstrip(".")
            raise DreamerError(
                "internal", f"Cannot open the kernel database {self.safe_url}: {reason}."
            ) from None
        with connection:
            if self.is_postgresql:
                # Held until commit; a second process waits here, then finds the
                # schema at head and does nothing.
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_MIGRATE_LOCK}
                )
            else:
                # Take SQLite's write lock before reading the current revision, so a
                # second process cannot read "empty" while the first creates tables.
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()

    def dispose(self) -> None:
        self.engine.dispose()
