"""GET /v1/nodes: the kernels serving this installation (kernel/cluster/), for the administrator."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.api.deps import AdminDep, KernelDep
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.cluster import nodes

router = APIRouter(prefix="/v1", tags=["system"])


@router.get("/nodes")
def list_nodes(k: KernelDep, who: AdminDep) -> dict[str, Any]:
    """Every node with its health (`alive`, `lost`: its heartbeat is older than the lease,
    `stopped`), whether it leads (runs cron, takes over lost nodes' work), and the users
    it ran work for in the last ten minutes. A single-node kernel answers `clustered: false`."""
    if k.cluster is None:
        return {"clustered": False, "node": None, "lease_s": None, "nodes": []}
    return {"clustered": True, "node": k.cluster.me.name, "lease_s": k.cluster.me.lease_s, "nodes": k.cluster.listing()}


@router.post("/nodes/{name}/drain")
def drain_node(name: str, k: KernelDep, who: AdminDep) -> dict[str, Any]:
    """Drain a node: within one heartbeat it answers its health check with 503 (the load
    balancer stops sending it requests) and claims no new background runs; what it runs
    finishes. Stop it afterwards; its users are served by the others."""
    if k.cluster is None:
        raise DreamerError("conflict", "this kernel runs alone (no --node); there is no node to drain")
    with k.store.session() as s:
        nodes.drain(s, name)
        audit(s, user_id=who.user_id, actor=who.actor, action="nodes.drain", target=name[:64], decision="allow")
    return {"node": name, "draining": True}
