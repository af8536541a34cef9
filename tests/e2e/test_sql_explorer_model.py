"""The sql-explorer's explorer loop with a model (the scripted fake provider, over HTTP):
a failed first SQL corrected after re-reading the schema, a question back to the user,
and the reviewer revising a query. The kernel guards every query whatever the model writes."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))

from kernelproc import KernelProc, start_kernel
from llm_server import FakeLLMServer, Text

QUESTION = "how many people in logistics have ever been absent?"
RIGHT = ("SELECT COUNT(DISTINCT a.employee_id) FROM absence_records a JOIN employees e "
         "ON a.employee_id = e.employee_id WHERE e.department = 'D042'")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def kernel(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("sqlx-model") / "home", fake.kernel_env())
    try:
        granted = k.cli("grant", "sql-explorer", "llm")  # a starter gets no model access until the user grants it
        assert granted.returncode == 0, granted.stderr
        yield k
    finally:
        k.stop()


@pytest.fixture(autouse=True)
def clean_script(fake: FakeLLMServer) -> Iterator[None]:
    fake.reset()
    yield
    assert fake.pending == 0, "a scripted reply was not used"


def _act(**action: object) -> Text:
    return Text(json.dumps(action))


def _prompt(fake: FakeLLMServer, i: int) -> str:
    return fake.requests[i].body["messages"][-1]["content"]


def _ask(kernel: KernelProc, **args: object) -> dict:
    return kernel.cli_json("call", "sql-explorer", "ask", json.dumps({"question": QUESTION, **args}))["result"]


def test_a_failed_first_query_is_corrected_after_reading_the_schema(kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(
        _act(action="execute_sql", sql="SELECT COUNT(DISTINCT employee_id) FROM absences WHERE dept = 'D042'"),
        _act(action="get_schema", table="absence_records"),
        _act(action="execute_sql", sql=RIGHT),
        Text(json.dumps({"verdict": "approve", "reason": "distinct employees of D042"})),  # a join: reviewed
        _act(action="answer", text="They are counted once each."),
    )
    out = _ask(kernel)
    with sqlite3.connect(kernel.home / "data" / "hr-demo.db") as db:
        truth = db.execute(RIGHT).fetchall()
    assert out["via"] == "model" and out["sql"] == RIGHT and out["rows"] == [list(truth[0])]
    assert "CATALOG" in _prompt(fake, 0) and "people_says" in _prompt(fake, 0)  # discovered, with the semantic model
    assert "ERROR (sql_refused)" in _prompt(fake, 1) and "absences" in _prompt(fake, 1)
    assert '"absence_date"' in _prompt(fake, 2)  # the schema it re-read is in front of it when it writes again
    trace = kernel.client().get(f"/v1/invocations/{kernel_last_invocation(kernel)}").json()["spans"]
    names = [s["name"] for s in trace]
    assert names.count("execute_tool data.query") == 2 and "execute_tool data.schema" in names
    assert names.count("execute_tool llm.complete") == 5
    assert "Does the SQL answer the question" in _prompt(fake, 3)


def kernel_last_invocation(kernel: KernelProc) -> str:
    listed = kernel.client().get("/v1/invocations", params={"agent": "sql-explorer", "limit": 1}).json()
    return listed[0]["id"]


def test_the_model_asks_the_user_when_a_name_fits_several(kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(
        _act(action="get_distinct_values", table="employees", column="dept_name"),
        _act(action="ask_user", question="Which operations?", options=[
            {"label": "IT Operations", "dimension": "department", "value": "D035"},
            {"label": "Field Operations", "dimension": "department", "value": "D047"}]),
    )
    out = _ask(kernel)
    assert out["ask_user"]["question"] == "Which operations?"
    assert out["ask_user"]["options"][1]["args"] == {"question": QUESTION, "choices": {"department": "D047"}}
    assert "Field Operation" in _prompt(fake, 1)  # the distinct values, misspellings included


def test_the_reviewer_blocks_a_query_and_the_model_hears_why(kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(
        _act(action="execute_sql", sql=RIGHT),
        Text(json.dumps({"verdict": "block", "reason": "salaries are not part of the question"})),
        _act(action="answer", text="I could not answer that."),
    )
    out = _ask(kernel, review=True)
    assert out["sql"] is None  # nothing ran
    assert "reviewer blocked" in _prompt(fake, 2)


def test_the_reviewer_revises_a_query_that_counts_rows(kernel: KernelProc, fake: FakeLLMServer) -> None:
    wrong = RIGHT.replace("COUNT(DISTINCT a.employee_id)", "COUNT(*)")
    fake.script(
        _act(action="execute_sql", sql=wrong),
        Text(json.dumps({"verdict": "revise", "reason": "count distinct employees", "sql": RIGHT})),
        _act(action="answer", text="Counted once each."),
    )
    out = _ask(kernel, review=True)
    assert out["sql"] == RIGHT
    assert "Does the SQL answer the question" in _prompt(fake, 1)
