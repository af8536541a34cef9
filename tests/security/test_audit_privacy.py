"""Finding 9 of issue 14 (user ↔ user): the audit log is one hash chain for the whole
installation, but an ordinary user learns nothing from it about anyone else: not the
installation's count (/v1/audit/verify), not other users' activity through seq gaps or
hash links (/v1/audit). The administrator still sees the whole chain."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dreamer.host.build import create_app
from dreamer.kernel.config import load_settings


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str, str, Path]]:
    home = tmp_path_factory.mktemp("auditpriv")
    settings = load_settings(home=home, database_url=f"sqlite:///{home / 'kernel.db'}")
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8700") as client:
        admin = json.loads((home / "credentials").read_text())["token"]
        added = client.post("/v1/users", json={"name": "bob"}, headers={"Authorization": f"Bearer {admin}"})
        assert added.status_code == 201, added.text
        yield client, admin, added.json()["token"], home / "kernel.db"


def _get(client: TestClient, token: str, path: str, **params: object) -> object:
    answer = client.get(path, params=params, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _act(client: TestClient, token: str, times: int) -> None:
    """Audited actions: revoking and granting recipes' optional memory:read, in turn."""
    auth = {"Authorization": f"Bearer {token}"}
    for _ in range(times):
        client.delete("/v1/agents/recipes/grants", params={"scope": "memory:read"}, headers=auth)
        assert client.post("/v1/agents/recipes/grants", json={"scope": "memory:read"}, headers=auth).status_code == 200


def test_an_ordinary_user_sees_only_their_own_count_and_numbering(kernel: tuple[TestClient, str, str, Path]) -> None:
    client, admin, bob, _ = kernel
    before = _get(client, admin, "/v1/audit/verify")["entries"]
    _act(client, bob, 2)
    _act(client, admin, 5)  # activity bob must not be able to see
    _act(client, bob, 2)
    assert _get(client, admin, "/v1/audit/verify")["entries"] >= before + 14  # each grant is audited
    mine = _get(client, bob, "/v1/audit", limit=1000)
    assert mine, "bob's own actions are audited"
    seqs = sorted(e["seq"] for e in mine)
    assert seqs == list(range(1, len(mine) + 1))  # no gaps where someone else acted
    assert all("hash" not in e and "prev_hash" not in e for e in mine)
    assert {e["user_id"] for e in mine} == {mine[0]["user_id"]}
    verified = _get(client, bob, "/v1/audit/verify")
    assert verified == {"ok": True, "entries": len(mine), "first_bad": None, "reason": None}
    # Whatever others do meanwhile, bob's answers do not change.
    _act(client, admin, 7)
    assert _get(client, bob, "/v1/audit/verify") == verified
    assert sorted(e["seq"] for e in _get(client, bob, "/v1/audit", limit=1000)) == seqs


def test_a_page_and_a_filter_number_entries_as_the_whole_list_does(kernel: tuple[TestClient, str, str, Path]) -> None:
    """The numbers are worked out for the page's own rows (not the whole log each time),
    and they are the same whichever page or filter shows an entry."""
    client, admin, bob, _ = kernel
    _act(client, bob, 3)
    _act(client, admin, 2)
    whole = _get(client, bob, "/v1/audit", limit=10_000)
    assert [e["seq"] for e in whole] == list(range(len(whole), 0, -1))
    assert _get(client, bob, "/v1/audit", limit=4) == whole[:4]
    recipes = [e for e in whole if e["actor"] == "agent:recipes" or e["target"].startswith("recipes")]
    assert recipes and len(recipes) < len(whole)
    assert _get(client, bob, "/v1/audit", limit=1000, agent="recipes") == recipes
    assert _get(client, bob, "/v1/audit", limit=1000, invocation="inv_nothing") == []
    ran = client.post("/v1/agents/grocery/functions/list_items", json={"args": {}}, headers={"Authorization": f"Bearer {bob}"})
    run = ran.json()["invocation_id"]
    mine = _get(client, bob, "/v1/audit", invocation=run)
    assert [(e["action"], e["target"], e["invocation_id"]) for e in mine] == [("functions.call", "grocery.list_items", run)]
    assert mine[0]["seq"] == len(whole) + 1
    assert _get(client, admin, "/v1/audit", invocation=run) == []  # the administrator's own entries only


def test_the_administrator_sees_the_installation(kernel: tuple[TestClient, str, str, Path]) -> None:
    client, admin, bob, _ = kernel
    full = _get(client, admin, "/v1/audit/verify")
    bobs = _get(client, bob, "/v1/audit/verify")
    assert full["ok"] and full["entries"] > bobs["entries"]
    entries = _get(client, admin, "/v1/audit", limit=5)
    assert all(len(e["hash"]) == 64 for e in entries)


def test_a_broken_chain_is_reported_to_everyone_but_located_only_for_the_administrator(
    kernel: tuple[TestClient, str, str, Path],
) -> None:
    client, admin, bob, db = kernel
    with sqlite3.connect(db) as conn:
        (seq,) = conn.execute("SELECT min(seq) FROM audit_log WHERE user_id IS NOT NULL").fetchone()
        conn.execute("UPDATE audit_log SET target = 'edited' WHERE seq = ?", (seq + 1,))
    bobs = _get(client, bob, "/v1/audit/verify")
    assert bobs["ok"] is False and bobs["first_bad"] is None and "ask the administrator" in bobs["reason"]
    full = _get(client, admin, "/v1/audit/verify")
    assert full["ok"] is False and full["first_bad"] == seq + 1
