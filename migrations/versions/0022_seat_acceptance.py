"""seats: when each player accepted the board (issue 48: a board a player did not start runs
no clock of theirs, spends no vacation and counts for no rating until they accept it or move)

Boards stored before count as accepted by everyone, from when they were made: they go on as
they were.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-22 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=True))
    seats = sa.table(
        "seats", sa.column("game_id", sa.Integer()), sa.column("accepted_at", sa.DateTime())
    )
    games = sa.table("games", sa.column("id", sa.Integer()), sa.column("created_at", sa.DateTime()))
    made = sa.select(games.c.created_at).where(games.c.id == seats.c.game_id).scalar_subquery()
    op.execute(seats.update().values(accepted_at=made))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("accepted_at")
