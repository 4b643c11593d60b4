"""What a delivery run holds and what became of each attempt: the outbox row claimed, the
outcome (sent, failed for now, failed for good, a bounce), the report of a run, and the limits
that apply to every way of sending (the relay, the spool)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from pbmserv.core.accounts.delivery_reports import DeliveryReport as Bounce

log = logging.getLogger("pbmserv.delivery")

# A message the relay keeps refusing for now is failed for good after this long (as an MTA's
# queue lifetime); `pbmserv admin outbox retry` queues it again.
GIVE_UP_AFTER = timedelta(days=5)
SMTP_TIMEOUT_SECONDS = 60
QUIT_TIMEOUT_SECONDS = 5

#: A board mail carrying its player's private link to the web view (outbox_rows).
PRIVATE_BOARD_KIND = "board_private"
#: Outbox kinds whose mail carries a secret (a new password, an address's confirmation code, a
#: private link): its body is removed from the database as soon as it is sent (relay or spool).
SECRET_KINDS = frozenset({"password_reset", "confirmation", PRIVATE_BOARD_KIND})


@dataclass(frozen=True)
class Claimed:
    """One outbox row, as a delivery run holds it."""

    id: int
    recipient: str
    message_id: str
    raw: bytes
    created_at: datetime
    attempts: int  # before this run's attempt
    kind: str = "notice"


@dataclass(frozen=True)
class Outcome:
    """What became of one attempt: delivered (no error), or an error for now or for good."""

    error: str | None = None
    permanent: bool = False
    bounce: Bounce | None = None  # a refusal of the recipient, counted as a hard bounce


DELIVERED = Outcome()


def describe_error(error: BaseException) -> str:
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
