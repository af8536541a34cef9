"""Learned examples: phrasings a user taught Sidekick by picking an option.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "learned_examples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=500), nullable=False),
        sa.Column("phrase", sa.Text(), nullable=False),
        sa.Column("agent", sa.String(length=64), nullable=False),
        sa.Column("function", sa.String(length=64), nullable=False),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_learned_examples_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_learned_examples")),
        sa.UniqueConstraint("user_id", "key", "agent", "function", name=op.f("uq_learned_examples_user_id_key_agent_function")),
    )
    op.create_index(op.f("ix_learned_examples_user_id"), "learned_examples", ["user_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_learned_examples_user_id"), table_name="learned_examples")
    op.drop_table("learned_examples")
