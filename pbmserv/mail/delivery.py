"""Delivering the outbox: to an SMTP relay with retries and backoff, or to a spool folder.

A relay that is down only delays mail: the row stays pending and is retried later, until it
has waited ``GIVE_UP_AFTER``. Each message is judged on its own: a refusal, an address the
relay cannot take or any other error fails that one message (for now or for good), never the
rest of its batch.

Several servers may deliver from one database. A run claims a batch under a lease with its own
token (``lease_owner``); before sending each message it renews that message's lease, and right
after the relay accepts it, marks it sent, each only while it still holds the lease. So a
message is sent twice only when a process dies (or stalls past the lease) in the middle of
sending it, and a crash between messages resends none of those already accepted.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosmtplib
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.context import utcnow
from pbmserv.db.engine import transaction
from pbmserv.db.models import OutboxMessage

log = logging.getLogger("pbmserv.delivery")

BATCH = 50
# A message the relay keeps refusing for now is failed for good after this long (as an MTA's
# queue lifetime); `pbmserv admin outbox retry` queues it again.
GIVE_UP_AFTER = timedelta(days=5)
SMTP_TIMEOUT_SECONDS = 60
QUIT_TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class Claimed:
    """One outbox row, as a delivery run holds it."""

    id: int
    recipient: str
    message_id: str
    raw: bytes
    created_at: datetime


@dataclass(frozen=True)
class Outcome:
    """What became of one attempt: delivered (no error), or an error for now or for good."""

    error: str | None = None
    permanent: bool = False


DELIVERED = Outcome()


def _as_utc(stamp: datetime) -> datetime:
    """SQLite hands back naive date-times; they were stored as UTC."""
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


@dataclass
class DeliveryReport:
    """Counts of one or more batches, for the log and `pbmserv deliver`."""

    claimed: int = 0
    sent: int = 0
    failed: int = 0  # for good
    deferred: int = 0  # to be retried after a backoff
    skipped: int = 0  # another run took the lease over

    def count(self, outcome: Outcome | None) -> None:
        if outcome is None:
            self.skipped += 1
        elif outcome.error is None:
            self.sent += 1
        elif outcome.permanent:
            self.failed += 1
        else:
            self.deferred += 1

    def add(self, other: DeliveryReport) -> None:
        for name in ("claimed", "sent", "failed", "deferred", "skipped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def settled(self) -> int:
        """Messages that left the queue (sent or failed for good)."""
        return self.sent + self.failed

    def summary(self) -> str:
        return (
            f"{self.sent} sent, {self.failed} failed, {self.deferred} deferred, "
            f"{self.skipped} left to another server"
        )


# --- the lease: which run may send and mark a row ------------------------------------------------


class Lease:
    """One delivery run's hold on the outbox rows it claimed; every write checks the owner."""

    def __init__(
        self, factory: sessionmaker[Session], settings: Settings, clock: Callable[[], datetime]
    ) -> None:
        self.factory = factory
        self.settings = settings
        self.clock = clock
        self.owner = secrets.token_hex(16)
        self.length = timedelta(seconds=settings.delivery_lease_seconds)

    def claim(self, batch: int) -> list[Claimed]:
        """Lease up to ``batch`` due rows no other run holds."""
        now = self.clock()
        with transaction(self.factory) as session:
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
                row.lease_until, row.lease_owner = now + self.length, self.owner
            return [Claimed(r.id, r.recipient, r.message_id, r.raw, r.created_at) for r in rows]

    def renew(self, item: Claimed) -> bool:
        """Extend the lease just before sending; False if another run has taken the row."""
        with transaction(self.factory) as session:
            renewed = session.execute(
                update(OutboxMessage)
                .where(
                    OutboxMessage.id == item.id,
                    OutboxMessage.lease_owner == self.owner,
                    OutboxMessage.status == "pending",
                )
                .values(lease_until=self.clock() + self.length)
                .execution_options(synchronize_session=False)
            )
            return renewed.rowcount == 1

    def finish(self, item: Claimed, outcome: Outcome) -> bool:
        """Record an attempt in its own transaction, if the row is still ours."""
        now = self.clock()
        with transaction(self.factory) as session:
            row = session.scalars(
                select(OutboxMessage)
                .where(OutboxMessage.id == item.id, OutboxMessage.lease_owner == self.owner)
                .with_for_update()
            ).one_or_none()
            if row is None:
                return False
            row.lease_until, row.lease_owner = None, None
            row.attempts += 1
            if outcome.error is None:
                row.status, row.sent_at, row.last_error = "sent", now, None
                return True
            row.last_error = outcome.error[:2000]
            if outcome.permanent:
                row.status = "failed"
            else:
                row.next_attempt_at = now + self._backoff(row.attempts)
            return True

    def _backoff(self, attempts: int) -> timedelta:
        base, ceiling = self.settings.retry_base_seconds, self.settings.retry_max_seconds
        return timedelta(seconds=min(base * 2 ** (attempts - 1), ceiling))

    def judge(self, item: Claimed, outcome: Outcome) -> Outcome:
        """A failure for now becomes one for good once the message has waited too long."""
        if outcome.error is None or outcome.permanent:
            return outcome
        if self.clock() - _as_utc(item.created_at) < GIVE_UP_AFTER:
            return outcome
        return Outcome(f"gave up after {GIVE_UP_AFTER.days} days; last: {outcome.error}", True)


# --- the spool -----------------------------------------------------------------------------------


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


def _spool_one(spool: Path, item: Claimed) -> Outcome:
    try:
        write_spool(spool, item)
    except OSError as error:  # a full disk or a permission: try again later
        return Outcome(_describe(error))
    except Exception as error:  # anything else is this message's own fault
        return Outcome(_describe(error), permanent=True)
    return DELIVERED


# --- the relay -----------------------------------------------------------------------------------


class RelayUnreachable(Exception):
    """No connection to the relay: every message still to send waits for the next run."""


class RelayConnection:
    """One SMTP connection for a batch, opened on first use and again after it broke."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.client: aiosmtplib.SMTP | None = None

    async def open(self) -> aiosmtplib.SMTP:
        if self.client is not None and self.client.is_connected:
            return self.client
        self.drop()
        host, port = self.settings.relay_host_port  # type: ignore[misc]
        client = aiosmtplib.SMTP(
            hostname=host,
            port=port,
            timeout=SMTP_TIMEOUT_SECONDS,
            username=self.settings.relay_username,
            password=self.settings.relay_password,
        )
        try:
            await client.connect()
            if client.is_ehlo_or_helo_needed:
                await client.ehlo()  # the extensions (SMTPUTF8) are known before sending
        except Exception as error:
            client.close()
            raise RelayUnreachable(_describe(error)) from error
        self.client = client
        return client

    async def close(self) -> None:
        """Say goodbye at the end of a batch; a relay that does not answer is just dropped."""
        client, self.client = self.client, None
        if client is None or not client.is_connected:
            return
        try:
            await client.quit(timeout=QUIT_TIMEOUT_SECONDS)
        except Exception:
            client.close()

    def drop(self) -> None:
        """Hang up on a conversation in an unknown state (it broke, stalled or went wrong)."""
        client, self.client = self.client, None
        if client is not None:
            client.close()

    async def send(self, item: Claimed) -> Outcome:
        client = await self.open()
        sender = self.settings.address
        needs_utf8 = not (sender.isascii() and item.recipient.isascii())
        if needs_utf8 and not client.supports_extension("smtputf8"):
            # Without SMTPUTF8 no relay can take this address; trying would only break the
            # conversation for the messages after it.
            return Outcome(
                f"the relay does not offer SMTPUTF8, which the address {item.recipient!r} needs",
                permanent=True,
            )
        options = ["SMTPUTF8"] if needs_utf8 else []
        # A send must end well inside its lease, or another server could take it over and
        # send the message too; a stalled relay becomes a timeout, retried later.
        deadline = self.settings.delivery_lease_seconds * 0.8
        try:
            await asyncio.wait_for(
                client.sendmail(sender, [item.recipient], item.raw, mail_options=options),
                deadline,
            )
        except aiosmtplib.SMTPRecipientsRefused as error:
            codes = [refusal.code for refusal in error.recipients]
            return Outcome(str(error), bool(codes) and all(code >= 500 for code in codes))
        except aiosmtplib.SMTPResponseException as error:  # sendmail has reset the envelope
            return Outcome(f"{error.code} {error.message}", error.code >= 500)
        except (aiosmtplib.SMTPException, OSError) as error:  # broken, closed, timed out
            # (TimeoutError is an OSError)
            self.drop()
            return Outcome(_describe(error))
        except Exception as error:  # this message cannot be sent at all (a malformed address)
            self.drop()  # the conversation may be half-way: start the next one afresh
            return Outcome(_describe(error), permanent=True)
        return DELIVERED


# --- a batch -------------------------------------------------------------------------------------


def _log_outcome(item: Claimed, outcome: Outcome | None) -> None:
    if outcome is None:
        log.info("outbox=%s left to the server that took its lease over", item.id)
    elif outcome.error is None:
        log.info("delivered outbox=%s to %s", item.id, item.recipient)
    else:
        verdict = "failed for good" if outcome.permanent else "failed, will retry"
        log.warning(
            "delivery of outbox=%s to %s %s: %s", item.id, item.recipient, verdict, outcome.error
        )


async def _settle(lease: Lease, item: Claimed, outcome: Outcome) -> Outcome | None:
    """Record one attempt at once (so a later crash cannot resend it); None if not ours."""
    outcome = lease.judge(item, outcome)
    if not await asyncio.to_thread(lease.finish, item, outcome):
        # Only when a send outlasted the lease: the server that took it over records it.
        log.warning("outbox=%s: another server took its lease over; not recorded", item.id)
        return None
    return outcome


async def _deliver_one(
    lease: Lease, relay: RelayConnection | None, item: Claimed
) -> Outcome | None:
    if relay is not None:
        await relay.open()  # connecting may take long: do it before the lease clock restarts
    if not await asyncio.to_thread(lease.renew, item):
        return None  # another run has it now
    if relay is None:
        outcome = await asyncio.to_thread(_spool_one, lease.settings.spool, item)
    else:
        outcome = await relay.send(item)
    return await _settle(lease, item, outcome)


async def _deliver_items(
    lease: Lease, relay: RelayConnection | None, items: list[Claimed]
) -> DeliveryReport:
    report = DeliveryReport(claimed=len(items))
    for index, item in enumerate(items):
        try:
            outcome = await _deliver_one(lease, relay, item)
        except RelayUnreachable as error:
            await _defer_all(lease, items[index:], Outcome(str(error)), report)
            break
        _log_outcome(item, outcome)
        report.count(outcome)
    return report


async def _defer_all(
    lease: Lease, items: Iterable[Claimed], outcome: Outcome, report: DeliveryReport
) -> None:
    """The relay is unreachable: each message waits its backoff (a relay down only delays)."""
    for item in items:
        settled = await _settle(lease, item, outcome)
        _log_outcome(item, settled)
        report.count(settled)


async def deliver_batch(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = BATCH,
) -> DeliveryReport:
    """Claim up to ``batch`` due messages and send them, over one relay connection."""
    lease = Lease(factory, settings, clock)
    items = await asyncio.to_thread(lease.claim, batch)
    if not items:
        return DeliveryReport()
    if not settings.relay_host_port:
        return await _deliver_items(lease, None, items)
    relay = RelayConnection(settings)
    try:
        return await _deliver_items(lease, relay, items)
    finally:
        await relay.close()


async def deliver_due(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = BATCH,
) -> int:
    """Send one batch of due messages; return how many were claimed (0: nothing was due)."""
    report = await deliver_batch(factory, settings, clock, batch)
    return report.claimed


async def deliver_all_due(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = BATCH,
) -> DeliveryReport:
    """Send batches until nothing is due, or a whole batch only waits for a retry."""
    total = DeliveryReport()
    while True:
        report = await deliver_batch(factory, settings, clock, batch)
        total.add(report)
        # A batch that settled nothing (the relay is down) would only be tried again at once.
        if report.claimed < batch or report.settled == 0:
            return total
