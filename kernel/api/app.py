"""The kernel's FastAPI application: /v1 API, /healthz, OpenAPI at /openapi.json."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp

from dreamer.contracts.http import install_handlers
from dreamer.kernel.api.lean_call import CallFirst, lean_call_route
from dreamer.kernel.api.limits import BodyLimit
from dreamer.kernel.api.placement import PlaceUsers
from dreamer.kernel.api.routes import (
    agents, audit, chat, data, doctor, feed, gallery, hooks, invocations, nodes, permissions, sessions, system, tokens, tools, traces,
    triggers,
)
from dreamer.kernel.api.routes import feedback as feedback_routes
from dreamer.kernel.api.routes import learned as learned_routes
from dreamer.kernel.api.routes import memory as memory_routes
from dreamer.kernel.config import Settings, load_settings
from dreamer.kernel.core import Kernel
from dreamer.kernel.ports import AppMount
from dreamer.kernel.tools.gateway import Gateway


class KernelApp(FastAPI):
    """FastAPI with the call in front of its middleware stack (kernel/api/lean_call.py)."""

    call_first_bytes: int | None = None  # the JSON body limit; None: every request takes the whole stack

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        if self.call_first_bytes is None:
            return stack
        return CallFirst(stack, self.exception_handlers, json_bytes=self.call_first_bytes)


def create_app(
    settings: Settings | None = None,
    *,
    build: Callable[[Settings], Kernel] = Kernel.build,
    mount: AppMount | None = None,
) -> FastAPI:
    """The API over a kernel made by `build` (host/build.py passes the one with Sidekick,
    the gallery client and the starters), with `mount`'s pages (the web app) added last."""
    settings = settings or load_settings()

    gateway = Gateway(lambda: app.state.kernel)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        kernel = build(settings)
        await kernel.start()
        app.state.kernel = kernel
        # What start built (modules, routes, caches) lives as long as the kernel. Moved out of the
        # collector's view, a full collection no longer walks it: those walks hold the GIL for a
        # quarter to most of a second in a large kernel, every user's requests waiting meanwhile.
        gc.collect()
        gc.freeze()
        try:
            async with gateway.running():
                yield
        finally:
            await kernel.stop()

    app = KernelApp(
        title="dreamer kernel",
        version=system.VERSION,
        description="The HTTP API of a dreamer installation: agents, permissions, invocations, audit.",
        lifespan=lifespan,
    )
    install_handlers(app)
    json_bytes = settings.limits.max_message_bytes // 2
    app.add_middleware(BodyLimit, json_bytes=json_bytes, upload_bytes=settings.max_bundle_bytes)
    if settings.node:
        # A cluster node serves each user under a lease or forwards to the node that holds it;
        # a single kernel never builds this (kernel/cluster/placement.py).
        app.add_middleware(PlaceUsers)
    else:
        # A single kernel answers a call in one layer in front of the stack; a node does not,
        # since its placement layer must see every call first.
        app.call_first_bytes = json_bytes
    for module in (system, agents, permissions, invocations, audit, doctor, chat, data, sessions, tokens, feed, triggers, hooks, gallery,
                   tools, traces, nodes):
        app.include_router(module.router)
    app.include_router(memory_routes.router)
    app.include_router(feedback_routes.router)
    app.include_router(learned_routes.router)
    # The call first: a plain route, matched before any other (kernel/api/lean_call.py).
    app.router.routes.insert(0, lean_call_route())
    # The MCP gateway (kernel/tools/gateway.py): streamable HTTP, Bearer token of the user.
    app.router.routes.append(Route("/mcp", endpoint=gateway, methods=["GET", "POST", "DELETE"]))
    if mount is not None:
        mount(app)
    return app
