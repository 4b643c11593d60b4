"""Delivering the outbox: to an SMTP relay with retries and backoff, or to a spool folder.

A relay that is down only delays mail: the row stays pending and is retried later. A row is
leased while it is being sent, so several servers never send the same row at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import aiosmtplib
from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.context import utcnow
from pbmserv.db.engine import transaction
from pbmserv.db.models import OutboxMessage

log = logging.getLogger("pbmserv.delivery")

LEASE = timedelta(minutes=5)


@dataclass(frozen=True)
class Claimed:
    id: int
    recipient: str
    message_id: str
    raw: bytes
    attempts: int


class PermanentFailure(Exception):
    """The relay refused the message for good (5xx)."""


def _claim_due(factory: sessionmaker[Session], now: datetime, batch: int) -> list[Claimed]:
    with transaction(factory) as session:
        rows = session.scalars(
            select(OutboxMessage)
            .where(
                OutboxMessage.status == "pending",
                OutboxMessage.next_attempt_at <= now,
                or_(OutboxMessage.lease_until.is_(None), OutboxMessage.lease_until < now),
            )
            .order_by(OutboxMessage.id)
            .limit(batch)
            .with_for_update(skip_locked=True)
        ).all()
        for row in rows:
            row.lease_until = now + LEASE
        return [Claimed(r.id, r.recipient, r.message_id, r.raw, r.attempts) for r in rows]


def _finish(
    factory: sessionmaker[Session],
    settings: Settings,
    item: Claimed,
    now: datetime,
    error: str | None,
    permanent: bool,
) -> None:
    with transaction(factory) as session:
        row = session.get(OutboxMessage, item.id)
        if row is None:
            return
        row.lease_until = None
        row.attempts += 1
        if error is None:
            row.status, row.sent_at, row.last_error = "sent", now, None
            return
        row.last_error = error[:2000]
        if permanent:
            row.status = "failed"
            return
        delay = min(
            settings.retry_base_seconds * 2 ** (row.attempts - 1), settings.retry_max_seconds
        )
        row.next_attempt_at = now + timedelta(seconds=delay)


def spool_file_name(item_id: int, message_id: str) -> str:
    digest = hashlib.sha1(message_id.encode()).hexdigest()[:10]
    return f"{item_id:010d}-{digest}.eml"


def write_spool(spool: Path, item: Claimed) -> Path:
    """Write one message maildir-style (tmp, then rename into new): never half a file."""
    (spool / "tmp").mkdir(parents=True, exist_ok=True)
    (spool / "new").mkdir(parents=True, exist_ok=True)
    name = spool_file_name(item.id, item.message_id)
    temporary = spool / "tmp" / name
    with open(temporary, "wb") as handle:
        handle.write(item.raw)
        handle.flush()
        os.fsync(handle.fileno())
    final = spool / "new" / name
    os.replace(temporary, final)
    return final


async def _send_to_relay(settings: Settings, item: Claimed) -> None:
    host, port = settings.relay_host_port  # type: ignore[misc]
    try:
        await aiosmtplib.send(
            item.raw,
            sender=settings.address,
            recipients=[item.recipient],
            hostname=host,
            port=port,
            timeout=60,
        )
    except aiosmtplib.SMTPRecipientsRefused as error:
        codes = [r.code for r in error.recipients]
        if codes and all(code >= 500 for code in codes):
            raise PermanentFailure(str(error)) from error
        raise
    except aiosmtplib.SMTPResponseException as error:
        if error.code >= 500:
            raise PermanentFailure(f"{error.code} {error.message}") from error
        raise


async def deliver_due(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = 50,
) -> int:
    """Send every message that is due; return how many were attempted."""
    items = await asyncio.to_thread(_claim_due, factory, clock(), batch)
    for item in items:
        error: str | None = None
        permanent = False
        try:
            if settings.relay_host_port:
                await _send_to_relay(settings, item)
            else:
                await asyncio.to_thread(write_spool, settings.spool, item)
        except PermanentFailure as failure:
            error, permanent = str(failure), True
        except Exception as failure:  # anything else: try again later
            error = f"{type(failure).__name__}: {failure}"
        if error:
            log.warning("delivery of outbox=%s to %s failed: %s", item.id, item.recipient, error)
        else:
            log.info("delivered outbox=%s to %s", item.id, item.recipient)
        await asyncio.to_thread(_finish, factory, settings, item, clock(), error, permanent)
    return len(items)
