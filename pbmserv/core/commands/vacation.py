"""vacation USERID PASSWORD start [DAYS] | stop, with signoff and signon its other words."""

from __future__ import annotations

from datetime import timedelta

from pbmserv.core.accounts import logins
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import CommandError, Section
from pbmserv.core.timing import vacations
from pbmserv.db.models import User
from pbmserv.games.base import AnyGame

_SYNTAX = "vacation USERID PASSWORD start [DAYS] | stop"
_DETAILS = (
    "Every user has a bank of vacation days a year. On vacation all your clocks stop,\n"
    "and boards without a clock wait for both sides (no reminders, no forfeits); the\n"
    "other players are told, and see you as away. Each day started counts whole. A\n"
    'vacation ends by "vacation USERID PASSWORD stop", after DAYS if you gave them, or\n'
    "when your days are used up. When a clock of yours runs out while days are left,\n"
    'a vacation begins by itself, and your next move ends it. "status" shows the days\n'
    'left. "signoff USERID PASSWORD" is "vacation ... start", "signon" is "... stop".'
)


def _section(ctx: CommandContext, user: User, *, started: bool, days: int = 0) -> Section:
    per_year = ctx.settings.vacation_days_per_year
    ends = vacations.vacation_end(user, per_year)
    data = {
        "userid": user.display_id,
        "away": user.away_since is not None,
        "started": started,
        "charged": days,
        "days_left": vacations.days_left(user, ctx.now(), per_year),
        "until": vacations.when_text(ends),
    }
    return Section("vacation", data, summary=f"vacation {user.userid}")


def start(ctx: CommandContext, user: User, days: int | None) -> Section:
    now = ctx.now()
    per_year = ctx.settings.vacation_days_per_year
    if user.away_since is not None:
        raise CommandError(
            f"{user.display_id} is on vacation already; to end it, send:",
            hint=f"vacation {user.display_id} PASSWORD stop",
            syntax_was_right=True,
        )
    left = vacations.days_left(user, now, per_year)
    if left == 0:
        raise CommandError(
            f"{user.display_id} has no vacation days left this year (of {per_year})",
            syntax_was_right=True,
        )
    if days is not None and days > left:
        raise CommandError(
            f"{user.display_id} has {left} vacation day{'s' if left != 1 else ''} left this year,"
            f" not {days}",
            syntax_was_right=True,
        )
    until = now + timedelta(days=days) if days is not None else None
    vacations.begin(ctx, user, now, until=until)
    return _section(ctx, user, started=True)


def stop(ctx: CommandContext, user: User) -> Section:
    if user.away_since is None:
        return _section(ctx, user, started=False)
    days = vacations.end(ctx, user, ctx.now())
    return _section(ctx, user, started=False, days=days)


@command(
    "vacation",
    _SYNTAX,
    "stop all your clocks for a while, from your bank of vacation days a year",
    secret_words=(2,),
    min_words=4,
    max_words=5,
    details=_DETAILS,
)
def vacation(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    action = line.words[3].lower()
    if action not in ("start", "stop") or (action == "stop" and len(line.words) > 4):
        raise CommandError(f'"{line.words[3]}" is not start or stop', syntax=_SYNTAX)
    days = None
    if len(line.words) > 4:
        if not line.words[4].isdigit() or int(line.words[4]) < 1:
            raise CommandError(f'"{line.words[4]}" is not a number of days (1 or more)', _SYNTAX)
        days = int(line.words[4])
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    return start(ctx, user, days) if action == "start" else stop(ctx, user)


@command(
    "signoff",
    "signoff USERID PASSWORD",
    'go on vacation until you sign on (as "vacation USERID PASSWORD start")',
    secret_words=(2,),
    min_words=3,
    max_words=3,
    details=_DETAILS,
)
def signoff(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    if user.away_since is not None:
        return _section(ctx, user, started=True)
    return start(ctx, user, None)


@command(
    "signon",
    "signon USERID PASSWORD",
    'come back from vacation (as "vacation USERID PASSWORD stop")',
    secret_words=(2,),
    min_words=3,
    max_words=3,
    details=_DETAILS,
)
def signon(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    return stop(ctx, user)
