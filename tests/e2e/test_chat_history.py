"""One conversation per session of use, and the history API behind the chat sidebar:
`dreamer chat` one-shots continue the recent conversation unless --new, and
GET /v1/conversations pages and searches, DELETE removes one (only the owner's)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kernelproc import KernelProc, start_kernel

# The first test waits for the module's own kernel, which takes minutes to start on a crowded machine.
pytestmark = pytest.mark.timeout(400)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("history") / "home")
    yield k
    k.stop()


def _chat(kernel: KernelProc, text: str, *extra: str) -> str:
    done = kernel.cli("chat", text, "--json", *extra)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)["conversation_id"]


def test_one_shots_continue_the_recent_conversation_until_new(kernel: KernelProc) -> None:
    first = _chat(kernel, "add basil to my grocery list", "--new")
    assert _chat(kernel, "what's on my grocery list") == first  # no open question, still the same session
    assert _chat(kernel, "what's on my calendar tomorrow") == first
    fresh = _chat(kernel, "add thyme to my grocery list", "--new")
    assert fresh != first
    with kernel.client() as c:
        listed = [row["id"] for row in c.get("/v1/conversations").json()]
        assert listed[:2] == [fresh, first] and len(listed) == 2
        messages = c.get(f"/v1/conversations/{first}").json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"] * 3

        # Deleted in the web app meanwhile: the next one-shot starts a new one instead of failing.
        assert c.delete(f"/v1/conversations/{fresh}").json() == {"id": fresh, "deleted": True, "messages": 2}
        assert c.get(f"/v1/conversations/{fresh}").status_code == 404
    after = _chat(kernel, "add sage to my grocery list")
    assert after not in (first, fresh)


def test_search_pages_and_delete_belong_to_the_owner(kernel: KernelProc) -> None:
    with kernel.client() as admin:
        bob = admin.post("/v1/users", json={"name": "bob"}).json()["token"]
    with kernel.client(bob) as c:
        ids = []
        for text in ("add rosemary to my grocery list", "what's on my calendar tomorrow", "add 100% cocoa to my grocery list"):
            ids.append(c.post("/v1/chat", json={"message": text, "stream": False}).json()["conversation_id"])
        found = [r["id"] for r in c.get("/v1/conversations", params={"q": "ROSEMARY"}).json()]
        assert ids[0] in found and ids[1] not in found  # (the cocoa answer may list the rosemary too)
        # A word only in Sidekick's answer finds its conversation too.
        reply = c.get(f"/v1/conversations/{ids[1]}").json()["messages"][1]["content"]
        word = max(reply.split(), key=len).strip(".,:;!?")
        assert ids[1] in [r["id"] for r in c.get("/v1/conversations", params={"q": word}).json()]
        # % and _ are letters here, not SQL wildcards.
        assert [r["id"] for r in c.get("/v1/conversations", params={"q": "100%"}).json()] == [ids[2]]
        assert c.get("/v1/conversations", params={"q": "%"}).json() == [r for r in c.get(
            "/v1/conversations", params={"q": "100%"}).json()]
        assert c.get("/v1/conversations", params={"q": "_"}).json() == []
        page1 = c.get("/v1/conversations", params={"limit": 2}).json()
        page2 = c.get("/v1/conversations", params={"limit": 2, "offset": 2}).json()
        assert [r["id"] for r in page1 + page2] == ids[::-1]
        assert c.get("/v1/conversations", params={"q": "x" * 201}).status_code == 400

    with kernel.client() as admin:
        theirs = admin.delete(f"/v1/conversations/{ids[0]}")
        assert theirs.status_code == 404 and "no conversation" in theirs.json()["error"]["message"]
        assert admin.get("/v1/conversations", params={"q": "rosemary"}).json() == []
    with kernel.client(bob) as c:
        assert c.get(f"/v1/conversations/{ids[0]}").status_code == 200  # still there for its owner
        assert c.delete("/v1/conversations/conv_nope").status_code == 404
