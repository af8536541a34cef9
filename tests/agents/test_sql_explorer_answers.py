"""How the sql-explorer's offline answers read and what they may not do, `ask` called in this
process over the kernel's DataService (sql_eval.in_process_ask): measures said in other words
count what they say, a top N names exactly N, a second grouping is answered or refused in
words (never dropped), questions about the asker are refused, values are said by their labels,
two people with the same name are told apart, and a long grouped answer is not cut at a page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sql_eval import World, build_world, in_process_ask

Ask = Callable[[str, str], dict[str, Any]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    made = build_world(tmp_path_factory.mktemp("answers"))
    yield made
    made.store.engine.dispose()


@pytest.fixture(scope="module")
def ask(world: World) -> Ask:
    answer = in_process_ask(world)
    return lambda question, user="hr_admin": answer(question, user) or {}


def _one(world: World, sql: str, user: str = "hr_admin") -> Any:
    return world.truth_sql(sql, user)[0][0]


def test_sick_days_count_sick_absences_only(ask: Ask, world: World) -> None:
    got = ask("how many sick days were there in total?", "hr_admin")
    sick = _one(world, "SELECT COUNT(*) FROM absence_records WHERE reason_code = 'SICK'")
    every = _one(world, "SELECT COUNT(*) FROM absence_records")
    assert got["value"] == sick < every
    assert "sick" in got["reply"] and f"{sick} " in got["reply"]
    called = ask("how many people called in sick?", "hr_admin")
    assert called["value"] == _one(world, "SELECT COUNT(DISTINCT employee_id) FROM absence_records "
                                          "WHERE reason_code = 'SICK'")


def test_a_top_n_names_exactly_n_and_says_who_ties_with_the_last(ask: Ask, world: World) -> None:
    got = ask("which 3 departments have the most employees?", "hr_admin")
    assert len(got["top"]) == 3 and got["reply"].startswith("The 3 departments with the most employees")
    counts = sorted((r[0] for r in world.truth_sql("SELECT COUNT(*) FROM employees GROUP BY department", "hr_admin")),
                    reverse=True)
    assert sorted((g["value"] for g in got["groups"] if g["code"] in got["top"]), reverse=True) == counts[:3]
    one = ask("which 3 departments have the most employees?", "ops_manager")  # only D042 in view
    assert one["top"] == ["D042"] and "only 1 department" in one["reply"]
    earners = ask("top 2 earners", "hr_admin")
    assert len(earners["top_ids"]) == 2 and len(earners["top"]) == 2


def test_a_second_grouping_is_answered_and_a_third_refused_in_words(ask: Ask, world: World) -> None:
    got = ask("absences per department per reason", "hr_admin")
    want = world.truth_sql("SELECT e.department, a.reason_code, COUNT(*) FROM absence_records a JOIN employees e "
                           "ON a.employee_id = e.employee_id GROUP BY 1, 2", "hr_admin")
    assert {(g["code"], g["code2"]): g["value"] for g in got["groups"]} == {(d, r): n for d, r, n in want}
    assert "Absences per department and reason" in got["reply"] and "no-show" in got["reply"]
    third = ask("absences per department per reason per month", "hr_admin")
    assert "groups" not in third and "value" not in third and "'month'" in third["reply"]


@pytest.mark.parametrize("question", ["how many sick days did I take this year?", "what is my salary?",
                                      "am I paid more than the average?", "how many absences do I have"])
def test_questions_about_the_asker_are_refused_plainly(ask: Ask, question: str) -> None:
    got = ask(question, "hr_admin")
    assert got["refused"] == "about_asker" and "value" not in got and "groups" not in got
    assert "which employee you are" in got["reply"] and "could not place" not in got["reply"]


def test_questions_that_ask_for_something_are_not_about_the_asker(ask: Ask) -> None:
    assert "value" in ask("can I see how many employees work in sales?", "hr_admin")
    assert "value" in ask("I want to know how many absences there were last month", "hr_admin")


def test_refusals_read_as_sentences(ask: Ask) -> None:
    average = ask("what is the average of absences?", "hr_admin")["reply"]
    assert average.startswith("I can take an average of salary only") and " an total" not in average
    total = ask("what is the total number of absences?", "hr_admin")
    assert "value" in total and " an " not in total["reply"]


def test_values_are_said_by_their_labels(ask: Ask) -> None:
    status = ask("how many employees per status", "hr_admin")["reply"]
    assert "on leave" in status and "on_leave" not in status
    reasons = ask("absences by reason", "hr_admin")["reply"]
    assert "no-show" in reasons and "NO_SHOW" not in reasons and "SICK" not in reasons
    one = ask("how many no-shows last month?", "hr_admin")["reply"]
    assert "no-show" in one and "NO_SHOW" not in one
    leave = ask("leave per type", "hr_admin")["reply"]
    assert "certified sick" in leave and "sick_certified" not in leave


def test_two_people_with_the_same_name_are_told_apart(ask: Ask, world: World) -> None:
    shared = {r[0] for r in world.truth_sql("SELECT name FROM employees GROUP BY name HAVING COUNT(*) > 1", "hr_admin")}
    assert shared  # the demo data has them
    got = ask("top 99 earners", "hr_admin")  # everyone, ranked
    labels = {g["code"]: g["label"] for g in got["groups"]}
    assert len(set(labels.values())) == len(labels)  # one label per person
    for code, label in labels.items():
        name = next(g["name"] for g in got["groups"] if g["code"] == code)
        assert (f"(employee {code})" in label) == (name in shared)


def test_a_grouped_answer_is_not_cut_at_a_page(ask: Ask, world: World) -> None:
    got = ask("remote days per employee per month", "hr_admin")
    (want,) = world.truth_sql("SELECT COUNT(*) FROM (SELECT employee_id, substr(date, 1, 7) FROM attendance "
                              "WHERE status = 'remote' GROUP BY 1, 2)", "hr_admin")[0]
    assert want > 200 and len(got["groups"]) == want == got["total_rows"]
    assert got["truncated"] is False and "more" in got["reply"]


def test_nothing_reaches_the_user_as_error_text(ask: Ask) -> None:
    for question in ("how many absences between banana and 2020", "top 0 earners", "which 3 per month",
                     "how many employees in 31 february", "per department per department", "absences since",
                     "between 5 and", "the 12 top 12 earners per month per year per reason"):
        got = ask(question, "hr_admin")
        assert got.get("reply") and "Traceback" not in got["reply"] and "Error" not in got["reply"], question
        assert not got.get("failed"), (question, got["reply"])


def test_the_model_is_read_from_the_sdk(world: World) -> None:
    """The agent and the kernel read the semantic model with one parser (dreamer.sdk.semantic)."""
    root = Path(__file__).resolve().parents[2] / "agents" / "sql_explorer" / "sql_explorer"
    assert not (root / "model.py").exists()
    assert all("dreamer.sdk.semantic" in (root / f).read_text() for f in ("compiler.py", "sqlbuild.py", "server.py"))


def test_a_span_said_backwards_is_the_same_span_and_refusals_start_with_a_capital(ask: Ask, world: World) -> None:
    got = ask("how many absences between 2027 and 2020", "hr_admin")
    assert got["value"] == _one(world, "SELECT COUNT(*) FROM absence_records") and "from 1 January 2020" in got["reply"]
    refused = ask("what is the average salary per month", "hr_admin")["reply"]
    assert refused.startswith("Employees have no date to count per month, so I did not guess.")
