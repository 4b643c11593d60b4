"""At any moment at most one message of a server is sent but not marked sent, however many relay
connections it delivers over, so that a server killed (kill -9) at any moment sends at most one
mail twice (issue 29).

A real SMTP relay watches the outbox in the real database: when a message's data ends (the
moment the relay may take it), every message it took before must already be marked sent, and
no other message may be ending. The connections still work at once up to then: their RCPT
commands overlap. No timing is asserted: the relay holds the first message's end (and the first
RCPT) until another one comes, or for a while when none may come.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
from collections import Counter
from pathlib import Path

import pytest
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine, func, select

from pbmserv.db.models import OutboxMessage
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings, enqueue, rows
from tests.support import RunningServer

pytestmark = pytest.mark.db

# How long the relay holds the first message's end (and its first RCPT) for another to come:
# what would come does so in milliseconds; when nothing may come, this is only waited once.
HOLD_SECONDS = 2.0


class HandoverWatch(ScriptedHandler):
    """A relay that notes, as each message's data ends, how many messages are sent but not
    marked: this one, the others ending meanwhile, and those taken before whose rows are not
    yet marked sent. It also notes how many RCPT commands it is given at once."""

    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self.engine = engine
        self.taken: list[str] = []  # Message-IDs, as accepted
        self.ending = self.ends = self.most_unmarked = 0
        self.rcpts = self.rcpt_commands = self.most_rcpts = 0
        # Handlers run on the relay's own loop: these are set and awaited there alone.
        self._another_end = asyncio.Event()
        self._another_rcpt = asyncio.Event()

    def _unmarked(self, taken: list[str]) -> int:
        if not taken:
            return 0
        with self.engine.connect() as conn:
            return int(
                conn.scalar(
                    select(func.count())
                    .select_from(OutboxMessage)
                    .where(OutboxMessage.message_id.in_(taken), OutboxMessage.status != "sent")
                )
                or 0
            )

    async def handle_RCPT(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        with self.lock:
            self.rcpts += 1
            self.rcpt_commands += 1
            self.most_rcpts = max(self.most_rcpts, self.rcpts)
            first = self.rcpt_commands == 1
        if self.rcpts > 1:
            self._another_rcpt.set()
        try:
            if first:
                await _wait(self._another_rcpt)
            envelope.rcpt_tos.append(address)
            return "250 OK"
        finally:
            with self.lock:
                self.rcpts -= 1

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        with self.lock:
            self.ending += 1
            self.ends += 1
            ending, first, taken = self.ending, self.ends == 1, list(self.taken)
        if ending > 1:
            self._another_end.set()
        try:
            unmarked = ending + await asyncio.to_thread(self._unmarked, taken)
            with self.lock:
                self.most_unmarked = max(self.most_unmarked, unmarked)
            if first:
                await _wait(self._another_end)
            reply = await super().handle_DATA(server, session, envelope)
            parsed = email.message_from_bytes(envelope.original_content or b"")
            with self.lock:
                self.taken.append(str(parsed["Message-ID"]))
            return reply
        finally:
            with self.lock:
                self.ending -= 1


async def _wait(event: asyncio.Event) -> None:
    """Until ``event``, at most HOLD_SECONDS."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), HOLD_SECONDS)


def test_four_connections_hand_one_message_over_at_a_time(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    watch = HandoverWatch(engine)
    with Relay(watch) as relay:
        settings = delivery_settings(
            db_url,
            relay,
            listen="127.0.0.1:0",
            spool=tmp_path / "spool",
            poll_seconds=0.2,
            delivery_connections=4,
        )
        message_ids = enqueue(engine, settings, [f"a{n}@example.org" for n in range(40)])
        running = RunningServer(settings).start()
        try:
            relay.wait_count(40, timeout=60)
        finally:
            running.stop()
        copies = relay.copies()
    assert copies == Counter(dict.fromkeys(message_ids, 1))
    assert {row.status for row in rows(engine)} == {"sent"}
    assert watch.most_unmarked == 1  # never two messages the relay may have taken unmarked
    assert watch.most_rcpts >= 2  # and yet the connections worked at once
