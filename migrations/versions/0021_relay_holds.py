"""relay_holds: a relay that refused the server's login for good holds the outbox

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-21 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "relay_holds",
        sa.Column("relay", sa.String(300), nullable=False),
        sa.Column("username", sa.String(320), nullable=False),
        sa.Column("credentials", sa.String(128), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("held_since", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("relay", name=op.f("pk_relay_holds")),
    )


def downgrade() -> None:
    op.drop_table("relay_holds")
