"""Everyday HR questions for the sql-explorer's offline compiler, in families, each with the
truth SQL that answers it (written by hand, run on the same database).

Families cross a measure (employees, absences, absent employees, remote days, leave,
salary, hires) with filters (department by name or misspelling, status, reason,
approval, leave type), a time ("in <month>", "last month", "this year", "in 2023",
"right now"), a grouping ("per department", "by reason") or a superlative / top N /
comparison, in several phrasings. `TUNING` is what the compiler was developed against;
sql_questions_heldout.py was written once, before the compiler, and is only scored.

Kinds: "scalar" (one number), "grouped" (label -> number), "top" (a name among the tied
best), "unplaceable" (no answer: the reply names the word it could not place).
Truth SQL may use {m1s}/{m1e} (the month before last: start, end), {m2s}/{m2e} (last
month), {m3s}/{m3e} (this month), {ys}/{ye} (this year).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import date, timedelta


@dataclass(frozen=True)
class Case:
    family: str
    question: str
    truth: str
    kind: str = "scalar"
    n: int = 0  # "topn": how many groups the answer must name
    order: str = "max"  # "topn": the best are the highest ("max") or the lowest ("min")


def month_bounds(today: date) -> dict[str, str]:
    m3 = today.replace(day=1)
    m2 = (m3 - timedelta(days=1)).replace(day=1)
    m1 = (m2 - timedelta(days=1)).replace(day=1)
    nxt = (m3 + timedelta(days=32)).replace(day=1)
    return {"m1s": m1.isoformat(), "m1e": m2.isoformat(), "m2s": m2.isoformat(), "m2e": m3.isoformat(),
            "m3s": m3.isoformat(), "m3e": nxt.isoformat(), "ys": f"{today.year}-01-01", "ye": f"{today.year + 1}-01-01",
            "m1": m1.strftime("%B"), "m2": m2.strftime("%B"), "m1y": str(m1.year), "m2y": str(m2.year)}


DEPTS = {  # how a person names it -> code
    "sales": "D050", "finance": "D021", "operations and logistics": "D042", "operatons and logistics": "D042",
    "customer support": "D063", "customer suport": "D063", "it operations": "D035", "field operations": "D047",
    "human resources": "D010",
}
REASONS = {"sick": "SICK", "family": "FAMILY", "unpaid": "UNPAID", "medical": "MEDICAL"}
ABS_JOIN = "absence_records a JOIN employees e ON a.employee_id = e.employee_id"


def _times(b: dict[str, str]) -> list[tuple[str, str, str]]:
    """(words, start, end) for the absence-like families."""
    return [(f"in {b['m1']}", b["m1s"], b["m1e"]), ("last month", b["m2s"], b["m2e"]),
            (f"in {b['m2']} {b['m2y']}", b["m2s"], b["m2e"]), ("this year", b["ys"], b["ye"])]


def tuning(today: date) -> list[Case]:
    b = month_bounds(today)
    out: list[Case] = []
    add = out.append
    # Employees by status (no date: "right now" is the current status).
    for (said, status), phrase in itertools.product(
            [("on leave", "on_leave"), ("terminated", "terminated"), ("active", "active")],
            ["how many employees are {s} right now?", "how many {s} employees do we have?", "number of {s} staff"]):
        add(Case("status", phrase.format(s=said), f"SELECT COUNT(*) FROM employees WHERE status = '{status}'"))
    # Headcount of a department, by name (misspellings too).
    for (name, code), phrase in itertools.product(
            [("sales", "D050"), ("finance", "D021"), ("operatons and logistics", "D042"), ("customer suport", "D063")],
            ["how many employees are in {d}?", "what is the headcount of {d}", "how many people work in {d}?"]):
        add(Case("headcount", phrase.format(d=name), f"SELECT COUNT(*) FROM employees WHERE department = '{code}'"))
    # Absences (rows) over time, with reason / approval filters.
    for (tw, s, e), phrase in itertools.product(_times(b)[:3], ["how many absences were there {t}?",
                                                                "how many absences {t}", "count the absences {t}"]):
        add(Case("absences", phrase.format(t=tw),
                 f"SELECT COUNT(*) FROM absence_records WHERE absence_date >= '{s}' AND absence_date < '{e}'"))
    for (word, code), (tw, s, e) in itertools.product(REASONS.items(), _times(b)[:2]):
        add(Case("absences by reason", f"how many {word} absences {tw}?",
                 f"SELECT COUNT(*) FROM absence_records WHERE reason_code = '{code}' "
                 f"AND absence_date >= '{s}' AND absence_date < '{e}'"))
    for tw, s, e in _times(b)[:2]:
        add(Case("no-shows", f"how many no-shows {tw}?", f"SELECT COUNT(*) FROM absence_records WHERE "
                 f"reason_code = 'NO_SHOW' AND absence_date >= '{s}' AND absence_date < '{e}'"))
        for said, v in (("unapproved", 0), ("approved", 1)):
            add(Case("approval", f"how many {said} absences {tw}?", f"SELECT COUNT(*) FROM absence_records "
                     f"WHERE approved = {v} AND absence_date >= '{s}' AND absence_date < '{e}'"))
    add(Case("approval", f"how many approved medical absences in {b['m1']}?",
             "SELECT COUNT(*) FROM absence_records WHERE approved = 1 AND reason_code = 'MEDICAL' "
             f"AND absence_date >= '{b['m1s']}' AND absence_date < '{b['m1e']}'"))
    # Absent employees (distinct people), with a department.
    for (tw, s, e), phrase in itertools.product(_times(b)[:2], ["how many employees were absent {t}?",
                                                                "how many different people were absent {t}"]):
        add(Case("absent employees", phrase.format(t=tw), "SELECT COUNT(DISTINCT employee_id) FROM absence_records "
                 f"WHERE absence_date >= '{s}' AND absence_date < '{e}'"))
    for tw, s, e in _times(b)[:2]:  # no subject: what was absent is people (Sidekick may cut the subject off)
        add(Case("absent employees", f"how many were absent {tw}", "SELECT COUNT(DISTINCT employee_id) FROM "
                 f"absence_records WHERE absence_date >= '{s}' AND absence_date < '{e}'"))
    for (name, code), (tw, s, e) in itertools.product([("sales", "D050"), ("finance", "D021"),
                                                       ("operations and logistics", "D042")], _times(b)[:2]):
        add(Case("absent employees", f"how many people in {name} took sick leave {tw}",
                 f"SELECT COUNT(DISTINCT a.employee_id) FROM {ABS_JOIN} WHERE e.department = '{code}' AND "
                 f"a.reason_code = 'SICK' AND a.absence_date >= '{s}' AND a.absence_date < '{e}'"))
        add(Case("absences by department", f"how many absences in {name} {tw}?",
                 f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE e.department = '{code}' AND "
                 f"a.absence_date >= '{s}' AND a.absence_date < '{e}'"))
    # Remote work.
    for tw, s, e in _times(b)[:2]:
        add(Case("remote", f"how many remote days were logged {tw}?", "SELECT COUNT(*) FROM attendance WHERE "
                 f"status = 'remote' AND date >= '{s}' AND date < '{e}'"))
        add(Case("remote", f"how many employees worked from home {tw}?", "SELECT COUNT(DISTINCT employee_id) FROM "
                 f"attendance WHERE status = 'remote' AND date >= '{s}' AND date < '{e}'"))
    # Salary.
    for name, code in [("finance", "D021"), ("sales", "D050"), ("customer support", "D063")]:
        add(Case("salary", f"what is the average salary in {name}?",
                 f"SELECT AVG(salary) FROM employees WHERE department = '{code}'"))
        add(Case("salary", f"what's the total salary cost of {name}?",
                 f"SELECT SUM(salary) FROM employees WHERE department = '{code}'"))
        add(Case("salary", f"who has the highest salary in {name}?", "SELECT name FROM employees WHERE salary = "
                 f"(SELECT MAX(salary) FROM employees WHERE department = '{code}') AND department = '{code}'", "top"))
    add(Case("salary", "who has the highest salary?",
             "SELECT name FROM employees WHERE salary = (SELECT MAX(salary) FROM employees)", "top"))
    add(Case("salary", "who earns the least?",
             "SELECT name FROM employees WHERE salary = (SELECT MIN(salary) FROM employees)", "top"))
    add(Case("salary", "what is the highest salary?", "SELECT MAX(salary) FROM employees"))
    add(Case("salary", "what is the average salary of active employees?",
             "SELECT AVG(salary) FROM employees WHERE status = 'active'"))
    # Hires.
    for year, phrase in itertools.product([2019, 2021, 2023], ["how many people were hired in {y}?",
                                                               "how many employees joined in {y}"]):
        add(Case("hires", phrase.format(y=year), "SELECT COUNT(*) FROM employees WHERE hire_date >= "
                 f"'{year}-01-01' AND hire_date < '{year + 1}-01-01'"))
    # Grouping.
    for tw, s, e in _times(b)[:2]:
        add(Case("grouped", f"how many absences per department {tw}?", f"SELECT e.department, COUNT(*) FROM {ABS_JOIN} "
                 f"WHERE a.absence_date >= '{s}' AND a.absence_date < '{e}' GROUP BY e.department", "grouped"))
        add(Case("grouped", f"absences by reason {tw}", "SELECT reason_code, COUNT(*) FROM absence_records "
                 f"WHERE absence_date >= '{s}' AND absence_date < '{e}' GROUP BY reason_code", "grouped"))
    add(Case("grouped", "how many employees per department?",
             "SELECT department, COUNT(*) FROM employees GROUP BY department", "grouped"))
    add(Case("grouped", "average salary by department",
             "SELECT department, AVG(salary) FROM employees GROUP BY department", "grouped"))
    add(Case("grouped", "number of employees by status", "SELECT status, COUNT(*) FROM employees GROUP BY status",
             "grouped"))
    # Superlatives over groups and people.
    for tw, s, e in _times(b)[:2]:
        add(Case("superlative", f"which department had the most absences {tw}?",
                 f"WITH g AS (SELECT e.dept_name AS d, e.department AS c, COUNT(*) AS n FROM {ABS_JOIN} WHERE "
                 f"a.absence_date >= '{s}' AND a.absence_date < '{e}' GROUP BY e.department) "
                 "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
        add(Case("superlative", f"who was absent the most {tw}?",
                 f"WITH g AS (SELECT e.name AS who, COUNT(*) AS n FROM {ABS_JOIN} WHERE a.absence_date >= '{s}' "
                 f"AND a.absence_date < '{e}' GROUP BY a.employee_id) SELECT who FROM g WHERE n = (SELECT MAX(n) FROM g)",
                 "top"))
    add(Case("superlative", "which department has the highest average salary?",
             "WITH g AS (SELECT department AS c, AVG(salary) AS n FROM employees GROUP BY department) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
    add(Case("superlative", "which department has the most employees?",
             "WITH g AS (SELECT department AS c, COUNT(*) AS n FROM employees GROUP BY department) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
    # Comparisons.
    for n, (tw, s, e) in itertools.product([2, 3], _times(b)[:2]):
        add(Case("comparison", f"how many employees had more than {n} absences {tw}?",
                 f"SELECT COUNT(*) FROM (SELECT employee_id FROM absence_records WHERE absence_date >= '{s}' AND "
                 f"absence_date < '{e}' GROUP BY employee_id HAVING COUNT(*) > {n})"))
    for n in (80000, 100000):
        add(Case("comparison", f"how many employees earn more than {n}?",
                 f"SELECT COUNT(*) FROM employees WHERE salary > {n}"))
    # Leave.
    for tw, s, e in _times(b)[:2]:
        add(Case("leave", f"how many people started approved leave {tw}?", "SELECT COUNT(DISTINCT employee_id) FROM "
                 f"approved_leave WHERE start_date >= '{s}' AND start_date < '{e}'"))
        add(Case("leave", f"how many employees took parental leave {tw}?", "SELECT COUNT(DISTINCT employee_id) FROM "
                 f"approved_leave WHERE leave_type = 'parental' AND start_date >= '{s}' AND start_date < '{e}'"))
    # Off the model: the reply names what it could not place.
    for q in ("which manager has the happiest team?", "how many eggs do I need for pancakes",
              "how many parking spaces does finance have?"):
        add(Case("unplaceable", q, "", "unplaceable"))
    return out


def issue_questions(today: date) -> list[Case]:
    """The questions issue 17 reports, with their truth (the months are the issue's own)."""
    def y(month: int) -> int:  # a month named without a year is the latest one not after today
        return today.year if month <= today.month else today.year - 1
    year = y(10)
    oct_s, oct_e, nov_s, nov_e = f"{y(10)}-10-01", f"{y(10)}-11-01", f"{y(11)}-11-01", f"{y(11) + (0)}-12-01"
    sep_s, sep_e = f"{y(9)}-09-01", f"{y(9)}-10-01"
    return [
        Case("issue", "how many people in sales took sick leave in October",
             f"SELECT COUNT(DISTINCT a.employee_id) FROM {ABS_JOIN} WHERE e.department = 'D050' AND "
             f"a.reason_code = 'SICK' AND a.absence_date >= '{oct_s}' AND a.absence_date < '{oct_e}'"),
        Case("issue", f"how many absences were there in October {year}?",
             f"SELECT COUNT(*) FROM absence_records WHERE absence_date >= '{oct_s}' AND absence_date < '{oct_e}'"),
        Case("issue", "how many employees are on leave right now?", "SELECT COUNT(*) FROM employees WHERE status = 'on_leave'"),
        Case("issue", "how many terminated employees do we have?",
             "SELECT COUNT(*) FROM employees WHERE status = 'terminated'"),
        Case("issue", "how many unapproved absences in November?", "SELECT COUNT(*) FROM absence_records WHERE "
             f"approved = 0 AND absence_date >= '{nov_s}' AND absence_date < '{nov_e}'"),
        Case("issue", "how many no-shows in September?", "SELECT COUNT(*) FROM absence_records WHERE reason_code = "
             f"'NO_SHOW' AND absence_date >= '{sep_s}' AND absence_date < '{sep_e}'"),
        Case("issue", "how many approved medical absences in October?", "SELECT COUNT(*) FROM absence_records WHERE "
             f"approved = 1 AND reason_code = 'MEDICAL' AND absence_date >= '{oct_s}' AND absence_date < '{oct_e}'"),
        Case("issue", "how many people were hired in 2023?",
             "SELECT COUNT(*) FROM employees WHERE hire_date >= '2023-01-01' AND hire_date < '2024-01-01'"),
        Case("issue", "who has the highest salary?",
             "SELECT name FROM employees WHERE salary = (SELECT MAX(salary) FROM employees)", "top"),
        Case("issue", "which department had the most absences in October?",
             f"WITH g AS (SELECT e.department AS c, COUNT(*) AS n FROM {ABS_JOIN} WHERE a.absence_date >= '{oct_s}' "
             f"AND a.absence_date < '{oct_e}' GROUP BY e.department) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)",
             "top"),
        Case("issue", "what's the total salary cost of Sales?", "SELECT SUM(salary) FROM employees WHERE department = 'D050'"),
        Case("issue", "how many remote days were logged in October?", "SELECT COUNT(*) FROM attendance WHERE "
             f"status = 'remote' AND date >= '{oct_s}' AND date < '{oct_e}'"),
        Case("issue", "what is the average salary in Finance?", "SELECT AVG(salary) FROM employees WHERE department = 'D021'"),
        Case("issue", "how many employees in operations and logistics were absent last month?",
             f"SELECT COUNT(DISTINCT a.employee_id) FROM {ABS_JOIN} WHERE e.department = 'D042' AND "
             f"a.absence_date >= '{month_bounds(today)['m2s']}' AND a.absence_date < '{month_bounds(today)['m2e']}'"),
    ]


def tuning_wider(today: date) -> list[Case]:
    """Tuning families for the wider compiler (issue 17's audit): top N, measures said in other
    words, time spans, per month, two groupings, group comparisons, questions about the asker and
    questions that are not about HR. Other phrasings than sql_questions_heldout2.py's, which is
    only scored."""
    b = month_bounds(today)
    m1 = date.fromisoformat(b["m1s"])
    q = 3 * ((today.month - 1) // 3) + 1
    qs, qe = date(today.year, q, 1), date(today.year + (q == 10), (q + 2) % 12 + 1, 1)
    tomorrow = (today + timedelta(days=1)).isoformat()
    jan = f"{today.year}-01-01"
    out: list[Case] = []
    add = out.append
    abs_in = "absence_date >= '{s}' AND absence_date < '{e}'"
    # Top N: exactly N groups or people.
    for n, (phrase, truth, order) in itertools.product([2, 4], [
            ("top {n} departments by number of absences last month",
             f"SELECT e.department, COUNT(*) FROM {ABS_JOIN} WHERE a.{abs_in.format(s=b['m2s'], e=b['m2e'])} "
             "GROUP BY e.department", "max"),
            ("which {n} employees earn the most?", "SELECT employee_id, salary FROM employees", "max"),
            ("the {n} departments with the lowest average salary", "SELECT department, AVG(salary) FROM employees "
             "GROUP BY department", "min"),
            (f"which {{n}} people had the most absences in {b['m1']}?", "SELECT employee_id, COUNT(*) FROM "
             f"absence_records WHERE {abs_in.format(s=b['m1s'], e=b['m1e'])} GROUP BY employee_id", "max")]):
        add(Case("top n", phrase.format(n=n), truth, "topn", n=n, order=order))
    add(Case("top n", "list the five highest paid staff in finance",
             "SELECT employee_id, salary FROM employees WHERE department = 'D021'", "topn", n=5, order="max"))
    add(Case("top n", "top 10 earners", "SELECT employee_id, salary FROM employees", "topn", n=10, order="max"))
    # Superlatives with the measure in them; earners, money.
    add(Case("paid", "who is the highest paid employee in sales?", "SELECT employee_id FROM employees WHERE "
             "department = 'D050' AND salary = (SELECT MAX(salary) FROM employees WHERE department = 'D050')", "top"))
    add(Case("paid", "who is the worst paid?", "SELECT employee_id FROM employees WHERE salary = "
             "(SELECT MIN(salary) FROM employees)", "top"))
    add(Case("paid", "who makes the most money?", "SELECT employee_id FROM employees WHERE salary = "
             "(SELECT MAX(salary) FROM employees)", "top"))
    # Sick days are sick absences; calling in sick.
    for tw, s, e in _times(b)[:2]:
        add(Case("sick days", f"how many sick days {tw}?",
                 f"SELECT COUNT(*) FROM absence_records WHERE reason_code = 'SICK' AND {abs_in.format(s=s, e=e)}"))
        add(Case("sick days", f"how many employees called in sick {tw}?", "SELECT COUNT(DISTINCT employee_id) FROM "
                 f"absence_records WHERE reason_code = 'SICK' AND {abs_in.format(s=s, e=e)}"))
    add(Case("sick days", "number of sick days in customer support this year", f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE "
             f"e.department = 'D063' AND a.reason_code = 'SICK' AND a.{abs_in.format(s=b['ys'], e=b['ye'])}"))
    add(Case("sick days", "how many people were off sick last month?", "SELECT COUNT(DISTINCT employee_id) FROM "
             f"absence_records WHERE reason_code = 'SICK' AND {abs_in.format(s=b['m2s'], e=b['m2e'])}"))
    add(Case("most often", f"who called in sick most often in {b['m1']}?",
             "WITH g AS (SELECT employee_id AS c, COUNT(*) AS n FROM absence_records WHERE reason_code = 'SICK' AND "
             f"{abs_in.format(s=b['m1s'], e=b['m1e'])} GROUP BY employee_id) SELECT c FROM g WHERE n = "
             "(SELECT MAX(n) FROM g)", "top"))
    add(Case("most often", "which reason for absence is most frequent?", "WITH g AS (SELECT reason_code AS c, "
             "COUNT(*) AS n FROM absence_records GROUP BY reason_code) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)",
             "top"))
    # Time spans.
    add(Case("time", "how many absences so far this year?",
             f"SELECT COUNT(*) FROM absence_records WHERE {abs_in.format(s=jan, e=tomorrow)}"))
    add(Case("time", "how many remote days in the current quarter?", "SELECT COUNT(*) FROM attendance WHERE "
             f"status = 'remote' AND date >= '{qs}' AND date < '{qe}'"))
    add(Case("time", f"how many absences since {b['m1']}?",
             f"SELECT COUNT(*) FROM absence_records WHERE {abs_in.format(s=b['m1s'], e=tomorrow)}"))
    add(Case("time", f"how many absences from 10 {b['m1']} to 20 {b['m1']}?", "SELECT COUNT(*) FROM absence_records "
             f"WHERE {abs_in.format(s=(m1 + timedelta(days=9)).isoformat(), e=(m1 + timedelta(days=20)).isoformat())}"))
    add(Case("time", "how many people were hired between 2016 and 2017?",
             "SELECT COUNT(*) FROM employees WHERE hire_date >= '2016-01-01' AND hire_date < '2018-01-01'"))
    add(Case("time", "how many employees earn between 40k and 60k in sales?",
             "SELECT COUNT(*) FROM employees WHERE department = 'D050' AND salary >= 40000 AND salary <= 60000"))
    # Per month, and two groupings.
    add(Case("per month", "how many sick days per month?", "SELECT substr(absence_date, 1, 7), COUNT(*) FROM "
             "absence_records WHERE reason_code = 'SICK' GROUP BY 1", "grouped"))
    add(Case("per month", "no-shows by month this year", "SELECT substr(absence_date, 1, 7), COUNT(*) FROM "
             f"absence_records WHERE reason_code = 'NO_SHOW' AND {abs_in.format(s=b['ys'], e=b['ye'])} GROUP BY 1",
             "grouped"))
    add(Case("per month", "hires per year", "SELECT substr(hire_date, 1, 4), COUNT(*) FROM employees GROUP BY 1",
             "grouped"))
    add(Case("two groupings", "absences by reason and month", "SELECT reason_code, substr(absence_date, 1, 7), "
             "COUNT(*) FROM absence_records GROUP BY 1, 2", "grouped2"))
    add(Case("two groupings", "headcount per department per status", "SELECT department, status, COUNT(*) FROM "
             "employees GROUP BY 1, 2", "grouped2"))
    add(Case("two groupings", "average salary by department and status", "SELECT department, status, AVG(salary) "
             "FROM employees GROUP BY 1, 2", "grouped2"))
    # Comparisons over groups.
    add(Case("group comparison", "which departments have more than 15 employees?",
             "SELECT department, COUNT(*) FROM employees GROUP BY department HAVING COUNT(*) > 15", "grouped"))
    add(Case("group comparison", "how many teams have fewer than 11 employees?",
             "SELECT COUNT(*) FROM (SELECT department FROM employees GROUP BY department HAVING COUNT(*) < 11)"))
    add(Case("group comparison", "which departments have an average salary above 80000?",
             "SELECT department, AVG(salary) FROM employees GROUP BY department HAVING AVG(salary) > 80000", "grouped"))
    # Leave types, totals, averages.
    add(Case("leave", "how many leaves per type?", "SELECT leave_type, COUNT(*) FROM approved_leave GROUP BY 1",
             "grouped"))
    add(Case("leave", "what is the most common type of leave?", "WITH g AS (SELECT leave_type AS c, COUNT(*) AS n "
             "FROM approved_leave GROUP BY 1) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
    add(Case("totals", "total number of no-shows this year", "SELECT COUNT(*) FROM absence_records WHERE "
             f"reason_code = 'NO_SHOW' AND {abs_in.format(s=b['ys'], e=b['ye'])}"))
    add(Case("totals", "total absences last month", f"SELECT COUNT(*) FROM absence_records WHERE "
             f"{abs_in.format(s=b['m2s'], e=b['m2e'])}"))
    add(Case("totals", "what is the payroll of it operations?", "SELECT SUM(salary) FROM employees WHERE "
             "department = 'D035'"))
    add(Case("averages", "on average, what does someone in field ops earn?",
             "SELECT AVG(salary) FROM employees WHERE department = 'D047'"))
    add(Case("averages", "how much do employees in customer support make on average?",
             "SELECT AVG(salary) FROM employees WHERE department = 'D063'"))
    # About the asker; not about HR.
    for question in ("how many days off did I have last month?", "what's my department's headcount?",
                     "how much do I earn?", "was I absent in october?"):
        add(Case("about me", question, "", "refused"))
    for question in ("how many pancakes can I make with 3 eggs", "what is the average rainfall in march",
                     "who has the most followers on instagram", "top 3 restaurants nearby",
                     "how many kilometres is a marathon"):
        add(Case("not hr", question, "", "elsewhere"))
    return out
