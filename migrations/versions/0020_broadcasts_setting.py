"""users.broadcasts: whether the operator's broadcasts come to the user ("on") or not ("off",
left with the unsubscribe command a broadcast's List-Unsubscribe header names)

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-20 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("broadcasts", sa.String(length=8), nullable=False, server_default="on")
        )


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("broadcasts")
