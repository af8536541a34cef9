"""Spans keyed in the order they are written: an integer `id` instead of the random `span_id`
as the primary key, and one unique index on (trace_id, span_id), a span's identity, in place
of the index on trace_id alone. A batch of spans dirtied a page per span in the span id's
b-tree; readers find spans by trace or invocation, never by span id alone (issue 23).

SQLite cannot drop a primary key, so there the table is copied into its new shape in the
order its rows were written; PostgreSQL changes it in place (ADD COLUMN fills the ids).

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("span_id", "trace_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "duration_ms",
            "status", "attributes", "invocation_id")


def _columns() -> list[sa.Column[object]]:
    return [
        sa.Column("span_id", sa.String(length=16), nullable=False),
        sa.Column("trace_id", sa.String(length=32), nullable=False),
        sa.Column("parent_span_id", sa.String(length=16), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("start_ns", sa.BigInteger(), nullable=False),
        sa.Column("end_ns", sa.BigInteger(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attributes", sa.JSON(), nullable=False),
        sa.Column("invocation_id", sa.String(length=40), nullable=True),
    ]


def _rebuild(*, keyed: bool) -> None:
    """SQLite: the spans table made anew, keyed by `id` or by `span_id`, its rows copied in the
    order they were written (and the rowid order is that order). Its indexes go with the old one."""
    columns = ", ".join(_COLUMNS)
    key = [sa.Column("id", sa.Integer(), nullable=False)] if keyed else []
    op.create_table(
        "spans_rebuilt", *key, *_columns(),
        sa.PrimaryKeyConstraint("id" if keyed else "span_id", name="pk_spans"),
    )
    op.execute(f"INSERT INTO spans_rebuilt ({columns}) SELECT {columns} FROM spans ORDER BY rowid")
    op.drop_table("spans")
    op.rename_table("spans_rebuilt", "spans")
    op.create_index("ix_spans_invocation_id", "spans", ["invocation_id"])


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild(keyed=True)
    else:
        op.drop_constraint("pk_spans", "spans", type_="primary")
        op.execute("ALTER TABLE spans ADD COLUMN id BIGSERIAL NOT NULL")  # fills every row's id
        op.create_primary_key("pk_spans", "spans", ["id"])
        op.drop_index("ix_spans_trace_id", table_name="spans")
    op.create_index("ix_spans_trace_id_span_id", "spans", ["trace_id", "span_id"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_spans_trace_id_span_id", table_name="spans")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild(keyed=False)
    else:
        op.drop_constraint("pk_spans", "spans", type_="primary")
        op.drop_column("spans", "id")
        op.create_primary_key("pk_spans", "spans", ["span_id"])
    op.create_index("ix_spans_trace_id", "spans", ["trace_id"])
