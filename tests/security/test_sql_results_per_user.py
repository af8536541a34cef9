"""Issue 14 finding 9 (the SQL part): each user's query results are their own. Another
user's queries never push out my `query_id`, never answer from my cache, and a result
cached under one scopes version is not served under the next."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from dreamer.kernel.data.demo import SCOPES_FILE, build_demo
from dreamer.kernel.data.results import MAX_RESULTS
from dreamer.kernel.data.queries import DataService
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store

ME, BOB = 1, 2


@pytest.fixture
def data(tmp_path: Path) -> Iterator[DataService]:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    path = build_demo(tmp_path / "hr.db", date(2026, 11, 1))
    service = DataService(store)
    service.add("hr", f"sqlite:///{path}", scopes=SCOPES_FILE.read_text().replace("  me: hr_admin\n", "  me: hr_admin\n  bob: hr_admin\n"))
    yield service
    store.engine.dispose()


def test_another_users_queries_never_push_out_my_result(data: DataService) -> None:
    mine = data.query("hr", "me", "SELECT employee_id FROM employees ORDER BY employee_id", ME).result
    for n in range(MAX_RESULTS + 10):  # bob fills more than a whole store's worth
        data.query("hr", "bob", f"SELECT {n} AS n, COUNT(*) FROM employees", BOB)
    assert data.results.get(mine.id, ME).rows[:2] == [[1001], [1002]]
    with pytest.raises(DreamerError) as err:  # and bob cannot read it by its id
        data.results.get(mine.id, BOB)
    assert err.value.code == "not_found"


def test_my_own_store_is_bounded_and_drops_my_oldest_first(data: DataService) -> None:
    first = data.query("hr", "me", "SELECT 0 AS n", ME).result
    for n in range(1, MAX_RESULTS + 1):
        data.query("hr", "me", f"SELECT {n} AS n", ME)
    with pytest.raises(DreamerError):
        data.results.get(first.id, ME)


def test_the_cache_is_per_user_and_per_scopes_version(data: DataService) -> None:
    sql = "SELECT COUNT(*) FROM employees"
    assert not data.query("hr", "me", sql, ME).cached
    assert data.query("hr", "me", sql, ME).cached
    assert not data.query("hr", "bob", sql, BOB).cached  # the same role and SQL, another user: run for bob
    shipped = SCOPES_FILE.read_text()
    found = re.search(r"^version: (\d+)$", shipped, re.M)
    assert found, "the shipped scopes file names its version"
    current = int(found.group(1))
    text = shipped.replace(f"\nversion: {current}", f"\nversion: {current + 1}", 1)
    data.set_scopes("hr", text.replace("  me: hr_admin\n", "  me: hr_admin\n  bob: hr_admin\n"))
    again = data.query("hr", "me", sql, ME)
    assert not again.cached and f"scopes {current + 1}" in again.versions
