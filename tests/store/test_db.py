"""The kernel store: engine settings, sessions, and Alembic migrations."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import IntegrityError

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.database import normalize_url
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ApiToken, Base, User


def _schema_diff(store: Store) -> list[object]:
    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))


def _head(store: Store) -> str | None:
    return ScriptDirectory.from_config(store.alembic_config()).get_current_head()


def _current_revision(store: Store) -> str | None:
    with store.engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _reset_schema(store: Store) -> None:
    """Back to an empty database (exercises the downgrade too)."""
    config = store.alembic_config()
    with store.engine.connect() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "base")
        conn.exec_driver_sql("DROP TABLE alembic_version")
        conn.commit()


# --- URLs and engine settings ------------------------------------------------------


def test_sqlite_creates_parent_dir_and_sets_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "kernel.db"
    store = Store(f"sqlite:///{path}")
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
        assert path.parent.is_dir()
    finally:
        store.dispose()


@pytest.mark.parametrize(
    "given",
    ["postgresql://u:p@db.example:5433/k", "postgres://u:p@db.example:5433/k", "postgresql+psycopg://u:p@db.example:5433/k"],
)
def test_postgresql_urls_use_psycopg3(given: str) -> None:
    store = Store(given)  # the engine connects lazily: no server needed
    assert store.engine.url.drivername == "postgresql+psycopg"
    assert (store.engine.url.host, store.engine.url.port, store.engine.url.database) == ("db.example", 5433, "k")
    assert store.is_postgresql and not store.is_sqlite


@pytest.mark.parametrize("given", ["mysql://u@h/db", "not a url", "oracle+cx_oracle://h/db"])
def test_other_urls_are_refused_with_one_sentence(given: str) -> None:
    with pytest.raises(DreamerError) as caught:
        normalize_url(given)
    assert caught.value.code == "invalid_argument"
    assert "\n" not in caught.value.message


def test_unwritable_database_folder_is_one_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(DreamerError) as caught:
        Store(f"sqlite:///{blocker / 'sub' / 'kernel.db'}")
    assert caught.value.code == "invalid_argument"
    assert "Cannot create the database folder" in caught.value.message


def test_unreachable_postgresql_is_one_sentence_without_password() -> None:
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    store = Store("postgresql://postgres:s3cret@127.0.0.1:1/nowhere?connect_timeout=2")
    with pytest.raises(DreamerError) as caught:
        store.migrate()
    message = caught.value.message
    assert message.startswith("Cannot open the kernel database postgresql+psycopg://postgres:***@127.0.0.1:1/")
    assert "s3cret" not in message and "\n" not in message
    store.dispose()


def test_memory_sqlite_is_shared_between_threads() -> None:
    store = Store("sqlite://")
    store.migrate()
    with store.session() as session:
        session.add(User(name="me"))
    seen: list[str] = []
    worker = threading.Thread(target=lambda: seen.extend(_names(store)))
    worker.start()
    worker.join()
    assert seen == ["me"]
    store.dispose()


def _names(store: Store) -> list[str]:
    with store.session() as session:
        return list(session.scalars(select(User.name)))


# --- sessions ----------------------------------------------------------------------


def test_session_commits_on_success(store: Store) -> None:
    with store.session() as session:
        session.add(User(name="ada"))
    assert _names(store) == ["ada"]


def test_session_rolls_back_on_exception(store: Store) -> None:
    with pytest.raises(RuntimeError):
        with store.session() as session:
            session.add(User(name="bob"))
            session.flush()
            raise RuntimeError("boom")
    assert _names(store) == []


def test_objects_stay_readable_after_commit(store: Store) -> None:
    with store.session() as session:
        user = User(name="cy", timezone="Europe/Paris")
        session.add(user)
    # Closed session, no expiry: attributes (including defaults) are loaded.
    assert (user.id, user.name, user.timezone, user.is_admin) == (user.id, "cy", "Europe/Paris", False)
    assert user.created_at is not None


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(IntegrityError):
        with store.session() as session:
            session.add(ApiToken(user_id=4242, token_hash="0" * 64))


def test_deleting_a_user_cascades_to_tokens(store: Store) -> None:
    with store.session() as session:
        user = User(name="dee")
        session.add(user)
        session.flush()
        session.add(ApiToken(user_id=user.id, token_hash="1" * 64))
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM users WHERE name = 'dee'"))
    with store.session() as session:
        assert session.scalars(select(ApiToken)).all() == []


# --- migrations --------------------------------------------------------------------


def test_migrated_schema_matches_the_models(store: Store) -> None:
    # One head (no branches left by parallel migrations), and the store is at it.
    assert _current_revision(store) == _head(store) is not None
    assert _schema_diff(store) == []


def test_schema_drift_would_be_noticed(store: Store) -> None:
    # The check above is only worth something if a difference shows up.
    with store.engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_spans_invocation_id"))
    try:
        diff = _schema_diff(store)
        assert any(item[0] == "add_index" and item[1].name == "ix_spans_invocation_id" for item in diff)
    finally:
        # The PostgreSQL database is shared by the session's tests: put it back.
        with store.engine.begin() as conn:
            conn.execute(text("CREATE INDEX ix_spans_invocation_id ON spans (invocation_id)"))


def test_migrate_is_idempotent(store: Store) -> None:
    with store.session() as session:
        session.add(User(name="keep"))
    store.migrate()
    store.migrate()
    assert _names(store) == ["keep"]
    assert _schema_diff(store) == []


def test_migrate_from_empty_database(store: Store) -> None:
    _reset_schema(store)
    assert inspect(store.engine).get_table_names() == []
    store.migrate()
    assert _schema_diff(store) == []
    assert _current_revision(store) == _head(store)


_MIGRATE_SCRIPT = """
import pathlib, sys, time
from dreamer.kernel.store.db import Store
store = Store(sys.argv[1])
go = pathlib.Path(sys.argv[2])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.002)
store.migrate()
print("migrated", flush=True)
"""


def test_concurrent_migrate_from_two_processes(store: Store, tmp_path: Path) -> None:
    _reset_schema(store)
    url = store.url.render_as_string(hide_password=False)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _MIGRATE_SCRIPT, url, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        go.touch()  # both start migrating at once
        results = [proc.communicate(timeout=60) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err
        assert "migrated" in out
    assert _schema_diff(store) == []
    assert _current_revision(store) == _head(store)


def test_migrations_ship_inside_the_package() -> None:
    from dreamer.kernel.store.db import MIGRATIONS_DIR

    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert (MIGRATIONS_DIR / "script.py.mako").is_file()
    assert (MIGRATIONS_DIR / "versions" / "0001_initial.py").is_file()
    assert not (MIGRATIONS_DIR / "alembic.ini").exists()

