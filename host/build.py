"""Build a whole installation: the kernel, Sidekick, the gallery client, the starters, the web app."""

from __future__ import annotations

import os

from fastapi import FastAPI

from dreamer.host.gallery_access import GalleryClientAccess
from dreamer.host.sidekick_parts import SidekickChat, SidekickTasks
from dreamer.host.starters import AgentStarters
from dreamer.kernel.api.app import create_app as create_kernel_app
from dreamer.kernel.config import Settings
from dreamer.kernel.core import Kernel
from dreamer.sidekick.chat.sidekick import Sidekick
from dreamer.web.mount import mount_web


def sidekick_warm() -> bool:
    """DREAMER_SIDEKICK_WARM (default on): Sidekick's first planning process starts with the kernel, so the
    first message is read at once. Off ("0", "false", "no", "off"), it starts with the first message: a
    kernel that never chats (a test's, a server for agents alone) saves its CPU, and that first message
    waits for it (a second or two)."""
    return os.environ.get("DREAMER_SIDEKICK_WARM", "1").strip().lower() not in ("0", "false", "no", "off")


def build_kernel(settings: Settings) -> Kernel:
    """The kernel with every part plugged in; start it with `await kernel.start()`."""
    kernel = Kernel.build(settings)
    kernel.use_starters(AgentStarters())
    kernel.gallery = GalleryClientAccess()
    sidekick = Sidekick(kernel.store, kernel.invoker, warm=sidekick_warm())
    kernel.chat = SidekickChat(sidekick)
    kernel.task_runner = SidekickTasks(sidekick)
    return kernel


def create_app(settings: Settings | None = None) -> FastAPI:
    """The HTTP API and the web app over a kernel from build_kernel (what `dreamer up` serves)."""
    return create_kernel_app(settings, build=build_kernel, mount=mount_web)
