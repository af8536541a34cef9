"""The web app in-process (Starlette TestClient, one kernel for the module): pages render,
sign-in and sessions, CSRF on forms and on /v1 calls made with the session cookie."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dreamer.host.build import create_app
from dreamer.kernel.config import load_settings

LOCAL = ("127.0.0.1", 50000)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    home: Path = tmp_path_factory.mktemp("webhome")
    # The in-process client has no socket whose owner could be looked up, so these tests of
    # the lone-user sign-in use the any-local-process rule (the owner rule: tests/security/test_local_signin.py).
    settings = load_settings(home=home, database_url=f"sqlite:///{home / 'kernel.db'}", local_signin="any")
    application = create_app(settings)
    with TestClient(application, base_url="http://127.0.0.1:8700", client=LOCAL) as client:
        application.state.token = (home / "credentials").read_text()
        application.state.portal = client.portal
        yield application


@contextmanager
def browser(app: object, client: tuple[str, int] = LOCAL, host: str = "127.0.0.1:8700") -> Iterator[TestClient]:
    """A browser of its own (its own cookies) on the kernel's one event loop: the worker
    processes a call starts belong to that loop, so every request must run on it."""
    b = TestClient(app, base_url=f"http://{host}", client=client, follow_redirects=False)  # type: ignore[arg-type]
    b.portal = app.state.portal  # type: ignore[attr-defined]
    try:
        yield b
    finally:
        b.portal = None
        b.close()


def admin_token(app: object) -> str:
    import json

    return json.loads(app.state.token)["token"]  # type: ignore[attr-defined]


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf-token" content="([^"]+)"', html) or re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html[:500]
    return found.group(1)


def test_lone_local_user_is_signed_in_from_localhost(app: object) -> None:
    with browser(app) as b:
        page = b.get("/")
        assert page.status_code == 200
        cookie = page.headers["set-cookie"]
        assert "dreamer_session=" in cookie and "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        assert "No AI model is configured" in page.text  # the offline planner banner
        for path in ("/agents", "/agents/grocery", "/permissions", "/activity", "/install", "/account"):
            shown = b.get(path)
            assert shown.status_code == 200, path
            assert "<nav" in shown.text and "Sign out" in shown.text
        assert "add_items" in b.get("/agents/grocery").text
        missing = b.get("/agents/nope")
        assert missing.status_code == 404 and "<html" in missing.text and "nope" in missing.text


def test_agent_data_is_browsed_read_only(app: object) -> None:
    with browser(app) as b:
        token = csrf_of(b.get("/").text)
        added = b.post("/v1/agents/grocery/functions/add_items", json={"args": {"items": ["<b>oat milk</b>"]}},
                       headers={"X-CSRF-Token": token})
        assert added.status_code == 200
        page = b.get("/agents/grocery/data")
        assert page.status_code == 200 and "items" in page.text
        assert "&lt;b&gt;oat milk&lt;/b&gt;" in page.text and "<b>oat milk</b>" not in page.text
        for hostile in ('items"; DROP TABLE items; --', "nope", "sqlite_master"):
            assert b.get("/agents/grocery/data", params={"table": hostile}).status_code == 404
        assert "oat milk" in b.get("/agents/grocery/data", params={"table": "items"}).text


def test_not_from_localhost_or_another_host_name_must_sign_in(app: object) -> None:
    with browser(app, client=("10.0.0.7", 4000)) as b:
        assert b.get("/").status_code == 303
    # A page of another site resolving its own name to 127.0.0.1 (DNS rebinding) is not "localhost".
    with browser(app, host="evil.example:8700") as b:
        answer = b.get("/agents")
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login")


def test_api_calls_with_the_cookie_need_the_csrf_token(app: object) -> None:
    with browser(app) as b:
        token = csrf_of(b.get("/").text)
        assert b.get("/v1/agents").status_code == 200  # reading needs no token
        forged = b.post("/v1/agents/grocery/functions/add_items", json={"args": {"items": ["forged"]}})
        assert forged.status_code == 403 and forged.json()["error"]["code"] == "csrf_failed"
        wrong = b.post("/v1/agents/grocery/functions/add_items", json={"args": {"items": ["x"]}},
                       headers={"X-CSRF-Token": token + "x"})
        assert wrong.status_code == 403
        listed = b.post("/v1/agents/grocery/functions/list_items", json={"args": {}}, headers={"X-CSRF-Token": token})
        assert listed.status_code == 200
        assert "forged" not in str(listed.json()["result"])
        # A text/plain form post (what a hostile page can send without CORS) is refused the same way.
        plain = b.post("/v1/chat", content='{"message": "clear my grocery list"}', headers={"Content-Type": "text/plain"})
        assert plain.status_code == 403


def test_password_sign_in_sessions_and_revocation(app: object) -> None:
    admin = {"Authorization": f"Bearer {admin_token(app)}"}
    with browser(app) as api:
        assert api.post("/v1/users", json={"name": "bob"}, headers=admin).status_code == 201
        short = api.put("/v1/users/bob/password", json={"password": "short"}, headers=admin)
        assert short.status_code == 422 and "at least" in short.json()["error"]["message"]
        assert api.put("/v1/users/bob/password", json={"password": "correct horse"}, headers=admin).status_code == 200
    # Two users now: nobody is signed in automatically any more.
    with browser(app) as b:
        assert b.get("/").status_code == 303
        form = b.get("/login")
        token = csrf_of(form.text)
        no_token = b.post("/login", data={"name": "bob", "password": "correct horse"})
        assert no_token.status_code == 403 and "dreamer_session" not in no_token.headers.get("set-cookie", "")
        wrong = b.post("/login", data={"name": "bob", "password": "wrong horse", "csrf": token})
        assert wrong.status_code == 401 and "do not match" in wrong.text
        nobody = b.post("/login", data={"name": "nobody", "password": "correct horse", "csrf": token})
        assert nobody.status_code == 401
        good = b.post("/login?next=//evil.example", data={"name": "bob", "password": "correct horse", "csrf": token})
        assert good.status_code == 303 and good.headers["location"] == "/"
        page = b.get("/")
        assert page.status_code == 200 and ">bob<" in page.text
        session_csrf = csrf_of(page.text)
        sessions = b.get("/v1/sessions").json()
        assert len(sessions) == 1 and sessions[0]["how"] == "password"
        # Sign-out without the form's token is refused; the session lives on.
        assert b.post("/logout", data={}).status_code == 403
        assert b.get("/").status_code == 200
        # Revoked through the API (from another browser of bob's): the next request is refused.
        with browser(app) as other:
            other.post("/login", data={"name": "bob", "password": "correct horse", "csrf": csrf_of(other.get("/login").text)})
            revoked = other.delete(f"/v1/sessions/{sessions[0]['id']}", headers={"X-CSRF-Token": csrf_of(other.get("/").text)})
            assert revoked.status_code == 200
        assert b.get("/").status_code == 303
        assert b.get("/v1/agents").status_code == 401
        assert session_csrf  # the dead session's token opens nothing either
        assert b.post("/v1/agents/grocery/functions/list_items", json={"args": {}},
                      headers={"X-CSRF-Token": session_csrf}).status_code == 401


def test_users_cannot_set_each_others_passwords(app: object) -> None:
    admin = {"Authorization": f"Bearer {admin_token(app)}"}
    with browser(app) as api:
        carol = api.post("/v1/users", json={"name": "carol"}, headers=admin).json()["token"]
        refused = api.put("/v1/users/me/password", json={"password": "carol was here"},
                          headers={"Authorization": f"Bearer {carol}"})
        assert refused.status_code == 403
        assert api.put("/v1/users/carol/password", json={"password": "x" * 5000},
                       headers={"Authorization": f"Bearer {carol}"}).status_code == 400


def test_hostile_form_and_cookie_inputs(app: object) -> None:
    with browser(app) as b:
        b.cookies.set("dreamer_session", "x" * 5000)
        assert b.get("/v1/agents").status_code == 401
        b.cookies.clear()
        token = csrf_of(b.get("/login").text)
        huge = b.post("/login", content=b"name=" + b"a" * 100_000, headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert huge.status_code == 403
        odd = b.post("/login", data={"name": "bob\x00", "password": "é" * 2000, "csrf": token})
        assert odd.status_code == 401


def test_static_files_are_served_locally(app: object) -> None:
    with browser(app) as b:
        page = b.get("/").text
        assert "http://" not in page.split("<body>")[0] and "https://" not in page.split("<body>")[0]
        for name in ("app.css", "app.js", "chat.js", "install.js"):
            assert b.get(f"/static/{name}").status_code == 200



def test_the_feed_shows_posts_escaped_and_links_only_to_the_web(app: object) -> None:
    from dreamer.kernel.store.models import Post, User

    admin = {"Authorization": f"Bearer {admin_token(app)}"}
    with browser(app) as b:
        # A user of its own, signed in with a password: independent of the other tests' users.
        assert b.post("/v1/users", json={"name": "dana"}, headers=admin).status_code == 201
        assert b.put("/v1/users/dana/password", json={"password": "dana's feed"}, headers=admin).status_code == 200
        signed = b.post("/login", data={"name": "dana", "password": "dana's feed", "csrf": csrf_of(b.get("/login").text)})
        assert signed.status_code == 303
        empty = b.get("/feed")
        assert empty.status_code == 200 and "Nothing here yet" in empty.text
        kernel = app.state.kernel  # type: ignore[attr-defined]
        with kernel.store.session() as s:
            dana = s.query(User).filter_by(name="dana").one()
            # As ctx.post writes them (the syscall itself is tested in tests/background).
            s.add(Post(user_id=dana.id, agent="watch", text="<script>alert(1)</script> enrollment is open",
                       priority="urgent", attachments=[{"url": "https://example.com/enroll", "title": "Enroll"},
                                                       {"url": "javascript:alert(2)", "title": "click me"}]))
        shown = b.get("/feed").text
        assert "&lt;script&gt;alert(1)&lt;/script&gt; enrollment is open" in shown and "<script>alert(1)" not in shown
        assert 'href="https://example.com/enroll"' in shown and "urgent" in shown
        assert 'href="javascript:' not in shown
        assert "enrollment is open" in b.get("/feed", params={"agent": "watch"}).text
        assert "enrollment is open" not in b.get("/feed", params={"agent": "grocery"}).text


def test_runs_name_their_conversation_and_the_run_they_belong_to(app: object) -> None:
    """GET /v1/invocations: Sidekick's runs carry the chat they were made in; a call made by a
    run names that run as its root, even when the list is filtered so the run itself is not in it."""
    admin = {"Authorization": f"Bearer {admin_token(app)}"}
    with browser(app) as b:
        # A user of its own, signed in with a password: independent of the other tests' history.
        assert b.post("/v1/users", json={"name": "erin"}, headers=admin).status_code == 201
        assert b.put("/v1/users/erin/password", json={"password": "erin's runs"}, headers=admin).status_code == 200
        signed = b.post("/login", data={"name": "erin", "password": "erin's runs", "csrf": csrf_of(b.get("/login").text)})
        assert signed.status_code == 303
        mine = {"X-CSRF-Token": csrf_of(b.get("/activity").text)}
        first = b.post("/v1/chat", json={"message": "add chervil to my grocery list", "stream": False}, headers=mine)
        conversation = first.json()["conversation_id"]
        b.post("/v1/chat", json={"message": "add sorrel to my grocery list", "conversation_id": conversation,
                                 "stream": False}, headers=mine).raise_for_status()
        b.post("/v1/chat", json={"message": "add dill to my grocery list", "stream": False}, headers=mine).raise_for_status()
        planned = b.post("/v1/agents/recipes/functions/plan_dinner", json={"args": {"day": "2031-05-05"}}, headers=mine)
        assert planned.status_code == 200, planned.text
        runs = b.get("/v1/invocations").json()
        plan = next(r for r in runs if r["function"] == "plan_dinner")
        call = next(r for r in runs if r["parent_id"] == plan["id"])
        assert plan["root_id"] == plan["id"] and call["root_id"] == plan["id"]
        assert plan["conversation"] is None and call["conversation"] is None  # called directly, not in a chat
        chatted = [r for r in runs if r["caller"] == "sidekick"]
        assert [r["args"]["items"] for r in chatted] == [["dill"], ["sorrel"], ["chervil"]]
        assert chatted[0]["conversation"]["id"] != conversation
        assert all(r["conversation"] == {"id": conversation, "title": "add chervil to my grocery list"} for r in chatted[1:])
        only_calls = b.get("/v1/invocations", params={"agent": "grocery"}).json()
        assert next(r for r in only_calls if r["id"] == call["id"])["root_id"] == plan["id"]
        # The page: one heading for the conversation though another chat came between; the call in words.
        page = b.get("/activity").text
        assert page.count(f'data-conversation="{conversation}"') == 1
        assert page.index("Grocery added sorrel to your grocery list.") < page.index("Grocery added chervil to your grocery list.")
        assert "asked grocery to add items" not in page
        filtered = b.get("/activity", params={"agent": "grocery"}).text
        assert f'href="/activity/{plan["id"]}">an earlier run</a>' in filtered
