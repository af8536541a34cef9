"""`GET /v1/doctor`: what this installation runs on, and which sandboxes work here and why not."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from dreamer.kernel.api.deps import AdminDep, KernelDep
from dreamer.kernel.api.routes.system import VERSION
from dreamer.kernel.sandbox import seccomp
from dreamer.kernel.sandbox.select import available_backends

router = APIRouter(tags=["system"])


@router.get("/v1/doctor")
async def doctor(k: KernelDep, _: AdminDep) -> dict[str, Any]:
    """Probes every sandbox backend for real (a trivial interpreter started in each).

    For the administrator only: each call starts a process in every backend,
    which is not something every user should be able to make the kernel do.
    """
    active = k.pool.sandbox
    backends = await available_backends(k.settings.limits, active=active)
    return {
        "sandbox": {"active": active.name, "backends": backends, "seccomp": seccomp.status()},
        "store": {"backend": k.store.backend, "url": k.store.safe_url},
        # Which model provider is active (never the key: only where it is read from).
        "llm": k.llm.describe() if k.llm is not None else {"provider": "offline", "available": False},
        "version": VERSION,
    }
