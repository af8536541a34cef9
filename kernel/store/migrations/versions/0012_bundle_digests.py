"""Bundles keyed by content; gallery provenance and key pins per installation.

A bundle row was unique by (name, version), so one user's upload of `diary 1.0.0`
could replace the folder another user's rollback snapshot pointed at. Rows are now
unique by (name, version, digest), and the gallery/fingerprint fields move from the
shared bundle row to each installation.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("installations") as batch:
        batch.add_column(sa.Column("source", sa.Text(), nullable=True))
        batch.add_column(sa.Column("publisher_fingerprint", sa.String(length=64), nullable=True))
    # Existing installations keep the provenance their shared row had.
    op.execute(
        "UPDATE installations SET "
        "source = (SELECT b.source FROM bundle_versions b WHERE b.id = installations.bundle_id), "
        "publisher_fingerprint = (SELECT b.publisher_fingerprint FROM bundle_versions b WHERE b.id = installations.bundle_id)"
    )
    with op.batch_alter_table("bundle_versions") as batch:
        batch.drop_constraint("uq_bundle_versions_name_version", type_="unique")
        batch.create_unique_constraint("uq_bundle_versions_name_version_digest", ["name", "version", "digest"])
        batch.drop_column("publisher_fingerprint")
        batch.drop_column("source")
    with op.batch_alter_table("tool_bundles") as batch:
        batch.drop_constraint("uq_tool_bundles_name_version", type_="unique")
        batch.create_unique_constraint("uq_tool_bundles_name_version_digest", ["name", "version", "digest"])


def downgrade() -> None:
    with op.batch_alter_table("tool_bundles") as batch:
        batch.drop_constraint("uq_tool_bundles_name_version_digest", type_="unique")
        batch.create_unique_constraint("uq_tool_bundles_name_version", ["name", "version"])
    with op.batch_alter_table("bundle_versions") as batch:
        batch.add_column(sa.Column("source", sa.Text(), nullable=True))
        batch.add_column(sa.Column("publisher_fingerprint", sa.String(length=64), nullable=True))
        batch.drop_constraint("uq_bundle_versions_name_version_digest", type_="unique")
        batch.create_unique_constraint("uq_bundle_versions_name_version", ["name", "version"])
    with op.batch_alter_table("installations") as batch:
        batch.drop_column("publisher_fingerprint")
        batch.drop_column("source")
