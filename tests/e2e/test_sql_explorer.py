"""The sql-explorer through a real kernel, sandboxed, with no model: the demo HR data,
scoped per kernel user, the chat's clarification flow, export and the trace."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import date, timedelta

import pytest
from openpyxl import load_workbook

from kernelproc import KernelProc, start_kernel

from dreamer.kernel.data.demo import SCOPES_FILE
from dreamer.kernel.data.scopes import parse_scopes


@pytest.fixture(scope="module")
def hr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, dict[str, str]]]:
    kernel = start_kernel(tmp_path_factory.mktemp("sqlx") / "home")
    try:
        tokens = {name: kernel.cli_json("users", "add", name)["token"] for name in ("ops_manager", "stranger")}
        yield kernel, tokens
    finally:
        kernel.stop()


def _call(kernel: KernelProc, function: str, args: dict, user: str | None = None):
    extra = ("--user", user) if user else ()
    return kernel.cli("call", "sql-explorer", function, json.dumps(args), "--json", *extra)


def _truth(kernel: KernelProc, sql: str) -> list[tuple]:
    with sqlite3.connect(kernel.home / "data" / "hr-demo.db") as db:
        return db.execute(sql).fetchall()


def test_offline_chat_asks_which_operations_and_counts_distinct_employees(hr: tuple[KernelProc, dict]) -> None:
    kernel, _ = hr
    asked = kernel.cli_json("chat", "how many employees in operations were absent last month?")
    pending = asked["pending"]
    assert pending["kind"] == "choose"
    assert sorted(pending["options"]) == ["Field Operations (D047)", "IT Operations (D035)",
                                          "Operations and Logistics (D042)"]
    done = kernel.cli_json("chat", "Operations and Logistics")  # the CLI continues the conversation that asked
    assert done["conversation_id"] == asked["conversation_id"]
    result = done["calls"][-1]["result"]
    first = date.today().replace(day=1)
    start = (first - timedelta(days=1)).replace(day=1)
    (expected,) = _truth(kernel, "SELECT COUNT(DISTINCT a.employee_id) FROM absence_records a JOIN employees e "
                         "ON a.employee_id = e.employee_id WHERE e.department = 'D042' "
                         f"AND a.absence_date >= '{start}' AND a.absence_date < '{first}'")[0]
    (rows,) = _truth(kernel, "SELECT COUNT(*) FROM absence_records a JOIN employees e ON a.employee_id = e.employee_id "
                     f"WHERE e.department = 'D042' AND a.absence_date >= '{start}' AND a.absence_date < '{first}'")[0]
    assert result["measure"] == "absence_employees" and result["value"] == expected
    assert rows > expected  # the demo data makes counting rows the wrong answer
    assert f"{expected} different employees were absent" in done["reply"]
    assert done["pending"] is None


def test_a_question_off_the_semantic_model_says_it_needs_a_model(hr: tuple[KernelProc, dict]) -> None:
    kernel, _ = hr
    out = _call(kernel, "ask", {"question": "which manager has the happiest team?"})
    assert out.returncode == 0, out.stderr
    assert "needs a model" in json.loads(out.stdout)["result"]["answer"]


def test_the_scoped_manager_sees_only_department_d042(hr: tuple[KernelProc, dict]) -> None:
    kernel, _ = hr
    out = _call(kernel, "execute_sql", {"sql": "SELECT COUNT(*), COUNT(DISTINCT department) FROM employees"},
                user="ops_manager")
    (n,) = _truth(kernel, "SELECT COUNT(*) FROM employees WHERE department = 'D042'")[0]
    assert json.loads(out.stdout)["result"]["rows"] == [[n, 1]]
    tables = json.loads(_call(kernel, "list_tables", {}, user="ops_manager").stdout)["result"]
    assert "D042" in tables["scope"]
    # Names resolve within the scope: only one "operations" department exists for this user, so no question.
    asked = json.loads(_call(kernel, "ask", {"question": "employees in operations were absent last month"},
                             user="ops_manager").stdout)["result"]
    assert "ask_user" not in asked and asked["measure"] == "absence_employees" and "D042" in asked["answer"]
    hostile = _call(kernel, "execute_sql", {"sql": "WITH employees AS (SELECT * FROM main.employees) "
                                                   "SELECT COUNT(*) FROM employees"}, user="ops_manager")
    assert hostile.returncode != 0 and json.loads(hostile.stdout)["error"]["code"] == "sql_refused"


def test_a_user_the_scopes_file_does_not_name_is_told_they_see_nothing(hr: tuple[KernelProc, dict]) -> None:
    kernel, _ = hr
    out = _call(kernel, "list_tables", {}, user="stranger")
    error = json.loads(out.stdout)["error"]
    assert out.returncode != 0 and error["code"] == "permission_denied" and "no scope" in error["message"]


def test_export_writes_the_whole_result_and_each_step_is_a_span(hr: tuple[KernelProc, dict]) -> None:
    kernel, _ = hr
    ran = json.loads(_call(kernel, "execute_sql", {"sql": "SELECT employee_id, name FROM employees ORDER BY 1"},
                           user="ops_manager").stdout)
    assert ran["result"]["total_rows"] > len(ran["result"]["rows"]) or ran["result"]["pages"] == 1
    out = json.loads(_call(kernel, "export", {"query_id": ran["result"]["query_id"], "format": "xlsx"},
                           user="ops_manager").stdout)["result"]
    book = load_workbook(kernel.home / "users" / "ops_manager" / "agents" / "sql-explorer" / "data" / out["file"])
    rows = list(book.active.iter_rows(values_only=True))
    assert rows[0] == ("employee_id", "name") and len(rows) - 1 == ran["result"]["total_rows"] == out["rows"]
    with kernel.client() as c:
        spans = c.get(f"/v1/invocations/{ran['invocation_id']}", headers={"X-Dreamer-User": "ops_manager"}).json()["spans"]
    query = next(s for s in spans if s["name"] == "execute_tool data.query")
    assert "temp" in query["attributes"]["dreamer.sql.secured"]
    assert query["attributes"]["db.query.text"].startswith("SELECT employee_id")


def test_only_the_administrator_manages_data_connections(hr: tuple[KernelProc, dict]) -> None:
    kernel, tokens = hr
    listed = kernel.cli_json("data")
    assert [c["name"] for c in listed] == ["hr-demo"]
    refused = kernel.cli("data", "add", "x", "sqlite:////etc/passwd", "--json", token=tokens["ops_manager"])
    assert refused.returncode != 0 and json.loads(refused.stdout)["error"]["code"] == "forbidden"
    scopes = kernel.home / "scopes.yaml"
    scopes.write_text("version: 1\nroles: {everyone: {tables: '*'}}\nusers: {stranger: everyone}\n")
    stale = kernel.cli("data", "scopes", "hr-demo", str(scopes), "--json")
    assert stale.returncode != 0 and "raise `version`" in json.loads(stale.stdout)["error"]["message"]
    bad = kernel.cli("data", "add", "x", "sqlite:////no/such.db", "--json")
    assert bad.returncode != 0 and json.loads(bad.stdout)["error"]["code"] == "invalid_argument"
    assert [c["name"] for c in kernel.cli_json("data")] == ["hr-demo"]  # nothing half-written
    # A newer file whose semantic model names a column the database does not have is refused, naming it.
    shipped = SCOPES_FILE.read_text()
    version = parse_scopes(shipped).version
    scopes.write_text(shipped.replace(f"\nversion: {version}", f"\nversion: {version + 1}", 1)
                      .replace("column: reason_code", "column: reason", 1))
    broken = kernel.cli("data", "scopes", "hr-demo", str(scopes), "--json")
    message = json.loads(broken.stdout)["error"]["message"]
    assert broken.returncode != 0 and "semantic model: dimension reason.column" in message and "'reason'" in message
    assert kernel.cli_json("data")[0]["scopes_version"] == version  # the file in place stays


def test_the_issues_questions_answer_in_one_sentence_without_error_text(hr: tuple[KernelProc, dict]) -> None:
    kernel, _ = hr
    out = _call(kernel, "ask", {"question": "how many people in sales took sick leave in October and show the query"})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["result"]
    assert "KeyError" not in out.stdout and "Traceback" not in out.stdout
    assert result["reply"] == result["answer"] and str(result["value"]) in result["reply"]
    assert "The query: SELECT" in result["reply"] and "JOIN" in result["sql"]
    unplaced = json.loads(_call(kernel, "ask", {"question": "how many eggs do I need for pancakes"}).stdout)["result"]
    assert "'eggs'" in unplaced["reply"] and "value" not in unplaced


def test_a_result_downloads_as_csv_or_xlsx_for_its_user_only(hr: tuple[KernelProc, dict], tmp_path) -> None:
    kernel, tokens = hr
    ran = json.loads(_call(kernel, "execute_sql", {"sql": "SELECT employee_id, name FROM employees ORDER BY 1"},
                           user="ops_manager").stdout)["result"]
    qid = ran["query_id"]
    target = tmp_path / "mine.csv"
    got = kernel.cli("data", "export", qid, "--format", "csv", "--output", str(target), "--json",
                     token=tokens["ops_manager"])
    assert got.returncode == 0, got.stderr
    lines = target.read_text().splitlines()
    assert lines[0] == "employee_id,name" and len(lines) - 1 == ran["total_rows"] == 22
    xlsx = tmp_path / "mine.xlsx"
    assert kernel.cli("data", "export", qid, "-o", str(xlsx), token=tokens["ops_manager"]).returncode == 0
    assert len(list(load_workbook(xlsx).active.iter_rows(values_only=True))) == 23
    # Another user (the administrator included) has no result by that id: results are kept per user.
    other = kernel.cli("data", "export", qid, "--json", "-o", str(tmp_path / "x.xlsx"))
    error = json.loads(other.stdout)["error"]
    assert other.returncode != 0 and error["code"] == "not_found" and "has expired; ask again" in error["message"]
    # Asking the same again is answered from the user's cache, and the span says so.
    again = json.loads(_call(kernel, "execute_sql", {"sql": "SELECT employee_id, name FROM employees ORDER BY 1"},
                             user="ops_manager").stdout)
    with kernel.client() as c:
        spans = c.get(f"/v1/invocations/{again['invocation_id']}", headers={"X-Dreamer-User": "ops_manager"}).json()["spans"]
    query = next(s for s in spans if s["name"] == "execute_tool data.query")
    shipped = parse_scopes(SCOPES_FILE.read_text()).version
    assert query["attributes"]["dreamer.sql.cache"] == "hit" and f"scopes {shipped}" in query["attributes"]["dreamer.sql.cache_key"]
