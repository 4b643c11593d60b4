"""Extinction's draw offers, acceptances and claims leave the moves: they become proposal
entries of the board's history (the server's proposals), and a board's ply counts moves only

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-10 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

#: The move texts the draw move was stored as, and the history entries they become.
ENTRIES = (
    ("draw offer", "propose", "proposes a draw"),
    ("draw accepted", "accept", "accepts the draw proposal"),
    ("draw claimed", "claim", "claims a draw"),
)
EXTINCTION = "game_id IN (SELECT id FROM games WHERE game = 'extinction')"


def _recount(kinds: str) -> None:
    op.execute(
        "UPDATE games SET ply = (SELECT count(*) FROM moves WHERE moves.game_id = games.id"
        f" AND moves.kind IN ({kinds})) WHERE game = 'extinction'"
    )


def upgrade() -> None:
    for move_text, kind, entry_text in ENTRIES:
        op.execute(
            sa.text(
                f"UPDATE moves SET kind = :kind, text = :entry WHERE kind = 'move'"
                f" AND text = :move AND {EXTINCTION}"
            ).bindparams(kind=kind, entry=entry_text, move=move_text)
        )
    _recount("'move'")


def downgrade() -> None:
    for move_text, kind, entry_text in ENTRIES:
        op.execute(
            sa.text(
                f"UPDATE moves SET kind = 'move', text = :move WHERE kind = :kind"
                f" AND text = :entry AND {EXTINCTION}"
            ).bindparams(kind=kind, entry=entry_text, move=move_text)
        )
    _recount("'move'")
