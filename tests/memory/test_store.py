"""The memories table: adding, de-duplicating, listing and deleting facts, and their audit."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from memory_testkit import new_user
from sqlalchemy import select

from dreamer.kernel.audit.log import verify
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.memory import store as memory_store
from dreamer.kernel.memory.facts import forget, memories, remember
from dreamer.kernel.memory.text import fact_key, normalize
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, Memory, User


def test_facts_are_kept_per_user_oldest_first(store: Store, add_user: Callable[[str], int]) -> None:
    ada, bob = add_user("ada"), add_user("bob")
    first = remember(store, ada, "user:ada", "  I'm   vegetarian ")
    second = remember(store, ada, "agent:recipes", "Prefers quick dinners", source="agent:recipes", via="agent")
    remember(store, bob, "user:bob", "I live in Lyon")
    assert first.created and second.created
    assert first.fact.text == "I'm vegetarian"  # whitespace collapsed
    listed = memories(store, ada)
    assert [(f.text, f.source) for f in listed] == [("I'm vegetarian", "user"), ("Prefers quick dinners", "agent:recipes")]
    assert [f.text for f in memories(store, bob)] == ["I live in Lyon"]
    assert set(listed[0].to_dict()) == {"id", "text", "source", "created_at"}


def test_the_same_fact_in_other_words_is_kept_once(store: Store, add_user: Callable[[str], int]) -> None:
    ada = add_user("ada")
    kept = remember(store, ada, "user:ada", "I'm vegetarian.")
    for again in ("i am VEGETARIAN", "I\u2019m vegetarian!", "  I'm vegetarian  "):
        same = remember(store, ada, "user:ada", again)
        assert not same.created and same.fact.id == kept.fact.id
    assert remember(store, ada, "user:ada", "I'm not vegetarian").created  # a different fact
    assert len(memories(store, ada)) == 2
    # Another user's identical fact is theirs.
    assert remember(store, add_user("bob"), "user:bob", "I'm vegetarian").created


def test_normalized_wording() -> None:
    assert normalize("I'm NOT eating pork, don't you know?") == "i am not eating pork do not you know"
    assert normalize("I can't; I won't") == "i cannot i will not"
    assert fact_key("I am vegetarian") == fact_key("i'm vegetarian.")
    assert fact_key("I am vegetarian") != fact_key("I am vegan")


@pytest.mark.parametrize(
    ("text", "says"),
    [("", "empty"), ("   \n ", "empty"), ("x" * 1001, "at most 1000 characters"), (42, "must be text"), (None, "must be text")],
)
def test_bad_facts_are_refused_with_one_sentence(sqlite_store: Store, text: object, says: str) -> None:
    ada = new_user(sqlite_store, "ada")
    with pytest.raises(DreamerError) as caught:
        remember(sqlite_store, ada, "user:ada", text)
    assert caught.value.code == "invalid_argument" and says in caught.value.message
    assert "\n" not in caught.value.message
    assert memories(sqlite_store, ada) == []


def test_a_fact_of_exactly_the_limit_fits_and_nul_is_made_storable(store: Store, add_user: Callable[[str], int]) -> None:
    ada = add_user("ada")
    assert remember(store, ada, "user:ada", "y" * 1000).created
    assert remember(store, ada, "user:ada", "I like\x00tea").fact.text == "I like\ufffdtea"


def test_sources_are_user_or_an_agent(store: Store, add_user: Callable[[str], int]) -> None:
    ada = add_user("ada")
    for bad in ("agent:", "agent:Bad Name", "admin", "agent:x" + "y" * 70):
        with pytest.raises(ValueError):
            remember(store, ada, "user:ada", "I like tea", source=bad)


def test_the_memory_of_one_user_is_bounded(
    store: Store, add_user: Callable[[str], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_store, "MAX_MEMORIES_PER_USER", 3)
    ada = add_user("ada")
    # The bound is on the user's own facts (agents have their own, smaller share:
    # tests/security/test_memory_sources.py).
    for i in range(3):
        remember(store, ada, "user:ada", f"fact {i}", source="user")
    with pytest.raises(DreamerError) as caught:
        remember(store, ada, "user:ada", "fact 3", source="user")
    assert caught.value.code == "payload_too_large" and "dreamer memory forget" in caught.value.message
    # A fact already kept is still found (nothing new is stored).
    assert not remember(store, ada, "user:ada", "fact 1", source="user").created
    # Other users are not affected.
    assert remember(store, add_user("bob"), "user:bob", "fact 3").created


def test_forget_removes_only_the_users_own_fact(store: Store, add_user: Callable[[str], int]) -> None:
    ada, bob = add_user("ada"), add_user("bob")
    mine = remember(store, ada, "user:ada", "I live in Lyon").fact
    theirs = remember(store, bob, "user:bob", "I live in Oslo").fact
    with pytest.raises(DreamerError) as caught:
        forget(store, ada, "user:ada", theirs.id)
    assert caught.value.code == "not_found" and str(theirs.id) in caught.value.message
    assert [f.id for f in memories(store, bob)] == [theirs.id]
    gone = forget(store, ada, "user:ada", mine.id)
    assert gone.text == "I live in Lyon" and memories(store, ada) == []
    with pytest.raises(DreamerError) as again:
        forget(store, ada, "user:ada", mine.id)
    assert again.value.code == "not_found"


def test_changes_are_audited_without_the_facts_text(store: Store, add_user: Callable[[str], int]) -> None:
    ada = add_user("ada")
    fact = remember(store, ada, "user:ada", "My secret is swordfish", via="chat").fact
    remember(store, ada, "user:ada", "my secret is swordfish")  # a duplicate: nothing changed, nothing audited
    forget(store, ada, "user:ada", fact.id)
    with store.session() as s:
        rows = list(s.scalars(select(AuditEntry).where(AuditEntry.action.like("memory.%")).order_by(AuditEntry.seq)))
        assert [(r.actor, r.action, r.target) for r in rows] == [
            ("user:ada", "memory.write", f"memory:{fact.id}"), ("user:ada", "memory.delete", f"memory:{fact.id}"),
        ]
        assert rows[0].detail == {"source": "user", "via": "chat", "chars": len(fact.text)}
        assert all("swordfish" not in str(r.detail) + r.target for r in rows)
        assert verify(s).ok


def test_deleting_a_user_deletes_their_memories(store: Store, add_user: Callable[[str], int]) -> None:
    ada = add_user("ada")
    remember(store, ada, "user:ada", "I live in Lyon")
    with store.session() as s:
        s.delete(s.get(User, ada))
    with store.session() as s:
        assert s.scalars(select(Memory)).all() == []


def test_a_fact_stored_concurrently_is_found_not_duplicated(
    store: Store, add_user: Callable[[str], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = add_user("ada")
    kept = remember(store, ada, "user:ada", "I live in Lyon").fact
    # Another request's insert lands between this one's look-up and its insert:
    # the first look-up misses, the insert hits the unique key, the retry finds it.
    real = memory_store._by_key
    misses = iter([True])
    monkeypatch.setattr(memory_store, "_by_key", lambda s, u, k: None if next(misses, False) else real(s, u, k))
    again = remember(store, ada, "user:ada", "i live in lyon")
    assert not again.created and again.fact.id == kept.id
    assert len(memories(store, ada)) == 1
