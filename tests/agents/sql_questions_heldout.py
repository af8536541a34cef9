"""The held-out split of the sql-explorer's questions: other phrasings and combinations of
the same families, written once before the compiler was built and never used to tune it
(only its score is read). Same kinds and placeholders as sql_questions.py."""

from __future__ import annotations

from datetime import date

from sql_questions import ABS_JOIN, Case, month_bounds


def held_out(today: date) -> list[Case]:
    b = month_bounds(today)
    m1, m2 = b["m1"], b["m2"]
    r1 = f"a.absence_date >= '{b['m1s']}' AND a.absence_date < '{b['m1e']}'"
    r2 = f"a.absence_date >= '{b['m2s']}' AND a.absence_date < '{b['m2e']}'"
    p1 = f"absence_date >= '{b['m1s']}' AND absence_date < '{b['m1e']}'"
    p2 = f"absence_date >= '{b['m2s']}' AND absence_date < '{b['m2e']}'"
    rm = f"date >= '{b['m1s']}' AND date < '{b['m1e']}'"
    out = [
        Case("status", "how many staff are currently on leave?", "SELECT COUNT(*) FROM employees WHERE status = 'on_leave'"),
        Case("status", "how many people are away right now", "SELECT COUNT(*) FROM employees WHERE status = 'on_leave'"),
        Case("status", "count the terminated employees", "SELECT COUNT(*) FROM employees WHERE status = 'terminated'"),
        Case("status", "how many active employees are there in sales?",
             "SELECT COUNT(*) FROM employees WHERE status = 'active' AND department = 'D050'"),
        Case("status", "how many employees do we have?", "SELECT COUNT(*) FROM employees"),
        Case("headcount", "how many people are in field operations", "SELECT COUNT(*) FROM employees WHERE department = 'D047'"),
        Case("headcount", "headcount in it operations", "SELECT COUNT(*) FROM employees WHERE department = 'D035'"),
        Case("headcount", "how many staff work in human resources?",
             "SELECT COUNT(*) FROM employees WHERE department = 'D010'"),
        Case("absences", f"number of absences in {m2}", f"SELECT COUNT(*) FROM absence_records WHERE {p2}"),
        Case("absences", f"how many absence records were there in {m1}?", f"SELECT COUNT(*) FROM absence_records WHERE {p1}"),
        Case("absences", f"how many times were people absent in {m1}?", f"SELECT COUNT(*) FROM absence_records WHERE {p1}"),
        Case("absences by reason", f"how many family absences were there in {m2}?",
             f"SELECT COUNT(*) FROM absence_records WHERE reason_code = 'FAMILY' AND {p2}"),
        Case("absences by reason", f"number of unpaid absences in {m1}",
             f"SELECT COUNT(*) FROM absence_records WHERE reason_code = 'UNPAID' AND {p1}"),
        Case("absences by reason", "how many sick absences this year?",
             f"SELECT COUNT(*) FROM absence_records WHERE reason_code = 'SICK' AND absence_date >= '{b['ys']}' "
             f"AND absence_date < '{b['ye']}'"),
        Case("no-shows", f"how many times did people not show up in {m1}?",
             f"SELECT COUNT(*) FROM absence_records WHERE reason_code = 'NO_SHOW' AND {p1}"),
        Case("no-shows", "how many no-shows were there last month in sales?",
             f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE a.reason_code = 'NO_SHOW' AND e.department = 'D050' AND {r2}"),
        Case("approval", f"how many absences were not approved in {m1}?",
             f"SELECT COUNT(*) FROM absence_records WHERE approved = 0 AND {p1}"),
        Case("approval", "how many approved sick absences last month?",
             f"SELECT COUNT(*) FROM absence_records WHERE approved = 1 AND reason_code = 'SICK' AND {p2}"),
        Case("absent employees", f"how many staff were absent in {m2}?",
             f"SELECT COUNT(DISTINCT employee_id) FROM absence_records WHERE {p2}"),
        Case("absent employees", f"how many employees in finance were absent in {m1}?",
             f"SELECT COUNT(DISTINCT a.employee_id) FROM {ABS_JOIN} WHERE e.department = 'D021' AND {r1}"),
        Case("absent employees", "how many people had a medical absence last month",
             f"SELECT COUNT(DISTINCT employee_id) FROM absence_records WHERE reason_code = 'MEDICAL' AND {p2}"),
        Case("absent employees", f"how many employees in customer support took sick leave in {m2}?",
             f"SELECT COUNT(DISTINCT a.employee_id) FROM {ABS_JOIN} WHERE e.department = 'D063' AND "
             f"a.reason_code = 'SICK' AND {r2}"),
        Case("absences by department", f"how many absences did field operations have in {m1}?",
             f"SELECT COUNT(*) FROM {ABS_JOIN} WHERE e.department = 'D047' AND {r1}"),
        Case("remote", f"how many days did people work remotely in {m1}?",
             f"SELECT COUNT(*) FROM attendance WHERE status = 'remote' AND {rm}"),
        Case("remote", f"how many people worked remotely in {m1}?",
             f"SELECT COUNT(DISTINCT employee_id) FROM attendance WHERE status = 'remote' AND {rm}"),
        Case("salary", "what is the average salary in it operations?",
             "SELECT AVG(salary) FROM employees WHERE department = 'D035'"),
        Case("salary", "total salary of finance", "SELECT SUM(salary) FROM employees WHERE department = 'D021'"),
        Case("salary", "what do we spend on salaries in customer support?",
             "SELECT SUM(salary) FROM employees WHERE department = 'D063'"),
        Case("salary", "who is the best paid employee?",
             "SELECT name FROM employees WHERE salary = (SELECT MAX(salary) FROM employees)", "top"),
        Case("salary", "who has the lowest salary in sales?", "SELECT name FROM employees WHERE department = 'D050' AND "
             "salary = (SELECT MIN(salary) FROM employees WHERE department = 'D050')", "top"),
        Case("salary", "what is the lowest salary in finance?", "SELECT MIN(salary) FROM employees WHERE department = 'D021'"),
        Case("salary", "mean salary of terminated employees", "SELECT AVG(salary) FROM employees WHERE status = 'terminated'"),
        Case("hires", "how many employees were hired in 2020?",
             "SELECT COUNT(*) FROM employees WHERE hire_date >= '2020-01-01' AND hire_date < '2021-01-01'"),
        Case("hires", "how many people in sales were hired in 2018?", "SELECT COUNT(*) FROM employees WHERE "
             "department = 'D050' AND hire_date >= '2018-01-01' AND hire_date < '2019-01-01'"),
        Case("hires", "how many hires in 2016?",
             "SELECT COUNT(*) FROM employees WHERE hire_date >= '2016-01-01' AND hire_date < '2017-01-01'"),
        Case("grouped", f"absences per reason in {m1}",
             f"SELECT reason_code, COUNT(*) FROM absence_records WHERE {p1} GROUP BY reason_code", "grouped"),
        Case("grouped", f"how many employees were absent per department in {m2}?",
             f"SELECT e.department, COUNT(DISTINCT a.employee_id) FROM {ABS_JOIN} WHERE {r2} GROUP BY e.department",
             "grouped"),
        Case("grouped", "total salary per department",
             "SELECT department, SUM(salary) FROM employees GROUP BY department", "grouped"),
        Case("grouped", "headcount by department", "SELECT department, COUNT(*) FROM employees GROUP BY department",
             "grouped"),
        Case("superlative", f"which department had the fewest absences in {m1}?",
             f"WITH g AS (SELECT e.department AS c, COUNT(*) AS n FROM {ABS_JOIN} WHERE {r1} GROUP BY e.department) "
             "SELECT c FROM g WHERE n = (SELECT MIN(n) FROM g)", "top"),
        Case("superlative", "which department has the lowest average salary?",
             "WITH g AS (SELECT department AS c, AVG(salary) AS n FROM employees GROUP BY department) "
             "SELECT c FROM g WHERE n = (SELECT MIN(n) FROM g)", "top"),
        Case("superlative", "what is the most common absence reason last month?",
             f"WITH g AS (SELECT reason_code AS c, COUNT(*) AS n FROM absence_records WHERE {p2} GROUP BY reason_code) "
             "SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"),
        Case("superlative", f"who had the most absences in {m2}?",
             f"WITH g AS (SELECT e.name AS who, COUNT(*) AS n FROM {ABS_JOIN} WHERE {r2} GROUP BY a.employee_id) "
             "SELECT who FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"),
        Case("superlative", "which department has the most people on leave?",
             "WITH g AS (SELECT department AS c, COUNT(*) AS n FROM employees WHERE status = 'on_leave' "
             "GROUP BY department) SELECT c FROM g WHERE n = (SELECT MAX(n) FROM g)", "top"),
        Case("comparison", f"how many people were absent more than 4 times in {m1}?",
             f"SELECT COUNT(*) FROM (SELECT employee_id FROM absence_records WHERE {p1} GROUP BY employee_id "
             "HAVING COUNT(*) > 4)"),
        Case("comparison", "how many employees earn less than 50000?", "SELECT COUNT(*) FROM employees WHERE salary < 50000"),
        Case("comparison", "how many people in finance earn over 90000?",
             "SELECT COUNT(*) FROM employees WHERE department = 'D021' AND salary > 90000"),
        Case("comparison", f"how many employees had at least 3 absences in {m2}?",
             f"SELECT COUNT(*) FROM (SELECT employee_id FROM absence_records WHERE {p2} GROUP BY employee_id "
             "HAVING COUNT(*) >= 3)"),
        Case("leave", f"how many employees started annual leave in {m1}?",
             "SELECT COUNT(DISTINCT employee_id) FROM approved_leave WHERE leave_type = 'annual' AND "
             f"start_date >= '{b['m1s']}' AND start_date < '{b['m1e']}'"),
        Case("leave", "how many people went on training leave last month?",
             "SELECT COUNT(DISTINCT employee_id) FROM approved_leave WHERE leave_type = 'training' AND "
             f"start_date >= '{b['m2s']}' AND start_date < '{b['m2e']}'"),
        Case("unplaceable", "what is the weather in sales tomorrow?", "", "unplaceable"),
        Case("unplaceable", "how many unicorns work in finance?", "", "unplaceable"),
        Case("unplaceable", "which employee has the best jokes?", "", "unplaceable"),
    ]
    return out
