"""users.vacation_unreachable: the vacation was begun by the user's address being marked
bouncing (issue 48: a clock stopped because mail cannot reach its player is charged to their
vacation bank, and mail from any of their addresses ends the pause)

A user whose address is marked bouncing at the upgrade, and who is not on vacation, is on such
a vacation from the upgrade on (their clocks were stopped by the mark: they stay stopped, now
charged to the bank, and run again when the bank is empty or they write).

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-22 10:00:00
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("vacation_unreachable", sa.Boolean(), nullable=False, server_default="0")
        )
    users = sa.table(
        "users",
        sa.column("email", sa.String()),
        sa.column("robot_level", sa.Integer()),
        sa.column("away_since", sa.DateTime(timezone=True)),
        sa.column("vacation_automatic", sa.Boolean()),
        sa.column("vacation_unreachable", sa.Boolean()),
    )
    addresses = sa.table(
        "addresses",
        sa.column("address", sa.String()),
        sa.column("bouncing_since", sa.DateTime(timezone=True)),
    )
    bouncing = sa.select(addresses.c.address).where(addresses.c.bouncing_since.is_not(None))
    op.execute(
        users.update()
        .where(
            users.c.away_since.is_(None),
            users.c.robot_level.is_(None),
            sa.func.lower(users.c.email).in_(bouncing),
        )
        .values(away_since=datetime.now(UTC), vacation_automatic=True, vacation_unreachable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("vacation_unreachable")
