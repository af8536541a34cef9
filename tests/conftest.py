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
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling

PG_ADMIN_URL = os.environ.get("DREAMER_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")

# The longest modules first (their times in the clean-clone CI runs, docs/PERFORMANCE.md): pytest-xdist's
# `--dist loadfile` hands out modules in the order they were collected (with `--no-loadscope-reorder`, in
# pyproject's addopts: by default it sorts them by how many tests each has, so the three-node cluster test, one
# test of two minutes, went last), so a long module collected late was the run's tail on one worker while the
# others had finished. Whole modules move; each keeps its tests' order,
# and the rest keep theirs (tests/security's aftermath check, moved after the attacks there, is not listed).
# The security folder's shared kernels (tests/security/conftest.py: `world`, one kernel per sandbox backend
# with its users and agents, and `accounts`) are session fixtures, so each worker that ran one of their modules
# built its own: five sets of three worlds in one run, 100 s of setup each on a busy machine. The modules that
# use them are one unit of work (`SharedWorldScheduling`), run by one worker on one set, which also lets the
# aftermath check see every attack of the run, not only those its worker ran.
SHARED_WORLD = "tests/security: the shared kernels"
SHARED_WORLD_MODULES = frozenset(f"tests/security/test_{name}.py" for name in (
    "forged_protocol", "reach", "resources", "grants", "gallery_provenance", "aftermath",  # world
    "confirm_every_caller", "optional_scopes", "bundle_provenance",  # accounts
))

SLOW_FIRST = (
    SHARED_WORLD,  # about 310 worker-seconds (the sixth session's runs)
    "tests/web/test_web_product.py",
    "tests/cluster/test_cluster.py",  # 67-116 s, one test: started last, it was the run's tail
    "tests/agents/test_sql_explorer_eval.py",
    "tests/llm_local/test_local_model.py",
    "tests/sidekick/dialogues/test_dialogue_tuned.py",
    "tests/tools/test_tools_kernel.py",
    "tests/security/test_sidekick_stall.py",
    "tests/e2e/test_memory.py",
    "tests/e2e/test_faults.py",
    "tests/sidekick/dialogues/test_dialogue_suite.py",
    "tests/e2e/test_gallery_e2e.py",
    "tests/coder/test_coder_sandbox.py",
    "tests/background/test_triggers.py",
    "tests/tools/test_builtin_tools.py",
    "tests/sidekick/test_routing_families.py",
    "tests/sidekick/test_planner_never_raises.py",
)


def unit_of(module: str) -> str:
    """The unit of work a module belongs to: itself, or the security folder's shared kernels."""
    return SHARED_WORLD if module in SHARED_WORLD_MODULES else module


class SharedWorldScheduling(LoadFileScheduling):
    """`--dist loadfile`, with the modules of the security folder's shared kernels as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid.split("::", 1)[0])


def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    if config.getoption("dist") != "loadfile":
        return None  # another --dist asked for on the command line keeps xdist's own scheduler
    return SharedWorldScheduling(config, log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(SLOW_FIRST)}
    root = Path(config.rootpath).resolve()

    def first(item: pytest.Item) -> int:
        try:
            return rank.get(unit_of(Path(item.path).resolve().relative_to(root).as_posix()), len(SLOW_FIRST))
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
