"""tournaments, their entries and matches; boards know the match they belong to

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 12:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("format", sa.String(length=24), nullable=False),
        sa.Column("games", sa.JSON(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
        sa.UniqueConstraint("name", name=op.f("uq_tournaments_name")),
    )
    op.create_table(
        "entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.Column("playability", sa.JSON(), nullable=True),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_entries_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_entries_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entries")),
        sa.UniqueConstraint("tournament_id", "user_id", name="uq_entries_tournament_user"),
    )
    with op.batch_alter_table("entries") as batch:
        batch.create_index(batch.f("ix_entries_user_id"), ["user_id"], unique=False)

    op.create_table(
        "matches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("bracket", sa.String(length=16), nullable=False),
        sa.Column("first_id", sa.Integer(), nullable=False),
        sa.Column("second_id", sa.Integer(), nullable=True),
        sa.Column("game", sa.String(length=40), nullable=True),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("points", sa.Float(), nullable=True),
        sa.Column("winner_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_matches_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["first_id"], ["users.id"], name=op.f("fk_matches_first_id_users")),
        sa.ForeignKeyConstraint(
            ["second_id"], ["users.id"], name=op.f("fk_matches_second_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["winner_id"], ["users.id"], name=op.f("fk_matches_winner_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_matches")),
    )
    with op.batch_alter_table("matches") as batch:
        batch.create_index("ix_matches_tournament_round", ["tournament_id", "round"], unique=False)

    # A plain ADD COLUMN with its REFERENCES inline: SQLite can add such a column in place, so
    # the games table is not copied (a copy would drop and refill it under its dependants).
    op.add_column(
        "games",
        sa.Column(
            "match_id",
            sa.Integer(),
            sa.ForeignKey("matches.id", name="fk_games_match_id_matches"),
            nullable=True,
        ),
        inline_references=True,
    )
    with op.batch_alter_table("games") as batch:
        batch.create_index(batch.f("ix_games_match_id"), ["match_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index(batch.f("ix_games_match_id"))
    # In place on both engines: SQLite (3.35+) drops a referencing column without a copy.
    op.drop_column("games", "match_id")
    with op.batch_alter_table("matches") as batch:
        batch.drop_index("ix_matches_tournament_round")
    op.drop_table("matches")
    with op.batch_alter_table("entries") as batch:
        batch.drop_index(batch.f("ix_entries_user_id"))
    op.drop_table("entries")
    op.drop_table("tournaments")
