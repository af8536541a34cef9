"""The gallery fixture: one gallery per test, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dreamer.gallery.app import create_app
from dreamer.gallery.rules import GallerySettings
from gallerykit import Served, serve


@pytest.fixture(params=["sqlite", "postgresql"])
def gallery_http(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    """The same gallery on both backends its store supports."""
    url = request.getfixturevalue("fresh_pg_url") if request.param == "postgresql" else None
    app = create_app(GallerySettings.at(tmp_path / "gallery", url))
    try:
        yield from serve(app)
    finally:
        app.state.gallery.store.dispose()
