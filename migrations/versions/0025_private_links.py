"""private_links: a player's private link to a board's page in the web view (issue 50); the
token is derived from the server's key and never stored, only its hash

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 14:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "private_links",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_private_links_game_id_games", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_private_links_user_id_users"),
        sa.PrimaryKeyConstraint("game_id", "user_id", name="pk_private_links"),
        sa.UniqueConstraint("token_hash", name="uq_private_links_token_hash"),
    )
    op.create_index("ix_private_links_user_id", "private_links", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_private_links_user_id", table_name="private_links")
    op.drop_table("private_links")
