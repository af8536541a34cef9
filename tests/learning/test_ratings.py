"""Thumbs up/down kept as user rewards (SQLite and PostgreSQL): on a turn and the invocations
it made, replacing an earlier rating, refused for anyone but the owner."""

from __future__ import annotations

import uuid

import pytest

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.feedback.ratings import rate, ratings_of_invocations, ratings_of_turns
from dreamer.kernel.learned import examples
from dreamer.kernel.learned.from_ratings import learn_from_rating
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChatMessage, Conversation, Invocation, Reward
from dreamer.kernel.users.accounts import create_user


def user(store: Store, name: str) -> int:
    with store.session() as s:
        made, _ = create_user(s, name)
        return made.id


def a_turn(store: Store, user_id: int, said: str, calls: list[tuple[str, str]]) -> tuple[int, list[str]]:
    runs = ["inv_" + uuid.uuid4().hex for _ in calls]
    with store.session() as s:
        conv = Conversation(id="conv_" + uuid.uuid4().hex, user_id=user_id, title=said)
        s.add(conv)
        s.flush()  # the conversation before its messages (PostgreSQL checks the key at once)
        for run, (agent, function) in zip(runs, calls):
            s.add(Invocation(id=run, user_id=user_id, agent=agent, function=function, args={}, caller="sidekick",
                             status="succeeded"))
        s.add(ChatMessage(conversation_id=conv.id, role="user", content=said, data={}))
        answer = ChatMessage(conversation_id=conv.id, role="assistant", content="Done.", data={"calls": [
            {"agent": a, "function": f, "args": {"items": ["x"]}, "ok": True, "invocation_id": r}
            for r, (a, f) in zip(runs, calls)]})
        s.add(answer)
        s.flush()
        return answer.id, runs


def rewards(store: Store) -> list[tuple[str | None, str, str, float, str | None, int | None]]:
    with store.session() as s:
        return [(r.invocation_id, r.agent, r.source, r.value, r.note, r.turn_id)
                for r in s.query(Reward).order_by(Reward.id)]


def test_a_turn_rating_lands_on_the_turn_and_its_invocations_and_teaches(store: Store) -> None:
    ann = user(store, "ann")
    turn, (run,) = a_turn(store, ann, "pick up bread on the way home", [("grocery", "add_items")])
    rated = rate(store, ann, f"turn_{turn}", "down", "  not  the list ")
    assert rated.invocations == (run,)
    assert rewards(store) == [(None, "sidekick", "user", -1.0, "not the list", turn),
                              (run, "grocery", "user", -1.0, "not the list", turn)]
    assert learn_from_rating(store, ann, rated) == 1
    assert examples.demoted(store, ann, "pick up bread on the way home") == {"grocery.add_items"}
    again = rate(store, ann, f"turn_{turn}", "up")  # replaces, does not add
    assert [(r[2], r[3]) for r in rewards(store)] == [("user", 1.0), ("user", 1.0)]
    assert learn_from_rating(store, ann, again) == 1
    assert examples.demoted(store, ann, "pick up bread on the way home") == set()
    assert ratings_of_turns(store, ann, [turn]) == {turn: 1.0}
    rate(store, ann, run, "down")  # the invocation on its own: a direct rating wins in its view
    with store.session() as s:
        assert ratings_of_invocations(s, ann, [run]) == {run: -1.0}


def test_only_the_owner_may_rate_and_bad_input_is_refused_whole(store: Store) -> None:
    ann, ben = user(store, "ann"), user(store, "ben")
    turn, (run,) = a_turn(store, ann, "add milk", [("grocery", "add_items")])
    for target in (f"turn_{turn}", run, f"turn_{turn + 1000}", "inv_" + "0" * 32):
        with pytest.raises(DreamerError) as refused:
            rate(store, ben, target, "down")
        assert refused.value.code == "not_found"
    for target, rating, note, says in [
        ("turn_abc", "up", None, "neither a Sidekick answer"),
        (f"turn_{turn}", "meh", None, 'a rating is "up" or "down"'),
        (f"turn_{turn}", "up", "x" * 501, "at most 500 characters"),
        (42, "up", None, "name what you rate"),
    ]:
        with pytest.raises(DreamerError) as bad:
            rate(store, ann, target, rating, note)
        assert bad.value.code == "invalid_argument" and says in bad.value.message
    assert rewards(store) == []
