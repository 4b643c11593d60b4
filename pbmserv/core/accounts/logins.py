"""Logins: a user id's password checked, and failed logins counted per user id and per
sending address, so a password cannot be guessed by mail at argon2's pace; the owner of an
account under attack is told once a day.

Failures are noted on the context while a command runs and written by :func:`record_failures`
after the command's savepoint is rolled back (a failed command changes nothing else).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import func, select

from pbmserv.core.accounts.passwords import burn_verification_time, verify_password
from pbmserv.core.context import CommandContext, disabled_error
from pbmserv.core.results import CommandError, Notification
from pbmserv.core.robots.identity import is_robot
from pbmserv.db.models import AuthFailure, User
from pbmserv.db.times import as_utc

ALERT_EVERY = timedelta(days=1)
#: Stands where the password goes in a command built from a reply to a seat's reply address
#: (see core.replies); it counts only while the context vouches for that very user.
REPLY_PASSWORD = "(reply)"


def _window(ctx: CommandContext) -> timedelta:
    return timedelta(minutes=ctx.settings.failed_login_window_minutes)


#: Built once: every batch with a password asks it.
_LATEST_FAILURE = select(func.max(AuthFailure.failed_at))


def _recent(ctx: CommandContext, column, value: str) -> int:  # type: ignore[no-untyped-def]
    since = ctx.now() - _window(ctx)
    # Core queries on the session's connection: no autoflush, no ORM overhead (every move
    # with a password runs this); and none at all while no login failed lately.
    connection = ctx.session.connection()
    if ctx.lookups.failures_lately is None:
        latest = connection.scalar(_LATEST_FAILURE)
        ctx.lookups.failures_lately = latest is not None and as_utc(latest) > since
    if not ctx.lookups.failures_lately:
        return 0
    query = select(func.count()).select_from(AuthFailure).where(column == value)
    return connection.scalar(query.where(AuthFailure.failed_at > since)) or 0


def authenticate(
    ctx: CommandContext, userid: str, password: str, among: Sequence[User] = ()
) -> User:
    """The user, if the password is right; otherwise a CommandError that reveals nothing:
    an unknown user id and a wrong password get the same answer, in the same time.
    ``among``: users already loaded (a board's players), looked up before the database."""
    wanted = userid.lower()
    user = next((u for u in among if u.userid == wanted), None) or ctx.find_user(userid)
    if user is not None and password == REPLY_PASSWORD and ctx.reply_login == user.userid:
        if user.disabled:
            raise disabled_error(user)
        return user
    if user is not None and is_robot(user):
        raise CommandError(
            f"{user.display_id} is a robot: it plays by itself and takes no commands by mail",
            hint='See "help robots".',
            syntax_was_right=True,
        )
    check_allowed(ctx, userid, user)
    if user is None:
        burn_verification_time(password)
    if user is None or not _password_right(ctx, user, password):
        ctx.failed_logins.append(userid.lower()[:64])
        raise CommandError(
            "the user id or password is wrong",
            hint="Passwords are case-sensitive; user ids are not.",
            syntax_was_right=True,  # the command was written right: its syntax is no help
        )
    if user.disabled:
        raise disabled_error(user)
    return user


def _password_right(ctx: CommandContext, user: User, password: str) -> bool:
    """A check made before the transaction began counts if the hash is still the one checked."""
    ahead = ctx.password_checks.get((user.userid, password))
    if ahead is not None and ahead.password_hash == user.password_hash:
        return ahead.right
    return verify_password(user.password_hash, password)


def check_allowed(ctx: CommandContext, userid: str, user: User | None) -> None:
    """Refuse a login, unchecked, while too many wrong passwords are recent for the user id
    or the sender. The owner is never held up by what others sent, but only an owner whose
    From the receiving MTA authenticated (DMARC, or aligned DKIM or SPF) counts as the owner:
    a bare From can be forged, and a forged owner gets no more guesses than a stranger."""
    settings = ctx.settings
    sender = (ctx.sender or "").lower()
    if user is not None and ctx.sender_authenticated and sender == user.email.lower():
        return
    minutes = int(settings.failed_login_window_minutes)
    too_many = CommandError(
        f"too many wrong passwords lately; logins are paused for up to {minutes} minutes",
        hint="A reply to your latest board mail still plays your move. If you forgot your "
        "password, ask the server's operator.",
        syntax_was_right=True,
    )
    if _recent(ctx, AuthFailure.userid, userid.lower()) >= settings.failed_logins_per_user:
        raise too_many
    if sender and _recent(ctx, AuthFailure.sender, sender) >= settings.failed_logins_per_sender:
        raise too_many


def record_failures(ctx: CommandContext) -> None:
    """Write the failed logins of the command just rolled back, and alert an owner whose
    account reached the limit (at most once a day)."""
    now = ctx.now()
    for userid in ctx.failed_logins:
        ctx.session.add(AuthFailure(userid=userid, sender=(ctx.sender or "")[:320], failed_at=now))
    ctx.session.flush()
    ctx.lookups.failures_lately = True
    for userid in dict.fromkeys(ctx.failed_logins):
        if _recent(ctx, AuthFailure.userid, userid) >= ctx.settings.failed_logins_per_user:
            _alert_owner(ctx, userid)
    ctx.failed_logins.clear()


def _alert_owner(ctx: CommandContext, userid: str) -> None:
    user = ctx.session.scalar(select(User).where(User.userid == userid))
    now = ctx.now()
    if user is None or (
        user.guess_alert_at and now - user.guess_alert_at.replace(tzinfo=now.tzinfo) < ALERT_EVERY
    ):
        return
    user.guess_alert_at = now
    ctx.notify(
        Notification(
            to=user.email,
            channel="notice",
            kind="password_guessing",
            data={
                "userid": user.display_id,
                "count": ctx.settings.failed_logins_per_user,
                "minutes": int(ctx.settings.failed_login_window_minutes),
            },
        )
    )
