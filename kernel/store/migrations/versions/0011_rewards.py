"""Rewards: how well an invocation went, as its agent judged it.

Revision ID: 0011
Revises: 0006
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "rewards",
        sa.Column("id", BIG_ID, nullable=False),
        sa.Column("invocation_id", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("agent", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_rewards_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rewards")),
    )
    op.create_index(op.f("ix_rewards_invocation_id"), "rewards", ["invocation_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_rewards_invocation_id"), table_name="rewards")
    op.drop_table("rewards")
