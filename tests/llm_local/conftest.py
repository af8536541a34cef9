"""The local-model lane: one llama.cpp server with SmolLM2-135M per test session, a
fault proxy in front of it, and a kernel whose openai provider talks to the proxy."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "e2e"))

from fault_proxy import FaultProxy  # noqa: E402
from local_server import LocalServer, start_server, why_unavailable  # noqa: E402


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(reason)
    server = start_server(tmp_path_factory.mktemp("llama"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def proxy(local_server: LocalServer) -> Iterator[FaultProxy]:
    with FaultProxy(local_server.url) as p:
        yield p


@pytest.fixture(autouse=True)
def clean_proxy(request: pytest.FixtureRequest) -> Iterator[None]:
    if "proxy" in request.fixturenames:
        p: FaultProxy = request.getfixturevalue("proxy")
        p.reset()
        yield
        p.reset()
    else:
        yield
