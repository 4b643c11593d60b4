"""Bounces that teach: mail that cannot be delivered marks its address, and the server stops
writing to it until mail comes from it again.

Every mail goes out with a return path of its own, ``pbmserv+bounce-ID-MAC@host`` (ID: its
outbox row; MAC: a keyed hash of the ID, so nobody can make up the report of another's mail).
A delivery report that comes back there is counted against the recipient of that row: a hard
failure (5.x.x; see :mod:`pbmserv.inbound.bounces` for what counts) adds one to the address's
``hard_bounces``, once a row however often its report comes; a temporary one only makes a log
line. At ``bounce_limit`` hard bounces the address is marked *bouncing*:

- mail to it is withheld (see ``CommandContext.notify``), but for the reply to a message
  from it, which goes as ever (and that message clears the mark anyway);
- its users go on a vacation begun by the bounce (:mod:`pbmserv.core.accounts.unreachable`): their
  clocks stop and their boards without a clock wait, charged to their vacation bank, so
  that a bounce, forged or not, never gives more time than a vacation would; with the bank
  empty their clocks run, as for any absence;
- the opponents on those boards are told once that the player cannot be reached by mail,
  and until when at the latest their clocks stop.

Any message from the address, or from another address one of its users writes from
(``clear_for_sender``), clears the mark and the count: they can be reached. The vacation
the bounce began ends then, charged, and the opponents are told that the clocks run again.
"""

from __future__ import annotations

import base64
import hmac
import logging
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, cast

from sqlalchemy import Connection, CursorResult, Engine, func, not_, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.core.accounts import unreachable
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import printable
from pbmserv.core.results import Notification
from pbmserv.db.engine import core_transaction
from pbmserv.db.models import (
    Address,
    GameRow,
    OutboxMessage,
    Seat,
    ServerKey,
    User,
    table_of,
)

log = logging.getLogger("pbmserv.bounces")

KEY_NAME = "bounce"
TAG_PREFIX = "bounce-"
#: Characters of the MAC in a bounce address: 60 bits of base32, lower-case, so that an MTA
#: that folds the case of the local part changes nothing.
MAC_LENGTH = 12
_TAG = re.compile(rf"{TAG_PREFIX}([0-9]{{1,18}})-([a-z2-7]{{{MAC_LENGTH}}})")
#: What marks an outbox row whose hard bounce was counted (in its ``last_error``, which a sent
#: row has no other use for): its report counts once, however often it comes.
BOUNCED = "bounced: "
#: Characters of the last bounce kept for the operator.
MAX_LAST_BOUNCE = 500
#: The notice that tells the opponents (its kind, and the section of its template).
NOTICE_KIND = "unreachable"


# --- the bounce addresses ------------------------------------------------------------------


def bounce_key(bind: Engine | Connection | Session) -> bytes:
    """The key of the bounce addresses' MACs: 32 random bytes made once, on first use, and kept
    in ``server_keys``. Two servers making it at once agree on the one stored first.

    Given an Engine, in a transaction of its own (call it once, not inside another
    transaction of the same thread); given a Connection or Session, in the caller's."""
    if isinstance(bind, Engine):
        with core_transaction(bind) as connection:
            return bounce_key(connection)
    connection = bind.connection() if isinstance(bind, Session) else bind
    table = table_of(ServerKey)
    query = select(table.c.value).where(table.c.name == KEY_NAME)
    stored = connection.scalar(query)
    if stored is None:
        dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
        made = {"name": KEY_NAME, "value": secrets.token_hex(32)}
        connection.execute(dialect.insert(table).values(made).on_conflict_do_nothing())
        stored = connection.scalar(query)
    return bytes.fromhex(str(stored))


#: The digest's bytes that make the MAC's letters: base32 writes each 5 bytes as 8 letters on
#: their own, so these give the same first MAC_LENGTH letters as the whole digest would.
_MAC_BYTES = -(-MAC_LENGTH // 8) * 5


def _mac(key: bytes, outbox_id: int) -> str:
    # hmac.digest: OpenSSL's one-shot, a fifth of hmac.new's time (one MAC a mail sent).
    digest = hmac.digest(key, f"{TAG_PREFIX}{outbox_id}".encode(), "sha256")
    return base64.b32encode(digest[:_MAC_BYTES]).decode("ascii").lower()[:MAC_LENGTH]


def bounce_tag(key: bytes, outbox_id: int) -> str:
    """The tag of outbox row ``outbox_id``'s bounce address: ``bounce-ID-MAC``."""
    return f"{TAG_PREFIX}{outbox_id}-{_mac(key, outbox_id)}"


def return_path(server_address: str, key: bytes, outbox_id: int) -> str:
    """The return path (SMTP ``MAIL FROM``) of outbox row ``outbox_id``: the server's address
    with the row's tag, ``pbmserv+bounce-17-k3mpq7abcdef@example.org``."""
    local, _at, domain = server_address.rpartition("@")
    return f"{local}+{bounce_tag(key, outbox_id)}@{domain}"


def parse_bounce_tag(tag: str, key: bytes) -> int | None:
    """The outbox row a bounce address's tag stands for, or None when its MAC is wrong."""
    match = _TAG.fullmatch(tag.strip().lower())
    if match is None:
        return None
    outbox_id = int(match.group(1))
    if not hmac.compare_digest(match.group(2), _mac(key, outbox_id)):
        return None
    return outbox_id


# --- counting them -------------------------------------------------------------------------


class Report(Protocol):
    """What a delivery report (:class:`pbmserv.inbound.bounces.DeliveryReport`) tells."""

    @property
    def permanent(self) -> bool: ...

    @property
    def status(self) -> str: ...

    def describe(self) -> str: ...


@dataclass
class BounceOutcome:
    """What one delivery report did: ``counted`` a hard bounce against ``address`` (now at
    ``count``), ``marked`` it bouncing just now; the notices to its users' opponents (to queue
    through ``CommandContext.notify``); ``summary`` for the inbox row and the log."""

    outbox_id: int
    summary: str
    address: str | None = None
    hard: bool = False
    counted: bool = False
    marked: bool = False
    count: int = 0
    notices: list[Notification] = field(default_factory=list)


def _key(address: str) -> str:
    return address.strip().lower()


def record_bounce(
    session: Session,
    settings: Settings,
    outbox_id: int,
    report: Report | None,
    now: datetime,
) -> BounceOutcome:
    """Count the delivery report ``report`` of outbox row ``outbox_id`` (see the module's
    doc), in the caller's transaction."""
    if report is None:
        return BounceOutcome(outbox_id, "no delivery report in it: nothing counted")
    described = printable(report.describe())
    row = session.execute(
        select(OutboxMessage.recipient, OutboxMessage.kind).where(OutboxMessage.id == outbox_id)
    ).first()
    if row is None:  # purged since (sent_retention_days), or never ours
        log.info("a delivery report for outbox %s, which is gone: %s", outbox_id, described)
        return BounceOutcome(outbox_id, f"{described}; that mail is gone: nothing counted")
    address = _key(row.recipient)
    fields: dict[str, Any] = {"outbox": outbox_id, "kind": row.kind, "report": described}
    if not report.permanent:
        log.info("a temporary delivery failure", extra={"fields": fields})
        return BounceOutcome(outbox_id, f"{described} (temporary: nothing counted)", address)
    text = described[:MAX_LAST_BOUNCE]
    marking = session.execute(
        update(OutboxMessage)
        .where(
            OutboxMessage.id == outbox_id,
            or_(
                OutboxMessage.last_error.is_(None),
                not_(OutboxMessage.last_error.startswith(BOUNCED, autoescape=True)),
            ),
        )
        .values(last_error=BOUNCED + text)
        .execution_options(synchronize_session=False)
    )
    if not cast(CursorResult[Any], marking).rowcount:
        return BounceOutcome(outbox_id, f"{described} (counted already)", address, hard=True)
    held = _address_row(session, address, now)
    held.hard_bounces += 1
    held.last_bounce_at, held.last_bounce = now, f"outbox {outbox_id}: {text}"
    outcome = BounceOutcome(
        outbox_id, described, address, hard=True, counted=True, count=held.hard_bounces
    )
    if held.hard_bounces >= settings.bounce_limit and held.bouncing_since is None:
        held.bouncing_since = now
        ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
        unreachable.begin(ctx, _users_at(session, address), now)
        outcome.marked = True
        outcome.notices = _opponent_notices(session, settings, address, held.hard_bounces)
    session.flush()
    fields.update(address=address, hard_bounces=held.hard_bounces, marked=outcome.marked)
    log.warning("a hard bounce", extra={"fields": fields})
    outcome.summary += f" ({held.hard_bounces} hard bounce(s)" + (
        "; the address is now marked bouncing)" if outcome.marked else ")"
    )
    return outcome


def _address_row(session: Session, address: str, now: datetime) -> Address:
    """The address's row, made if there is none (a private server confirms nothing, so an
    address may have none), and locked for this transaction."""
    table = table_of(Address)
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    fresh = {"address": address, "created_at": now, "hard_bounces": 0}
    session.execute(dialect.insert(table).values(fresh).on_conflict_do_nothing())
    row = session.get(Address, address, with_for_update=True, populate_existing=True)
    assert row is not None  # it was there, or was just made
    return row


def _users_at(session: Session, address: str) -> list[User]:
    """The users whose mail goes to ``address`` (an address a user only writes from is not
    theirs for mail)."""
    query = select(User).where(func.lower(User.email) == address).order_by(User.id)
    return list(session.scalars(query))


def _opponent_notices(
    session: Session, settings: Settings, address: str, bounces: int
) -> list[Notification]:
    """One notice to each opponent of the address's users on their active boards, naming the
    boards and saying until when the users' clocks stop (core.accounts.unreachable)."""
    users = _users_at(session, address)
    ids = {u.id for u in users}
    if not ids:
        return []
    paused = [unreachable.pause(user, settings.vacation_days_per_year) for user in users]
    boards = session.scalars(
        select(GameRow)
        .where(
            GameRow.status == "active",
            GameRow.id.in_(select(Seat.game_id).where(Seat.user_id.in_(ids))),
        )
        .order_by(GameRow.id)
    )
    told: dict[int, tuple[User, list[dict[str, Any]]]] = {}
    for board in boards:
        players = [s.user.display_id for s in board.seats if s.user_id in ids]
        for seat in board.seats:
            other = seat.user
            if other.id in ids or other.disabled or not other.email:
                continue
            listed = told.setdefault(other.id, (other, []))[1]
            entry = {"game": board.game, "board": board.id, "players": players}
            if entry not in listed:
                listed.append(entry)
    notices = []
    for other, listed in told.values():
        who = sorted({p for entry in listed for p in entry["players"]})
        pauses = [pause for pause in paused if pause["userid"] in who]
        data = {
            "userid": other.display_id,
            "players": who,
            "boards": listed,
            "bounces": bounces,
            "pauses": pauses,
        }
        notices.append(Notification(to=other.email, channel="notice", kind=NOTICE_KIND, data=data))
    return notices


# --- clearing and asking -------------------------------------------------------------------


def clear_for_sender(ctx: CommandContext, sender: str) -> bool:
    """Mail came from ``sender``: whoever writes from it can be reached. Clears the sender's
    own address and the registered address of the user who added it (``add``: mail goes to
    the registered one), where mail bounced. True when anything was cleared."""
    cleared = False
    for address in dict.fromkeys(ctx.sender_addresses(sender)):
        if ctx.has_bounced(address):  # a look may_mail shares: no query for most mail
            cleared = clear_bouncing(ctx, address) or cleared
    return cleared


def clear_bouncing(ctx: CommandContext, address: str) -> bool:
    """``address`` reaches its owner again (mail came from them, or the operator vouches for
    it). Its count goes back to 0 and its mark is cleared; if it was marked, the vacations the
    bounce began for its users end now, charged (core.accounts.unreachable). True when there was
    anything to clear."""
    session = ctx.session
    row = session.get(Address, _key(address))
    if row is None or (row.hard_bounces == 0 and row.bouncing_since is None):
        return False
    was_marked = row.bouncing_since is not None
    row.hard_bounces, row.bouncing_since = 0, None
    if was_marked:
        unreachable.end(ctx, _users_at(session, row.address), ctx.now())
        fields = {"address": row.address}
        log.info("mail came from a bouncing address: cleared", extra={"fields": fields})
    session.flush()
    return True


def is_bouncing(session: Session, address: str) -> bool:
    """Is ``address`` marked bouncing (no mail goes to it but replies)?"""
    query = select(Address.bouncing_since).where(Address.address == _key(address))
    return session.scalar(query) is not None
