"""Fixtures for the model planner tests: the fake provider server, a store with a user, both providers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from model_testkit import FakeLLMServer

from dreamer.kernel.store.db import Store
from dreamer.kernel.users.accounts import create_user


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server
        assert server.pending == 0, "a scripted reply was not used"


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    yield store
    store.dispose()


@pytest.fixture
def user_id(sqlite_store: Store) -> int:
    with sqlite_store.session() as s:
        user, _token = create_user(s, "ada")
        return user.id


@pytest.fixture(params=["anthropic", "openai"])
def provider(request: pytest.FixtureRequest) -> str:
    return request.param
