"""ratings: Glicko-2 beside Elo (rating, deviation, volatility, when last rated); rating
changes: what a board did to them, and when it was rated

Existing rows start as newcomers; ``pbmserv db upgrade`` then replays the rated boards of the
past into them (``core.ratings.history.fill_glicko``), as ``admin ratings rebuild`` does.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28 05:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        batch.add_column(sa.Column("glicko", sa.Float(), nullable=False, server_default="1500"))
        batch.add_column(sa.Column("glicko_rd", sa.Float(), nullable=False, server_default="350"))
        batch.add_column(
            sa.Column("glicko_volatility", sa.Float(), nullable=False, server_default="0.06")
        )
        batch.add_column(sa.Column("glicko_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("rating_changes") as batch:
        for name in ("glicko_change", "glicko_rd_change", "glicko_volatility_change"):
            batch.add_column(sa.Column(name, sa.Float(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rating_changes") as batch:
        for name in ("rated_at", "glicko_volatility_change", "glicko_rd_change", "glicko_change"):
            batch.drop_column(name)
    with op.batch_alter_table("ratings") as batch:
        for name in ("glicko_at", "glicko_volatility", "glicko_rd", "glicko"):
            batch.drop_column(name)
