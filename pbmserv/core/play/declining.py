"""Boards that end because a player never agreed to them (core.play.consent): a challenge declined
before the player's first move, and a board left unaccepted past the idle limit. Nobody wins
or loses either; it counts for no rating."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from pbmserv.core.context import CommandContext
from pbmserv.core.play.boards import Board
from pbmserv.core.play.game_service import finish, record_event, result_text
from pbmserv.core.results import CommandError
from pbmserv.core.timing import clocks
from pbmserv.db.models import MoveRow
from pbmserv.games.base import Outcome, Termination


def decline(ctx: CommandContext, board: Board, seat: int) -> None:
    """End a board its player never agreed to: allowed before that player's first move, and
    not in a tournament. Nobody wins or loses; the board counts for nothing."""
    if board.finished:
        raise CommandError(f"board {board.number} is already over: {result_text(board)}")
    if board.row.match_id is not None:
        raise CommandError(
            f"board {board.number} is a tournament game: it cannot be declined",
            hint="You may resign it, or withdraw from the tournament.",
            syntax_was_right=True,
        )
    moved = ctx.session.scalar(
        select(MoveRow.id)
        .where(MoveRow.game_id == board.row.id, MoveRow.seat == seat, MoveRow.kind == "move")
        .limit(1)
    )
    if moved is not None:
        raise CommandError(
            f"you have already moved on board {board.number}, so it can no longer be declined",
            hint="You may resign it instead.",
            syntax_was_right=True,
        )
    record_event(ctx, board, "decline", "declines the challenge", seat)
    _end_unplayed(ctx, board, f"{board.seat_label(seat)} declined the challenge")


def expire(ctx: CommandContext, board: Board, seats: Sequence[int], days: float) -> str:
    """End a board whose ``seats`` to move never accepted it within ``days`` (the idle limit):
    the board is cancelled, not forfeited. Returns the reason."""
    names = ", ".join(board.seat_label(s) for s in seats)
    reason = f"cancelled: {names} did not accept the board in {days:g} days"
    _end_unplayed(ctx, board, reason)
    record_event(ctx, board, "expire", reason)
    return reason


def _end_unplayed(ctx: CommandContext, board: Board, reason: str) -> None:
    finish(board, Outcome(frozenset(), reason, termination=Termination.DECLINED))
    clocks.stop(board.row, ctx.now())
    board.row.result = {**(board.row.result or {}), "declined": True}
    board.row.updated_at = ctx.now()
