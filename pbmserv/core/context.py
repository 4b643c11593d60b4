"""The context a command runs in: database session, settings, who sent it, and its outputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.core import logins
from pbmserv.core.password_checks import CheckedPassword
from pbmserv.core.passwords import burn_verification_time, verify_password
from pbmserv.core.results import CommandError, Notification
from pbmserv.db.models import User


def _no_such_user(userid: str) -> CommandError:
    return CommandError(
        f'there is no user "{userid}"',
        hint='New players sign up with "signup USERID PASSWORD [FULL NAME]".',
    )


def _disabled(user: User) -> CommandError:
    return CommandError(f'the user "{user.display_id}" is disabled')


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class CommandContext:
    session: Session
    settings: Settings
    sender: str | None  # the address replies go to (None from the admin shell)
    message_id: str | None = None
    clock: Callable[[], datetime] = utcnow
    notifications: list[Notification] = field(default_factory=list)
    #: User ids given with a wrong password by the command running (see core.logins).
    failed_logins: list[str] = field(default_factory=list)
    #: Passwords checked before the transaction began (see core.password_checks).
    password_checks: Mapping[tuple[str, str], CheckedPassword] = field(default_factory=dict)

    def now(self) -> datetime:
        return self.clock()

    def find_user(self, userid: str) -> User | None:
        return self.session.scalar(select(User).where(User.userid == userid.lower()))

    def require_user(self, userid: str) -> User:
        user = self.find_user(userid)
        if user is None:
            raise _no_such_user(userid)
        if user.disabled:
            raise _disabled(user)
        return user

    def authenticate(self, userid: str, password: str, among: Sequence[User] = ()) -> User:
        """The user, if the password is right; otherwise a CommandError that reveals nothing:
        an unknown user id and a wrong password get the same answer, in the same time.
        ``among``: users already loaded (a board's players), looked up before the database."""
        wanted = userid.lower()
        user = next((u for u in among if u.userid == wanted), None) or self.find_user(userid)
        logins.check_allowed(self, userid, user)
        if user is None:
            burn_verification_time(password)
        if user is None or not self._password_right(user, password):
            self.failed_logins.append(userid.lower()[:64])
            raise CommandError(
                "the user id or password is wrong",
                hint="Passwords are case-sensitive; user ids are not. Nothing was changed.",
            )
        if user.disabled:
            raise _disabled(user)
        return user

    def _password_right(self, user: User, password: str) -> bool:
        ahead = self.password_checks.get((user.userid, password))
        if ahead is not None and ahead.password_hash == user.password_hash:
            return ahead.right
        return verify_password(user.password_hash, password)

    def notify(self, notification: Notification) -> None:
        self.notifications.append(notification)
