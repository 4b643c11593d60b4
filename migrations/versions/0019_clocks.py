"""boards: correspondence clocks (a time control, each seat's time left and since when it
runs, when the sweep must look next); moves: the clocks after each; users: the vacation bank

Boards stored before keep no clock: the idle rule goes on for them. A user signed off before
is on vacation from the upgrade on (the bank's days count from then, not from the signoff).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28 06:00:00
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("time_control", sa.String(40), nullable=True))
        batch.add_column(sa.Column("clock_due_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_games_clock_due_at", ["clock_due_at"])
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("clock_left", sa.Float(), nullable=True))
        batch.add_column(sa.Column("clock_since", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("clock_warned", sa.Integer(), nullable=True))
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("clocks", sa.JSON(), nullable=True))
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("vacation_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("vacation_automatic", sa.Boolean(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("vacation_days_used", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("vacation_year", sa.Integer(), nullable=True))
    users = sa.table("users", sa.column("away_since", sa.DateTime(timezone=True)))
    away = users.c.away_since.is_not(None)
    op.execute(users.update().where(away).values(away_since=datetime.now(UTC)))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        for name in ("vacation_year", "vacation_days_used", "vacation_automatic", "vacation_until"):
            batch.drop_column(name)
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("clocks")
    with op.batch_alter_table("seats") as batch:
        for name in ("clock_warned", "clock_since", "clock_left"):
            batch.drop_column(name)
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_clock_due_at")
        batch.drop_column("clock_due_at")
        batch.drop_column("time_control")
