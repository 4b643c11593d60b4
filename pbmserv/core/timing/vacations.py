"""The vacation bank (``help vacation``): a user's days off a year, during which all their
clocks stop.

A vacation begins by ``vacation start`` (or ``signoff``), or by itself when a clock runs out
while days are left (automatic: the user's next move ends it). It ends by ``vacation stop``
(``signon``), at its planned end, or when the bank is empty. Each started day counts whole,
charged to the year the vacation began in (UTC).
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime, timedelta

from sqlalchemy import select

from pbmserv.core.context import CommandContext
from pbmserv.core.results import CommandError, Notification
from pbmserv.core.robots.identity import is_robot
from pbmserv.core.timing import clocks
from pbmserv.db.models import GameRow, Seat, User
from pbmserv.db.times import as_utc
from pbmserv.time_controls import DAY, format_duration

ONE_DAY = timedelta(days=1)


def when_text(stamp: datetime | None) -> str | None:
    """A moment as mail shows it (``2026-12-24 18:00 UTC``)."""
    return stamp.strftime("%Y-%m-%d %H:%M UTC") if stamp else None


def _days_started(start: datetime, end: datetime) -> int:
    return max(math.ceil((end - start).total_seconds() / DAY), 0)


def days_used(user: User, year: int) -> int:
    return user.vacation_days_used if user.vacation_year == year else 0


def days_left(user: User, at: datetime, per_year: int) -> int:
    """Vacation days the user still has at ``at`` (the days of a vacation under way count,
    its first day from the moment it begins: every answer says the same number)."""
    if user.away_since is None:
        return max(per_year - days_used(user, at.year), 0)
    start = as_utc(user.away_since)
    under_way = max(_days_started(start, at), 1)
    return max(per_year - days_used(user, start.year) - under_way, 0)


def vacation_end(user: User, per_year: int) -> datetime | None:
    """When the user's vacation ends by itself: at its planned end, or when the bank is empty
    (None: the user is not on vacation)."""
    if user.away_since is None:
        return None
    start = as_utc(user.away_since)
    bank_end = start + ONE_DAY * max(per_year - days_used(user, start.year), 0)
    if user.vacation_until is None:
        return bank_end
    return min(as_utc(user.vacation_until), bank_end)


def _seats(ctx: CommandContext, user: User) -> list[Seat]:
    """The user's seats on active boards (their boards locked: clocks change)."""
    rows = ctx.session.scalars(
        select(GameRow)
        .join(Seat, Seat.game_id == GameRow.id)
        .where(Seat.user_id == user.id, GameRow.status == "active")
        .order_by(GameRow.id)
        .with_for_update()
    ).all()
    return [s for row in rows for s in row.seats if s.user_id == user.id]


def begin(
    ctx: CommandContext,
    user: User,
    at: datetime,
    *,
    until: datetime | None = None,
    automatic: bool = False,
    unreachable: bool = False,
    quiet: bool = False,
) -> None:
    """Put the user on vacation from ``at``: every clock of theirs stops there (``automatic``:
    a move ends it; ``unreachable``: begun because mail cannot reach them,
    core.accounts.unreachable)."""
    user.away_since, user.vacation_until, user.vacation_automatic = at, until, automatic
    user.vacation_unreachable = unreachable
    clocks.pause_users(ctx.session, [user.id], at, ctx.settings.reminder_hours)
    if not quiet:
        seats = _seats(ctx, user)
        _tell_opponents(ctx, user, seats, away=True)


def end(ctx: CommandContext, user: User, at: datetime, *, quiet: bool = False) -> int:
    """End the user's vacation at ``at``: the days it took are charged and their clocks run
    again from there (boards without a clock get their full idle time again). The days
    charged."""
    if user.away_since is None:
        return 0
    start = as_utc(user.away_since)
    per_year = ctx.settings.vacation_days_per_year
    days = min(_days_started(start, at), max(per_year - days_used(user, start.year), 0))
    used_up = days_used(user, start.year) + days >= per_year
    unreachable = user.vacation_unreachable
    user.vacation_days_used = days_used(user, start.year) + days
    user.vacation_year = start.year
    user.away_since, user.vacation_until, user.vacation_automatic = None, None, False
    user.vacation_unreachable = False
    clocks.resume_users(ctx.session, [user.id], at, ctx.settings.reminder_hours)
    seats = _seats(ctx, user)
    for seat in seats:
        if seat.game_row.time_control is None:  # time away never counts towards a forfeit
            seat.game_row.updated_at, seat.game_row.reminded_at = at, None
    if not quiet:
        why = ("used_up" if used_up else "wrote") if unreachable else None
        _tell_opponents(ctx, user, seats, away=False, unreachable=why)
    return days


def before_move(ctx: CommandContext, row: GameRow, seat_number: int) -> None:
    """Settle the mover's clock before their move: a move ends an automatic vacation, and a
    clock that ran out since the sweep last looked takes vacation days (the move then stands)
    or, with too few left, the move is refused: the board is lost on time."""
    now = ctx.now()
    seat = next(s for s in row.seats if s.seat == seat_number)
    user = seat.user
    per_year = ctx.settings.vacation_days_per_year
    if user.away_since is not None and user.vacation_automatic:
        end(ctx, user, min(vacation_end(user, per_year) or now, now))
    ran_out = clocks.deadline(seat)
    if ran_out is None or ran_out > now:
        return
    needed = _days_started(ran_out, now)
    if not is_robot(user) and days_left(user, ran_out, per_year) >= needed:
        begin(ctx, user, ran_out, automatic=True, quiet=True)
        end(ctx, user, now, quiet=True)
        return
    raise CommandError(
        f"your time on board {row.id} ran out {format_duration((now - ran_out).total_seconds())}"
        " ago, with no vacation days left to cover it: the board is lost on time",
        syntax_was_right=True,
    )


def due_ends(ctx: CommandContext, now: datetime) -> list[tuple[User, datetime]]:
    """The vacations that have ended by themselves by ``now``, each with its end."""
    per_year = ctx.settings.vacation_days_per_year
    away = ctx.session.scalars(
        select(User).where(User.away_since.is_not(None)).order_by(User.id).with_for_update()
    )
    ending = [(user, vacation_end(user, per_year)) for user in away]
    return [(user, at) for user, at in ending if at is not None and at <= now]


def _tell_opponents(
    ctx: CommandContext,
    user: User,
    seats: list[Seat],
    *,
    away: bool,
    unreachable: str | None = None,
) -> None:
    """One mail to each opponent on the user's active boards (``unreachable``: the vacation
    that ends was begun by the user's mail bouncing, and ends because they "wrote" or their
    days are "used_up")."""
    boards: dict[int, list[dict[str, object]]] = defaultdict(list)
    people: dict[int, User] = {}
    for seat in seats:
        for other in seat.game_row.seats:
            if other.user_id == user.id or other.user.disabled or is_robot(other.user):
                continue
            people[other.user_id] = other.user
            boards[other.user_id].append({"game": seat.game_row.game, "board": seat.game_id})
    per_year = ctx.settings.vacation_days_per_year
    until = vacation_end(user, per_year) if away else None
    for uid, opponent in people.items():
        data = {
            "userid": user.display_id,
            "recipient": opponent.display_id,
            "away": away,
            "until": when_text(until),
            "boards": boards[uid],
            "unreachable": unreachable,
        }
        ctx.notify(Notification(to=opponent.email, channel="notice", kind="vacation", data=data))
