"""Calls the hostile agent holds no grant for are refused, audited, and reach nothing:
another agent without a grant, an unexported function even with one, a tool."""

from __future__ import annotations

from typing import Any

from security_world import ME_NOTES, OTHER_NOTES, World


def _denial(world: World, invocation: str, target: str) -> dict[str, Any]:
    """The one audit entry of the hostile agent's refused call, written under its invocation."""
    found = [
        e for e in world.audit("me")
        if e["action"] == "agents.call" and e["target"] == target and e["invocation_id"] == invocation
    ]
    assert len(found) == 1, found
    assert found[0]["actor"] == "agent:hostile" and found[0]["decision"] == "deny", found[0]
    return found[0]


def test_calling_an_agent_without_a_grant_is_refused_and_audited(world: World) -> None:
    error = world.fail("call", agent="vault", function="peek")
    assert error["code"] == "permission_denied"
    assert error["message"] == (
        "hostile may not call vault.peek: its agent.yaml does not ask for agent:vault.peek "
        "(add `agent:vault.peek` under `permissions:` in agent.yaml, then reinstall the agent)"
    )
    entry = _denial(world, error["details"]["invocation_id"], "vault.peek")
    assert entry["scope"] == "agent:vault.peek" and entry["detail"] == {"reason": "permission_denied"}
    # The vault was never started for it: no invocation of vault exists.
    with world.kernel.client() as client:
        assert client.get("/v1/invocations", params={"agent": "vault"}).json() == []


def test_an_unexported_function_is_refused_even_with_a_grant(world: World) -> None:
    # agent:victim is granted, and covers agent:victim.secret; secret is not exported.
    error = world.fail("call", agent="victim", function="secret")
    assert error["code"] == "permission_denied"
    assert error["message"] == "victim.secret is not exported, so other agents cannot call it"
    _denial(world, error["details"]["invocation_id"], "victim.secret")


def test_a_write_through_an_unexported_function_is_refused(world: World) -> None:
    error = world.fail("call", agent="victim", function="seed", args={"text": "planted by hostile"})
    assert error["code"] == "permission_denied"
    _denial(world, error["details"]["invocation_id"], "victim.seed")
    assert world.answer("victim", "read")[1]["result"] == ME_NOTES


def test_a_granted_call_reaches_only_its_own_users_data(world: World) -> None:
    assert world.ok("call", agent="victim", function="read") == ME_NOTES
    assert world.answer("victim", "read", user="other")[1]["result"] == OTHER_NOTES


def test_an_agent_that_does_not_exist_is_refused_like_an_ungranted_one(world: World) -> None:
    """The refusal comes before any lookup, so an agent cannot probe which agents exist."""
    error = world.fail("call", agent="diary", function="peek")
    assert error["code"] == "permission_denied"
    assert error["message"] == (
        "hostile may not call diary.peek: its agent.yaml does not ask for agent:diary.peek "
        "(add `agent:diary.peek` under `permissions:` in agent.yaml, then reinstall the agent)"
    )
    _denial(world, error["details"]["invocation_id"], "diary.peek")


def test_a_tool_without_a_grant_is_not_reached(world: World) -> None:
    error = world.fail("tool", name="filesystem.read_file")
    assert error["code"] in ("not_available", "permission_denied"), error
    if error["code"] == "permission_denied":
        entries = [e for e in world.audit("me") if e["invocation_id"] == error["details"]["invocation_id"]]
        assert any(e["decision"] == "deny" and e["actor"] == "agent:hostile" for e in entries), entries
    world.still_serving()
