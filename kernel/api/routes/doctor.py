"""`GET /v1/doctor`: what this installation runs on, and which sandboxes work here and why not."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from dreamer.kernel.api.deps import AdminDep, KernelDep
from dreamer.kernel.api.routes.system import VERSION
from dreamer.kernel.sandbox import seccomp
from dreamer.kernel.sandbox.select import available_backends
from dreamer.kernel.store.models import User
from dreamer.kernel.users.quotas import account_usage, usage_view

router = APIRouter(tags=["system"])


@router.get("/v1/doctor")
async def doctor(k: KernelDep, _: AdminDep, model: bool = True) -> dict[str, Any]:
    """Probes every sandbox backend for real (a trivial interpreter started in each),
    and, unless `model=false`, each configured model (a plain request and a tool call).

    For the administrator only: each call starts a process in every backend,
    which is not something every user should be able to make the kernel do.
    """
    active = k.pool.sandbox
    backends = await available_backends(k.settings.limits, active=active)
    llm: dict[str, Any] = k.llm.describe() if k.llm is not None else {"provider": "offline", "available": False}
    if model and k.llm is not None and llm.get("available"):
        llm["probe"] = await k.llm.probe()
    return {
        "sandbox": {"active": active.name, "backends": backends, "seccomp": seccomp.status()},
        "store": {"backend": k.store.backend, "url": k.store.safe_url},
        # Which model provider is active (never the key: only where it is read from).
        "llm": llm,
        "version": VERSION,
        "quotas": await _quotas(k),
    }


async def _quotas(k: KernelDep) -> dict[str, Any]:
    """Each user's quotas (DREAMER_QUOTA_*), the installation's totals, and what each user holds."""
    with k.store.session() as s:
        users = [(u.id, u.name) for u in s.query(User).order_by(User.name)]
    return {
        "per_user": usage_view(k.settings.quotas),
        "workers_total": k.settings.workers_total,
        "background_total": k.settings.background_total,
        "workers_running": k.pool.use().workers,
        "users": [(await account_usage(k.settings, k.store, k.pool, uid, name))["used"] | {"user": name}
                  for uid, name in users],
    }
