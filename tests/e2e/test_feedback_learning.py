"""Thumbs up/down kept as rewards, and corrections that change the next routing: per user,
through the chat API and the CLI of a real kernel with the starter agents."""

from __future__ import annotations

from typing import Any

from kernelproc import KernelProc

MISSED = "oat milk run"  # fits nothing today (the rephrasing below teaches it)


def new_user(kernel: KernelProc, name: str) -> str:
    with kernel.client() as c:
        made = c.post("/v1/users", json={"name": name})
        made.raise_for_status()
        return made.json()["token"]


def say(kernel: KernelProc, text: str, token: str, conversation: str | None = None) -> dict[str, Any]:
    with kernel.client(token) as c:
        done = c.post("/v1/chat", json={"message": text, "conversation_id": conversation, "stream": False})
        done.raise_for_status()
        return done.json()


def names(turn: dict[str, Any]) -> list[str]:
    return [f"{c['agent']}.{c['function']}" for c in turn["calls"]]


def test_a_rating_is_a_user_reward_on_the_turn_and_its_invocations_and_only_the_owner_may_give_it(
    kernel: KernelProc,
) -> None:
    ann, ben = new_user(kernel, "fb-ann"), new_user(kernel, "fb-ben")
    turn = say(kernel, "add rye bread to my grocery list", ann)
    assert turn["turn_id"].startswith("turn_") and names(turn) == ["grocery.add_items"]
    run = turn["calls"][0]["invocation_id"]
    with kernel.client(ann) as c:
        rated = c.post("/v1/feedback", json={"target": turn["turn_id"], "rating": "down", "note": "wrong  list"})
        assert rated.status_code == 200, rated.text
        assert rated.json()["invocations"] == [run]
        rewards = c.get(f"/v1/invocations/{run}").json()["rewards"]
        assert [(r["source"], r["value"], r["note"]) for r in rewards] == [("user", -1.0, "wrong list")]
        # Rating again replaces the earlier rating; the conversation shows the one kept.
        c.post("/v1/feedback", json={"target": turn["turn_id"], "rating": "up"}).raise_for_status()
        rewards = c.get(f"/v1/invocations/{run}").json()["rewards"]
        assert [(r["source"], r["value"]) for r in rewards] == [("user", 1.0)]
        shown = c.get(f"/v1/conversations/{turn['conversation_id']}").json()["messages"]
        assert [m.get("rating") for m in shown if m["role"] == "assistant"] == ["up"]
        # An invocation can be rated on its own.
        c.post("/v1/feedback", json={"target": run, "rating": "down"}).raise_for_status()
        assert sorted(r["value"] for r in c.get(f"/v1/invocations/{run}").json()["rewards"]) == [-1.0, 1.0]
        bad = c.post("/v1/feedback", json={"target": "turn_x", "rating": "up"})
        assert bad.json()["error"]["code"] == "invalid_argument" and "neither a Sidekick answer" in bad.json()["error"]["message"]
        long = c.post("/v1/feedback", json={"target": run, "rating": "up", "note": "x" * 600})
        assert long.json()["error"]["code"] == "invalid_argument" and "at most 500 characters" in long.json()["error"]["message"]
    with kernel.client(ben) as c:  # another user's answer and invocation do not exist for ben
        for target in (turn["turn_id"], run):
            refused = c.post("/v1/feedback", json={"target": target, "rating": "down"})
            assert refused.status_code == 404, refused.text
    with kernel.client(ann) as c:
        assert len(c.get(f"/v1/invocations/{run}").json()["rewards"]) == 2  # ben's tries kept nothing
    done = kernel.cli_json("feedback", run, "up", "--note", "fine after all", token=ann)
    assert isinstance(done, dict) and done["rating"] == "up" and done["note"] == "fine after all"
    said = kernel.cli_json("chat", "--new", "add kale to my grocery list", token=ann)
    assert isinstance(said, dict) and said["turn_id"].startswith("turn_")
    plain = kernel.cli("feedback", said["turn_id"], "down", token=ann)
    assert plain.returncode == 0 and "thumbs down kept on" in plain.stdout, plain.stderr
    refused = kernel.cli("feedback", said["turn_id"], "sideways", token=ann)
    assert refused.returncode != 0 and 'a rating is "up" or "down"' in refused.stderr + refused.stdout


def test_a_rephrasing_after_a_miss_routes_that_user_only_until_the_administrator_promotes_it(kernel: KernelProc) -> None:
    ann, ben = new_user(kernel, "learn-ann"), new_user(kernel, "learn-ben")
    missed = say(kernel, MISSED, ann)
    assert missed["calls"] == []
    fixed = say(kernel, "add oat milk to my grocery list", ann, missed["conversation_id"])
    assert names(fixed) == ["grocery.add_items"]
    # From the next message on, in a new conversation: the same words, and words near them.
    assert names(say(kernel, MISSED, ann)) == ["grocery.add_items"]
    near = say(kernel, "rice run", ann)
    assert names(near) == ["grocery.add_items"] and near["calls"][0]["args"] == {"items": ["rice"]}
    assert say(kernel, MISSED, ben)["calls"] == []  # ben taught nothing
    listed = kernel.cli_json("learned", token=ann)
    assert isinstance(listed, dict)
    (example,) = [x for x in listed["examples"] if x["phrase"] == MISSED]
    assert (example["function"], example["kind"], example["source"], example["everyone"]) == (
        "add_items", "prefer", "rephrased", False)
    with kernel.client(ben) as c:
        assert c.delete(f"/v1/learned/{example['id']}").status_code == 404  # not ben's to delete
        assert c.post(f"/v1/learned/{example['id']}/promote", json={}).status_code == 403
    promoted = kernel.cli_json("learned", "promote", str(example["id"]))  # the administrator
    assert isinstance(promoted, dict) and promoted["everyone"] is True
    assert names(say(kernel, MISSED, ben)) == ["grocery.add_items"]
    kernel.cli_json("learned", "promote", str(example["id"]), "--undo")
    assert say(kernel, MISSED, ben)["calls"] == []
    gone = kernel.cli("learned", "delete", str(example["id"]), token=ann)
    assert gone.returncode == 0, gone.stderr
    assert say(kernel, MISSED, ann)["calls"] == []


def test_no_i_meant_and_a_thumbs_down_demote_but_an_undo_does_not(kernel: KernelProc) -> None:
    ann = new_user(kernel, "learn-fix")
    wrong = say(kernel, "my notes please", ann)  # asks for a note's text today: the wrong function
    assert wrong["pending"] is not None and wrong["pending"]["kind"] == "missing"
    meant = say(kernel, "no, I meant show my notes", ann, wrong["conversation_id"])
    assert names(meant) == ["notes.recent"]
    assert names(say(kernel, "my notes please", ann)) == ["notes.recent"]
    kinds = {(x["function"], x["kind"]) for x in kernel.cli_json("learned", token=ann)["examples"]  # type: ignore[index]
             if x["phrase"] == "my notes please"}
    assert kinds == {("recent", "prefer"), ("save", "avoid")}

    added = say(kernel, "buy some bread", ann)
    assert names(added) == ["grocery.add_items"]
    with kernel.client(ann) as c:
        c.post("/v1/feedback", json={"target": added["turn_id"], "rating": "down"}).raise_for_status()
    assert "grocery.add_items" not in names(say(kernel, "buy some bread", ann))

    first = say(kernel, "add lemons to my grocery list", ann)
    undone = say(kernel, "undo that", ann, first["conversation_id"])
    assert names(undone) == ["grocery.remove_items"]
    # An undo reverses the effect; the words went to the right function and still do.
    assert names(say(kernel, "add lemons to my grocery list", ann)) == ["grocery.add_items"]


def test_a_user_who_opted_out_is_taught_nothing(kernel: KernelProc) -> None:
    ann = new_user(kernel, "learn-off")
    off = kernel.cli_json("learned", "off", token=ann)
    assert off == {"learning": False}
    missed = say(kernel, MISSED, ann)
    say(kernel, "add oat milk to my grocery list", ann, missed["conversation_id"])
    assert say(kernel, MISSED, ann)["calls"] == []
    listed = kernel.cli_json("learned", token=ann)
    assert listed == {"learning": False, "examples": []}
    with kernel.client(ann) as c:
        assert c.get("/v1/learned/settings").json() == {"learning": False}
