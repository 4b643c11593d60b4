"""Maintenance of idle boards: a reminder after one limit, a forfeit after a second.

The limits come from the settings (per game where the config file sets them). Run by
`pbmserv admin maintain` and periodically by `serve`; several servers may run it at once on
PostgreSQL: each board is locked by the one that handles it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import select

from pbmserv.core import game_service as service
from pbmserv.core.context import CommandContext
from pbmserv.core.game_service import Board
from pbmserv.core.results import Notification
from pbmserv.db.models import GameRow
from pbmserv.games import find_game
from pbmserv.games.base import Outcome


@dataclass
class MaintenanceReport:
    reminded: list[int] = field(default_factory=list)
    forfeited: list[int] = field(default_factory=list)


def run_maintenance(ctx: CommandContext) -> MaintenanceReport:
    """Remind the players of boards idle past their limit; forfeit those idle past the second."""
    now = ctx.now()
    settings = ctx.settings
    shortest = min(
        [settings.remind_after_days, *(g.remind_after_days for g in settings.game_limits.values())]
    )
    candidates = ctx.session.scalars(
        select(GameRow)
        .where(GameRow.status == "active", GameRow.updated_at < now - timedelta(days=shortest))
        .order_by(GameRow.id)
        .with_for_update(skip_locked=True)
    )
    report = MaintenanceReport()
    for row in candidates:
        game = find_game(row.game)
        if game is None:
            continue
        board = Board(row=row, game=game, state=game.load(row.state))
        limits = settings.idle_limits(row.game)
        idle_days = (now - _aware(row.updated_at, now)).total_seconds() / 86400
        if idle_days >= limits.forfeit_after_days:
            _forfeit(ctx, board, limits.forfeit_after_days)
            report.forfeited.append(row.id)
        elif idle_days >= limits.remind_after_days and (
            row.reminded_at is None or _aware(row.reminded_at, now) < _aware(row.updated_at, now)
        ):
            _remind(ctx, board, int(idle_days), limits.forfeit_after_days - idle_days)
            row.reminded_at = now
            report.reminded.append(row.id)
    return report


def _aware(stamp, now):  # type: ignore[no-untyped-def]
    """SQLite gives back naive datetimes: they were stored in UTC."""
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=now.tzinfo)


def _idle_seats(board: Board) -> list[int]:
    return sorted(board.game.to_move(board.state).seats)


def _forfeit(ctx: CommandContext, board: Board, days: float) -> None:
    idle = _idle_seats(board)
    names = ", ".join(board.seat_label(s) for s in idle)
    winners = frozenset(s.seat for s in board.row.seats if s.seat not in idle)
    reason = f"forfeited: {names} made no move in {days:g} days"
    service.conclude(ctx, board, Outcome(winners=winners, reason=reason))
    board.row.updated_at = ctx.now()
    service.record_event(ctx, board, "forfeit", reason)
    service.notify_board(ctx, board, f"The board was {reason}.")


def _remind(ctx: CommandContext, board: Board, idle_days: int, days_left: float) -> None:
    for seat in board.row.seats:
        if seat.user.disabled:
            continue
        view = service.board_view(board, seat.seat, seat.user)
        ctx.notify(
            Notification(
                to=seat.user.email,
                kind="notice",
                subject=f"{board.game.SPEC.name} board {board.number}: reminder, "
                + (
                    "your move"
                    if view["your_turn"]
                    else f"waiting for {', '.join(view['waiting_for'])}"
                ),
                template="mail/reminder.txt.j2",
                context={
                    "view": view,
                    "idle_days": idle_days,
                    "days_left": max(1, round(days_left)),
                },
            )
        )
