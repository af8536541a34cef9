"""kernel/api/lean_call.py's CallFirst answers a call in one layer in front of the app's
middleware stack. Every answer it gives must be the one the whole stack gives: the same
request is sent through both, on one kernel, and the status, headers and body compared
(invocation ids aside, which differ by nature)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.types import Receive, Scope, Send

from dreamer.contracts.errors import DreamerError
from dreamer.host.build import create_app
from dreamer.kernel.api.lean_call import CallFirst
from dreamer.kernel.config import load_settings

LOCAL = ("127.0.0.1", 50000)
CALL = "/v1/agents/grocery/functions/list_items"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    home: Path = tmp_path_factory.mktemp("callfirst")
    settings = load_settings(home=home, database_url=f"sqlite:///{home / 'kernel.db'}", local_signin="any")
    application = create_app(settings)
    with TestClient(application, base_url="http://127.0.0.1:8700", client=LOCAL) as client:
        application.state.portal = client.portal
        application.state.admin = json.loads((home / "credentials").read_text())["token"]
        # A browser session (the lone local user is signed in by the first page).
        client.get("/")
        application.state.cookie = client.cookies.get("dreamer_session")
        yield application


def _client(app: Any, asgi: Any) -> TestClient:
    c = TestClient(asgi, base_url="http://127.0.0.1:8700", client=LOCAL, raise_server_exceptions=False)
    c.portal = app.state.portal  # the kernel's one event loop, as tests/web/test_web_inprocess.py
    return c


def _whole_stack(app: Any) -> Any:
    """The app as it would be without CallFirst: its stack, entered as Starlette enters it."""
    assert isinstance(app.middleware_stack, CallFirst)
    stack = app.middleware_stack.app

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        scope["app"] = app
        await stack(scope, receive, send)

    return asgi


def _answer(r: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    body = re.sub(rb"inv_[0-9a-f]{32}", b"inv_ID", r.content)
    headers = [(k, v) for k, v in r.headers.multi_items() if k != "content-length"]
    return r.status_code, headers, body


def _both(app: Any, method: str = "POST", path: str = CALL, *, content: Any = None,
          cookies: dict[str, str] | None = None, **kwargs: Any) -> tuple[Any, Any]:
    """`content` may be a function that makes the body afresh for each (a stream is read once)."""
    # Not entered as context managers: that would run the app's lifespan (a second kernel).
    first, whole = _client(app, app), _client(app, _whole_stack(app))
    try:
        for c in (first, whole):
            c.cookies.update(cookies or {})
        a, b = (c.request(method, path, content=content() if callable(content) else content, **kwargs)
                for c in (first, whole))
    finally:
        for c in (first, whole):
            c.portal = None
            c.close()
    assert _answer(a) == _answer(b), (a.content, b.content)
    return a, b


def _bearer(app: Any) -> dict[str, str]:
    return {"authorization": f"Bearer {app.state.admin}"}


@pytest.mark.parametrize(
    ("path", "body", "headers", "status"),
    [
        (CALL, b'{"args": {}}', {}, 200),
        (CALL, b'{"args": {}, "confirm": false}', {"content-type": "application/json; charset=utf-8"}, 200),
        ("/v1/agents/nope/functions/list_items", b'{"args": {}}', {}, 404),
        ("/v1/agents/grocery/functions/nope", b'{"args": {}}', {}, 404),
        ("/v1/agents/grocery/functions/clear", b'{"args": {}}', {}, 409),  # asks for confirmation
        ("/v1/agents/grocery/functions/add_items", b'{"args": {"items": 3}}', {}, 422),
        (CALL, b'{"args": {}}', {"x-dreamer-user": "nobody"}, 404),
        (CALL, b'{"args": ', {}, 400),  # handed back to the FastAPI route
        (CALL, b"", {}, 400),
        (CALL, b'{"args": {}}', {"content-type": "text/plain"}, 400),
    ],
)
def test_a_call_is_answered_as_the_whole_stack_answers_it(
    app: Any, path: str, body: bytes, headers: dict[str, str], status: int
) -> None:
    a, _ = _both(app, path=path, content=body, headers={"content-type": "application/json", **_bearer(app), **headers})
    assert a.status_code == status, a.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"authorization": "Bearer nope"}, {"authorization": "Basic x"}],
)
def test_who_is_asking_is_refused_in_the_same_words(app: Any, headers: dict[str, str]) -> None:
    a, _ = _both(app, content=b'{"args": {}}', headers={"content-type": "application/json", **headers})
    assert a.status_code == 401 and a.json()["error"]["code"] == "unauthorized"


def test_a_browser_session_without_its_csrf_token_is_refused_the_same(app: Any) -> None:
    a, _ = _both(app, content=b'{"args": {}}', headers={"content-type": "application/json"},
                 cookies={"dreamer_session": app.state.cookie})
    assert a.status_code == 403 and a.json()["error"]["code"] == "csrf_failed"


def test_a_body_over_the_limit_is_refused_the_same_declared_or_counted(app: Any) -> None:
    limit = app.middleware_stack.limit
    big = b'{"args": {"x": "' + b"y" * limit + b'"}}'
    declared, _ = _both(app, content=big, headers={"content-type": "application/json", **_bearer(app)})
    assert declared.status_code == 413
    # Sent in chunks with no Content-Length: counted as it arrives.
    counted, _ = _both(app, content=lambda: iter([big[:1000], big[1000:]]),
                       headers={"content-type": "application/json", **_bearer(app)})
    assert counted.status_code == 413 and counted.json()["error"]["code"] == "payload_too_large"


def test_an_unexpected_error_is_a_500_in_the_same_words(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(app.state.kernel.invoker, "invoke", broken)
    a, _ = _both(app, content=b'{"args": {}}', headers={"content-type": "application/json", **_bearer(app)})
    assert a.status_code == 500 and a.json()["error"]["code"] == "internal"


def test_a_dreamer_error_from_the_call_keeps_its_status_and_details(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    async def refused(*args: Any, **kwargs: Any) -> Any:
        raise DreamerError("permission_denied", "recipes may not call grocery", scope="agent:grocery")

    monkeypatch.setattr(app.state.kernel.invoker, "invoke", refused)
    a, _ = _both(app, content=b'{"args": {}}', headers={"content-type": "application/json", **_bearer(app)})
    assert a.status_code == 403 and a.json()["error"]["code"] == "permission_denied"


def test_other_requests_take_the_whole_stack(app: Any) -> None:
    for method, path in (("GET", CALL), ("GET", "/healthz"), ("POST", "/v1/agents/grocery"), ("GET", "/nowhere")):
        _both(app, method, path, headers=_bearer(app))
