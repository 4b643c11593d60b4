"""Storing accepted mail: a message is committed to the inbox before it is acknowledged."""

from __future__ import annotations

import enum
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.context import utcnow
from pbmserv.db.engine import transaction
from pbmserv.db.models import InboxMessage
from pbmserv.mail.decode import dedupe_key


class Stored(enum.Enum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"  # already have it: acknowledge, do not process twice
    RATE_LIMITED = "rate_limited"  # refuse for now; the sending MTA will retry later


def store_message(
    factory: sessionmaker[Session], settings: Settings, raw: bytes, envelope_from: str | None
) -> Stored:
    """Commit ``raw`` to the inbox (or say why not). Only after this returns may we say 250."""
    key = dedupe_key(raw)
    now = utcnow()
    # None: not known (stdin without -f); "": the null return path of a bounce.
    sender = None if envelope_from is None else envelope_from.strip().strip("<>").lower()
    try:
        with transaction(factory) as session:
            if sender and settings.rate_limit_per_hour > 0:
                recent = session.scalar(
                    select(func.count())
                    .select_from(InboxMessage)
                    .where(
                        InboxMessage.envelope_from == sender,
                        InboxMessage.received_at > now - timedelta(hours=1),
                    )
                )
                if recent >= settings.rate_limit_per_hour:
                    return Stored.RATE_LIMITED
            session.add(
                InboxMessage(
                    dedupe_key=key,
                    envelope_from=sender,
                    raw=raw,
                    received_at=now,
                    status="pending",
                    attempts=0,
                )
            )
    except IntegrityError:
        return Stored.DUPLICATE
    return Stored.ACCEPTED
