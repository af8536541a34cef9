"""The conversations of issue 16, word for word, through a real kernel and the chat API / `dreamer chat`."""

from __future__ import annotations

import json
from typing import Any

from kernelproc import KernelProc


def say(kernel: KernelProc, text: str, conversation: str | None = None, token: str | None = None) -> dict[str, Any]:
    with kernel.client(token) as c:
        out = c.post("/v1/chat", json={"message": text, "conversation_id": conversation, "stream": False}, timeout=120)
    assert out.status_code == 200, out.text
    return out.json()


def called(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["function"], json.dumps(c["args"], sort_keys=True)) for c in out["calls"]]


def items(kernel: KernelProc, token: str | None = None) -> list[str]:
    with kernel.client(token) as c:
        return [i.lower() for i in c.post("/v1/agents/grocery/functions/list_items", json={"args": {}}).json()["result"]["items"]]


def clear(kernel: KernelProc, token: str | None = None) -> None:
    with kernel.client(token) as c:
        c.post("/v1/agents/grocery/functions/clear", json={"args": {}, "confirm": True}).raise_for_status()


def new_user(kernel: KernelProc, name: str) -> str:
    with kernel.client() as c:
        made = c.post("/v1/users", json={"name": name})
        made.raise_for_status()
        return made.json()["token"]


def test_an_open_question_does_not_swallow_a_new_request(kernel: KernelProc) -> None:
    token = new_user(kernel, "dlg-question")
    asked = say(kernel, "add bread", token=token)
    assert asked["pending"]["kind"] == "choose" and asked["calls"] == []
    out = say(kernel, "put cheese on the grocery list", asked["conversation_id"], token)
    assert [(c["function"], c["args"]) for c in out["calls"]] == [("add_items", {"items": ["cheese"]})]
    assert out["reply"].startswith("I've dropped the earlier question.") and out["pending"] is None
    assert "bread" not in items(kernel, token)

    first = say(kernel, "remind me to call mom", token=token)
    assert first["calls"] == [] and first["pending"] is not None
    hr = say(kernel, "how many employees in operations were absent last month?", first["conversation_id"], token)
    assert all(c["function"] != "add_event" for c in hr["calls"]) and [c["agent"] for c in hr["calls"]] == ["sql-explorer"]


def test_follow_ups_and_undo(kernel: KernelProc) -> None:
    clear(kernel)
    cid = say(kernel, "add milk to my grocery list")["conversation_id"]
    more = say(kernel, "and bread too", cid)
    assert called(more) == [("add_items", '{"items": ["bread"]}')] and more["reply"] == "Added bread to your grocery list."
    also = say(kernel, "also butter please", cid)
    assert called(also) == [("add_items", '{"items": ["butter"]}')]
    oat = say(kernel, "actually make that oat milk", cid)
    assert called(oat) == [("remove_items", '{"items": ["butter"]}'), ("add_items", '{"items": ["oat milk"]}')]
    assert items(kernel) == ["milk", "bread", "oat milk"]
    undone = say(kernel, "undo that", cid)
    assert called(undone) == [("remove_items", '{"items": ["oat milk"]}')]
    assert undone["reply"] == "Undone. Removed oat milk from your grocery list."
    again = say(kernel, "oops, take that off again", cid)
    assert called(again) == [("remove_items", '{"items": ["bread"]}')] and items(kernel) == ["milk"]

    clear(kernel)
    with kernel.client() as c:
        c.post("/v1/agents/grocery/functions/add_items", json={"args": {"items": ["milk", "eggs", "flour"]}})
    cid = say(kernel, "what's on my grocery list")["conversation_id"]
    assert say(kernel, "remove the eggs", cid)["calls"][0]["args"] == {"items": ["eggs"]}
    assert items(kernel) == ["milk", "flour"]


def test_the_second_one_and_content_in_replies(kernel: KernelProc) -> None:
    ideas = say(kernel, "suggest an italian recipe")
    second = ideas["calls"][0]["result"]["recipes"][1]["name"]
    picked = say(kernel, "the second one", ideas["conversation_id"])
    assert called(picked) == [("get_recipe", json.dumps({"name": second}))]
    carbonara = say(kernel, "how do I make carbonara")["reply"]
    assert "Steps:\n1. Boil the spaghetti" in carbonara and "- 150 g pancetta" in carbonara
    with kernel.client() as c:
        c.post("/v1/agents/notes/functions/save", json={"args": {"text": "wifi password: correct-horse"}})
    wifi = say(kernel, "find my notes about wifi")["reply"]
    assert "correct-horse" in wifi and "fields" not in wifi
    dinner = say(kernel, "plan dinner")["reply"]
    assert dinner.startswith("Dinner for ") and "weekday:" not in dinner and "✓" not in dinner


def test_small_talk_help_and_out_of_scope(kernel: KernelProc) -> None:
    for text in ("thanks!", "hi there"):
        out = say(kernel, text)
        assert out["calls"] == [] and len(out["reply"]) < 120, out["reply"]
    weather = say(kernel, "what's the weather tomorrow?")
    assert weather["calls"] == [] and "gallery" in weather["reply"] and weather["reply"].count("\n") == 0
    help_ = say(kernel, "what can you do?")["reply"]
    assert len(help_) < 1500 and "grocery" in help_ and "recipes" in help_
    assert "uid" not in help_ and "ISO 8601" not in help_ and "[start, end)" not in help_


def test_a_picked_option_routes_directly_next_time_for_that_user_only(kernel: KernelProc) -> None:
    ann, bob = new_user(kernel, "dlg-ann"), new_user(kernel, "dlg-bob")
    asked = say(kernel, "add garlic bread", token=ann)
    assert asked["pending"]["kind"] == "choose"
    grocery = next(i for i, label in enumerate(asked["pending"]["options"], 1) if "grocery" in label)
    say(kernel, str(grocery), asked["conversation_id"], ann)
    direct = say(kernel, "Add garlic bread!", token=ann)  # a new conversation, other capitals and punctuation
    assert called(direct) == [("add_items", '{"items": ["garlic bread"]}')] and direct["pending"] is None
    # Bob never taught anything: he is still asked.
    assert say(kernel, "add garlic bread", token=bob)["pending"]["kind"] == "choose"


def test_dreamer_chat_follow_up_by_conversation_id(kernel: KernelProc) -> None:
    clear(kernel)
    first = json.loads(kernel.cli("chat", "add apples to my grocery list", "--json", "--new").stdout)
    done = kernel.cli("chat", "and pears too", "--conversation", first["conversation_id"], "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert called(out) == [("add_items", '{"items": ["pears"]}')] and items(kernel) == ["apples", "pears"]
