"""A player our mail cannot reach (their address marked bouncing, core.accounts.bouncing) is away,
as on a vacation, and it is charged to their vacation bank (core.timing.vacations): a bounce never
gives more time than a vacation would, whoever sent the reports.

When the address is marked, each of its users who is not on vacation already and has days
left begins a vacation *begun by the bounce* (``User.vacation_unreachable``): all their
clocks stop, and boards without a clock wait. It ends, each day started counted whole:

- when mail comes from any of the user's addresses (the registered one or one they ``add``-ed:
  they are reachable), or they move from anywhere (a move ends it, as for a clock run out);
- when the bank is empty (the clock sweep): their clocks run again, mark or not, as for any
  absence;
- when the operator gives them another address.

A user on vacation already when the mark comes keeps that vacation as it is (nothing is
charged twice); a user with no days left keeps their clocks running.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pbmserv.core.context import CommandContext
from pbmserv.core.robots.identity import is_robot
from pbmserv.core.timing import vacations
from pbmserv.db.models import User


def begin(ctx: CommandContext, users: Iterable[User], at: datetime) -> None:
    """The address of ``users`` was marked bouncing at ``at``: those who are not away and
    have days left go on a vacation begun by the bounce (their opponents are told by the
    bounce's own notice, which says how long the pause may last)."""
    per_year = ctx.settings.vacation_days_per_year
    for user in users:
        if is_robot(user) or user.away_since is not None:
            continue
        if vacations.days_left(user, at, per_year) == 0:
            continue  # as for any absence: the clocks run on
        vacations.begin(ctx, user, at, automatic=True, unreachable=True, quiet=True)


def end(ctx: CommandContext, users: Iterable[User], at: datetime) -> list[User]:
    """``users`` can be reached again (mail came from them, or another address was given):
    the vacations the bounce began end at ``at``, charged, and their opponents are told.
    The users whose vacation ended."""
    ended = []
    for user in users:
        if user.away_since is not None and user.vacation_unreachable:
            per_year = ctx.settings.vacation_days_per_year
            bank_end = vacations.vacation_end(user, per_year)
            vacations.end(ctx, user, min(bank_end or at, at))
            ended.append(user)
    return ended


def pause(user: User, per_year: int) -> dict[str, Any]:
    """What the opponents are told of the user's clocks as their address is marked: whether
    they stopped (``paused``), until when at the latest (``until``), and whether by a vacation
    under way already (``already``)."""
    away = user.away_since is not None
    return {
        "userid": user.display_id,
        "paused": away,
        "already": away and not user.vacation_unreachable,
        "until": vacations.when_text(vacations.vacation_end(user, per_year)),
    }
