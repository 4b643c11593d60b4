"""The SMTP listener: it only stores messages (durably, before answering 250) and wakes the
processing worker. It never runs commands itself."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.mail.inbox import Stored, store_message

log = logging.getLogger("pbmserv.smtp")


class InboxHandler:
    """aiosmtpd handler: DATA is committed to the inbox before the 250 reply."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        on_stored: Callable[[], None] | None = None,
    ) -> None:
        self.factory = factory
        self.settings = settings
        self.on_stored = on_stored

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        mail_from = envelope.mail_from if envelope.mail_from is not None else ""
        try:
            outcome = await asyncio.to_thread(
                store_message, self.factory, self.settings, raw, mail_from
            )
        except Exception:
            log.exception("could not store a message from %s", mail_from)
            # A temporary failure: the sending server keeps the message and tries again.
            return "451 4.3.0 Temporary failure storing the message; try again later"
        if outcome is Stored.RATE_LIMITED:
            return "451 4.7.1 Too many messages from this sender; try again later"
        if self.on_stored is not None:
            self.on_stored()
        if outcome is Stored.DUPLICATE:
            return "250 2.0.0 Message already received"
        return "250 2.0.0 Message accepted"


def make_smtp(handler: InboxHandler, settings: Settings) -> SMTP:
    """One SMTP protocol instance (aiosmtpd answers 552 above the size limit)."""
    return SMTP(
        handler,
        data_size_limit=settings.max_message_bytes,
        hostname=settings.address.rpartition("@")[2] or "localhost",
        ident="pbmserv",
    )
