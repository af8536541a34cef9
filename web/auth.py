"""Who is signed in to the web app: a session cookie, a password sign-in, and the
automatic sign-in of a lone local user on localhost.

The automatic sign-in (DREAMER_LOCAL_SIGNIN) is "owner" by default: only a browser
run by the OS account that started the kernel gets it, told by the socket table
(web/localpeer.py), so another account on a shared machine is sent to /login.
"off" never signs anyone in automatically; "any" is the old any-local-process rule.

The session itself lives in the kernel store (kernel/users/sessions.py); the API's
`principal` dependency accepts the same cookie, so the pages' scripts call /v1 like the CLI.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qs

from fastapi import Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import func, select

from dreamer.kernel.api.deps import SESSION_COOKIE, browser_session
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.store.models import User
from dreamer.kernel.users.passwords import check_password
from dreamer.kernel.users.signin_guard import SignInGuard
from dreamer.kernel.users.sessions import LIFETIME, SignedIn, find_session, open_session, revoke_session
from dreamer.web.localpeer import peer_uid

LOGIN_COOKIE = "dreamer_login"  # the sign-in form's own CSRF token (double submit of an HMAC-bound token)
LOOPBACK_ADDRESSES = frozenset({"127.0.0.1", "::1"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
MAX_FORM_BYTES = 16_384


class NeedsSignIn(Exception):
    """Raised by a page that nobody is signed in to; answered with a redirect to /login."""

    def __init__(self, response: Response) -> None:
        self.response = response


def principal_of(signed_in: SignedIn) -> Principal:
    return Principal(signed_in.user_id, signed_in.user_name, signed_in.timezone)


def from_localhost(request: Request) -> bool:
    """The request comes from this machine and names it (a DNS-rebinding page names another host)."""
    header = (request.headers.get("host") or "").lower()
    host = header.split("]")[0] + "]" if header.startswith("[") else header.rsplit(":", 1)[0]
    return bool(request.client) and request.client.host in LOOPBACK_ADDRESSES and host in LOOPBACK_HOSTS


def local_signin_allowed(request: Request) -> bool:
    """Whether this localhost request may be signed in without a password."""
    mode = request.app.state.kernel.settings.local_signin
    if mode == "any":
        return True
    if mode != "owner" or request.client is None:
        return False
    server = request.scope.get("server")
    if not server or server[1] is None:
        return False
    return peer_uid((request.client.host, request.client.port), (server[0], server[1])) == os.geteuid()


def lone_user_without_password(request: Request) -> User | None:
    with request.app.state.kernel.store.session() as s:
        if s.scalar(select(func.count()).select_from(User)) != 1:
            return None
        user = s.scalar(select(User))
        if user is None or user.password_hash:
            return None
        s.expunge(user)
        return user


def set_session_cookie(response: Response, request: Request, secret: str) -> None:
    response.set_cookie(
        SESSION_COOKIE, secret, max_age=int(LIFETIME.total_seconds()), httponly=True, samesite="strict",
        secure=request.url.scheme == "https", path="/",
    )


def page_session(request: Request) -> SignedIn:
    """The signed-in user of a page request; signs a lone local user in, else sends to /login."""
    found = browser_session(request)
    if found is not None:
        return found
    user = lone_user_without_password(request) if from_localhost(request) and local_signin_allowed(request) else None
    if user is None:
        raise NeedsSignIn(RedirectResponse(f"/login?next={request.url.path}", status_code=303))
    with request.app.state.kernel.store.session() as s:
        secret, found = open_session(s, s.get(User, user.id), "localhost", request.headers.get("user-agent", ""))
        audit(s, user_id=user.id, actor=f"user:{user.name}", action="sessions.open", target=found.session_id,
              decision="allow", detail={"how": "localhost"})
    request.state.web_session = found
    request.state.new_session_secret = secret
    return found


async def read_form(request: Request) -> dict[str, str]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return {}
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=20)
    return {key: values[0] for key, values in fields.items()}


def guard(request: Request) -> SignInGuard:
    """The one sign-in guard of this app (kernel/users/signin_guard.py)."""
    found = getattr(request.app.state, "signin_guard", None)
    if found is None:
        kernel = getattr(request.app.state, "kernel", None)
        cluster = getattr(kernel, "cluster", None)
        # On a node of several, every node signs the form with the same key: the form may be
        # fetched from one node and posted to another.
        found = SignInGuard(key=cluster.shared_key("signin-csrf")) if cluster is not None else SignInGuard()
        request.app.state.signin_guard = found
    return found


def login_token(request: Request) -> str:
    """The sign-in form's token: the browser's own if this kernel issued it, else a fresh one
    (a value an attacker planted in the cookie is never taken up)."""
    agent = request.headers.get("user-agent", "")
    held = request.cookies.get(LOGIN_COOKIE) or ""
    return held if guard(request).issued_here(held, agent) else guard(request).new_token(agent)


def login_cookie(response: Response, request: Request, token: str) -> None:
    response.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https",
                        path="/login", max_age=3600)


async def sign_in(request: Request) -> tuple[SignedIn | None, str | None, str]:
    """Check a posted sign-in form. Returns (session, error, cookie secret); raises
    SignInRefused while this client or account must wait."""
    form = await read_form(request)
    checks = guard(request)
    agent = request.headers.get("user-agent", "")
    if not checks.token_ok(request.cookies.get(LOGIN_COOKIE) or "", form.get("csrf", ""), agent):
        return None, "The sign-in form expired. Please try again.", ""
    name = form.get("name", "").strip().lower()[:64]
    client = request.client.host if request.client else "?"
    checks.admit(client, name)
    store = request.app.state.kernel.store
    with store.session() as s:
        user = s.scalar(select(User).where(User.name == name))
        if user is not None:
            s.expunge(user)
    password = form.get("password", "")
    # argon2 in a thread, a few at a time: a flood of attempts never holds the event loop.
    ok = await checks.check(lambda: check_password(user, password))
    if not ok:
        audit_it, locked = checks.failed(client, name)
        if audit_it or locked:
            with store.session() as s:
                # The actor names an account that exists, never whatever was typed.
                audit(s, user_id=user.id if user else None, actor=f"web:{user.name if user else '?'}",
                      action="sessions.locked" if locked else "sessions.open", target="web", decision="deny",
                      detail={"how": "password", **({"client": client[:64]} if locked else {})})
        return None, "That name and password do not match.", ""
    checks.succeeded(client, name)
    with store.session() as s:
        secret, found = open_session(s, s.get(User, user.id), "password", agent)
        audit(s, user_id=user.id, actor=f"user:{user.name}", action="sessions.open", target=found.session_id,
              decision="allow", detail={"how": "password"})
    return found, None, secret


async def sign_out(request: Request) -> bool:
    """End the session a posted sign-out form names; refused without its CSRF token."""
    form = await read_form(request)
    secret = request.cookies.get(SESSION_COOKIE)
    with request.app.state.kernel.store.session() as s:
        found = find_session(s, secret)
        if found is None:
            return True
        if not found.csrf_ok(form.get("csrf")):
            return False
        revoke_session(s, found.user_id, found.session_id)
    request.app.state.kernel.revocations.bump()
    return True
