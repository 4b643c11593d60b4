"""The relay connection delivery keeps open: one SMTP session at a time, opened with TLS and a
login as the settings say, each message handed over whole, a broken session opened again; and
the handover, which lets one message at a time be sent and marked."""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from pbmserv.config import Settings
from pbmserv.outbound.delivery_items import (
    DELIVERED,
    QUIT_TIMEOUT_SECONDS,
    Claimed,
    Outcome,
    describe_error,
)
from pbmserv.outbound.relay.refusals import bounce_of
from pbmserv.outbound.relay.session import RelayBroken, RelaySession, wire_data
from pbmserv.outbound.relay.tls import explain, open_relay

log = logging.getLogger("pbmserv.delivery")

# --- the handover --------------------------------------------------------------------------------

_HANDOVERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


@asynccontextmanager
async def handover() -> AsyncIterator[None]:
    """Hand one message over (end its data at the relay, or write its spool file) and record
    the outcome, with no other message of this event loop (of the process, in `serve`) between
    the two: so at most one message is ever sent but not marked, and a process killed at any
    moment sends at most one message twice when its lease has run out."""
    loop = asyncio.get_running_loop()
    lock = _HANDOVERS.get(loop)
    if lock is None:
        lock = _HANDOVERS[loop] = asyncio.Lock()
    async with lock:
        yield


# --- the relay -----------------------------------------------------------------------------------


class RelayUnreachable(Exception):
    """No connection to the relay: every message still to send waits for the next run."""


class RelayConnection:
    """An SMTP connection to the relay, opened on first use and again after it broke.

    A delivery worker keeps it open across batches while there is work (connecting, EHLO and
    QUIT cost more than sending a small message); it is replaced after ``MAX_MESSAGES`` or
    ``MAX_SECONDS``, and a connection unused for a while is checked with NOOP before a message
    is trusted to it. aiosmtplib opens it (pbmserv.outbound.relay.tls); the transactions are
    pbmserv.outbound.relay.session's, pipelined where the relay offers it.
    """

    MAX_MESSAGES = 1000
    MAX_SECONDS = 300.0
    CHECK_AFTER_SECONDS = 2.0

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.session: RelaySession | None = None
        self.opened_at = self.used_at = 0.0
        self.messages, self.recipient = 0, ""

    async def open(self) -> RelaySession:
        if self.session is not None and self.session.is_connected:
            now = time.monotonic()
            if self.messages >= self.MAX_MESSAGES or now - self.opened_at > self.MAX_SECONDS:
                await self.close()  # a long-lived conversation is retired, politely
            elif now - self.used_at <= self.CHECK_AFTER_SECONDS or await self._alive(self.session):
                return self.session
        self.drop()
        try:
            # TLS and AUTH as the settings ask; the extensions (SMTPUTF8) are known after it.
            client = await open_relay(self.settings)
        except Exception as error:
            raise RelayUnreachable(explain(error, self.settings)) from error
        self.session = RelaySession.take_over(client.transport, client.esmtp_extensions)
        self.opened_at = self.used_at = time.monotonic()
        self.messages = 0
        return self.session

    async def _alive(self, session: RelaySession) -> bool:
        """Whether an idle connection still answers: the relay may have hung up meanwhile, and
        a message sent into a dead connection would wait for a retry."""
        try:
            async with asyncio.timeout(QUIT_TIMEOUT_SECONDS):
                reply = await session.command(b"NOOP")
        except Exception:
            return False
        if reply.code != 250:
            return False
        self.used_at = time.monotonic()
        return True

    def idle_for(self) -> float:
        """Seconds since the connection last carried a message (0 when there is none)."""
        return 0.0 if self.session is None else time.monotonic() - self.used_at

    async def close(self) -> None:
        """Say goodbye when the work is done; a relay that does not answer is just dropped."""
        session, self.session = self.session, None
        if session is None or not session.is_connected:
            return
        try:
            async with asyncio.timeout(QUIT_TIMEOUT_SECONDS):
                await session.quit()
        except Exception:
            session.close()

    def drop(self) -> None:
        """Hang up on a conversation in an unknown state (it broke, stalled or went wrong)."""
        session, self.session = self.session, None
        if session is not None:
            session.close()

    async def start(self, item: Claimed, deadline: float, sender: str) -> Outcome | None:
        """Begin ``item``'s mail transaction from ``sender`` (its return path) and write all
        its data but the end: None when the relay waits for the end (see ``finish``), or else
        the outcome (refused, broken). ``deadline`` (the loop's clock) bounds this and
        ``finish`` together."""
        session = await self.open()
        self.messages += 1
        self.recipient = item.recipient  # whom a refusal of the data's end refuses
        try:
            return await self._start(session, item, deadline, sender)
        finally:
            self.used_at = time.monotonic()

    async def _start(
        self, session: RelaySession, item: Claimed, deadline: float, sender: str
    ) -> Outcome | None:
        needs_utf8 = not (sender.isascii() and item.recipient.isascii())
        if needs_utf8 and not session.supports("smtputf8"):
            # Without SMTPUTF8 no relay can take this address; trying would only break the
            # conversation for the messages after it.
            return Outcome(
                f"the relay does not offer SMTPUTF8, which the address {item.recipient!r} needs",
                permanent=True,
            )
        data = wire_data(item.raw)
        options = ["SMTPUTF8"] if needs_utf8 else []
        if session.supports("size"):
            options.insert(0, f"SIZE={len(data)}")
        encoding = "utf-8" if needs_utf8 else "ascii"
        # A send must end well inside its lease (see SEND_SHARE); a stalled relay becomes a
        # timeout, retried later.
        try:
            async with asyncio.timeout_at(deadline):
                refused = await session.begin(sender, item.recipient, options, encoding)
                if refused is None:
                    session.write(data)
        except (RelayBroken, OSError) as error:  # broken, closed, timed out
            # (TimeoutError is an OSError)
            self.drop()
            return Outcome(describe_error(error))
        except Exception as error:  # this message cannot be sent at all (a malformed address)
            self.drop()  # the conversation may be half-way: start the next one afresh
            return Outcome(describe_error(error), permanent=True)
        if refused is not None:  # the envelope is reset for the next message
            await self._reset(session)
            return Outcome(str(refused), refused.code >= 500, bounce_of(refused, item.recipient))
        return None

    async def finish(self, deadline: float) -> Outcome:
        """End the data ``start`` wrote: from now on the relay may take the message, so the
        caller holds the handover (see ``handover``) until it has recorded the outcome."""
        if asyncio.get_running_loop().time() >= deadline:
            # The wait for the handover used the time up. Ending the data now could hand the
            # message over after the lease's safe part: hang up instead (nothing is taken).
            self.drop()
            return Outcome("TimeoutError: no time left in the lease to end the message")
        try:
            if self.session is None:
                raise RelayBroken("the relay connection is gone")
            async with asyncio.timeout_at(deadline):
                reply = await self.session.end()
        except (RelayBroken, OSError) as error:  # taken or not: retried later
            self.drop()
            return Outcome(describe_error(error))
        finally:
            self.used_at = time.monotonic()
        if reply.code != 250:  # the transaction is over either way: no reset needed
            return Outcome(str(reply), reply.code >= 500, bounce_of(reply, self.recipient, "."))
        return DELIVERED

    async def _reset(self, session: RelaySession) -> None:
        """Start the next transaction afresh after a refusal (as sendmail does)."""
        try:
            async with asyncio.timeout(QUIT_TIMEOUT_SECONDS):
                reply = await session.command(b"RSET")
        except Exception:
            self.drop()
            return
        if reply.code != 250:
            self.drop()
