"""Scope.covers, the rule every grant decision rests on, case by case."""

from __future__ import annotations

import pytest

from dreamer.contracts.scopes import parse_scope

COVERS: list[tuple[str, str, bool]] = [
    # agent: a whole agent covers each function; a function covers only itself
    ("agent:grocery", "agent:grocery.add_items", True),
    ("agent:grocery", "agent:grocery", True),
    ("agent:grocery.add_items", "agent:grocery.add_items", True),
    ("agent:grocery.add_items", "agent:grocery.list_items", False),
    ("agent:grocery.add_items", "agent:grocery", False),
    ("agent:grocery", "agent:grocery-two.add_items", False),
    ("agent:grocery", "tool:grocery.add_items", False),
    # tool: the same shape as agent
    ("tool:files", "tool:files.search", True),
    ("tool:files.search", "tool:files.read", False),
    ("tool:files.search", "tool:files.search", True),
    # net: host globs, case-insensitive; *.x does not cover x itself
    ("net:api.example.com", "net:api.example.com", True),
    ("net:api.example.com", "net:API.Example.COM", True),
    ("net:*.example.com", "net:api.example.com", True),
    ("net:*.example.com", "net:example.com", False),
    ("net:*.example.com", "net:api.example.com.evil.org", False),
    ("net:api.example.com", "net:example.com", False),
    ("net:*", "net:anything.org", True),
    # fs: a folder covers itself and what is below it, never a sibling with the same prefix
    ("fs:/home/me/src", "fs:/home/me/src", True),
    ("fs:/home/me/src", "fs:/home/me/src/app", True),
    ("fs:/home/me/src/", "fs:/home/me/src/app", True),
    ("fs:/home/me/src", "fs:/home/me/src-secret", False),
    ("fs:/home/me/src", "fs:/home/me", False),
    ("fs:/home/me/src", "fs.ro:/home/me/src", False),  # kinds differ: read-write is its own grant
    ("fs.ro:/home/me/src", "fs.ro:/home/me/src/app", True),
    ("fs.ro:/home/me/src", "fs:/home/me/src", False),
    # the folder choosers cover only themselves and are covered only by themselves
    ("fs:*", "fs:*", True),
    ("fs:*", "fs:/home/me", False),
    ("fs:/", "fs:*", False),
    # plain scopes
    ("llm", "llm", True),
    ("memory:read", "memory:read", True),
    ("memory:write", "memory:read", False),
    ("memory:read", "memory:write", False),
    ("notify", "notify", True),
    ("schedule", "schedule", True),
    ("schedule", "notify", False),
    ("data:hr", "data:hr", True),
    ("data:hr", "data:hr-two", False),
]


@pytest.mark.parametrize(("held", "wanted", "expected"), COVERS, ids=[f"{h} ⊇ {w}" for h, w, _ in COVERS])
def test_covers(held: str, wanted: str, expected: bool) -> None:
    assert parse_scope(held).covers(parse_scope(wanted)) is expected


@pytest.mark.parametrize("text", ["", "agent:", "agent:A", "agent:x", "net:", "fs:relative", "fs:/a/../b", "root", "memory:all"])
def test_malformed_scopes_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_scope(text)
