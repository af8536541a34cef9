from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamer.kernel.store.db import Store


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    yield store
    store.dispose()
