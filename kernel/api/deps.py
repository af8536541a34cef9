"""Request dependencies: the kernel, and who is asking."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from dreamer.kernel.core import Kernel
from dreamer.kernel.errors import DreamerError
from dreamer.kernel.invocations.service import Principal
from dreamer.kernel.users.service import bearer_user, get_user


async def kernel(request: Request) -> Kernel:
    return request.app.state.kernel


async def principal(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    x_dreamer_user: Annotated[str | None, Header()] = None,
) -> Principal:
    k: Kernel = request.app.state.kernel
    user = bearer_user(k.tokens, k.store, authorization)
    if x_dreamer_user and x_dreamer_user != user.name:
        if not user.is_admin:
            raise DreamerError("forbidden", "only an administrator may act for another user")
        with k.store.session() as s:
            other = get_user(s, x_dreamer_user)
            return Principal(other.id, other.name, other.timezone, via=user.name)
    return Principal(user.id, user.name, user.timezone)


async def admin(who: Annotated[Principal, Depends(principal)], request: Request) -> Principal:
    k: Kernel = request.app.state.kernel
    from dreamer.kernel.store.models import User

    with k.store.session() as s:
        acting = s.get(User, who.user_id)
        if who.via is None and (acting is None or not acting.is_admin):
            raise DreamerError("forbidden", "this needs the installation's administrator")
    return who


KernelDep = Annotated[Kernel, Depends(kernel)]
PrincipalDep = Annotated[Principal, Depends(principal)]
AdminDep = Annotated[Principal, Depends(admin)]
