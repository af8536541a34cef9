"""Reading a message against the conversation (sidekick/dialogue/understand.py), over the starter
agents' real function specs and the offline planner; the calls themselves run in the e2e tests."""

from __future__ import annotations

from typing import Any

from sidekick_support import NOW, TZ

from dreamer.sidekick.dialogue.state import DialogueState
from dreamer.sidekick.dialogue.understand import Understood, understand
from dreamer.sidekick.planner import OfflinePlanner, PlanContext, Tool

PLANNER = OfflinePlanner()


def read(text: str, tools: list[Tool], state: DialogueState | None = None, pending: Any = None,
         taught: list[tuple[str, str, dict]] | None = None) -> Understood:
    return understand(text, tools, PlanContext(now=NOW, timezone=TZ), state or DialogueState(), pending,
                      PLANNER.plan, lambda _: taught or [])


def after(tools: list[Tool], *calls: dict[str, Any]) -> DialogueState:
    return DialogueState().with_calls([{"ok": True, **c} for c in calls], {t.name: t.undo for t in tools})


def steps(seen: Understood) -> list[tuple[str, dict]]:
    assert seen.plan is not None
    return [(s.name, dict(s.args)) for s in seen.plan.steps]


def test_a_request_of_its_own_drops_the_open_question(tools: list[Tool]) -> None:
    asked = read("add bread", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "choose"
    seen = read("put cheese on the grocery list", tools, pending=asked.pending)
    assert seen.dropped_question and steps(seen) == [("grocery.add_items", {"items": ["cheese"]})]
    picked = read("the grocery one", tools, pending=asked.pending)
    assert not picked.dropped_question and steps(picked) == [("grocery.add_items", {"items": ["bread"]})]
    assert picked.picked is not None and picked.picked[0].name == "grocery.add_items"  # what is learned


def test_yes_and_no_in_other_words(tools: list[Tool]) -> None:
    asked = read("clear my grocery list", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "confirm"
    for yes in ("sure, go ahead", "yep", "ok do it"):
        plan = read(yes, tools, pending=asked.pending).plan
        assert plan is not None and [s.confirmed for s in plan.steps] == [True], yes
    for no in ("wait, don't", "no thanks", "hold on"):
        plan = read(no, tools, pending=asked.pending).plan
        assert plan is not None and plan.steps == () and plan.reply and "dropped" in plan.reply, no


def test_undo_runs_the_declared_inverse_and_says_when_it_cannot(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["milk", "tea"]},
                          "result": {"added": ["milk"], "already_there": ["tea"], "items": ["tea", "milk"]}})
    # Only what the call added is taken off: tea was there before.
    assert steps(read("oops, take that off again", tools, state)) == [("grocery.remove_items", {"items": ["milk"]})]
    undone = state.with_calls([{"ok": True, "agent": "grocery", "function": "remove_items",
                                "args": {"items": ["milk"]}, "result": {"removed": ["milk"]}}],
                              {t.name: t.undo for t in tools})
    assert undone.calls[0].undone and undone.calls[1].is_undo
    assert "nothing to undo" in (read("undo that", tools, undone).plan.reply or "")  # type: ignore[union-attr]
    listed = after(tools, {"agent": "grocery", "function": "list_items", "args": {}, "result": {"items": []}})
    assert "can't undo" in (read("undo that", tools, listed).plan.reply or "")  # type: ignore[union-attr]


def test_follow_ups_resolve_against_the_state(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["milk"]},
                          "result": {"added": ["milk"], "already_there": [], "items": ["eggs", "flour", "milk"]}})
    assert steps(read("and bread too", tools, state)) == [("grocery.add_items", {"items": ["bread"]})]
    assert steps(read("also butter please", tools, state)) == [("grocery.add_items", {"items": ["butter"]})]
    assert steps(read("actually make that oat milk", tools, state)) == [
        ("grocery.remove_items", {"items": ["milk"]}), ("grocery.add_items", {"items": ["oat milk"]})]
    assert steps(read("remove the eggs", tools, state)) == [("grocery.remove_items", {"items": ["eggs"]})]
    recipes = after(tools, {"agent": "recipes", "function": "suggest", "args": {"cuisine": "italian"},
                            "result": {"recipes": [{"name": "Penne"}, {"name": "Carbonara"}], "count": 2}})
    assert steps(read("the second one", tools, recipes)) == [("recipes.get_recipe", {"name": "Carbonara"})]
    assert "1 to 2" in (read("the fifth one", tools, recipes).plan.reply or "")  # type: ignore[union-attr]
    day = after(tools, {"agent": "calendar", "function": "agenda", "args": {"day": "tomorrow"}, "result": {}})
    assert steps(read("do the same for friday", tools, day)) == [("calendar.agenda", {"day": "2025-03-14"})]


def test_small_talk_help_and_unknown_requests(tools: list[Tool]) -> None:
    for text in ("thanks!", "hi there"):
        seen = read(text, tools)
        assert seen.how == "smalltalk" and seen.plan is not None and len(seen.plan.reply or "") < 120
    help_ = read("what can you do?", tools).plan
    assert help_ is not None and "grocery" in (help_.reply or "") and "execute_sql" not in (help_.reply or "")
    weather = read("what's the weather tomorrow?", tools).plan
    assert weather is not None and weather.steps == () and "gallery" in (weather.reply or "")


def test_a_taught_phrasing_routes_straight_to_its_function(tools: list[Tool]) -> None:
    seen = read("add bread", tools, taught=[("calendar", "add_event", {"title": "bread"})])
    assert seen.how == "learned" and seen.plan is not None and seen.plan.pending is not None
    # add_event still needs its start: the usual question follows, but no "which did you mean".
    assert seen.plan.pending.kind == "missing" and seen.plan.steps[0].name == "calendar.add_event"
    assert steps(read("add bread", tools, taught=[("grocery", "add_items", {"items": ["bread"]})])) == [
        ("grocery.add_items", {"items": ["bread"]})]
