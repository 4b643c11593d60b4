"""Tournaments on top of the game service: boards a tournament created report their end here.

The tournament tables and the service that pairs rounds, creates boards and mails standings
are added by the tournament manager (issue 9); until a board belongs to a tournament, its end
concerns nobody else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pbmserv.core.context import CommandContext
    from pbmserv.core.game_service import Board


def board_finished(ctx: CommandContext, board: Board) -> None:
    """Record a finished board's result in its tournament, if it belongs to one."""
    return None
