"""A second user cannot reach the first user's agents, data, invocations or audit entries."""

from __future__ import annotations

import json

from kernelproc import KernelProc


def test_second_user_is_isolated(kernel: KernelProc) -> None:
    kernel.cli_json("call", "grocery", "add_items", '{"items": ["secret caviar"]}')
    me_inv = kernel.cli_json("call", "grocery", "list_items")["invocation_id"]

    added = kernel.cli_json("users", "add", "bob")
    bob = added["token"]
    assert bob and bob != kernel.token

    # Bob has his own starter agents and his own, empty, data.
    bob_agents = {a["name"] for a in kernel.cli_json("agents", token=bob)}
    assert {"grocery", "recipes"} <= bob_agents
    bob_items = json.dumps(kernel.cli_json("call", "grocery", "list_items", token=bob)["result"])
    assert "caviar" not in bob_items
    kernel.cli_json("call", "grocery", "add_items", '{"items": ["bread"]}', token=bob)
    assert "bread" not in json.dumps(kernel.cli_json("call", "grocery", "list_items")["result"])

    with kernel.client(bob) as c:
        # Another user's invocation is invisible, not merely forbidden.
        assert c.get(f"/v1/invocations/{me_inv}").json()["error"]["code"] == "not_found"
        # A non-admin cannot act as another user.
        r = c.get("/v1/agents", headers={"X-Dreamer-User": "me"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
        # Nor add users.
        assert c.post("/v1/users", json={"name": "eve"}).status_code == 403
        audit = c.get("/v1/audit", params={"limit": 1000}).json()
        assert audit and all(e["user_id"] == audit[0]["user_id"] for e in audit)
        assert not any("caviar" in json.dumps(e) for e in audit)
        # Bob's database view is his own file.
        rows = c.post("/v1/agents/grocery/database", json={"query": "select * from sqlite_master"}).json()
        assert "caviar" not in json.dumps(rows)

    # The administrator may act for bob, and that is audited as such.
    as_bob = kernel.cli_json("call", "grocery", "list_items", "--user", "bob")
    assert "bread" in json.dumps(as_bob["result"])
    entries = kernel.cli_json("audit", "--user", "bob", "--limit", "20")
    assert any(e["actor"] == "admin:me as bob" for e in entries)

    dup = kernel.cli("users", "add", "bob", "--json")
    assert dup.returncode != 0 and json.loads(dup.stdout)["error"]["code"] == "conflict"
    bad = kernel.cli("users", "add", "../root", "--json")
    assert bad.returncode != 0 and json.loads(bad.stdout)["error"]["code"] in ("invalid_argument", "invalid_request")
