"""boards remember when their idle players were last reminded

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("reminded_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_games_status_updated", ["status", "updated_at"])


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_status_updated")
        batch.drop_column("reminded_at")
