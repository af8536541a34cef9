"""Audit entries read as what happened (web/audit_words.py), for every action the kernel
writes: actors x actions x decisions, with no dotted action name or "agent:" left over."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dreamer.web.audit_words import _ACTIONS, audit_sentence, who

ROOT = Path(__file__).resolve().parents[2]
ACTORS = {"user:me": "You", "agent:watch": "watch", "sidekick for user:me": "Sidekick", "trigger:cron": "A schedule",
          "trigger:watch.check for user:me": "The trigger watch's “check”", "admin:root as me": "The administrator (root)",
          "web:bob": "Someone"}
TARGETS = {"functions.call": "grocery.add_items", "agents.call": "grocery.list_items", "net.fetch": "GET http://127.0.0.1:8080/",
           "net.response": "GET https://example.com/a", "install": "notes@1.2.0", "data.query": "data:hr",
           "grants.grant": "recipes", "grants.revoke": "recipes"}


def _entry(actor: str, action: str, decision: str, scope: str | None = None) -> dict[str, object]:
    return {"actor": actor, "action": action, "target": TARGETS.get(action, "thing"), "scope": scope, "decision": decision}


def test_every_action_the_kernel_writes_has_words() -> None:
    written = set()
    for folder in ("kernel", "sidekick", "web", "host"):
        for path in (ROOT / folder).rglob("*.py"):
            written |= set(re.findall(r'action="([a-z_]+(?:\.[a-z_]+)?)"', path.read_text()))
    written |= {"install", "upgrade", "learned.unpromote"}  # chosen in code, not written as action="…"
    assert written and written <= set(_ACTIONS), sorted(written - set(_ACTIONS))


@pytest.mark.parametrize("actor", list(ACTORS))
@pytest.mark.parametrize("action", list(_ACTIONS))
@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_each_entry_is_a_sentence_without_machine_names(actor: str, action: str, decision: str) -> None:
    said = audit_sentence(_entry(actor, action, decision, "memory:read"))
    assert said.startswith(ACTORS[actor])
    assert ("." not in action or action not in said) and "agent:" not in said and "user:" not in said and "_" not in said.replace("data:hr", "")
    if decision == "deny":
        assert said.endswith("and was stopped")


def test_known_sentences() -> None:
    assert audit_sentence(_entry("sidekick for user:me", "functions.call", "allow")) == "Sidekick ran grocery's “add items”"
    assert audit_sentence(_entry("agent:watch", "net.fetch", "deny", "net:127.0.0.1")) == \
        "watch tried to fetch http://127.0.0.1:8080/ and was stopped"
    assert audit_sentence(_entry("user:me", "grants.revoke", "allow", "memory:read")) == "You took a permission back from recipes"
    assert audit_sentence(_entry("user:me", "install", "allow")) == "You installed notes 1.2.0"
    assert audit_sentence({"actor": "agent:x", "action": "nodes.split", "target": "n1", "decision": "allow"}) == "x nodes split n1"
    assert who("") == "Someone"
