"""Fixtures of the data tests (defined in hr_testkit, a module name of their own)."""

from hr_testkit import demo, postgres_demo, sqlite_demo  # noqa: F401
