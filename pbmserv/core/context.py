"""The context a command runs in: database session, settings, who sent it, and its outputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, literal, select, union_all
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.core.accounts.password_checks import CheckedPassword
from pbmserv.core.results import CommandError, Notification
from pbmserv.core.robots.identity import is_robot_address
from pbmserv.db.models import Address, GameRow, User, UserAddress, table_of
from pbmserv.db.times import utcnow


def _no_such_user(userid: str) -> CommandError:
    return CommandError(
        f'there is no user "{userid}"',
        hint='New players sign up with "signup USERID PASSWORD [FULL NAME]".',
    )


def disabled_error(user: User) -> CommandError:
    return CommandError(f'the user "{user.display_id}" is disabled', syntax_was_right=True)


_ADDRESSES = table_of(Address)
_ADDRESS_FACTS = select(
    _ADDRESSES.c.confirmed_at, _ADDRESSES.c.bouncing_since, _ADDRESSES.c.hard_bounces
).where(_ADDRESSES.c.address == bindparam("address"))
_USERS, _ADDED = table_of(User), table_of(UserAddress)
_REGISTERED = func.lower(_USERS.c.email)
_REGISTERED_FACTS = _ADDRESSES.alias("registered")
#: A sender's address and the registered addresses of the users who added it (``add``), each
#: with what its row says (NULLs: no row): one statement for every message that comes in.
_SENDER_FACTS = union_all(
    select(
        literal(False).label("added"),
        _ADDRESSES.c.address,
        _ADDRESSES.c.confirmed_at,
        _ADDRESSES.c.bouncing_since,
        _ADDRESSES.c.hard_bounces,
    ).where(_ADDRESSES.c.address == bindparam("address")),
    select(
        literal(True).label("added"),
        _REGISTERED,
        _REGISTERED_FACTS.c.confirmed_at,
        _REGISTERED_FACTS.c.bouncing_since,
        _REGISTERED_FACTS.c.hard_bounces,
    )
    .select_from(_USERS)
    .join(_ADDED, _ADDED.c.user_id == _USERS.c.id)
    .outerjoin(_REGISTERED_FACTS, _REGISTERED_FACTS.c.address == _REGISTERED)
    .where(_ADDED.c.address == bindparam("address")),
)


def _facts(row: Any) -> tuple[bool, bool, bool]:
    """Confirmed, bouncing, bounced, of an address's row (None: it has none)."""
    return (
        row is not None and row.confirmed_at is not None,
        row is not None and row.bouncing_since is not None,
        row is not None and ((row.hard_bounces or 0) > 0 or row.bouncing_since is not None),
    )


@dataclass
class Lookups:
    """What the commands of one batch of messages (one transaction) would look up in the
    database move after move and mostly find empty, looked up once for the batch instead;
    each command that changes one of them tells it here."""

    #: What was seen of addresses' rows: confirmed, bouncing, bounced (see ``_address``).
    addresses: dict[str, tuple[bool, bool, bool]] = field(default_factory=dict)
    #: Whether any login failed within the window lately (None: not looked yet); none, and
    #: no user or sender can be over a limit (see core.accounts.logins).
    failures_lately: bool | None = None
    #: Whether boards have queued moves (see core.play.queued), for the boards the batch looked
    #: at; a board not in it is looked at when needed.
    queues: dict[int, bool] = field(default_factory=dict)


@dataclass
class CommandContext:
    session: Session
    settings: Settings
    sender: str | None  # the address replies go to (None from the admin shell)
    message_id: str | None = None
    clock: Callable[[], datetime] = utcnow
    notifications: list[Notification] = field(default_factory=list)
    #: User ids given with a wrong password by the command running (see core.accounts.logins).
    failed_logins: list[str] = field(default_factory=list)
    #: Passwords checked before the transaction began (see core.accounts.password_checks).
    password_checks: Mapping[tuple[str, str], CheckedPassword] = field(default_factory=dict)
    #: Boards the command ended, for whoever runs commands to hand to their tournaments
    #: (core.tournaments.service.settle_finished): the game service knows no tournament.
    finished_boards: list[GameRow] = field(default_factory=list)
    #: The user a reply to their seat's reply address was checked for (see core.replies):
    #: set only while a command built from that reply runs.
    reply_login: str | None = None
    #: The receiving MTA (one named in ``trusted_authserv_ids``) found the sender's From
    #: domain authentic (DMARC, or aligned DKIM or SPF): only then is a From believed.
    sender_authenticated: bool = False
    #: Mails the message's commands caused to other people so far (see core.blast).
    mails_caused: int = 0
    #: Notices not sent because their address is not confirmed (see core.accounts.confirmation).
    withheld: int = 0
    #: Lookups kept for the batch this command runs in (its own, from the admin shell).
    lookups: Lookups = field(default_factory=Lookups)

    def now(self) -> datetime:
        return self.clock()

    def find_user(self, userid: str) -> User | None:
        return self.session.scalar(select(User).where(User.userid == userid.lower()))

    def require_user(self, userid: str) -> User:
        user = self.find_user(userid)
        if user is None:
            raise _no_such_user(userid)
        if user.disabled:
            raise disabled_error(user)
        return user

    def notify(self, notification: Notification) -> None:
        """Queue a mail to someone; one to an address its owner never confirmed is withheld
        (the confirmation mail alone goes there), and so is one to an address marked bouncing
        (see core.accounts.bouncing: the reply to a message from it is no notice, and goes)."""
        if is_robot_address(notification.to):  # a robot reads no mail
            return
        if notification.channel != "confirmation" and not self.may_mail(notification.to):
            self.withheld += 1
            return
        if self.is_bouncing(notification.to):
            self.withheld += 1
            return
        self.notifications.append(notification)

    def may_mail(self, address: str) -> bool:
        """Is ``address`` confirmed (or are all addresses trusted, on a private server)?"""
        if not self.settings.confirm_addresses:
            return True
        return self._address(address)[0]

    def is_bouncing(self, address: str) -> bool:
        """Is ``address`` marked bouncing (see core.accounts.bouncing)?"""
        return self._address(address)[1]

    def has_bounced(self, address: str) -> bool:
        """Has mail to ``address`` bounced since mail last came from it (marked or not)?"""
        return self._address(address)[2]

    def _address(self, address: str) -> tuple[bool, bool, bool]:
        """Confirmed, bouncing, bounced: one look at the address's row, kept."""
        key = address.strip().lower()
        known = self.lookups.addresses
        if key not in known:
            # Core on the session's connection (every move looks up its mail's addresses):
            # flushed first, as the ORM would, so an address row made by this command counts.
            self.session.flush()
            row = self.session.connection().execute(_ADDRESS_FACTS, {"address": key}).first()
            known[key] = _facts(row)
        return known[key]

    def sender_addresses(self, address: str) -> list[str]:
        """``address`` (as its row is keyed) and the registered addresses of the users who
        added it, in one statement, each one's facts kept as ``_address`` keeps them."""
        key = address.strip().lower()
        self.session.flush()  # as in _address: rows this command made count
        rows = self.session.connection().execute(_SENDER_FACTS, {"address": key}).all()
        own = next((row for row in rows if not row.added), None)
        self.lookups.addresses[key] = _facts(own)
        registered = []
        for row in rows:
            if row.added and row.address is not None:
                registered.append(row.address)
                if row.address == row.address.strip():  # keyed as _address keys it
                    self.lookups.addresses[row.address] = _facts(
                        row if row.hard_bounces is not None else None
                    )
        return [key, *registered]

    def forget_confirmations(self) -> None:
        """An address was just confirmed (or cleared of its bounces): look again."""
        self.lookups.addresses.clear()
