"""Migration 0021 keys the spans table by the order its rows were written: a database that
already holds spans keeps every one of them, readable as before, on SQLite and PostgreSQL,
and goes back down to the span id as the key."""

from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, text

from dreamer.kernel.store.db import Store
from dreamer.kernel.tracing import spans_for

_INSERT = text(
    "INSERT INTO spans (span_id, trace_id, parent_span_id, name, kind, start_ns, end_ns, duration_ms, status,"
    " attributes, invocation_id) VALUES (:span, :trace, :parent, :name, 'internal', :start, :end, 1.0, 'ok',"
    " :attributes, :invocation)"
)
# Written out of time order on purpose: the new key follows the order of writing, not start_ns.
_SPANS = [
    dict(span="b" * 16, trace="1" * 32, parent=None, name="invoke_agent grocery", start=20, end=90,
         attributes='{"dreamer.invocation_id": "inv_a"}', invocation="inv_a"),
    dict(span="a" * 16, trace="1" * 32, parent="b" * 16, name="execute_tool search", start=30, end=40,
         attributes="{}", invocation="inv_a"),
    dict(span="c" * 16, trace="2" * 32, parent=None, name="chat small", start=10, end=15,
         attributes='{"n": [1, 2]}', invocation=None),
]


def _to(store: Store, revision: str, *, down: bool = False) -> None:
    config = store.alembic_config()
    with store.engine.connect() as conn:
        config.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(config, revision)
        conn.commit()


def _stored(store: Store) -> list[tuple[object, ...]]:
    """Every span's values as the database returns them, whatever the key (the ORM's model is head's)."""
    columns = "span_id, trace_id, parent_span_id, name, kind, start_ns, end_ns, duration_ms, status, invocation_id"
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(text(f"SELECT {columns} FROM spans ORDER BY start_ns"))]


def test_spans_survive_the_change_of_key_both_ways(store: Store) -> None:
    _to(store, "0020", down=True)
    with store.engine.begin() as conn:
        for values in _SPANS:
            conn.execute(_INSERT, values)
    before = _stored(store)
    assert [row[3] for row in before] == ["chat small", "invoke_agent grocery", "execute_tool search"]

    store.migrate()
    assert _stored(store) == before
    with store.session() as s:  # read as the kernel reads them
        assert [(x["name"], x["attributes"]) for x in spans_for(s, trace_id="1" * 32)] == [
            ("invoke_agent grocery", {"dreamer.invocation_id": "inv_a"}), ("execute_tool search", {})]
        assert [x["name"] for x in spans_for(s, invocation_id="inv_a")] == ["invoke_agent grocery", "execute_tool search"]
        assert spans_for(s, trace_id="2" * 32)[0]["attributes"] == {"n": [1, 2]}
    with store.engine.connect() as conn:
        written = conn.execute(text("SELECT span_id FROM spans ORDER BY id")).scalars().all()
    assert written == ["b" * 16, "a" * 16, "c" * 16]
    indexes = {i["name"]: (i["column_names"], bool(i["unique"])) for i in inspect(store.engine).get_indexes("spans")}
    assert indexes == {"ix_spans_trace_id_span_id": (["trace_id", "span_id"], True),
                       "ix_spans_invocation_id": (["invocation_id"], False)}
    # A new span goes after them, keyed by the database.
    with store.engine.begin() as conn:
        conn.execute(_INSERT, dict(_SPANS[2], span="d" * 16, trace="3" * 32))
        assert conn.execute(text("SELECT span_id FROM spans ORDER BY id DESC")).scalars().first() == "d" * 16

    _to(store, "0020", down=True)
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM spans WHERE span_id = :s"), {"s": "d" * 16})
    assert _stored(store) == before
    assert inspect(store.engine).get_pk_constraint("spans")["constrained_columns"] == ["span_id"]
    store.migrate()
    assert _stored(store) == before
