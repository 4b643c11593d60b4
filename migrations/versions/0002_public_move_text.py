"""moves keep what others may see of a move (hidden-information games)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("public_text", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("public_text")
