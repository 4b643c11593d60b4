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


@dataclass(frozen=True)
class Claimed:
    id: int
    recipient: str
    message_id: str
    raw: bytes
    attempts: int


def _claim_due(
    factory: sessionmaker[Session], now: datetime, batch: int, lease: timedelta
) -> list[Claimed]:
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
            row.lease_until = now + lease
        return [Claimed(r.id, r.recipient, r.message_id, r.raw, r.attempts) for r in rows]


@dataclass(frozen=True)
class Attempt:
    item: Claimed
    error: str | None = None  # None: delivered
    permanent: bool = False


def _record(
    factory: sessionmaker[Session], settings: Settings, attempts: list[Attempt], now: datetime
) -> None:
    """Mark a batch sent, failed for good, or due again after an exponential backoff."""
    with transaction(factory) as session:
        for attempt in attempts:
            row = session.get(OutboxMessage, attempt.item.id)
            if row is None:
                continue
            row.lease_until = None
            row.attempts += 1
            if attempt.error is None:
                row.status, row.sent_at, row.last_error = "sent", now, None
                continue
            row.last_error = attempt.error[:2000]
            if attempt.permanent:
                row.status = "failed"
                continue
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


_REFUSALS = (aiosmtplib.SMTPRecipientsRefused, aiosmtplib.SMTPResponseException)


def _refusal(item: Claimed, error: Exception) -> Attempt:
    """The relay's refusal of one message: 5xx is permanent, anything else is retried."""
    if isinstance(error, aiosmtplib.SMTPRecipientsRefused):
        codes = [r.code for r in error.recipients]
        return Attempt(item, str(error), bool(codes) and all(c >= 500 for c in codes))
    assert isinstance(error, aiosmtplib.SMTPResponseException)
    return Attempt(item, f"{error.code} {error.message}", error.code >= 500)


async def _send_batch_to_relay(settings: Settings, items: list[Claimed]) -> list[Attempt]:
    """Send a batch over one connection; a connection failure leaves the rest for later."""
    host, port = settings.relay_host_port  # type: ignore[misc]
    results: list[Attempt] = []
    try:
        async with aiosmtplib.SMTP(
            hostname=host,
            port=port,
            timeout=60,
            username=settings.relay_username,
            password=settings.relay_password,
        ) as client:
            for item in items:
                try:
                    await client.sendmail(settings.address, [item.recipient], item.raw)
                except _REFUSALS as error:
                    results.append(_refusal(item, error))
                    await client.rset()
                else:
                    results.append(Attempt(item))
    except Exception as error:  # refused, reset, timed out, closed: try again later
        done = {a.item.id for a in results}
        text = f"{type(error).__name__}: {error}"
        results.extend(Attempt(item, text) for item in items if item.id not in done)
    return results


def _write_all(spool: Path, items: list[Claimed]) -> list[Attempt]:
    results = []
    for item in items:
        try:
            write_spool(spool, item)
            results.append(Attempt(item))
        except OSError as error:
            results.append(Attempt(item, f"{type(error).__name__}: {error}"))
    return results


async def deliver_due(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = 50,
) -> int:
    """Send every message that is due; return how many were attempted."""
    lease = timedelta(seconds=settings.delivery_lease_seconds)
    items = await asyncio.to_thread(_claim_due, factory, clock(), batch, lease)
    if not items:
        return 0
    if settings.relay_host_port:
        results = await _send_batch_to_relay(settings, items)
    else:
        results = await asyncio.to_thread(_write_all, settings.spool, items)
    for attempt in results:
        if attempt.error:
            log.warning(
                "delivery of outbox=%s to %s failed: %s",
                attempt.item.id,
                attempt.item.recipient,
                attempt.error,
            )
        else:
            log.info("delivered outbox=%s to %s", attempt.item.id, attempt.item.recipient)
    await asyncio.to_thread(_record, factory, settings, results, clock())
    return len(items)
