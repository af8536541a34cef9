"""The kernel store: the shared Database (contracts/database.py) plus its schema upgrades.

One `Store` per kernel process. SQLite (the default, a file under DREAMER_HOME) or
PostgreSQL (DREAMER_DATABASE_URL). Alembic owns the schema; `migrate()` runs on
every start and is a no-op when the schema is current.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from dreamer.contracts.database import Database
from dreamer.contracts.errors import DreamerError

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

# Arbitrary constant keys for PostgreSQL advisory locks; they only have to be
# distinct from each other and from anything else using advisory locks here.
PG_MIGRATE_LOCK = 0x6472_6D01  # "drm" 01
PG_AUDIT_LOCK = 0x6472_6D02  # "drm" 02


class Store(Database):
    """The kernel database: a Database whose schema Alembic owns."""

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
