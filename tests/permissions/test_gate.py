"""The permission gate (kernel/permissions/gate.py): one decision, one audit entry, one
refusal sentence, for every grant check; and the checks that go through it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.permissions.gate import Decision, decide
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry

ROOT = Path(__file__).resolve().parents[2]

DECISIONS: list[tuple[list[str], str, str | None]] = [
    ([], "llm", None),
    (["llm"], "llm", "llm"),
    (["agent:grocery"], "agent:grocery.add_items", "agent:grocery"),
    (["agent:grocery.list_items", "agent:grocery"], "agent:grocery.add_items", "agent:grocery"),
    (["agent:notes"], "agent:grocery.add_items", None),
    (["not a scope", "tool:files"], "tool:files.search", "tool:files"),  # a malformed grant covers nothing
    (["net:*.example.com"], "net:example.com", None),
    (["memory:write"], "memory:read", None),
    (["fs:/home/me/src"], "fs:/home/me/src-other", None),
]


@pytest.mark.parametrize(("granted", "wanted", "holder"), DECISIONS)
def test_decide(granted: list[str], wanted: str, holder: str | None) -> None:
    decision = decide(granted, "sly", wanted)
    assert (decision.holder, decision.allowed, decision.verdict) == (holder, holder is not None, "allow" if holder else "deny")


def test_a_wanted_scope_that_is_not_a_scope_is_an_error_not_a_refusal() -> None:
    with pytest.raises(ValueError):
        decide(["llm"], "sly", "tool:NOT A NAME")


def test_the_one_refusal_sentence_says_how_to_grant() -> None:
    refused = decide([], "sly", "agent:grocery.add_items")
    with pytest.raises(DreamerError) as caught:
        refused.require("call grocery.add_items", grant="agent:grocery")
    assert caught.value.code == "permission_denied"
    assert caught.value.message == (
        "sly may not call grocery.add_items: the user has not granted agent:grocery.add_items "
        "(grant it with `dreamer grant sly agent:grocery`)"
    )
    assert refused.refusal("complete m").message.endswith("(grant it with `dreamer grant sly agent:grocery.add_items`)")


@pytest.mark.parametrize(("wanted", "doing"), [
    ("agent:grocery.add_items", "call grocery.add_items"),
    ("tool:files.search", "use the tool files.search"),
    ("data:hr", "query data:hr"),
])
def test_a_scope_the_manifest_does_not_ask_for_names_the_agent_yaml_line(wanted: str, doing: str) -> None:
    # `dreamer grant` would be refused for it too, so the hint is the manifest line.
    refused = decide([], "sly", wanted, declared=["notify", "agent:notes"])
    assert refused.refusal(doing, grant="agent:grocery").message == (
        f"sly may not {doing}: its agent.yaml does not ask for {wanted} "
        f"(add `{wanted}` under `permissions:` in agent.yaml, then reinstall the agent)"
    )


@pytest.mark.parametrize("declared", [["agent:grocery"], ["agent:grocery.add_items"]])
def test_a_declared_but_not_granted_scope_keeps_the_grant_hint(declared: list[str]) -> None:
    refused = decide([], "sly", "agent:grocery.add_items", declared=declared)
    assert refused.refusal("call grocery.add_items", grant="agent:grocery").message.endswith(
        "(grant it with `dreamer grant sly agent:grocery`)"
    )


@pytest.mark.parametrize("declared", [None, ["agent:grocery"], ["agent:grocery.clear"], ["agent:grocery.clear!confirm"]])
def test_a_missing_approval_of_a_confirm_function_says_how_to_approve_it(declared: list[str] | None) -> None:
    # Holding agent:grocery lets sly call grocery's functions, never grocery.clear unasked.
    refused = decide(["agent:grocery"], "sly", "agent:grocery.clear!confirm", declared=declared)
    assert not refused.allowed and refused.grantable
    assert refused.refusal("run grocery.clear on its own").message == (
        "sly may not run grocery.clear on its own: grocery.clear changes or deletes something, so it needs your "
        "confirmation, and you have not approved it for sly (approve it with `dreamer grant sly agent:grocery.clear!confirm`)"
    )


def test_an_approval_for_a_call_the_manifest_does_not_ask_for_names_the_agent_yaml_line() -> None:
    refused = decide([], "sly", "agent:grocery.clear!confirm", declared=["agent:notes"])
    assert not refused.grantable
    assert "add `agent:grocery.clear!confirm` under `permissions:`" in refused.refusal("run grocery.clear on its own").message


def test_an_allowed_decision_returns_its_grant() -> None:
    assert decide(["tool:files"], "sly", "tool:files.read").require("use the tool files.read") == "tool:files"


def test_the_audit_entry_names_the_covering_grant_or_the_missing_scope(sqlite_store: Store) -> None:
    with sqlite_store.session() as s:
        decide(["agent:grocery"], "sly", "agent:grocery.add_items").audit(
            s, user_id=None, actor="agent:sly", action="agents.call", target="grocery.add_items")
        decide([], "sly", "llm").audit(s, user_id=None, actor="agent:sly", action="llm.complete", target="m")
        Decision("sly", "tool:files.read", "tool:files").audit(
            s, user_id=None, actor="agent:sly", action="tools.call", target="files.read", decision="deny")
    with sqlite_store.session() as s:
        rows = [(e.action, e.scope, e.decision) for e in s.scalars(select(AuditEntry).order_by(AuditEntry.seq))]
    assert rows == [
        ("agents.call", "agent:grocery", "allow"),
        ("llm.complete", "llm", "deny"),
        ("tools.call", "tool:files", "deny"),
    ]


def _calls_outside_the_gate(name: str) -> list[str]:
    found = []
    for path in (ROOT / "kernel").rglob("*.py"):
        if path.parts[-2:] in (("permissions", "gate.py"), ("permissions", "check.py")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called == name:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_grant_is_decided_outside_the_gate() -> None:
    # `allowed` (the old per-call-site check) and `covering` are the gate's insides.
    assert _calls_outside_the_gate("allowed") == []
    assert _calls_outside_the_gate("covering") == []


def test_the_refusal_sentence_is_written_once() -> None:
    hits = [
        f"{p.relative_to(ROOT)}" for p in (ROOT / "kernel").rglob("*.py")
        if ("grant it with" in p.read_text() or "approve it with" in p.read_text())
        and p.parts[-2:] != ("permissions", "gate.py")
    ]
    assert hits == []
