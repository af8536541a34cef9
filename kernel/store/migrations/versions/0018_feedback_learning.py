"""User feedback as rewards, promoted and opted-out learning.

Rewards gain `source` ("agent" for ctx.emit_reward, "user" for a thumbs up/down) and
`turn_id` (the Sidekick answer rated); `invocation_id` may be empty for a turn that made
no call. Learned examples gain `everyone` (an administrator promoted it), users gain
`learning` (false: Sidekick keeps nothing from their corrections).

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("rewards") as batch:
        batch.add_column(sa.Column("source", sa.String(length=16), nullable=False, server_default="agent"))
        batch.add_column(sa.Column("turn_id", BIG_ID, nullable=True))
        batch.alter_column("invocation_id", existing_type=sa.String(length=40), nullable=True)
        batch.create_index(batch.f("ix_rewards_turn_id"), ["turn_id"])
    with op.batch_alter_table("learned_examples") as batch:
        batch.add_column(sa.Column("everyone", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.create_index(batch.f("ix_learned_examples_everyone"), ["everyone"])
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("learning", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("learning")
    with op.batch_alter_table("learned_examples") as batch:
        batch.drop_index(batch.f("ix_learned_examples_everyone"))
        batch.drop_column("everyone")
    with op.batch_alter_table("rewards") as batch:
        batch.drop_index(batch.f("ix_rewards_turn_id"))
        batch.alter_column("invocation_id", existing_type=sa.String(length=40), nullable=False)
        batch.drop_column("turn_id")
        batch.drop_column("source")
