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


def _rebuild(*, keyed: bool) -> None:
    """SQLite: the spans table made anew with its columns as they are, keyed by `id` or by
    `span_id`, its rows copied in the order they were written (the rowid's order). Its
    indexes go with the old table."""
    old = sa.Table("spans", sa.MetaData(), autoload_with=op.get_bind())
    kept = [column for column in old.columns if column.name != "id"]
    names = ", ".join(column.name for column in kept)
    key = [sa.Column("id", sa.Integer(), nullable=False)] if keyed else []
    op.create_table(
        "spans_rebuilt", *key, *(sa.Column(c.name, c.type, nullable=c.nullable) for c in kept),
        sa.PrimaryKeyConstraint("id" if keyed else "span_id", name="pk_spans"),
    )
    op.execute(f"INSERT INTO spans_rebuilt ({names}) SELECT {names} FROM spans ORDER BY rowid")
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
