"""Where a bundle version came from: the gallery and the publisher key that signed it.

Revision ID: 0010
Revises: 0005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bundle_versions") as batch:
        batch.add_column(sa.Column("source", sa.Text(), nullable=True))
        batch.add_column(sa.Column("publisher_fingerprint", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bundle_versions") as batch:
        batch.drop_column("publisher_fingerprint")
        batch.drop_column("source")
