"""Maintenance of idle boards without a clock (those with one: ``core.timing.clock_sweep``): a
reminder after one limit, a forfeit after a second.

A board is never forfeited without a reminder of its idle spell sent at least
``forfeit_notice_days`` before: after downtime an overdue board is reminded first. The boards
of a player on vacation wait for both sides: no reminders, no forfeits (a player whose address
is marked bouncing is on one while their bank lasts, core.accounts.unreachable; then their boards go
on, as for any absence). A board waiting for a player who never accepted it
(core.play.consent) follows this rule even with a clock (theirs does not run), and is cancelled,
unrated, where another would be forfeited.

The limits come from the settings (per game where the config file sets them). Run by
`pbmserv admin maintain` and periodically by `serve`; several servers may run it at once on
PostgreSQL: each board is locked by the one that handles it.

Only boards that are due are read: the query itself tests each game's limits, so a board
already reminded of its idle spell costs nothing until its forfeit is due. `serve` works
through them in chunks, one transaction each (see ``runtime.upkeep.maintain``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, or_, select

from pbmserv.config import IdleLimits, Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.play import consent, declining
from pbmserv.core.play import game_service as service
from pbmserv.core.play.board_views import board_notice, board_view, notify_board
from pbmserv.core.play.boards import Board
from pbmserv.core.tournaments.service import settle_finished
from pbmserv.db.models import GameRow, Seat, User
from pbmserv.games import find_game
from pbmserv.games.base import Outcome, Termination


@dataclass
class MaintenanceReport:
    reminded: list[int] = field(default_factory=list)
    forfeited: list[int] = field(default_factory=list)
    #: Users sent their daily digest (see core.digest).
    digested: list[int] = field(default_factory=list)
    #: Held messages dropped because their address was never confirmed.
    expired: int = 0
    #: How many due boards the query gave, and the last one's id: where the next chunk starts.
    examined: int = 0
    last_id: int | None = None


def due_condition(settings: Settings, now: datetime) -> ColumnElement[bool]:
    """SQL: the active board is due for a reminder it has not had since its last move, or for
    a forfeit after such a reminder and its notice, under its game's limits (one clause per
    configured game, one for the rest)."""
    noticed_before = now - timedelta(days=settings.forfeit_notice_days)

    def due(limits: IdleLimits) -> ColumnElement[bool]:
        forfeit_before = now - timedelta(days=limits.forfeit_after_days)
        remind_before = now - timedelta(days=limits.remind_after_days)
        return or_(
            and_(
                GameRow.updated_at <= forfeit_before,
                GameRow.reminded_at >= GameRow.updated_at,
                GameRow.reminded_at <= noticed_before,
            ),
            and_(
                GameRow.updated_at <= remind_before,
                or_(GameRow.reminded_at.is_(None), GameRow.reminded_at < GameRow.updated_at),
            ),
        )

    configured = sorted(settings.game_limits)
    default = IdleLimits(settings.remind_after_days, settings.forfeit_after_days)
    clauses = [and_(GameRow.game == name, due(settings.game_limits[name])) for name in configured]
    others = GameRow.game.not_in(configured) if configured else None
    clauses.append(due(default) if others is None else and_(others, due(default)))
    shortest = min(
        [
            default.remind_after_days,
            *(settings.game_limits[n].remind_after_days for n in configured),
        ]
    )
    # Boards of a player who signed off wait, for both sides, until the player is back.
    away = select(Seat.game_id).join(User, User.id == Seat.user_id)
    away = away.where(User.away_since.is_not(None))
    # The plain range on updated_at lets ix_games_status_updated narrow the scan first.
    return and_(
        GameRow.status == "active",
        GameRow.updated_at <= now - timedelta(days=shortest),
        # A board with a clock has the clock sweep instead, unless a player never accepted it.
        or_(GameRow.time_control.is_(None), GameRow.id.in_(consent.boards_not_accepted())),
        or_(*clauses),
        GameRow.id.not_in(away),
    )


def run_maintenance(
    ctx: CommandContext, *, after_id: int = 0, limit: int | None = None
) -> MaintenanceReport:
    """Remind the players of boards idle past their limit; forfeit those idle past the second.

    Handles the due boards with an id above ``after_id``, in id order, at most ``limit`` of
    them (all when None), in the caller's transaction.
    """
    now = ctx.now()
    settings = ctx.settings
    query = (
        select(GameRow)
        .where(GameRow.id > after_id, due_condition(settings, now))
        .order_by(GameRow.id)
        .with_for_update(skip_locked=True)
    )
    if limit is not None:
        query = query.limit(limit)
    report = MaintenanceReport()
    for row in ctx.session.scalars(query):
        report.examined += 1
        report.last_id = row.id
        game = find_game(row.game)
        if game is None or (row.time_control is not None and not _waits_for_consent(row)):
            continue
        limits = settings.idle_limits(row.game)
        moved = _aware(row.updated_at, now)
        idle_days = (now - moved).total_seconds() / 86400
        reminded = None if row.reminded_at is None else _aware(row.reminded_at, now)
        notice = timedelta(days=settings.forfeit_notice_days)
        if reminded is None or reminded < moved:
            if idle_days >= limits.remind_after_days:
                board = Board.loaded(row, game)
                days_left = max(limits.forfeit_after_days - idle_days, settings.forfeit_notice_days)
                _remind(ctx, board, int(idle_days), days_left)
                row.reminded_at = now
                report.reminded.append(row.id)
        elif idle_days >= limits.forfeit_after_days and now - reminded >= notice:
            board = Board.loaded(row, game)
            _forfeit(ctx, board, limits.forfeit_after_days)
            report.forfeited.append(row.id)
    return report


def _aware(stamp: datetime, now: datetime) -> datetime:
    """SQLite gives back naive datetimes: they were stored in UTC."""
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=now.tzinfo)


def _idle_seats(board: Board) -> list[int]:
    return sorted(board.game.to_move(board.state).seats)


def _waits_for_consent(row: GameRow) -> bool:
    """Whether a seat to move has not accepted the board (core.play.consent)."""
    to_move = {int(seat) for seat in row.to_move.split(",") if seat}
    return bool(to_move & set(consent.unaccepted_seats(row)))


def _forfeit(ctx: CommandContext, board: Board, days: float) -> None:
    idle = _idle_seats(board)
    if _waits_for_consent(board.row):  # nobody loses a board they never accepted
        reason = declining.expire(ctx, board, idle, days)
        notify_board(ctx, board, f"The board was {reason}.")
        return
    names = ", ".join(board.seat_label(s) for s in idle)
    winners = frozenset(s.seat for s in board.row.seats if s.seat not in idle)
    reason = f"forfeited: {names} made no move in {days:g} days"
    service.conclude(
        ctx, board, Outcome(winners=winners, reason=reason, termination=Termination.FORFEIT)
    )
    board.row.updated_at = ctx.now()
    service.record_event(ctx, board, "forfeit", reason)
    notify_board(ctx, board, f"The board was {reason}.")
    settle_finished(ctx)


def _remind(ctx: CommandContext, board: Board, idle_days: int, days_left: float) -> None:
    for seat in board.row.seats:
        if seat.user.disabled:
            continue
        view = board_view(board, seat.seat, seat.user, now=ctx.now())
        data = {"view": view, "idle_days": idle_days, "days_left": max(1, round(days_left))}
        data["unaccepted"] = _waits_for_consent(board.row)  # cancelled, not forfeited
        board_notice(ctx, board, seat.user, "reminder", data, with_picture=True)
