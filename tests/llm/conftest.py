"""Fixtures for the model gateway tests: the fake provider server and a store with a user."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_testkit import FakeLLMServer, add_user

from dreamer.kernel.store.db import Store


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    yield store
    store.dispose()


@pytest.fixture
def user_id(sqlite_store: Store) -> int:
    return add_user(sqlite_store)


@pytest.fixture(params=["anthropic", "openai"])
def provider(request: pytest.FixtureRequest) -> str:
    return request.param
