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

# The longest modules first (their times in the clean-clone CI runs, docs/PERFORMANCE.md): pytest-xdist's
# `--dist loadfile` hands out modules in the order they were collected, so a long module collected late was
# the run's tail on one worker while the others had finished. Whole modules move; each keeps its tests' order,
# and the rest keep theirs (tests/security's aftermath check, moved after the attacks there, is not listed).
SLOW_FIRST = (
    "tests/llm_local/test_local_model.py",
    "tests/sidekick/dialogues/test_dialogue_tuned.py",
    "tests/security/test_sidekick_stall.py",
    "tests/sidekick/dialogues/test_dialogue_suite.py",
    "tests/cluster/test_cluster.py",
    "tests/tools/test_tools_kernel.py",
    "tests/e2e/test_gallery_e2e.py",
    "tests/e2e/test_memory.py",
    "tests/e2e/test_faults.py",
    "tests/web/test_web_product.py",
    "tests/tools/test_builtin_tools.py",
    "tests/sidekick/test_routing_families.py",
    "tests/sidekick/test_planner_never_raises.py",
)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(SLOW_FIRST)}
    root = Path(config.rootpath).resolve()

    def first(item: pytest.Item) -> int:
        try:
            return rank.get(Path(item.path).resolve().relative_to(root).as_posix(), len(SLOW_FIRST))
        except ValueError:
            return len(SLOW_FIRST)

    items.sort(key=first)  # stable: within a module, and among the rest, the order stays


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
