"""Answering a question: choosing, giving a missing value, confirming, cancelling, changing the subject."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from sidekick_support import NOW, TZ, calls

from dreamer.sidekick.planner import (
    Clarification,
    FunctionFacts,
    PartialPlan,
    Plan,
    PlanContext,
    Step,
    Tool,
    advance,
    resume,
)

Ask = Callable[..., Plan]


def todo_tool() -> Tool:
    schema = {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}
    return Tool("todo", "add_task", "Add a task to the to-do list.", schema, ["add {task} to my list"])


@pytest.fixture
def choice(ask: Ask, tools: list[Tool]) -> Clarification:
    plan = ask("add milk to my list", tools_=[*tools, todo_tool()])
    assert plan.pending is not None and plan.pending.kind == "choose"
    return plan.pending


def stored(pending: Clarification) -> Clarification:
    """The clarification as a conversation would keep it between two requests."""
    return Clarification.from_dict(json.loads(json.dumps(pending.to_dict())))


@pytest.mark.parametrize("answer", ["2", "the second one", "number two", "option 2", "2nd", "the last one"])
def test_choose_by_number(choice: Clarification, answer: str) -> None:
    second = choice.options[1].step
    plan = resume(stored(choice), answer)
    assert plan is not None and plan.pending is None
    assert calls(plan) == [(second.name, dict(second.args))]


@pytest.mark.parametrize(("answer", "name"), [("the grocery one", "grocery.add_items"), ("todo", "todo.add_task"),
                                              ("the task list", "todo.add_task")])
def test_choose_by_words(choice: Clarification, answer: str, name: str) -> None:
    plan = resume(choice, answer)
    assert plan is not None and [n for n, _ in calls(plan)] == [name]


def test_an_answer_that_is_no_choice_is_a_new_request(ask: Ask, tools: list[Tool], choice: Clarification) -> None:
    assert resume(choice, "what's on my calendar tomorrow") is None
    assert resume(choice, "7") is None  # there is no seventh option
    plan = ask("what's on my calendar tomorrow", pending=choice, tools_=[*tools, todo_tool()])
    assert calls(plan) == [("calendar.agenda", {"day": "tomorrow"})]


@pytest.mark.parametrize("answer", ["cancel", "never mind", "neither", "forget it", "none of them"])
def test_cancel(choice: Clarification, answer: str) -> None:
    plan = resume(choice, answer)
    assert plan is not None and plan.steps == () and plan.pending is None and plan.reply


def test_missing_value_is_read_by_its_type(ask: Ask) -> None:
    asked = ask("schedule a meeting")
    assert asked.pending is not None and asked.pending.kind == "missing"
    plan = ask("next tuesday at 4", pending=stored(asked.pending))
    assert calls(plan) == [("calendar.add_event", {"title": "meeting", "start": "2025-03-18T16:00+01:00"})]
    assert plan.pending is None
    # Something that is no time is not taken as one: it is planned as a new request instead.
    plan = ask("show my shopping list", pending=asked.pending)
    assert calls(plan) == [("grocery.list_items", {})]


def test_missing_list_and_text_values(ask: Ask) -> None:
    asked = ask("add to my grocery list")
    assert asked.pending is not None and asked.pending.question == "Add items to your grocery list: which items?"
    assert calls(ask("milk, eggs and bread", pending=asked.pending)) == [
        ("grocery.add_items", {"items": ["milk", "eggs", "bread"]})]
    asked = ask("save the article")
    assert asked.pending is not None and asked.pending.missing == ("url",)
    assert calls(ask("it's example.com/read-me", pending=asked.pending)) == [
        ("notes.save_article", {"url": "https://example.com/read-me"})]


def test_the_day_of_an_answer_is_the_day_of_the_question(ask: Ask) -> None:
    asked = ask("schedule a meeting")
    assert asked.pending is not None
    # Answered a day later: "tomorrow" still means the day after the question was asked.
    later = PlanContext(now=NOW.replace(day=13), timezone=TZ)
    plan = resume(stored(asked.pending), "tomorrow at 10am", later)
    assert plan is not None and dict(plan.steps[0].args)["start"] == "2025-03-13T10:00+01:00"


@pytest.mark.parametrize("answer", ["yes", "Yes please", "sure, go ahead", "ok", "do it"])
def test_confirm_yes(ask: Ask, answer: str) -> None:
    asked = ask("empty the shopping list")
    assert asked.pending is not None and asked.pending.kind == "confirm"
    plan = resume(stored(asked.pending), answer)
    assert plan is not None and plan.pending is None
    assert [(s.name, s.confirmed) for s in plan.steps] == [("grocery.clear", True)]


@pytest.mark.parametrize("answer", ["no", "nope", "don't", "no thanks", "stop"])
def test_confirm_no(ask: Ask, answer: str) -> None:
    asked = ask("empty the shopping list")
    assert asked.pending is not None
    plan = resume(asked.pending, answer)
    assert plan is not None and plan.steps == () and plan.reply


def test_confirm_other_text_is_a_new_request(ask: Ask) -> None:
    asked = ask("empty the shopping list")
    assert asked.pending is not None
    assert resume(asked.pending, "please") is None
    assert calls(ask("what's for dinner", pending=asked.pending)) == [("recipes.plan_dinner", {})]


def test_questions_come_one_at_a_time_in_step_order() -> None:
    facts = {
        "a.pick": FunctionFacts("Pick one", False, (), {}),
        "b.pick": FunctionFacts("Pick another", False, (), {}),
        "c.need": FunctionFacts("Needs a name", False, ("name",), {"name": {"type": "string"}}),
        "d.danger": FunctionFacts("Delete everything", True, (), {}),
    }
    partial = PartialPlan(
        steps=(Step("a", "pick"), Step("c", "need"), Step("d", "danger")),
        choices=((Step("a", "pick"), Step("b", "pick")), (), ()),
        facts=facts,
        now=NOW.isoformat(),
        timezone=TZ,
    )
    first = advance(partial)
    assert first.pending is not None and first.pending.kind == "choose"
    second = resume(first.pending, "the second")
    assert second is not None and second.pending is not None and second.pending.kind == "missing"
    assert second.pending.question == "Needs a name: what name?"
    third = resume(second.pending, "Ada")
    assert third is not None and third.pending is not None and third.pending.kind == "confirm"
    assert "Delete everything" in third.pending.question
    done = resume(third.pending, "yes")
    assert done is not None and done.pending is None
    assert [(s.name, dict(s.args), s.confirmed) for s in done.steps] == [
        ("b.pick", {}, False), ("c.need", {"name": "Ada"}, False), ("d.danger", {}, True)]


def test_a_single_guess_is_confirmed_or_dropped() -> None:
    facts = {"a.pick": FunctionFacts("Pick one", False, (), {})}
    partial = PartialPlan(steps=(Step("a", "pick"),), choices=((Step("a", "pick"),),), facts=facts)
    asked = advance(partial)
    assert asked.pending is not None and asked.pending.question.endswith("(yes / no)")
    yes = resume(asked.pending, "yes")
    assert yes is not None and [s.name for s in yes.steps] == ["a.pick"] and yes.pending is None
    no = resume(asked.pending, "no")
    assert no is not None and no.steps == () and no.reply


def test_stored_questions_that_were_tampered_with_are_refused_in_one_sentence() -> None:
    with pytest.raises(ValueError, match="cannot be read back"):
        Clarification.from_dict({"kind": "launch", "question": "?"})
    with pytest.raises(ValueError, match="cannot be read back"):
        Clarification.from_dict({"kind": "choose", "options": [{"label": "x"}]})
    broken = Clarification.from_dict({"kind": "missing", "missing": ["x"], "partial": {"steps": [], "index": 4}})
    assert resume(broken, "anything") is None


def test_an_acronym_in_capitals_names_an_option_though_its_letters_spell_a_small_word() -> None:
    from dreamer.sidekick.planner.base import Option, Step
    from dreamer.sidekick.planner.dialog import _pick

    options = tuple(Option(label, Step("sql-explorer", "ask", {"question": label})) for label in (
        "IT Operations (D035)", "Operations and Logistics (D042)", "Field Operations (D047)"))
    assert _pick("it operations please".split(), "IT operations please", options) == options[0].step
    # written in small letters, "it" is the pronoun: "operations" alone names none of them
    assert _pick("it operations please".split(), "it operations please", options) is None
