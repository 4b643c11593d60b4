"""The clock sweep: reminders as a running clock passes its marks (48 and 24 hours left by
default), automatic vacations and losses on time when a clock runs out, and vacations that
end by themselves. ``serve`` runs it every ``clock_sweep_seconds``, ``admin maintain`` too.

Only the boards due are read (``GameRow.clock_due_at``, indexed), each locked by the sweep
that handles it; what happens is dated when it was due, not when the sweep came by.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select

from pbmserv.core.context import CommandContext
from pbmserv.core.play import game_service as service
from pbmserv.core.play.board_views import board_notice, board_view, notify_board
from pbmserv.core.play.boards import board_of
from pbmserv.core.results import Notification
from pbmserv.core.robots.identity import is_robot
from pbmserv.core.timing import clocks, vacations
from pbmserv.core.tournaments.service import settle_finished
from pbmserv.db.models import GameRow, Seat
from pbmserv.games.base import Outcome, Termination
from pbmserv.time_controls import format_duration


@dataclass
class ClockReport:
    reminded: list[int] = field(default_factory=list)
    lost_on_time: list[int] = field(default_factory=list)
    vacations_begun: list[str] = field(default_factory=list)
    vacations_ended: list[str] = field(default_factory=list)
    #: Due boards read (a full chunk: more may be due).
    examined: int = 0


def sweep_clocks(ctx: CommandContext, *, limit: int | None = None) -> ClockReport:
    """Everything the clocks owe by now, in the caller's transaction (``limit``: at most so
    many due boards)."""
    now = ctx.now()
    report = ClockReport()
    for user, at in vacations.due_ends(ctx, now):
        vacations.end(ctx, user, at)
        report.vacations_ended.append(user.display_id)
    query = (
        select(GameRow)
        .where(GameRow.status == "active", GameRow.clock_due_at <= now)
        .order_by(GameRow.clock_due_at, GameRow.id)
        .with_for_update(skip_locked=True)
    )
    if limit is not None:
        query = query.limit(limit)
    for row in ctx.session.scalars(query).all():
        report.examined += 1
        _settle(ctx, row, now, report)
    return report


def _settle(ctx: CommandContext, row: GameRow, now: datetime, report: ClockReport) -> None:
    per_year = ctx.settings.vacation_days_per_year
    # Each pass begins or ends a vacation, or ends the board.
    for _ in range(3 * len(row.seats) + 1):
        if row.status != "active":
            return
        out = sorted(
            (end, seat.seat)
            for seat in row.seats
            if (end := clocks.deadline(seat)) is not None and end <= now
        )
        if not out:
            break
        ran_out, number = out[0]
        seat = next(s for s in row.seats if s.seat == number)
        user = seat.user
        if is_robot(user) or vacations.days_left(user, ran_out, per_year) == 0:
            _lose_on_time(ctx, row, seat, ran_out)
            report.lost_on_time.append(row.id)
            return
        vacations.begin(ctx, user, ran_out, automatic=True)
        _tell_vacation_begun(ctx, row, seat, ran_out)
        report.vacations_begun.append(user.display_id)
        ends = vacations.vacation_end(user, per_year)
        if ends is not None and ends <= now:
            vacations.end(ctx, user, ends)
            report.vacations_ended.append(user.display_id)
    hours = ctx.settings.reminder_hours
    for seat in row.seats:
        mark = clocks.reminder_due(seat, now, hours)
        if mark is not None and seat.clock_since is not None:
            _remind(ctx, row, seat, now)
            seat.clock_warned = mark
            report.reminded.append(row.id)
    row.clock_due_at = clocks.next_due(row, hours)


def _lose_on_time(ctx: CommandContext, row: GameRow, seat: Seat, at: datetime) -> None:
    board = board_of(row)
    if board is None:  # a game no longer offered: its boards stand still
        row.clock_due_at = None
        return
    for each in row.seats:  # the clocks read as they stood when time ran out
        clocks.stop_seat(each, at)
    reason = f"{board.seat_label(seat.seat)} lost on time"
    winners = frozenset(s.seat for s in row.seats if s.seat != seat.seat)
    service.conclude(
        ctx, board, Outcome(winners=winners, reason=reason, termination=Termination.TIME)
    )
    row.updated_at = ctx.now()
    service.record_event(ctx, board, "time", reason, seat.seat)
    notify_board(ctx, board, f"The board was {reason}.")
    settle_finished(ctx)


def _remind(ctx: CommandContext, row: GameRow, seat: Seat, now: datetime) -> None:
    board = board_of(row)
    if board is None or seat.user.disabled or is_robot(seat.user):
        return
    view = board_view(board, seat.seat, seat.user, now=now)
    left = format_duration(clocks.left_at(seat, now))
    data = {"view": view, "clock_left": left, **_bank(ctx, seat, now)}
    board_notice(ctx, board, seat.user, "reminder", data, with_picture=True)


def _bank(ctx: CommandContext, seat: Seat, now: datetime) -> dict[str, int]:
    days = vacations.days_left(seat.user, now, ctx.settings.vacation_days_per_year)
    return {"vacation_days": days}


def _tell_vacation_begun(ctx: CommandContext, row: GameRow, seat: Seat, at: datetime) -> None:
    """The player whose clock ran out learns that their vacation days are being used."""
    user = seat.user
    if user.disabled:
        return
    per_year = ctx.settings.vacation_days_per_year
    ends = vacations.vacation_end(user, per_year)
    data = {
        "userid": user.display_id,
        "recipient": user.display_id,
        "away": True,
        "automatic": True,
        "game": row.game,
        "board": row.id,
        "days_left": vacations.days_left(user, at, per_year),
        "until": vacations.when_text(ends),
        "boards": [],
    }
    ctx.notify(Notification(to=user.email, channel="notice", kind="vacation", data=data))
