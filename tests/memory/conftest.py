"""Fixtures for Sidekick's memory: users in a migrated store. `store` (from
tests/conftest.py) runs a test on SQLite and on PostgreSQL; `sqlite_store` only
on SQLite, for the many small cases of input checking."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memory_testkit import new_user

from dreamer.kernel.store.db import Store


@pytest.fixture
def add_user(store: Store) -> Callable[[str], int]:
    return lambda name: new_user(store, name)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    lite = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    lite.migrate()
    yield lite
    lite.dispose()
