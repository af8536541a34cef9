"""A second held-out split for the sql-explorer (issue 17's audit): written in one go BEFORE the
compiler was widened for it, committed on its own, and only ever scored in aggregate (its
individual failures are not read while tuning).

It crosses the same measures (employees, absences, absent people, remote days, leave, salary,
hires) with wordings the first two splits do not use: superlatives that carry the measure
("best paid", "top earners", "lowest paid"), measures said in other words ("sick days",
"called in sick", "make"), counts of N ("which 3 departments", "top 5", "three"), "most
often", "leave by type", "field ops", "total number of", "on average", "fewer than",
"between", "per month", "year to date", "this quarter", "since January", a second grouping
("per department per reason"), questions about the asker ("my salary": refused, the user is
not an employee record), and everyday questions that are not about HR at all.

Kinds besides sql_questions.py's: "topn" (exactly `n` groups, each among the true best `n`,
ties allowed: the truth lists every group with its value), "grouped2" (two groupings: the
truth is (code, code2, value) rows), "refused" (no number: a plain sentence instead) and
"elsewhere" (not an HR question: `ask` gives no number, and the chat does not send it to
`ask`). Person truths are employee ids (two people may share a name). Month groups are
keyed YYYY-MM.
"""

from __future__ import annotations

import itertools
from datetime import date, timedelta

from sql_questions import ABS_JOIN, Case, month_bounds


def _bounds(today: date) -> dict[str, str]:
    b = month_bounds(today)
    m1 = date.fromisoformat(b["m1s"])
    m0 = (m1 - timedelta(days=1)).replace(day=1)
    q = 3 * ((today.month - 1) // 3) + 1
    qs = date(today.year, q, 1)
    qe = date(today.year + (q == 10), (q + 3 - 1) % 12 + 1, 1)
    lqe = qs
    lqs = date(qs.year - (q == 1), (q - 3 - 1) % 12 + 1, 1)
    return {**b, "m0": m0.strftime("%B"), "m0s": m0.isoformat(), "m0e": b["m1s"], "qs": qs.isoformat(),
            "qe": qe.isoformat(), "lqs": lqs.isoformat(), "lqe": lqe.isoformat(),
            "tomorrow": (today + timedelta(days=1)).isoformat(), "jan": f"{today.year}-01-01",
            "m1_15": (m1 + timedelta(days=15)).isoformat()}


def _abs(where: str, start: str, end: str, col: str = "a.absence_date") -> str:
    parts = [w for w in (where, f"{col} >= '{start}' AND {col} < '{end}'" if start else "") if w]
    return " AND ".join(parts) if parts else "1 = 1"


def held_out_2(today: date) -> list[Case]:
    b = _bounds(today)
    m0, m1, m2 = b["m0"], b["m1"], b["m2"]
    out: list[Case] = []
    add = out.append

    # --- Salary superlatives that carry the measure word ("best paid", "earners") -------------------
    def paid(dept: str | None, fn: str) -> str:
        where = f" WHERE department = '{dept}'" if dept else ""
        also = f" AND department = '{dept}'" if dept else ""
        return f"SELECT employee_id FROM employees WHERE salary = (SELECT {fn}(salary) FROM employees{where}){also}"

    add(Case("paid superlative", "who is the best paid person in finance?", paid("D021", "MAX"), "top"))
    add(Case("paid superlative", "who is the lowest paid employee?", paid(None, "MIN"), "top"))
    add(Case("paid superlative", "which employee earns the most in customer support?", paid("D063", "MAX"), "top"))
    add(Case("paid superlative", "lowest paid person in it operations", paid("D035", "MIN"), "top"))
    add(Case("paid superlative", "who is the highest earner in field ops?", paid("D047", "MAX"), "top"))
    add(Case("paid superlative", "who makes the least money in sales?", paid("D050", "MIN"), "top"))
    salaries = "SELECT employee_id, salary FROM employees"
    for (phrase, n, order), (dname, dept) in itertools.product(
            [("who are the top {n} earners{d}?", 3, "max"), ("name the {n} best paid employees{d}", 5, "max"),
             ("who are the {n} lowest paid people{d}?", 3, "min")],
            [("", None), (" in operations and logistics", "D042")]):
        truth = salaries + (f" WHERE department = '{dept}'" if dept else "")
        add(Case("paid top n", phrase.format(n=n, d=dname), truth, "topn", n=n, order=order))
    add(Case("paid top n", "who are the three best paid people in sales?",
             f"{salaries} WHERE department = 'D050'", "topn", n=3, order="max"))

    # --- Sick days and calling in sick: the reason is in the measure's words ---------------------------
    sick = "a.reason_code = 'SICK'"
    add(Case("sick days", f"how many sick days were taken in {m1}?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs(sick, b['m1s'], b['m1e'])}"))
    add(Case("sick days", "how many sick days did sales have last month?",
             f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE e.department = 'D050' AND {_abs(sick, b['m2s'], b['m2e'])}"))
    add(Case("sick days", f"how many people called in sick in {m2}?",
             f"SELECT COUNT(DISTINCT a.employee_id) FROM absence_records a WHERE {_abs(sick, b['m2s'], b['m2e'])}"))
    add(Case("sick days", "how many times did someone call in sick this year?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs(sick, b['ys'], b['ye'])}"))
    add(Case("sick days", f"total number of sick days in finance since {m0}",
             f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE e.department = 'D021' AND {_abs(sick, b['m0s'], b['tomorrow'])}"))
    add(Case("sick days", "how many sick days this quarter?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs(sick, b['qs'], b['qe'])}"))
    add(Case("sick days", f"how many unapproved sick days were there in {m1}?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs(sick + ' AND a.approved = 0', b['m1s'], b['m1e'])}"))
    add(Case("sick days", f"who took the most sick days in {m2}?",
             f"WITH g AS (SELECT employee_id AS c, COUNT(*) AS n FROM absence_records a WHERE "
             f"{_abs(sick, b['m2s'], b['m2e'])} GROUP BY employee_id) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)",
             "top"))
    add(Case("sick days", "which department calls in sick most often?",
             f"WITH g AS (SELECT e.department AS c, COUNT(*) AS n FROM {ABS_JOIN} WHERE {sick} GROUP BY e.department) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))

    # --- Top N groups and people ------------------------------------------------------------------------
    dept_abs = (f"SELECT e.department, COUNT(*) FROM {ABS_JOIN} WHERE {_abs('', b['m1s'], b['m1e'])} "
                "GROUP BY e.department")
    add(Case("top n", f"which 3 departments had the most absences in {m1}?", dept_abs, "topn", n=3, order="max"))
    add(Case("top n", f"top 2 departments by absences in {m1}", dept_abs, "topn", n=2, order="max"))
    add(Case("top n", f"which 3 departments had the fewest absences in {m1}?", dept_abs, "topn", n=3, order="min"))
    add(Case("top n", "top 5 employees by number of absences last month",
             f"SELECT employee_id, COUNT(*) FROM absence_records a WHERE {_abs('', b['m2s'], b['m2e'])} "
             "GROUP BY employee_id", "topn", n=5, order="max"))
    add(Case("top n", f"which 3 people were absent most often in {m1}?",
             f"SELECT employee_id, COUNT(*) FROM absence_records a WHERE {_abs('', b['m1s'], b['m1e'])} "
             "GROUP BY employee_id", "topn", n=3, order="max"))
    add(Case("top n", "which 2 departments have the highest average salary?",
             "SELECT department, AVG(salary) FROM employees GROUP BY department", "topn", n=2, order="max"))
    add(Case("top n", f"top 3 absence reasons in {m2}",
             f"SELECT reason_code, COUNT(*) FROM absence_records a WHERE {_abs('', b['m2s'], b['m2e'])} "
             "GROUP BY reason_code", "topn", n=3, order="max"))
    add(Case("top n", "which 2 teams have the fewest employees?",
             "SELECT department, COUNT(*) FROM employees GROUP BY department", "topn", n=2, order="min"))
    add(Case("top n", "top 4 departments by headcount",
             "SELECT department, COUNT(*) FROM employees GROUP BY department", "topn", n=4, order="max"))

    # --- "most often", most common ------------------------------------------------------------------------
    add(Case("most often", "who was absent most often last month?",
             f"WITH g AS (SELECT employee_id AS c, COUNT(*) AS n FROM absence_records a WHERE "
             f"{_abs('', b['m2s'], b['m2e'])} GROUP BY employee_id) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)",
             "top"))
    add(Case("most often", "which absence reason comes up most often?",
             "WITH g AS (SELECT reason_code AS c, COUNT(*) AS n FROM absence_records GROUP BY reason_code) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
    add(Case("most often", f"what was the most common reason for absence in {m1}?",
             f"WITH g AS (SELECT reason_code AS c, COUNT(*) AS n FROM absence_records a WHERE "
             f"{_abs('', b['m1s'], b['m1e'])} GROUP BY reason_code) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)",
             "top"))
    add(Case("most often", "which team has the most no-shows?",
             f"WITH g AS (SELECT e.department AS c, COUNT(*) AS n FROM {ABS_JOIN} WHERE a.reason_code = 'NO_SHOW' "
             "GROUP BY e.department) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
    add(Case("most often", "which employee had the most unapproved absences this year?",
             f"WITH g AS (SELECT employee_id AS c, COUNT(*) AS n FROM absence_records a WHERE "
             f"{_abs('a.approved = 0', b['ys'], b['ye'])} GROUP BY employee_id) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))

    # --- Leave by type --------------------------------------------------------------------------------------
    leave_in = "start_date >= '{s}' AND start_date < '{e}'"
    add(Case("leave", "leave by type", "SELECT leave_type, COUNT(*) FROM approved_leave GROUP BY leave_type", "grouped"))
    add(Case("leave", "approved leave by type last month",
             "SELECT leave_type, COUNT(*) FROM approved_leave WHERE " + leave_in.format(s=b["m2s"], e=b["m2e"])
             + " GROUP BY leave_type", "grouped"))
    add(Case("leave", "which leave type is the most common?",
             "WITH g AS (SELECT leave_type AS c, COUNT(*) AS n FROM approved_leave GROUP BY leave_type) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
    add(Case("leave", f"how many people took annual leave in {m2}?",
             "SELECT COUNT(DISTINCT employee_id) FROM approved_leave WHERE leave_type = 'annual' AND "
             + leave_in.format(s=b["m2s"], e=b["m2e"])))
    add(Case("leave", "number of training leaves this quarter",
             "SELECT COUNT(*) FROM approved_leave WHERE leave_type = 'training' AND "
             + leave_in.format(s=b["qs"], e=b["qe"])))
    add(Case("leave", "how many stretches of parental leave started since January?",
             "SELECT COUNT(*) FROM approved_leave WHERE leave_type = 'parental' AND "
             + leave_in.format(s=b["jan"], e=b["tomorrow"])))

    # --- Time: per month, year to date, this quarter, since, between ----------------------------------------
    add(Case("per month", "absences per month this year",
             f"SELECT substr(absence_date, 1, 7), COUNT(*) FROM absence_records a WHERE {_abs('', b['ys'], b['ye'])} "
             "GROUP BY 1", "grouped"))
    add(Case("per month", "how many absences per month?",
             "SELECT substr(absence_date, 1, 7), COUNT(*) FROM absence_records GROUP BY 1", "grouped"))
    add(Case("per month", "remote days per month",
             "SELECT substr(date, 1, 7), COUNT(*) FROM attendance WHERE status = 'remote' GROUP BY 1", "grouped"))
    add(Case("per month", "sick days in sales per month",
             f"SELECT substr(a.absence_date, 1, 7), COUNT(*) FROM {ABS_JOIN} WHERE {sick} AND e.department = 'D050' "
             "GROUP BY 1", "grouped"))
    add(Case("year to date", "how many absences year to date?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs('', b['jan'], b['tomorrow'])}"))
    add(Case("year to date", "count of medical absences year to date",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs('a.reason_code = ' + repr('MEDICAL'), b['jan'], b['tomorrow'])}"))
    add(Case("this quarter", "how many remote days this quarter in sales?",
             "SELECT COUNT(*) FROM attendance t JOIN employees e ON t.employee_id = e.employee_id WHERE "
             f"t.status = 'remote' AND e.department = 'D050' AND t.date >= '{b['qs']}' AND t.date < '{b['qe']}'"))
    add(Case("this quarter", "number of absences by department this quarter",
             f"SELECT e.department, COUNT(*) FROM {ABS_JOIN} WHERE {_abs('', b['qs'], b['qe'])} GROUP BY e.department",
             "grouped"))
    add(Case("this quarter", "how many family absences did customer support have this quarter?",
             f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE e.department = 'D063' AND "
             f"{_abs('a.reason_code = ' + repr('FAMILY'), b['qs'], b['qe'])}"))
    add(Case("last quarter", "how many absences were there last quarter?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs('', b['lqs'], b['lqe'])}"))
    add(Case("since", "how many no-shows since January?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs('a.reason_code = ' + repr('NO_SHOW'), b['jan'], b['tomorrow'])}"))
    add(Case("since", f"how many employees have been absent since the start of {m2}?",
             f"SELECT COUNT(DISTINCT employee_id) FROM absence_records a WHERE {_abs('', b['m2s'], b['tomorrow'])}"))
    add(Case("since", "how many people joined sales since 2020?",
             "SELECT COUNT(*) FROM employees WHERE department = 'D050' AND hire_date >= '2020-01-01' "
             f"AND hire_date < '{b['tomorrow']}'"))
    add(Case("between", f"how many absences between 1 {m1} and 15 {m1}?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs('', b['m1s'], b['m1_15'])}"))
    add(Case("between", f"how many absences were there between {m1} and {m2}?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs('', b['m1s'], b['m2e'])}"))
    add(Case("between", "how many people were hired between 2018 and 2020?",
             "SELECT COUNT(*) FROM employees WHERE hire_date >= '2018-01-01' AND hire_date < '2021-01-01'"))
    add(Case("between", "how many employees earn between 50000 and 70000?",
             "SELECT COUNT(*) FROM employees WHERE salary >= 50000 AND salary <= 70000"))
    add(Case("between", "how many people in finance make between 60k and 90k?",
             "SELECT COUNT(*) FROM employees WHERE department = 'D021' AND salary >= 60000 AND salary <= 90000"))

    # --- Comparisons over groups: "fewer than" --------------------------------------------------------------
    add(Case("fewer than", "which departments have fewer than 12 employees?",
             "SELECT department, COUNT(*) FROM employees GROUP BY department HAVING COUNT(*) < 12", "grouped"))
    add(Case("fewer than", f"which departments had fewer than 15 absences in {m2}?",
             f"SELECT e.department, COUNT(*) FROM {ABS_JOIN} WHERE {_abs('', b['m2s'], b['m2e'])} GROUP BY "
             "e.department HAVING COUNT(*) < 15", "grouped"))
    add(Case("fewer than", "how many departments have more than 12 employees?",
             "SELECT COUNT(*) FROM (SELECT department FROM employees GROUP BY department HAVING COUNT(*) > 12)"))

    # --- "on average", "total number of" --------------------------------------------------------------------
    add(Case("on average", "what does a sales employee earn on average?",
             "SELECT AVG(salary) FROM employees WHERE department = 'D050'"))
    add(Case("on average", "on average, how much do people in hr make?",
             "SELECT AVG(salary) FROM employees WHERE department = 'D010'"))
    add(Case("on average", "how much is the average pay of active employees in sales",
             "SELECT AVG(salary) FROM employees WHERE status = 'active' AND department = 'D050'"))
    add(Case("total number", "total number of employees in finance",
             "SELECT COUNT(*) FROM employees WHERE department = 'D021'"))
    add(Case("total number", f"total number of absences in sales in {m1}",
             f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE e.department = 'D050' AND {_abs('', b['m1s'], b['m1e'])}"))
    add(Case("total number", "what is the total number of staff on leave?",
             "SELECT COUNT(*) FROM employees WHERE status = 'on_leave'"))

    # --- Everyday families in other words (measure x filter x time) ----------------------------------------
    add(Case("headcount", "what's the headcount of field ops?", "SELECT COUNT(*) FROM employees WHERE department = 'D047'"))
    add(Case("absent people", f"how many people in field ops were absent in {m2}?",
             f"SELECT COUNT(DISTINCT a.employee_id) FROM {ABS_JOIN} WHERE e.department = 'D047' AND "
             f"{_abs('', b['m2s'], b['m2e'])}"))
    add(Case("status", "how many staff are on leave in sales?",
             "SELECT COUNT(*) FROM employees WHERE status = 'on_leave' AND department = 'D050'"))
    add(Case("status", "how many terminated people were in it operations?",
             "SELECT COUNT(*) FROM employees WHERE status = 'terminated' AND department = 'D035'"))
    add(Case("status", "how many active staff does hr have?",
             "SELECT COUNT(*) FROM employees WHERE status = 'active' AND department = 'D010'"))
    add(Case("salary", "what is the payroll of field ops?", "SELECT SUM(salary) FROM employees WHERE department = 'D047'"))
    add(Case("salary", "how much do we pay the finance team in total?",
             "SELECT SUM(salary) FROM employees WHERE department = 'D021'"))
    add(Case("salary", "lowest salary in hr", "SELECT MIN(salary) FROM employees WHERE department = 'D010'"))
    add(Case("salary", "what is the highest salary in field ops?",
             "SELECT MAX(salary) FROM employees WHERE department = 'D047'"))
    add(Case("salary", "how many employees have a salary above 100k?", "SELECT COUNT(*) FROM employees WHERE salary > 100000"))
    add(Case("salary", "how many people earn at least 90k in finance",
             "SELECT COUNT(*) FROM employees WHERE salary >= 90000 AND department = 'D021'"))
    add(Case("hires", "how many new hires in 2024?",
             "SELECT COUNT(*) FROM employees WHERE hire_date >= '2024-01-01' AND hire_date < '2025-01-01'"))
    add(Case("hires", "how many employees were hired this year?",
             f"SELECT COUNT(*) FROM employees WHERE hire_date >= '{b['ys']}' AND hire_date < '{b['ye']}'"))
    add(Case("remote", f"number of remote days in finance in {m1}",
             "SELECT COUNT(*) FROM attendance t JOIN employees e ON t.employee_id = e.employee_id WHERE "
             f"t.status = 'remote' AND e.department = 'D021' AND t.date >= '{b['m1s']}' AND t.date < '{b['m1e']}'"))
    add(Case("remote", "how many people worked from home last month in hr?",
             "SELECT COUNT(DISTINCT t.employee_id) FROM attendance t JOIN employees e ON t.employee_id = e.employee_id "
             f"WHERE t.status = 'remote' AND e.department = 'D010' AND t.date >= '{b['m2s']}' AND t.date < '{b['m2e']}'"))
    add(Case("approval", f"how many unpaid absences were approved in {m2}?",
             f"SELECT COUNT(*) FROM absence_records a WHERE {_abs('a.reason_code = ' + repr('UNPAID') + ' AND a.approved = 1', b['m2s'], b['m2e'])}"))
    add(Case("no-shows", f"how many no-shows did field ops have in {m1}?",
             f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE e.department = 'D047' AND "
             f"{_abs('a.reason_code = ' + repr('NO_SHOW'), b['m1s'], b['m1e'])}"))
    add(Case("grouped", "average salary per team", "SELECT department, AVG(salary) FROM employees GROUP BY department",
             "grouped"))
    add(Case("grouped", f"how many people were absent per reason in {m2}?",
             f"SELECT reason_code, COUNT(DISTINCT employee_id) FROM absence_records a WHERE {_abs('', b['m2s'], b['m2e'])} "
             "GROUP BY reason_code", "grouped"))
    add(Case("grouped", "headcount per status in sales",
             "SELECT status, COUNT(*) FROM employees WHERE department = 'D050' GROUP BY status", "grouped"))
    add(Case("superlative", "which department has the highest payroll?",
             "WITH g AS (SELECT department AS c, SUM(salary) AS n FROM employees GROUP BY department) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))
    add(Case("superlative", "which department is the biggest?",
             "WITH g AS (SELECT department AS c, COUNT(*) AS n FROM employees GROUP BY department) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"))

    # --- Two groupings ---------------------------------------------------------------------------------------
    add(Case("two groupings", f"absences per department per reason in {m1}",
             f"SELECT e.department, a.reason_code, COUNT(*) FROM {ABS_JOIN} WHERE {_abs('', b['m1s'], b['m1e'])} "
             "GROUP BY e.department, a.reason_code", "grouped2"))
    add(Case("two groupings", "how many employees by department and status",
             "SELECT department, status, COUNT(*) FROM employees GROUP BY department, status", "grouped2"))
    add(Case("two groupings", "sick days by department by month",
             f"SELECT e.department, substr(a.absence_date, 1, 7), COUNT(*) FROM {ABS_JOIN} WHERE {sick} "
             "GROUP BY e.department, substr(a.absence_date, 1, 7)", "grouped2"))

    # --- About the asker: the user is not an employee record, so these are refused plainly -------------------
    for q in ("how many sick days did I take this year?", "what is my salary?", "how many absences do I have?",
              "am I paid more than the average in my department?"):
        add(Case("about me", q, "", "refused"))

    # --- Not about HR at all: no number from ask, and the chat does not send them there ----------------------
    for q in ("how many eggs are in a dozen?", "how many calories are in an apple", "what is the average temperature "
              f"in {m1}?", "which restaurant has the best reviews?", "how many days until my birthday",
              "top 5 movies this year", "who has the highest score in the league?", "how many cups of rice for four people"):
        add(Case("not hr", q, "", "elsewhere"))
    return out
