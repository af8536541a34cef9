"""The demo HR database: generated, not downloaded, and the same for the same month.

A seeded random generator makes employees in seven departments (D042 "Operations
and Logistics" next to "IT Operations" and "Field Operations", so "operations" is
ambiguous), their attendance on working days of the last three months, approved
leave and absence records, with the misspellings real HR exports have ("Operatons
and Logistics", "Ops & Logistics"). Dates are laid out relative to `anchor` (the
first day of the month it is built in), so "last month" always has data.
"""

from __future__ import annotations

import os
import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path
from typing import Any

SEED = 4207
DEMO_CONNECTION = "hr-demo"
SCOPES_FILE = Path(__file__).resolve().parent / "demo_scopes.yaml"

DEPARTMENTS: tuple[tuple[str, str, int], ...] = (
    ("D010", "Human Resources", 8),
    ("D021", "Finance", 10),
    ("D035", "IT Operations", 14),
    ("D042", "Operations and Logistics", 22),
    ("D047", "Field Operations", 16),
    ("D050", "Sales", 12),
    ("D063", "Customer Support", 10),
)
# How people actually typed the department's name into the HR system.
MISSPELLED = {
    "D042": ("Operatons and Logistics", "Ops & Logistics", "Operations & Logistics"),
    "D035": ("IT Ops", "I.T. Operations"),
    "D047": ("Field Operation",),
    "D063": ("Customer Suport",),
}
FIRST = ("Anna", "Ben", "Chloe", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam",
         "Maya", "Noah", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wen", "Yusuf", "Zoe")
LAST = ("Novak", "Schmidt", "Garcia", "Okafor", "Lindqvist", "Rossi", "Dubois", "Kowalski", "Tanaka", "Moreau",
        "Petrov", "Silva", "Jensen", "Haddad", "Murphy", "Kim", "Weber", "Costa", "Nagy", "Fischer")
REASONS = ("SICK", "FAMILY", "UNPAID", "NO_SHOW", "MEDICAL")
LEAVE_TYPES = ("annual", "parental", "training", "sick_certified")

SCHEMA = """
CREATE TABLE employees (employee_id INTEGER PRIMARY KEY, name TEXT NOT NULL, department TEXT NOT NULL,
  dept_name TEXT NOT NULL, manager_id INTEGER REFERENCES employees(employee_id), status TEXT NOT NULL,
  hire_date TEXT NOT NULL, salary INTEGER NOT NULL);
CREATE TABLE attendance (employee_id INTEGER NOT NULL REFERENCES employees(employee_id), date TEXT NOT NULL,
  status TEXT NOT NULL, PRIMARY KEY (employee_id, date));
CREATE TABLE approved_leave (employee_id INTEGER NOT NULL REFERENCES employees(employee_id), start_date TEXT NOT NULL,
  end_date TEXT NOT NULL, leave_type TEXT NOT NULL);
CREATE TABLE absence_records (employee_id INTEGER NOT NULL REFERENCES employees(employee_id), absence_date TEXT NOT NULL,
  reason_code TEXT NOT NULL, approved INTEGER NOT NULL);
CREATE INDEX ix_employees_department ON employees(department);
CREATE INDEX ix_absence_date ON absence_records(absence_date);
"""


def demo_rows(anchor: date) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the demo database, the same for the same anchor."""
    rng = random.Random(SEED)
    employees: list[tuple[Any, ...]] = []
    next_id = 1001
    for code, name, size in DEPARTMENTS:
        manager = next_id
        for i in range(size):
            dept_name = name
            if code in MISSPELLED and rng.random() < 0.25:
                dept_name = rng.choice(MISSPELLED[code])
            status = "active" if rng.random() > 0.08 else rng.choice(("on_leave", "terminated"))
            hired = date(2015, 1, 1) + timedelta(days=rng.randrange(0, 3500))
            salary = rng.randrange(38, 120) * 1000 + (25_000 if i == 0 else 0)
            person = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            employees.append((next_id, person, code, dept_name, None if i == 0 else manager,
                              "active" if i == 0 else status, hired.isoformat(), salary))
            next_id += 1
    start = _month_start(_month_start(anchor) - timedelta(days=70))  # two full months before the anchor's month
    end = anchor + timedelta(days=27)
    days = [start + timedelta(days=n) for n in range((end - start).days) if (start + timedelta(days=n)).weekday() < 5]
    attendance, absences, leave = [], [], []
    for emp in employees:
        if emp[5] == "terminated":
            continue
        proneness = rng.random() * 0.08
        for day in days:
            roll = rng.random()
            status = "present"
            if roll < proneness:
                status = "absent"
                absences.append((emp[0], day.isoformat(), rng.choice(REASONS), int(rng.random() > 0.3)))
            elif roll < proneness + 0.1:
                status = "remote"
            attendance.append((emp[0], day.isoformat(), status))
        if rng.random() < 0.35:
            first = rng.choice(days)
            leave.append((emp[0], first.isoformat(), (first + timedelta(days=rng.randrange(1, 10))).isoformat(),
                          rng.choice(LEAVE_TYPES)))
    return {"employees": employees, "attendance": attendance, "approved_leave": leave, "absence_records": absences}


def build_demo(path: Path, anchor: date | None = None) -> Path:
    """Write the demo database to `path` (atomically: a crash leaves no half-built file)."""
    anchor = _month_start(anchor or date.today())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".building")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    try:
        conn.executescript(SCHEMA)
        for table, rows in demo_rows(anchor).items():
            marks = ",".join("?" * len(rows[0]))
            conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        conn.commit()
    finally:
        conn.close()
    os.replace(tmp, path)
    return path


def _month_start(day: date) -> date:
    return day.replace(day=1)
