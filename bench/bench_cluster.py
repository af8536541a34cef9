"""Several kernels behind HAProxy: what forwarding and coordination cost, and how fast a kill heals.

Starts PostgreSQL's fresh database, three `dreamer up --node` kernels sharing one home and
HAProxy in front (tests/cluster/clusterproc.py, the launcher the cluster test uses), then:

0. the baseline: one kernel on PostgreSQL started without --node (none of kernel/cluster/);
1. warm direct calls (`clusterbot.double`) with concurrent clients, to the node holding the
   user's lease directly, to another node directly (every call forwarded to the holder,
   decision 0049) and to all three through HAProxy round robin (two calls in three
   forwarded): calls/s, p50, p99, and the ratios. On a two-core machine three nodes share
   the same cores, so the ratios measure the overhead of the hop and the cluster's
   coordination, not added capacity;
2. recovery: a background run running on the user's node, that node SIGKILLed, the time
   until the run has succeeded on another node (lease expiry, take-over, re-claim, re-run),
   the time until a call of that user is answered again, and the refused requests meanwhile
   (503 node_unavailable until the dead node's lease ran out).

    .venv/bin/python bench/bench_cluster.py            # about three minutes
    .venv/bin/python bench/bench_cluster.py --json --total 2000 --clients 8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "cluster"))
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))

from cluster_agent import CODE, TRIGGERS  # noqa: E402
from clusterproc import Cluster, running_cluster, wait_until  # noqa: E402
from clusterproc import fresh_database  # noqa: E402
from kernelproc import start_kernel, write_bundle  # noqa: E402


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


async def throughput(url: str, token: str, clients: int, total: int) -> dict[str, float]:
    latencies: list[float] = []
    errors = 0
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as c:
        for n in range(20):  # warm every node's worker pool
            await c.post("/v1/agents/clusterbot/functions/double", json={"args": {"n": n}})
        left = total

        async def client() -> None:
            nonlocal left, errors
            while left > 0:
                left -= 1
                t = time.perf_counter()
                answer = await c.post("/v1/agents/clusterbot/functions/double", json={"args": {"n": left}})
                latencies.append(time.perf_counter() - t)
                if answer.status_code != 200:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    return {"calls_per_s": round(len(latencies) / elapsed, 1), "p50_ms": round(statistics.median(latencies) * 1000, 2),
            "p99_ms": round(pct(latencies, 99) * 1000, 2), "n": len(latencies), "errors": errors}


def recovery(cluster: Cluster, token: str) -> dict[str, Any]:
    """Kill the node running a background run; time until another node finished it."""
    victim = _holder(cluster, "bench")  # the user's runs run where the user is placed
    with cluster.client(token, url=victim.url) as c:
        run_id = c.post("/v1/agents/clusterbot/functions/slow", json={"args": {"key": "recovery", "seconds": 3}}).json()[
            "invocation_id"]
    from sqlalchemy import create_engine, text

    engine = create_engine(cluster.database_url.replace("postgresql://", "postgresql+psycopg://", 1))

    def row() -> tuple[str, str | None]:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT status, node FROM invocations WHERE id = :id"), {"id": run_id}).one()
            return str(found[0]), found[1]

    status, node = wait_until("the run to start", lambda: row() if row()[0] == "running" else None, 60)  # type: ignore[misc]
    errors = 0
    killed = time.perf_counter()
    if node == victim.name:
        victim.kill()
    else:  # the run was claimed elsewhere: kill that node instead
        victim = next(n for n in cluster.nodes if n.name == node)
        victim.kill()
    with httpx.Client(base_url=cluster.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        first_ok = None
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline:
            answer = c.post("/v1/agents/clusterbot/functions/double", json={"args": {"n": 1}})
            if answer.status_code == 200:
                first_ok = first_ok or time.perf_counter()
            else:
                errors += 1
                time.sleep(0.1)  # a 503 node_unavailable until the dead holder's lease ran out
            if first_ok and time.perf_counter() - first_ok > 1:
                break
    wait_until("the run to succeed elsewhere", lambda: row()[0] == "succeeded", 180, every=0.05)
    healed = time.perf_counter()
    engine.dispose()
    return {"killed": victim.name, "run_recovered_s": round(healed - killed, 2), "lease_s": cluster.lease_s,
            "client_errors_after_kill": errors, "first_ok_after_kill_s": round((first_ok or healed) - killed, 3)}


def _holder(cluster: Cluster, user: str) -> Any:
    """The node holding the user's lease (the install's first request took it)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(cluster.database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            name = conn.execute(text("SELECT l.node FROM user_leases l JOIN users u ON u.id = l.user_id "
                                     "WHERE u.name = :u"), {"u": user}).scalar_one()
    finally:
        engine.dispose()
    return next(n for n in cluster.nodes if n.name == name)


def lone_kernel(root: Path, clients: int, total: int) -> dict[str, float]:
    """The baseline: one kernel on PostgreSQL without --node (no kernel/cluster/ at all)."""
    with fresh_database() as url:
        kernel = start_kernel(root / "lone-home", {"DREAMER_DATABASE_URL": url}, wait_s=300)
        try:
            with kernel.client() as c:
                created = c.post("/v1/users", json={"name": "bench"}).json()
            token = str(created["token"])
            folder = write_bundle(root / "lone-bundle", "clusterbot", CODE, required=["schedule"])
            with (folder / "agent.yaml").open("a") as f:
                f.write(TRIGGERS)
            done = kernel.cli("install", str(folder), "--yes", token=token)
            assert done.returncode == 0, done.stderr
            return asyncio.run(throughput(kernel.url, token, clients, total))
        finally:
            kernel.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--total", type=int, default=1500)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--lease", type=float, default=6.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-baseline", action="store_true", help="skip the lone kernel without --node")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    lone = None if args.no_baseline else lone_kernel(root, args.clients, args.total)
    with running_cluster(root, count=3, lease_s=args.lease) as cluster:
        created = cluster.cli_json("users", "add", "bench")
        token = str(created["token"])  # type: ignore[index]
        folder = write_bundle(root / "bundle", "clusterbot", CODE, required=["schedule"])
        with (folder / "agent.yaml").open("a") as f:
            f.write(TRIGGERS)
        done = cluster.cli("install", str(folder), "--yes", token=token)
        assert done.returncode == 0, done.stderr
        holder = _holder(cluster, "bench")
        other = next(n for n in cluster.nodes if n.name != holder.name)
        one = asyncio.run(throughput(holder.url, token, args.clients, args.total))
        forwarded = asyncio.run(throughput(other.url, token, args.clients, args.total))
        three = asyncio.run(throughput(cluster.url, token, args.clients, args.total))
        result = {
            "one_node_direct": one, "forwarded_every_call": forwarded, "three_nodes_haproxy": three,
            "ratio_calls_per_s": round(three["calls_per_s"] / one["calls_per_s"], 2),
            "ratio_p50": round(three["p50_ms"] / one["p50_ms"], 2),
            "forwarded_ratio_calls_per_s": round(forwarded["calls_per_s"] / one["calls_per_s"], 2),
            "forwarded_ratio_p50": round(forwarded["p50_ms"] / one["p50_ms"], 2),
            "recovery": recovery(cluster, token),
        }
    if lone is not None:
        result["lone_kernel_no_node"] = lone
        result["ratio_one_node_vs_lone"] = round(one["calls_per_s"] / lone["calls_per_s"], 2)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name in ("lone_kernel_no_node", "one_node_direct", "forwarded_every_call", "three_nodes_haproxy"):
        if name not in result:
            continue
        r = result[name]
        print(f"{name:22} {r['calls_per_s']:8.1f} calls/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:6.2f} ms  "
              f"({r['n']} calls, {r['errors']} errors)")
    print(f"three/one: calls/s x{result['ratio_calls_per_s']}, p50 x{result['ratio_p50']}")
    print(f"forwarded/one: calls/s x{result['forwarded_ratio_calls_per_s']}, p50 x{result['forwarded_ratio_p50']}")
    print(f"recovery: {result['recovery']}")


if __name__ == "__main__":
    main()
