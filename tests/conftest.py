"""Shared test fixtures."""

from __future__ import annotations

# --- kernel store: PostgreSQL database and a store on either backend ----------------
# `pg_url`: a fresh PostgreSQL database for the whole test session (dropped at the
# end), or a skip when no server answers. `store`: a migrated kernel Store, run once
# on SQLite and once on PostgreSQL (`pg_store`: PostgreSQL only); the PostgreSQL
# tables are emptied after each test.
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

PG_ADMIN_URL = os.environ.get("DREAMER_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    yield from _fresh_pg_database()


@pytest.fixture
def fresh_pg_url() -> Iterator[str]:
    """A PostgreSQL database of the test's own, for a kernel process to keep its store in."""
    yield from _fresh_pg_database()


def _fresh_pg_database() -> Iterator[str]:
    import psycopg

    admin = make_url(PG_ADMIN_URL)
    where = f"{admin.host or 'localhost'}:{admin.port or 5432}"
    try:
        conn = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError:
        pytest.skip(f"PostgreSQL does not answer at {where}")
    name = f"dreamer_test_{secrets.token_hex(4)}"
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _empty_pg(url: str) -> None:
    from dreamer.contracts.database import normalize_url
    from dreamer.kernel.store.models import Base

    engine = create_engine(normalize_url(url))
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with engine.begin() as conn:
        conn.execute(text("SET LOCAL lock_timeout = '10s'"))
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()


def _kernel_store(url: str) -> Iterator[object]:
    from dreamer.kernel.store.db import Store

    kernel_store = Store(url)
    kernel_store.migrate()
    try:
        yield kernel_store
    finally:
        kernel_store.dispose()
        if kernel_store.is_postgresql:
            _empty_pg(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    if request.param == "sqlite":
        yield from _kernel_store(f"sqlite:///{tmp_path / 'home' / 'kernel.db'}")
    else:
        yield from _kernel_store(request.getfixturevalue("pg_url"))


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[object]:
    yield from _kernel_store(pg_url)


# --- end kernel store ----------------------------------------------------------------
