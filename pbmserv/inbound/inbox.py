"""Storing accepted mail: a message is committed to the inbox before it is acknowledged.

Before it is stored, a message is checked against what is already there: a second delivery of
a message is acknowledged without being stored again, and a sender over the hourly limits is
told to try again later (the sending MTA keeps the message).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import datetime, timedelta

from sqlalchemy import Connection, bindparam, func, insert, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.parser import printable
from pbmserv.db.engine import core_transaction, engine_of, store_intent
from pbmserv.db.models import InboxMessage, table_of
from pbmserv.db.times import utcnow
from pbmserv.db.wakes import INBOX, announce
from pbmserv.inbound.reading.decode import dedupe_key, header_from_address

_INBOX = table_of(InboxMessage)

# ``dedupe_key``'s form for a message without a Message-ID: a hash of its content.
_CONTENT_KEY = "sha256:"
#: The key of a stand-in for a message too large to keep (its header alone, stored to be
#: answered that it was too large): written by us, never by a sender.
TOO_LARGE_KEY = "too-large:"


#: One message as the MTA handed it over: its bytes, the envelope sender (None: unknown) and
#: the envelope recipients.
Envelope = tuple[bytes, str | None, Sequence[str]]
# Recipients kept per message: a reply to the server names one or two of its addresses.
MAX_ENVELOPE_RECIPIENTS = 20


def _recipients_text(recipients: Sequence[str]) -> str | None:
    kept = [printable(r.strip().strip("<>").lower()) for r in recipients[:MAX_ENVELOPE_RECIPIENTS]]
    return "\n".join(r for r in kept if r) or None


class Stored(enum.Enum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"  # already have it: acknowledge, do not process twice
    RATE_LIMITED = "rate_limited"  # refuse for now; the sending MTA will retry later


def store_message(
    factory: sessionmaker[Session],
    settings: Settings,
    raw: bytes,
    envelope_from: str | None,
    clock: Callable[[], datetime] = utcnow,
    envelope_to: Sequence[str] = (),
) -> Stored:
    """Commit ``raw`` to the inbox (or say why not). Only after this returns may we say 250.
    ``envelope_to``: the SMTP recipients (RCPT TO), where a reply address may be the only
    trace of the seat a message is for (Bcc, an alias, a redirect)."""
    [outcome] = store_messages(factory, settings, [(raw, envelope_from, envelope_to)], clock)
    assert isinstance(outcome, Stored)  # a lone message raises instead of StoreFailed
    return outcome


def store_messages(
    factory: sessionmaker[Session],
    settings: Settings,
    messages: Sequence[Envelope],
    clock: Callable[[], datetime] = utcnow,
) -> list[Stored | StoreFailed]:
    """Commit several messages (``Envelope``s) in one transaction (a group commit: the
    listener's messages that arrive together share one write). If the transaction
    fails, each message is tried in a transaction of its own, so that one message's trouble
    is that message's alone; its exception is then raised only for a lone message.

    On SQLite the stores say they are waiting for the write lock (db.engine.StoreIntent), so
    that a processing batch holding it makes way."""
    intent = store_intent(engine_of(factory))
    with intent.announced() if intent is not None else nullcontext():
        return _store_group(factory, settings, messages, clock)


def _store_group(
    factory: sessionmaker[Session],
    settings: Settings,
    messages: Sequence[Envelope],
    clock: Callable[[], datetime],
) -> list[Stored | StoreFailed]:
    try:
        # Plain statements on a connection: no ORM session for the hottest write of all.
        with core_transaction(engine_of(factory)) as conn:
            outcomes: list[Stored | StoreFailed] = [
                _store(conn, settings, message, clock()) for message in messages
            ]
            if Stored.ACCEPTED in outcomes:
                announce(conn, INBOX)  # other servers' processing (PostgreSQL: db.wakes)
            return outcomes
    except IntegrityError:  # a copy stored by another server meanwhile
        if len(messages) == 1:
            return [Stored.DUPLICATE]
    except Exception:
        if len(messages) == 1:
            raise
    return [_store_alone(factory, settings, message, clock) for message in messages]


def _store_alone(
    factory: sessionmaker[Session],
    settings: Settings,
    message: Envelope,
    clock: Callable[[], datetime],
) -> Stored | StoreFailed:
    try:
        return store_messages(factory, settings, [message], clock)[0]
    except Exception as error:  # told to this message's sender alone (451)
        return StoreFailed(error)


class StoreFailed:
    """A message of a group that could not be stored: its sender is told to try again."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def store_too_large(
    factory: sessionmaker[Session],
    settings: Settings,
    header: bytes,
    envelope_from: str | None,
    clock: Callable[[], datetime] = utcnow,
) -> Stored:
    """Store a stand-in for a message over ``max_message_bytes`` that was taken already (a
    hosted mailbox's; SMTP refuses one before it is taken): its ``header`` block alone, to be
    answered once that it was too large, as processing answers any message (never automatic
    mail, an unconfirmed address only once confirmed). A second copy is a duplicate."""
    stand_in = header.rstrip(b"\r\n") + b"\r\n\r\n"
    with core_transaction(engine_of(factory)) as conn:
        stored = _store(conn, settings, (stand_in, envelope_from, ()), clock(), TOO_LARGE_KEY)
        if stored is Stored.ACCEPTED:
            announce(conn, INBOX)
        return stored


def _store(
    conn: Connection, settings: Settings, message: Envelope, now: datetime, key_prefix: str = ""
) -> Stored:
    raw, envelope_from, envelope_to = message
    # None: not known (stdin without -f); "": the null return path of a bounce.
    sender = None if envelope_from is None else envelope_from.strip().strip("<>").lower()
    if sender and not sender.isprintable():  # PostgreSQL refuses a NUL in text
        sender = printable(sender)
    from_address = header_from_address(raw)
    key, earlier_keys, since = _dedupe_keys(key_prefix + dedupe_key(raw), now, settings)
    # A copy of a stored message is acknowledged even from a sender over the limits, so
    # that the sending MTA stops retrying it.
    if _stored_already(conn, earlier_keys, since):
        return Stored.DUPLICATE
    if _over_rate_limit(conn, settings, sender, from_address, now):
        return Stored.RATE_LIMITED
    conn.execute(
        _INSERT,
        {
            "dedupe_key": key,
            "envelope_from": sender,
            "envelope_to": _recipients_text(envelope_to),
            "from_address": from_address,
            "raw": raw,
            "received_at": now,
            "status": "pending",
            "attempts": 0,
        },
    )
    return Stored.ACCEPTED


def _dedupe_keys(
    key: str, now: datetime, settings: Settings
) -> tuple[str, Sequence[str], datetime | None]:
    """The key to store, the keys under which a copy may be stored already, and how recent
    that copy must be to count (None: of any age).

    A Message-ID names one message for ever. A content hash does not: scripts send the same
    bytes (no Message-ID, no Date) as a new move, so an identical copy is a retransmission
    only within ``dedupe_window_seconds``. The stored key carries the number of the window-long
    time bucket it came in, which keeps the unique constraint meaningful (two copies in one
    bucket cannot both be stored, even by racing servers); a copy from the previous bucket is
    found by the query, if it came less than one window ago.
    """
    if not key.startswith(_CONTENT_KEY):
        return key, (key,), None
    window = settings.dedupe_window_seconds
    bucket = math.floor(now.timestamp() / window)
    current = f"{key}@{bucket}"
    return current, (current, f"{key}@{bucket - 1}"), now - timedelta(seconds=window)


# The hot statements are built once, with bound parameters: every stored message runs them.
_ID_BY_KEYS = (
    select(_INBOX.c.id).where(_INBOX.c.dedupe_key.in_(bindparam("keys", expanding=True))).limit(1)
)
_ID_BY_KEYS_SINCE = _ID_BY_KEYS.where(_INBOX.c.received_at > bindparam("since"))
_FROM_SENDER_SINCE = (
    select(func.count())
    .select_from(_INBOX)
    .where(_INBOX.c.envelope_from == bindparam("sender"), _INBOX.c.received_at > bindparam("since"))
)
_IN_NAME_BY_OTHERS_SINCE = (
    select(func.count())
    .select_from(_INBOX)
    .where(
        _INBOX.c.from_address == bindparam("address"),
        or_(_INBOX.c.envelope_from.is_(None), _INBOX.c.envelope_from != bindparam("address")),
        _INBOX.c.received_at > bindparam("since"),
    )
)
_INSERT = insert(_INBOX)


def _stored_already(conn: Connection, keys: Sequence[str], since: datetime | None) -> bool:
    if since is None:
        return conn.scalar(_ID_BY_KEYS, {"keys": list(keys)}) is not None
    return conn.scalar(_ID_BY_KEYS_SINCE, {"keys": list(keys), "since": since}) is not None


def _over_rate_limit(
    conn: Connection,
    settings: Settings,
    sender: str | None,
    from_address: str | None,
    now: datetime,
) -> bool:
    """Whether a message from envelope ``sender`` with header From ``from_address`` is over
    the hourly limits.

    Only stored messages are counted: a message refused (451) or recognised as a copy leaves
    no row, so a flood that is being refused does not prolong its own lock-out.

    ``rate_limit_per_hour`` counts by envelope sender. ``from_rate_limit_per_hour`` counts the
    messages sent in the name of one From address by *other* envelope senders, and applies
    only to such messages. Every message is answered at its From address, so rotating
    envelope senders under one From was a way to flood that address: those forgeries now
    stop at the From limit. The owner of the address, whose own mail carries their address
    as the envelope sender too, is neither counted nor checked there, so the forgeries cannot
    lock them out; their mail has the envelope limit, as before. What remains open: a forger
    who also puts the victim's address in the envelope fills the victim's envelope limit (the
    listener cannot tell a forged envelope from a real one; the MTA in front, with SPF, can).
    Mail whose envelope differs from its From legitimately (BATV tags, forwarders) shares the
    From limit with any forger of that From.
    """
    since = now - timedelta(hours=1)
    if sender and settings.rate_limit_per_hour > 0:
        recent = conn.scalar(_FROM_SENDER_SINCE, {"sender": sender, "since": since}) or 0
        if recent >= settings.rate_limit_per_hour:
            return True
    if from_address and from_address != sender and settings.from_rate_limit_per_hour > 0:
        in_its_name = {"address": from_address, "since": since}
        if (conn.scalar(_IN_NAME_BY_OTHERS_SINCE, in_its_name) or 0) >= (
            settings.from_rate_limit_per_hour
        ):
            return True
    return False
