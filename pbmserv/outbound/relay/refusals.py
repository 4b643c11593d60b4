"""A relay's refusal of a recipient, counted as a hard bounce (as a delivery report would be).

A relay that refuses an address at once (``550 5.1.1 unknown user`` to RCPT, or a 5xx to the
data) sends no delivery report: the refusal is the only news that the address is dead, and in
the hosted-mailbox mode (a provider's submission server as the relay) it is the usual one. So
such a refusal goes the way a report does (:func:`pbmserv.core.accounts.bouncing.record_bounce`):
once per mail, ``bounce_limit`` of them mark the address bouncing, and the opponents are told.

Not every 5xx blames the address. A refusal of the sender (MAIL), of our commands (500-504),
and a relay that will not relay for us or wants a login (``554 5.7.1 Relay access denied``,
``530 5.7.0 Authentication required``) say nothing of the recipient: they fail the mail as ever
and count for nothing, or every player would be marked at once by one wrong setting.
"""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import Engine

from pbmserv.config import Settings
from pbmserv.core.accounts import bouncing
from pbmserv.core.accounts.delivery_reports import MAX_DIAGNOSTIC, DeliveryReport, RecipientStatus
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import printable
from pbmserv.db.engine import session_factory, transaction
from pbmserv.outbound.relay.session import Reply

#: The commands whose refusal counts: of the recipient (RCPT), of the message (DATA, and the
#: "." that ends the data).
COUNTED_COMMANDS = frozenset({"RCPT", "DATA", "."})
#: SMTP replies about the mailbox or the transaction (RFC 5321 4.2.3); 500-504 are about our
#: commands, 530 and 535 about our login.
_MAILBOX_CODES = range(550, 560)
_STATUS = re.compile(r"\b5\.(\d{1,3})\.(\d{1,3})\b")
#: Enhanced statuses of a refusal of the client, not of the address (RFC 3463, RFC 4954).
_ABOUT_US_STATUSES = frozenset({"5.7.0", "5.7.8", "5.7.9", "5.7.11", "5.7.14"})
_ABOUT_US_WORDS = re.compile(
    r"(?i)\brelay(?:ing)?\s+(?:access\s+)?(?:denied|not\s+permitted|prohibited)"
    r"|\b(?:unable|not\s+permitted)\s+to\s+relay\b|\bauthenticat\w*\s+required\b"
)


def bounce_of(reply: Reply, recipient: str, command: str | None = None) -> DeliveryReport | None:
    """The hard bounce ``reply`` (to ``command``, by default the one the reply names) counts
    as for ``recipient``, or None when it says nothing about the address."""
    command = command or reply.command
    if command not in COUNTED_COMMANDS or reply.code not in _MAILBOX_CODES:
        return None
    text = " ".join(printable(reply.message).split())
    match = _STATUS.search(text)
    status = match.group(0) if match else ""
    if status in _ABOUT_US_STATUSES or _ABOUT_US_WORDS.search(text):
        return None
    diagnostic = f"{reply.code} {text}"[:MAX_DIAGNOSTIC]
    refused = RecipientStatus(recipient.strip().lower(), "failed", status, diagnostic, True)
    return DeliveryReport((refused,), "relay")


def count_refusal(
    engine: Engine, settings: Settings, outbox_id: int, report: DeliveryReport, now: datetime
) -> bouncing.BounceOutcome:
    """Count the refusal of outbox row ``outbox_id`` as a hard bounce, and queue the notices
    to the opponents if it marks the address, in one transaction (the path of a delivery
    report in pbmserv.runtime.processor)."""
    # Imported here: the delivery processes load the composing of mail only when they need it.
    from pbmserv.outbound.outbox_rows import queue_notifications

    with transaction(session_factory(engine)) as session:
        outcome = bouncing.record_bounce(session, settings, outbox_id, report, now)
        ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
        for notice in outcome.notices:
            ctx.notify(notice)
        queue_notifications(session, settings, ctx.notifications, now)
    return outcome
