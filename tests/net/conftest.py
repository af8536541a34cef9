"""Fixtures for the network egress tests: a local HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from localhttp import LocalServer, local_server


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with local_server() as s:
        yield s


@pytest.fixture
def fresh(server: LocalServer) -> LocalServer:
    """The module's server with its record of requests emptied."""
    server.seen.clear()
    return server
