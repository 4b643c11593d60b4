"""Correspondence clocks on boards (``help clocks``): each seat has its own clock, running
from the moment the board mail that gives it the turn is queued (the transaction's time) until
its move; every change of turn stores each seat's exact time left, never derived from mail.

A seat's clock runs while it is the seat's turn, the board is not over, its player accepted
the board (``core.play.consent``) and is not on vacation (``core.timing.vacations``; a player our
mail cannot reach is on one, charged to their bank: ``core.accounts.unreachable``).
``GameRow.clock_due_at`` is when the sweep must next look at the board (a reminder due, a time
running out), so the sweep reads only the boards due.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.core.context import CommandContext
from pbmserv.db.models import GameRow, Seat, User
from pbmserv.db.times import as_utc
from pbmserv.time_controls import TimeControl, format_duration, parse_time_control


def control_of(row: GameRow) -> TimeControl | None:
    return parse_time_control(row.time_control) if row.time_control else None


def left_at(seat: Seat, now: datetime) -> float:
    """Seconds on the seat's clock at ``now`` (negative once run out)."""
    left = seat.clock_left or 0.0
    if seat.clock_since is not None:
        left -= (now - as_utc(seat.clock_since)).total_seconds()
    return left


def deadline(seat: Seat) -> datetime | None:
    """When the seat's running clock runs out (None: it does not run)."""
    if seat.clock_since is None or seat.clock_left is None:
        return None
    return as_utc(seat.clock_since) + timedelta(seconds=seat.clock_left)


def stop_seat(seat: Seat, at: datetime) -> None:
    """Stop the seat's clock at ``at`` (or where it started, if later), keeping what is left
    exactly."""
    if seat.clock_since is not None:
        seat.clock_left = left_at(seat, max(at, as_utc(seat.clock_since)))
        seat.clock_since = None


def start(row: GameRow, control: TimeControl | None, now: datetime, hours: tuple[int, ...]) -> None:
    """Give a new board its clock (None: none), and start the clocks of the seats to move."""
    row.time_control = str(control) if control else None
    if control is None:
        return
    for seat in row.seats:
        seat.clock_left = float(control.initial)
    run(row, now, hours)


def run(row: GameRow, now: datetime, hours: tuple[int, ...]) -> None:
    """Start the clocks of the seats to move whose player is not away, stop the others' at
    ``now``, and note when the sweep must look next."""
    if row.time_control is None:
        return
    turn = {int(s) for s in row.to_move.split(",") if s} if row.status == "active" else set()
    for seat in row.seats:
        # A seat whose player has not accepted the board has no running clock (core.play.consent).
        if seat.seat in turn and seat.accepted_at is not None and not _paused(row, seat.user):
            if seat.clock_since is None:
                seat.clock_since = now
                # Marks already passed as the turn begins: the board mail shows the time.
                passed = [h for h in hours if (seat.clock_left or 0.0) <= h * 3600]
                passed += [seat.clock_warned] if seat.clock_warned is not None else []
                seat.clock_warned = min(passed, default=None)
        else:
            stop_seat(seat, now)
    row.clock_due_at = next_due(row, hours)


def _paused(row: GameRow, user: User) -> bool:
    """The user's clocks stand still: on vacation (as is a user whose address is marked
    bouncing while their bank lasts: core.accounts.unreachable; never the mark itself, which would
    stop a clock for free)."""
    return user.away_since is not None


def _clocked_boards(session: Session, user_ids: Sequence[int]) -> list[GameRow]:
    """The active boards with a clock where ``user_ids`` play, locked: their clocks change."""
    return list(
        session.scalars(
            select(GameRow)
            .join(Seat, Seat.game_id == GameRow.id)
            .where(
                Seat.user_id.in_(user_ids),
                GameRow.status == "active",
                GameRow.time_control.is_not(None),
            )
            .order_by(GameRow.id)
            .with_for_update()
        ).unique()
    )


def pause_users(
    session: Session, user_ids: Sequence[int], at: datetime, hours: tuple[int, ...]
) -> None:
    """Stop the clocks of ``user_ids`` at ``at`` (the users are paused already)."""
    for row in _clocked_boards(session, user_ids):
        for seat in row.seats:
            if seat.user_id in user_ids:
                stop_seat(seat, at)
        row.clock_due_at = next_due(row, hours)


def resume_users(
    session: Session, user_ids: Sequence[int], at: datetime, hours: tuple[int, ...]
) -> None:
    """Run again from ``at`` the clocks of ``user_ids`` where it is their turn."""
    for row in _clocked_boards(session, user_ids):
        run(row, at, hours)


def after_move(ctx: CommandContext, row: GameRow, moved: int) -> dict[str, float] | None:
    """After ``moved`` played (the board's new turn already stored): charge the time its
    player took, add the increment up to the cap, and run the clocks of the new turn. The
    clocks as they stand after the move, by seat (None: the board has no clock)."""
    control = control_of(row)
    if control is None:
        return None
    now = ctx.now()
    for seat in row.seats:
        if seat.seat == moved:
            stop_seat(seat, now)
            seat.clock_left = control.after_move(seat.clock_left or 0.0)
            seat.clock_warned = None
    run(row, now, ctx.settings.reminder_hours)
    return {str(s.seat): left_at(s, now) for s in row.seats}


def restore(ctx: CommandContext, row: GameRow, clocks: dict[str, float] | None) -> None:
    """After moves are taken back: each seat's time as it stood after the last move kept
    (``clocks``; None: as the board began), running from now for the seats to move."""
    control = control_of(row)
    if control is None:
        return
    for seat in row.seats:
        seat.clock_since = None
        seat.clock_warned = None
        seat.clock_left = float(clocks[str(seat.seat)]) if clocks else float(control.initial)
    run(row, ctx.now(), ctx.settings.reminder_hours)


def stop(row: GameRow, now: datetime) -> None:
    """The board is over: every clock stops where it stands."""
    for seat in row.seats:
        stop_seat(seat, now)
    row.clock_due_at = None


def next_due(row: GameRow, hours: tuple[int, ...]) -> datetime | None:
    """The earliest moment something happens to a running clock: a reminder not yet sent
    (``hours`` left, most first) or a time running out."""
    moments = []
    for seat in row.seats:
        end = deadline(seat)
        if end is None:
            continue
        moments.append(end)
        moments += [end - timedelta(hours=h) for h in hours if _unwarned(seat, h)]
    return min(moments, default=None)


def _unwarned(seat: Seat, hours: int) -> bool:
    return seat.clock_warned is None or hours < seat.clock_warned


def reminder_due(seat: Seat, now: datetime, hours: tuple[int, ...]) -> int | None:
    """The fewest hours-left mark the seat's running clock has passed without a reminder."""
    left = left_at(seat, now)
    passed = [h for h in hours if left <= h * 3600 and _unwarned(seat, h)]
    return min(passed, default=None)


def view(row: GameRow, now: datetime, reader: int | None) -> list[dict[str, object]] | None:
    """The clocks as a board mail shows them, the ``reader`` seat's first (None: no clock)."""
    if row.time_control is None:
        return None
    seats = sorted(row.seats, key=lambda seat: seat.seat != reader)
    return [
        {
            "seat": seat.seat,
            "userid": seat.user.display_id,
            "left": format_duration(max(left_at(seat, now), 0.0)),
            "running": seat.clock_since is not None,
            "away": seat.user.away_since is not None,
            "unreachable": seat.user.vacation_unreachable,
        }
        for seat in seats
    ]
