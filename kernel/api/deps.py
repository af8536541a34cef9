"""Request dependencies: the kernel, and who is asking."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from dreamer.kernel.core import Kernel
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.users.revocation import Credential
from dreamer.kernel.users.accounts import KnownUser, bearer_user, get_user, hash_token
from dreamer.kernel.users.sessions import SignedIn, find_session

SESSION_COOKIE = "dreamer_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def kernel(request: Request) -> Kernel:
    k: Kernel = request.app.state.kernel
    return k


async def principal(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    x_dreamer_user: Annotated[str | None, Header()] = None,
) -> Principal:
    k: Kernel = request.app.state.kernel
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        signed_in = browser_session(request)
        if signed_in is None:
            raise DreamerError("unauthorized", "no API token; send `Authorization: Bearer <token>` (the CLI reads it from $DREAMER_HOME/credentials)")
        # A cookie rides along on any request the browser makes, including one a hostile
        # page triggers; only this session's own pages know the CSRF token.
        if request.method not in SAFE_METHODS and not signed_in.csrf_ok(request.headers.get(CSRF_HEADER)):
            raise DreamerError("csrf_failed", "the request lacks this session's CSRF token; reload the page and try again")
        user = KnownUser(signed_in.user_id, signed_in.user_name, signed_in.timezone, signed_in.is_admin)
        request.state.credential = ("session", signed_in.session_id)
    else:
        user = bearer_user(k.tokens, k.store, authorization)
        request.state.credential = ("token", hash_token(token.strip()))
    if x_dreamer_user and x_dreamer_user != user.name:
        if not user.is_admin:
            raise DreamerError("forbidden", "only an administrator may act for another user")
        with k.store.session() as s:
            other = get_user(s, x_dreamer_user)
            return Principal(other.id, other.name, other.timezone, via=user.name)
    return Principal(user.id, user.name, user.timezone)


def browser_session(request: Request) -> SignedIn | None:
    """The web app session the request's cookie names, looked up once per request."""
    if not hasattr(request.state, "web_session"):
        secret = request.cookies.get(SESSION_COOKIE)
        found = None
        if secret:
            with request.app.state.kernel.store.session() as s:
                found = find_session(s, secret)
        request.state.web_session = found
    signed_in: SignedIn | None = request.state.web_session
    return signed_in


async def admin(who: Annotated[Principal, Depends(principal)], request: Request) -> Principal:
    k: Kernel = request.app.state.kernel
    from dreamer.kernel.store.models import User

    with k.store.session() as s:
        acting = s.get(User, who.user_id)
        if who.via is None and (acting is None or not acting.is_admin):
            raise DreamerError("forbidden", "this needs the installation's administrator")
    return who


def credential_of(request: Request) -> Credential | None:
    """The token or browser session the request came with (set by `principal`)."""
    return getattr(request.state, "credential", None)


KernelDep = Annotated[Kernel, Depends(kernel)]
PrincipalDep = Annotated[Principal, Depends(principal)]
AdminDep = Annotated[Principal, Depends(admin)]
