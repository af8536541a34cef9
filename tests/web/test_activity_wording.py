"""Activity rows say what happened (web/wording.py): from the function's reply templates, else
the result's shape with the function's verb and description, else what was asked; runs come
together by conversation and by the run that made them."""

from __future__ import annotations

from typing import Any

from dreamer.web.wording import group_runs, run_sentence

ADD = {"name": "add_items", "description": "Add items to the user's grocery list.\n\nItems already there are kept.",
       "reply": ["Added {added} to your grocery list.", "Already on your list: {already_there}."]}
BARE = {"name": "add_items", "description": "Add items to the user's grocery list."}  # no reply templates
NOTES = {"name": "latest", "description": "Show the latest notes.", "reply": ["Your latest notes:{notes.*.text:lines}"]}


def _run(**fields: Any) -> dict[str, Any]:
    return {"id": "r1", "agent": "grocery", "function": "add_items", "caller": "sidekick", "parent_id": None,
            "status": "succeeded", "args": {"items": ["milk", "bread"]}, "result": None,
            "created_at": "2026-12-02T10:00:00+00:00"} | fields


def test_a_run_reads_as_what_its_result_says_happened() -> None:
    added = _run(result={"added": ["milk", "bread"], "already_there": [], "items": ["milk", "bread"]})
    assert run_sentence(added, {"grocery.add_items": ADD}) == "Grocery added milk and bread to your grocery list."
    # Called by another agent, that agent did it.
    by_recipes = _run(caller="recipes", result={"added": [f"item{n}" for n in range(9)]})
    assert run_sentence(by_recipes, {"grocery.add_items": ADD}).startswith("Recipes added item0, item1")
    # A reply that is no past-tense verb reads as the agent's words.
    listed = _run(agent="notes", function="latest", result={"notes": [{"text": "call mum"}, {"text": "buy stamps"}]})
    assert run_sentence(listed, {"notes.latest": NOTES}) == "Notes: Your latest notes: call mum, buy stamps"


def test_without_templates_the_verb_description_and_result_shape_say_it() -> None:
    fns = {"grocery.add_items": BARE}
    assert run_sentence(_run(caller="recipes", result={"count": 9}), fns) == "Recipes added 9 items to your grocery list"
    assert run_sentence(_run(result={"added": ["milk", "bread"]}), fns) == "Grocery added milk and bread to your grocery list"
    assert run_sentence(_run(result=["a"]), fns) == "Grocery added 1 item to your grocery list"
    made = _run(agent="calendar", function="create_event", caller="user", result={"id": 4, "title": "Dentist"})
    described = {"calendar.create_event": {"description": "Create an event on the user's calendar."}}
    assert run_sentence(made, described) == "Calendar created event “Dentist” on your calendar"
    assert run_sentence(_run(function="plan_dinner", result={"reply": "Pasta tonight."}), {}) == "Grocery: Pasta tonight."


def test_what_was_asked_when_nothing_fits_or_nothing_happened() -> None:
    asked = "Sidekick asked grocery to add items: milk, bread"
    assert run_sentence(_run(result={"ok": True}), {"grocery.add_items": BARE}) == asked  # no shape that says what
    assert run_sentence(_run(status="failed", result=None), {"grocery.add_items": ADD}) == asked
    assert run_sentence(_run(status="running"), {"grocery.add_items": ADD}) == asked
    # Its entry unknown (uninstalled since): the function's name still gives the verb.
    assert run_sentence(_run(result={"added": ["milk"]})) == "Grocery added milk"


def test_runs_come_together_by_conversation_and_by_the_run_that_made_them() -> None:
    chat = {"id": "c1", "title": "add milk"}
    runs = [  # newest first, as GET /v1/invocations answers
        _run(id="a", conversation=chat, root_id="a"),
        _run(id="b", conversation=None, root_id="b", agent="recipes", function="plan_dinner", caller="user"),
        _run(id="c", conversation=None, root_id="b", parent_id="b", caller="recipes"),
        _run(id="d", conversation=chat, root_id="d"),
        _run(id="e", conversation=None, root_id="zz", parent_id="zz", caller="recipes"),  # its run is on another page
        _run(id="f", conversation=None, root_id="f", caller="user"),
        _run(id="g", conversation=None, root_id="g", caller="user"),
    ]
    [(_, blocks)] = group_runs(runs)  # one day
    shape = [(b["conversation"] and b["conversation"]["id"], b["earlier"], [r["id"] for r in b["rows"]]) for b in blocks]
    # In the order of each block's newest run; runs that belong to nothing larger share a block.
    assert shape == [("c1", None, ["a", "d"]), (None, None, ["b"]), (None, "zz", ["e"]), (None, None, ["f", "g"])]
    plan = blocks[1]["rows"][0]
    assert [c["id"] for c in plan["children"]] == ["c"]
    assert all(r["sentence"] for b in blocks for r in b["rows"])
