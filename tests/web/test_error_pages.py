"""Every page address answers a page in the user's words whatever goes wrong behind it (an
unexpected exception, a kernel failure, a wrong method, even the error page failing), while
/v1 keeps its JSON errors. In-process (Starlette TestClient), one kernel for the module."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dreamer.contracts.errors import DreamerError
from dreamer.host.build import create_app
from dreamer.kernel.api.routes import feed as feed_api
from dreamer.kernel.config import load_settings
from dreamer.web import pages

LOCAL = ("127.0.0.1", 50000)
# What a page must never show a person: exception names, the kernel's own failure sentence, commands.
MACHINE_WORDS = ("ValueError", "Traceback", "secret-detail", "dreamer doctor", "`dreamer", '"error"', "internal")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    home: Path = tmp_path_factory.mktemp("errorpages")
    settings = load_settings(home=home, database_url=f"sqlite:///{home / 'kernel.db'}", local_signin="any")
    application = create_app(settings)
    with TestClient(application, base_url="http://127.0.0.1:8700", client=LOCAL) as client:
        application.state.portal = client.portal
        yield application


@pytest.fixture
def b(app: Any) -> Iterator[TestClient]:
    """A browser signed in as the lone local user; server errors come back as responses."""
    client = TestClient(app, base_url="http://127.0.0.1:8700", client=LOCAL, follow_redirects=False,
                        raise_server_exceptions=False)
    client.portal = app.state.portal  # type: ignore[attr-defined]
    assert client.get("/").status_code == 200
    try:
        yield client
    finally:
        client.portal = None
        client.close()


def _in_words(response: Any, status: int, title: str) -> str:
    assert response.status_code == status, response.text[:300]
    assert response.headers["content-type"].startswith("text/html")
    text = html.unescape(response.text)
    assert f"<title>{title} · dreamer</title>" in text and f"<h1>{title}</h1>" in text
    assert not [w for w in MACHINE_WORDS if w in text], [w for w in MACHINE_WORDS if w in text]
    return text


def boom(*_: Any, **__: Any) -> Any:
    raise ValueError("secret-detail: a bug deep in the kernel")


@pytest.mark.parametrize(("path", "name"), [
    ("/feed", "read_feed"),  # reading what the page shows
    ("/activity", "group_runs"),  # the page's own wording
    ("/activity/inv_whatever", "invocation_reads"),
])
def test_an_unexpected_error_on_a_page_is_a_page_in_words(
    b: TestClient, monkeypatch: pytest.MonkeyPatch, path: str, name: str
) -> None:
    monkeypatch.setattr(pages, name, SimpleNamespace(invocation=boom) if name.endswith("_reads") else boom)
    text = _in_words(b.get(path), 500, "Something went wrong")
    assert "Sign out" in text and "<nav" in text  # still signed in, still navigable


def test_the_api_keeps_its_json_for_the_same_failure(b: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed_api, "read_feed", boom)
    failed = b.get("/v1/feed")
    assert failed.status_code == 500 and failed.json()["error"]["code"] == "internal"
    assert "secret-detail" not in failed.text


def test_a_kernel_failure_shows_its_words_not_its_sentence(b: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def crashed(*_: Any, **__: Any) -> Any:
        raise DreamerError("worker_crashed", "the worker crashed (secret-detail); run `dreamer doctor`")

    monkeypatch.setattr(pages, "invocation_reads", SimpleNamespace(invocation=crashed))
    _in_words(b.get("/activity/inv_1"), 502, "Something went wrong")


def test_a_refusal_keeps_its_reason_and_a_wrong_method_is_a_page(b: TestClient) -> None:
    missing = b.get("/agents/grocery/data", params={"table": "no_such_table"})
    assert missing.status_code == 404 and "no table named" in missing.text  # the reason, folded under the words
    wrong = b.post("/activity", data={"x": "1"})
    _in_words(wrong, 400, "That didn't work")


def test_when_even_the_error_page_fails_a_bare_page_answers(b: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamer.web import mount

    monkeypatch.setattr(pages, "read_feed", boom)
    monkeypatch.setattr(mount, "error_page", boom)
    text = _in_words(b.get("/feed"), 500, "Something went wrong")
    assert "Back to the chat" in text
