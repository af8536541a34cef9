"""User placement across three kernel nodes (issue 22, part 3): a user's warm workers and
agent files are used by one node at a time, under a lease in PostgreSQL with a fencing token.

In order, on one cluster: a request for a user through a node that does not hold the user
is served by the node that does (the invocation row names the node that ran it); a
forwarded request is accepted only with the cluster's signature and the owner's current
fencing token; an owner whose lease ran out and was taken over stops the user's workers at
its next renewal; draining the owner hands the user over (its workers stop, the lease is
released, the next node takes it with a higher token); SIGKILLing the new owner lets
another node take the user once the lease ran out, and a request carrying the dead
owner's token is refused. No wall-clock assertion: every wait is on a condition.
"""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from clusterproc import Cluster, Node, running_cluster, wait_until
from cluster_agent import CODE

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e"))
from kernelproc import write_bundle

pytestmark = [pytest.mark.timeout(600)]

LEASE_S = 6.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("placement")
    try:
        context = running_cluster(root / "cluster", count=3, lease_s=LEASE_S, haproxy=False)
        with context as running:
            yield running
    except LookupError as exc:  # pragma: no cover - only without PostgreSQL
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def alice(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> str:
    """alice, her agent installed through n1: her first request there gives n1 her lease."""
    created = cluster.cli_json("users", "add", "alice", url=cluster.nodes[0].url)
    token = str(created["token"])  # type: ignore[index]
    folder = write_bundle(tmp_path_factory.mktemp("bundle"), "clusterbot", CODE, required=[])
    done = cluster.cli("install", str(folder), "--yes", token=token, url=cluster.nodes[0].url)
    assert done.returncode == 0, done.stderr + done.stdout
    return token


def _sql(cluster: Cluster, query: str, **params: Any) -> list[Any]:
    engine = create_engine(cluster.database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.begin() as conn:
            result = conn.execute(text(query), params)
            return list(result) if result.returns_rows else []
    finally:
        engine.dispose()


def _lease(cluster: Cluster) -> tuple[str, int, bool]:
    """alice's lease: (node, fence, unexpired)."""
    row = _sql(cluster, "SELECT l.node, l.fence, l.expires_at > now() FROM user_leases l JOIN users u "
                        "ON u.id = l.user_id WHERE u.name = 'alice'")
    assert row, "alice has no lease row"
    return str(row[0][0]), int(row[0][1]), bool(row[0][2])


def _call(node: Node, token: str, n: int, **headers: str) -> httpx.Response:
    with httpx.Client(base_url=node.url, timeout=60, headers={"Authorization": f"Bearer {token}", **headers}) as c:
        return c.post("/v1/agents/clusterbot/functions/double", json={"args": {"n": n}})


def _ran_on(cluster: Cluster, answer: httpx.Response) -> str:
    assert answer.status_code == 200, answer.text
    found = _sql(cluster, "SELECT node FROM invocations WHERE id = :id", id=answer.json()["invocation_id"])
    return str(found[0][0])


def _workers_of(node: Node, user: str) -> list[int]:
    """Sandboxes of `user` the node runs now: its descendant processes whose command lines name
    the user's folder (sandboxes start sessions of their own, so not by process group)."""
    assert node.process is not None
    listed = subprocess.run(["ps", "-ww", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    parents: dict[int, int] = {}
    args: dict[int, str] = {}
    for line in listed.splitlines():
        pid, ppid, *rest = line.split(None, 2)
        parents[int(pid)], args[int(pid)] = int(ppid), rest[0] if rest else ""

    def under(pid: int) -> bool:
        while pid > 1:
            if pid == node.process.pid:  # type: ignore[union-attr]
                return True
            pid = parents.get(pid, 1)
        return False

    return [pid for pid, line in args.items() if f"/users/{user}/" in line and under(pid)]


def _signed(cluster: Cluster, path: str, user_id: int, fence: int, key: bytes | None = None) -> dict[str, str]:
    """The headers a node adds to a forwarded request (kernel/cluster/forward.py), made here from
    the cluster's key in the database: what a stale node still holding an old token would send."""
    if key is None:
        key = bytes.fromhex(_sql(cluster, "SELECT value FROM cluster_secrets WHERE name = 'placement-forward'")[0][0])
    at = f"{time.time():.3f}"
    message = "\n".join(("POST", path, str(user_id), str(fence), "n9", at)).encode()
    return {"x-dreamer-forwarded-from": "n9", "x-dreamer-placed-user": str(user_id), "x-dreamer-fence": str(fence),
            "x-dreamer-forwarded-at": at, "x-dreamer-forward-sig": hmac.new(key, message, hashlib.sha256).hexdigest()}


PATH = "/v1/agents/clusterbot/functions/double"


def _alice_id(cluster: Cluster) -> int:
    return int(_sql(cluster, "SELECT id FROM users WHERE name = 'alice'")[0][0])


def test_a_request_through_another_node_is_served_by_the_owner(cluster: Cluster, alice: str) -> None:
    n1, n2, n3 = cluster.nodes
    assert _ran_on(cluster, _call(n1, alice, 1)) == "n1"
    owner, fence, live = _lease(cluster)
    assert (owner, live) == ("n1", True)
    for node in (n2, n3, n2):
        answer = _call(node, alice, 5)
        assert answer.json()["result"] == 10
        assert _ran_on(cluster, answer) == "n1"  # forwarded: n1 ran it, not the node it reached
    assert _lease(cluster)[:2] == ("n1", fence)  # forwarding never moves the lease
    listed = {n["name"]: n for n in cluster.cli_json("nodes", url=n3.url)["nodes"]}  # type: ignore[index]
    assert "alice" in listed["n1"]["holds"] and "alice" not in listed["n2"]["holds"] + listed["n3"]["holds"]
    assert _workers_of(n1, "alice") and not _workers_of(n2, "alice") and not _workers_of(n3, "alice")
    # Another user's credential still reaches only their own work, forwarded or not.
    with httpx.Client(base_url=n2.url, headers={"Authorization": f"Bearer {alice}"}, timeout=30) as c:
        assert c.get("/v1/agents", headers={"X-Dreamer-User": "me"}).status_code == 403


def test_a_forwarded_request_needs_the_signature_and_the_owners_current_fence(cluster: Cluster, alice: str) -> None:
    n1 = cluster.nodes[0]
    owner, fence, _ = _lease(cluster)
    assert owner == "n1"
    uid = _alice_id(cluster)
    good = _call(n1, alice, 2, **_signed(cluster, PATH, uid, fence))
    assert good.status_code == 200 and _ran_on(cluster, good) == "n1"
    wrong_key = _call(n1, alice, 2, **_signed(cluster, PATH, uid, fence, key=b"x" * 32))
    assert wrong_key.status_code == 403 and "signature" in wrong_key.json()["error"]["message"]
    for stale in (fence - 1, fence + 1):  # a token n1 does not hold now
        refused = _call(n1, alice, 2, **_signed(cluster, PATH, uid, stale))
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "stale_lease", refused.text
    other_user = _call(n1, alice, 2, **_signed(cluster, PATH, uid + 1000, fence))
    assert other_user.status_code == 403


def test_an_owner_whose_lease_was_taken_over_stops_the_users_workers(cluster: Cluster, alice: str) -> None:
    n1, _, n3 = cluster.nodes
    owner, fence, _ = _lease(cluster)
    assert owner == "n1" and _workers_of(n1, "alice")
    # A call of hers busy in a worker on n1 the whole time: that worker is stopped too.
    cut: list[httpx.Response] = []

    def busy() -> None:
        with httpx.Client(base_url=n1.url, headers={"Authorization": f"Bearer {alice}"}, timeout=120) as c:
            cut.append(c.post("/v1/agents/clusterbot/functions/block", json={"args": {"key": "steal"}}))

    caller = threading.Thread(target=busy)
    caller.start()
    wait_until("the blocking call to run on n1", lambda: _sql(
        cluster, "SELECT node FROM invocations WHERE function = 'block' AND status = 'running'") == [("n1",)], 60)
    # As if n1 had been cut off past its lease: the lease ran out and n3 takes alice over.
    _sql(cluster, "UPDATE user_leases SET expires_at = now() - interval '1 second' WHERE user_id = :u",
         u=_alice_id(cluster))
    answer = _call(n3, alice, 9)
    assert answer.json()["result"] == 18 and _ran_on(cluster, answer) == "n3"
    assert _lease(cluster)[:2] == ("n3", fence + 1)
    # n1's next renewal does not get alice back: it stops her workers, and forwards to n3 from then on.
    wait_until("n1 to stop alice's workers", lambda: not _workers_of(n1, "alice"), 60)
    caller.join(120)
    assert cut and cut[0].status_code >= 500, cut  # the busy call was cut with its worker, not finished
    (cluster.home / "users" / "alice" / "agents" / "clusterbot" / "data" / "go-steal").write_text("go")
    assert _workers_of(n3, "alice")
    assert _ran_on(cluster, _call(n1, alice, 10)) == "n3"


def _node(cluster: Cluster, name: str) -> Node:
    return next(n for n in cluster.nodes if n.name == name)


def test_draining_the_owner_hands_its_users_to_another_node(cluster: Cluster, alice: str) -> None:
    owner_name, fence, _ = _lease(cluster)
    owner = _node(cluster, owner_name)
    taker = next(n for n in cluster.nodes if n is not owner and n.alive())
    assert _workers_of(owner, "alice")
    # A background run of hers working on the owner until told: the drain waits for it.
    data = cluster.home / "users" / "alice" / "agents" / "clusterbot" / "data"
    with httpx.Client(base_url=owner.url, headers={"Authorization": f"Bearer {alice}"}, timeout=30) as c:
        run_id = c.post("/v1/agents/clusterbot/functions/hold", json={"args": {"key": "drain"}}).json()["invocation_id"]
    wait_until("the held run to run on the owner", lambda: _sql(
        cluster, "SELECT status, node FROM invocations WHERE id = :id", id=run_id) == [("running", owner.name)], 60)
    cluster.cli_json("nodes", "drain", owner.name, url=taker.url)

    def handing_over() -> bool:
        answer = _call(taker, alice, 1)  # forwarded to the owner, which is giving her up
        return answer.status_code == 503 and answer.json()["error"]["code"] == "node_unavailable"

    wait_until(f"{owner.name} to start handing alice over", handing_over, 60)
    assert _lease(cluster)[:2] == (owner.name, fence) and _lease(cluster)[2]  # still hers while the run runs
    (data / "go-drain").write_text("go")
    wait_until(f"{owner.name} to give alice's lease up", lambda: not _lease(cluster)[2], 120)
    assert not _workers_of(owner, "alice")  # her workers stopped before the lease was released
    # The run finished where it ran, in its first attempt: the drain did not interrupt it.
    assert _sql(cluster, "SELECT status, attempt, node FROM invocations WHERE id = :id", id=run_id) == [
        ("succeeded", 1, owner.name)]
    answer = _call(taker, alice, 3)
    assert answer.json()["result"] == 6 and _ran_on(cluster, answer) == taker.name
    now_owner, after, live = _lease(cluster)
    assert (now_owner, live) == (taker.name, True) and after > fence
    # The drained node now forwards her requests to the new owner.
    assert _ran_on(cluster, _call(owner, alice, 4)) == taker.name
    listed = {n["name"]: n for n in cluster.cli_json("nodes", url=taker.url)["nodes"]}  # type: ignore[index]
    assert listed[owner.name]["holds"] == [] and listed[owner.name]["health"] == "draining"


def test_killing_the_owner_moves_the_user_once_its_lease_ran_out(cluster: Cluster, alice: str) -> None:
    owner_name, fence, _ = _lease(cluster)
    owner = _node(cluster, owner_name)
    listed = {n["name"]: n["health"] for n in cluster.cli_json("nodes", url=owner.url)["nodes"]}  # type: ignore[index]
    survivor = next(n for n in cluster.nodes if n is not owner and listed[n.name] == "alive")
    owner.kill()
    killed = time.monotonic()
    statuses: list[int] = []

    def served() -> httpx.Response | None:
        answer = _call(survivor, alice, 7)
        statuses.append(answer.status_code)
        if answer.status_code == 503:  # the owner is gone and its lease is not over: ask again later
            assert answer.json()["error"]["code"] == "node_unavailable" and answer.headers["retry-after"]
            return None
        return answer

    answer = wait_until(f"{survivor.name} to serve alice after {owner.name} died", served, 120, every=0.3)
    took = time.monotonic() - killed
    assert isinstance(answer, httpx.Response) and answer.json()["result"] == 14
    assert _ran_on(cluster, answer) == survivor.name
    now_owner, after, live = _lease(cluster)
    assert (now_owner, live) == (survivor.name, True) and after == fence + 1
    assert set(statuses) <= {200, 503}
    print(f"alice served by {survivor.name} {took:.1f} s after {owner.name} was killed (lease {LEASE_S} s); "
          f"answers meanwhile: {statuses}")
    # The dead owner's token is stale now: a request still carrying it is refused by the new owner.
    refused = _call(survivor, alice, 8, **_signed(cluster, PATH, _alice_id(cluster), fence))
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "stale_lease"
