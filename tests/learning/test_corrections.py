"""Reading a correction: "no, I meant my calendar" and its kin, and what is not one."""

from __future__ import annotations

import pytest

from dreamer.sidekick.dialogue.corrections import correction, rephrases


@pytest.mark.parametrize(("text", "meant"), [
    ("no, I meant my calendar", "my calendar"),
    ("No I meant: add milk to the grocery list.", "add milk to the grocery list"),
    ("nope, not that, i mean my notes", "my notes"),
    ("I meant recipe ideas with tofu", "recipe ideas with tofu"),
    ("not that one, the notes", "the notes"),
    ("wrong one! what i meant was show my notes", "show my notes"),
    ("no, I meant my calendar’s agenda", "my calendar's agenda"),
])
def test_corrections_name_what_was_meant(text: str, meant: str) -> None:
    assert correction(text) == meant


@pytest.mark.parametrize("text", ["no thanks", "no", "add milk", "I meant", "meanwhile add milk", "no,", "x" * 5000,
                                  "oops, take that off again", "actually make that oat milk", "sorry, and bread too"])
def test_other_messages_are_not_corrections(text: str) -> None:
    assert correction(text) is None


def test_while_a_question_is_open_only_i_meant_corrects() -> None:
    assert correction("no, cancel", question_open=True) is None  # the question's answer
    assert correction("no, I meant my notes", question_open=True) == "my notes"


def test_a_rephrasing_shares_a_word_that_carries_meaning() -> None:
    assert rephrases("grab some oat milk", "add oat milk to my grocery list")
    assert not rephrases("grab some of it", "show my calendar for the week")


def test_what_was_meant_is_planned_over_the_starter_functions() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sidekick"))
    from routing_eval import load_tools

    from dreamer.sidekick.dialogue.corrections import meant
    from dreamer.sidekick.planner import OfflinePlanner, PlanContext

    tools, planner, context = load_tools(), OfflinePlanner(), PlanContext()

    def first(rest: str, said: str, wrong: set[str], after_miss: bool = False) -> str | None:
        found = meant(rest, said, wrong, tools, context, planner.plan, after_miss=after_miss)
        if found is None:
            return None
        steps = found.steps or (found.pending.partial.steps if found.pending else ())
        return steps[0].name if steps else None

    # Pointing at an agent: the earlier words are planned again among its functions.
    assert first("my calendar", "put dentist on friday at 3pm", {"grocery.add_items"}) == "calendar.add_event"
    # A request of its own runs as it stands, even the function that was "wrong" (its values were).
    assert first("add oat milk to my grocery list", "put oat milk down for the store",
                 {"grocery.add_items"}) == "grocery.add_items"
    assert first("show my notes", "what's in my notes", {"notes.save"}) == "notes.recent"
    assert first("recipe ideas with tofu", "find me something with tofu", set(), after_miss=True) == "recipes.suggest"
    assert first("xyzzy", "plugh", set()) is None
