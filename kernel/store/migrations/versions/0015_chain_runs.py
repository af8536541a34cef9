"""Chain budgets in the store: runs set off per chain of events.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chain_runs",
        sa.Column("chain", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_chain_runs_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("chain", name=op.f("pk_chain_runs")),
    )
    op.create_index(op.f("ix_chain_runs_updated_at"), "chain_runs", ["updated_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_chain_runs_updated_at"), table_name="chain_runs")
    op.drop_table("chain_runs")
