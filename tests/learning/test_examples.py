"""Learned examples in the store (SQLite and PostgreSQL): per user, promoted to everyone,
opted out, and written as planner examples."""

from __future__ import annotations

from dreamer.kernel.learned import examples
from dreamer.kernel.learned.examples import Learned, as_example
from dreamer.kernel.store.db import Store
from dreamer.kernel.users.accounts import create_user


def user(store: Store, name: str) -> int:
    with store.session() as s:
        made, _ = create_user(s, name)
        return made.id


def test_examples_are_per_user_until_promoted_and_own_rows_win(store: Store) -> None:
    ann, ben = user(store, "ann"), user(store, "ben")
    kept = examples.learn(store, ann, "Grab some Oat milk!", "grocery", "add_items", {"items": ["oat milk"]},
                          source="rephrased")
    assert kept is not None
    examples.demote(store, ann, "grab some oat milk", "notes", "save", source="corrected")
    assert [(x.function, x.weight) for x in examples.lookup(store, ann, "grab some oat milk")] == [
        ("add_items", 1.0), ("save", -1.0)]
    assert examples.demoted(store, ann, "GRAB some oat-milk") == {"notes.save"}
    assert examples.lookup(store, ben, "grab some oat milk") == [] and examples.phrasings(store, ben) == []
    promoted = examples.promote(store, kept.id)
    assert promoted is not None and promoted.everyone and promoted.user == "ann"
    assert [x.function for x in examples.lookup(store, ben, "grab some oat milk")] == ["add_items"]
    assert [x.phrase for x in examples.phrasings(store, ben)] == ["Grab some Oat milk!"]
    assert examples.demoted(store, ben, "grab some oat milk") == set()  # ann's demotion was not promoted
    # Ben's own opinion of the same words and function beats the promoted one.
    examples.demote(store, ben, "grab some oat milk", "grocery", "add_items", source="undone")
    assert examples.demoted(store, ben, "grab some oat milk") == {"grocery.add_items"}
    assert examples.phrasings(store, ben) == []
    # Ben cannot delete ann's example; the administrator can; ann can delete her own.
    assert not examples.forget(store, ben, kept.id)
    assert examples.forget(store, ann, kept.id)
    assert examples.lookup(store, ben, "grab some oat milk")[0].weight == -1.0


def test_a_user_who_opted_out_is_taught_nothing_and_keeps_what_was_learned(store: Store) -> None:
    ann = user(store, "ann")
    assert examples.learn(store, ann, "add bread", "grocery", "add_items", {}) is not None
    examples.set_learning(store, ann, False)
    assert not examples.learning_enabled(store, ann)
    assert examples.learn(store, ann, "buy milk", "grocery", "add_items", {}) is None
    examples.demote(store, ann, "add bread", "calendar", "add_event")
    assert [x.phrase for x in examples.list_learned(store, ann)] == ["add bread"]
    examples.set_learning(store, ann, True)
    assert examples.learn(store, ann, "buy milk", "grocery", "add_items", {}) is not None


def test_a_learned_phrasing_is_an_example_with_its_values_as_slots() -> None:
    def ex(phrase: str, args: dict) -> str:
        return as_example(Learned(1, phrase, "grocery", "add_items", args, 1.0, "rephrased"))

    assert ex("Grab some Oat milk!", {"items": ["oat milk"]}) == "grab some {items}"
    assert ex("grab eggs and milk", {"items": ["eggs", "milk"]}) == "grab {items}"
    # A value not in the words (a date read from "tomorrow") stays words; planner syntax cannot sneak in.
    assert ex("what's on (tomorrow) {x}", {"day": "2026-12-03"}) == "what's on tomorrow x"
    assert ex("log it", {"bad name!": "it"}) == "log it"
