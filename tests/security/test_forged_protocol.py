"""The protocol channel as an attack surface: agent code finds the worker's private pipes
and writes to the kernel directly. Malformed messages stop that worker alone; forged
syscalls run as the worker's own user and agent, whatever their params claim."""

from __future__ import annotations

import json
from typing import Any

import pytest

from security_world import ME_NOTES, OTHER_NOTES, World


def _syscall(id: str, method: str, params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def _forge(world: World, *lines: str) -> tuple[list[dict[str, Any]], str]:
    """The kernel's answers to forged lines, and the id of the hostile invocation that sent them."""
    status, body = world.answer("hostile", "forge", {"lines": list(lines)})
    assert status == 200, body
    answers = body["result"]
    assert all(isinstance(a, dict) for a in answers), answers
    return answers, body["invocation_id"]


def _kind(answer: dict[str, Any]) -> str:
    assert "error" in answer, f"the kernel accepted a forged syscall: {answer}"
    return answer["error"]["data"]["kind"]


# Every way a syscall's params could claim to come from someone else.
CLAIMS: dict[str, Any] = {
    "user": "other",
    "user_id": 2,
    "user_name": "other",
    "principal": {"user": "other", "via": "me"},
    "as": "other",
    "caller": "victim",
    "agent_name": "victim",
    "from": "victim",
    "chain": [],
    "invocation_id": "inv_forged",
}


def test_a_forged_call_claiming_another_user_and_agent_is_refused_as_the_hostile_agent(world: World) -> None:
    forged = _syscall("x1", "agents.call", {"agent": "vault", "function": "peek", "args": {}, **CLAIMS})
    answers, invocation = _forge(world, forged)
    assert _kind(answers[0]) == "permission_denied"
    message = answers[0]["error"]["message"]
    assert message.startswith("hostile may not call vault.peek"), message
    # Audited for this user, as the hostile agent, under the invocation that really sent it.
    denied = [
        e for e in world.audit("me")
        if e["action"] == "agents.call" and e["target"] == "vault.peek" and e["invocation_id"] == invocation
    ]
    assert len(denied) == 1 and denied[0]["decision"] == "deny" and denied[0]["actor"] == "agent:hostile", denied
    # Nothing of it is recorded as, or shown to, the other user.
    assert not [e for e in world.audit("other") if e["actor"] == "agent:hostile" or e["target"] == "vault.peek"]


def test_a_forged_identity_reaches_only_the_workers_own_user(world: World) -> None:
    """The hostile agent holds agent:victim, so the call runs; but as its own user, whose
    victim holds this user's notes, never the other user's."""
    forged = _syscall("x2", "agents.call", {"agent": "victim", "function": "read", "args": {}, **CLAIMS})
    answers, invocation = _forge(world, forged)
    assert answers[0].get("result", {}).get("value") == ME_NOTES, answers
    assert OTHER_NOTES[0] not in json.dumps(answers)
    allowed = [
        e for e in world.audit("me")
        if e["action"] == "agents.call" and e["target"] == "victim.read" and e["invocation_id"] == invocation
    ]
    assert len(allowed) == 1 and allowed[0]["decision"] == "allow" and allowed[0]["actor"] == "agent:hostile"
    # The nested invocation is this user's, called by the hostile agent.
    nested = world.invocation(allowed[0]["detail"]["invocation_id"])
    assert nested["caller"] == "hostile" and nested["parent_id"] == invocation and nested["status"] == "succeeded"


def test_a_forged_call_to_an_unexported_function_is_refused(world: World) -> None:
    forged = _syscall("x3", "agents.call", {"agent": "victim", "function": "secret", "args": {}, **CLAIMS})
    answers, invocation = _forge(world, forged)
    assert _kind(answers[0]) == "permission_denied"
    assert answers[0]["error"]["message"] == "victim.secret is not exported, so other agents cannot call it"
    denied = [e for e in world.audit("me") if e["target"] == "victim.secret" and e["invocation_id"] == invocation]
    assert len(denied) == 1 and denied[0]["decision"] == "deny" and denied[0]["actor"] == "agent:hostile", denied


def test_syscalls_the_kernel_does_not_have_are_not_available(world: World) -> None:
    methods = ["invoke", "users.add", "grants.add", "audit.append", "kernel.shutdown", "tools.call", "__class__"]
    answers, _ = _forge(world, *(_syscall(f"u{i}", m, {"name": "eve", **CLAIMS}) for i, m in enumerate(methods)))
    kinds = {m: _kind(a) for m, a in zip(methods, answers)}
    # tools.call exists (issue 5): a forged one names no tool, so it is refused before anything runs.
    assert kinds.pop("tools.call") in ("invalid_argument", "permission_denied")
    assert set(kinds.values()) == {"not_available"}, kinds
    world.still_serving()


@pytest.mark.parametrize(
    "params, says",
    [
        (None, "needs 'agent' and 'function'"),
        ({"agent": 5, "function": []}, "needs 'agent' and 'function'"),
        ({"agent": "victim", "function": "read", "args": [1, 2]}, "JSON object"),
        ({"agent": "victim", "function": "read", "args": {"x": "\ud800"}}, "not valid Unicode"),
        ({"agent": "../../etc", "function": "read", "args": {}}, "hostile may not call"),
        ({"agent": "victim", "function": "read; drop", "args": {}}, "not an agent function name"),
    ],
)
def test_malformed_syscall_params_are_answered_with_one_sentence(world: World, params: Any, says: str) -> None:
    answers, _ = _forge(world, _syscall("m1", "agents.call", params))
    assert _kind(answers[0]) in ("invalid_argument", "permission_denied")
    assert says in answers[0]["error"]["message"]
    assert "Traceback" not in answers[0]["error"]["message"]


NOT_JSON_RPC = {
    "not json": b"this is not json".hex(),
    "not UTF-8": b'\xff\xfe{"jsonrpc": "2.0"}'.hex(),
    "JSON-RPC 1.0": b'{"jsonrpc": "1.0", "id": "x", "method": "agents.call", "params": {}}'.hex(),
    "a JSON array": b"[1, 2, 3]".hex(),
    "a number as method": b'{"jsonrpc": "2.0", "id": "x", "method": 7}'.hex(),
    "a list as params": b'{"jsonrpc": "2.0", "id": "x", "method": "agents.call", "params": [1]}'.hex(),
    "nested past any parser": (b"[" * 100_000 + b"]" * 100_000).hex(),
    "an id too long for an int": (b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "log"}').hex(),
    "an answer to nothing": b'{"jsonrpc": "2.0", "id": 987654, "result": {"value": "forged"}}'.hex(),
}


@pytest.mark.parametrize("what", list(NOT_JSON_RPC))
def test_a_malformed_message_stops_only_that_worker(world: World, what: str) -> None:
    error = world.fail("garbage", hex=NOT_JSON_RPC[what])
    assert error["code"] == "protocol_error", error
    assert error["message"].startswith("the hostile worker ") and error["message"].endswith(" and was stopped")
    world.still_serving()


def test_a_message_larger_than_the_kernel_accepts_stops_the_worker(world: World) -> None:
    error = world.fail("garbage", size=9 * 1024 * 1024)
    assert error["code"] == "payload_too_large", error
    assert "larger than the kernel accepts" in error["message"]
    world.still_serving()


def test_a_syscall_the_kernel_trips_over_is_still_answered_and_the_channel_stays_in_step(world: World) -> None:
    """Whatever goes wrong inside the kernel while it serves a syscall, the worker gets an
    answer (not silence, not a poisoned pool) and the next syscall on the same channel works."""
    tripping = _syscall("t1", "agents.call", {"agent": "../../etc", "function": "read", "args": {}})
    answers, _ = _forge(world, tripping, _syscall("t2", "agents.call", {"agent": "victim", "function": "read"}))
    assert _kind(answers[0]) in ("internal", "invalid_argument", "permission_denied")
    assert "Traceback" not in answers[0]["error"]["message"]
    assert answers[1]["id"] == "t2" and answers[1]["result"]["value"] == ME_NOTES
    world.still_serving()
