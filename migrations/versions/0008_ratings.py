"""ratings: each user's Elo rating per game, and what each rated board changed

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-10 12:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("game", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_ratings_user_id_users"),
        sa.PrimaryKeyConstraint("game", "user_id", name="pk_ratings"),
    )
    op.create_table(
        "rating_changes",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("change", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_rating_changes_game_id_games", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_rating_changes_user_id_users"),
        sa.PrimaryKeyConstraint("game_id", "user_id", name="pk_rating_changes"),
    )


def downgrade() -> None:
    op.drop_table("rating_changes")
    op.drop_table("ratings")
