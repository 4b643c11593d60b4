"""Real parts for the delivery tests: scripted SMTP relays, queued mail, the outbox's rows."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine, select

from pbmserv.config import Settings
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import OutboxMessage
from pbmserv.db.times import utcnow
from pbmserv.outbound.outbox_rows import queue
from tests.support import CapturingHandler, Sink, free_port

# Called with the number of the DATA command (1 first) and the relay's side of the
# conversation; a reply string answers instead of accepting the message.
Script = Callable[[int, SMTP], str | None]


class ScriptedHandler(CapturingHandler):
    """A relay that keeps what it accepts, after an optional delay and a script per message."""

    def __init__(
        self, delay: float | Callable[[int], float] = 0.0, script: Script | None = None
    ) -> None:
        super().__init__()
        self.delay = delay
        self.script = script
        self.data_commands = 0

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        with self.lock:
            self.data_commands += 1
            number = self.data_commands
        if self.script is not None:
            reply = self.script(number, server)
            if reply is not None:
                return reply
        delay = self.delay(number) if callable(self.delay) else self.delay
        if delay:
            await asyncio.sleep(delay)  # a slow relay, without holding up other connections
        return await super().handle_DATA(server, session, envelope)


def drop_connection(server: SMTP) -> str:
    """Hang up in the middle of a message, as a crashing relay does."""
    assert server.transport is not None
    server.transport.close()
    return "421 4.3.0 closing"  # never reaches the client: the connection is gone


class Relay(Sink):
    """The capturing relay of tests.support, scripted, with or without SMTPUTF8."""

    def __init__(self, handler: ScriptedHandler, smtputf8: bool = False) -> None:
        self.handler = handler
        self.controller = Controller(
            handler, hostname="127.0.0.1", port=free_port(), enable_SMTPUTF8=smtputf8
        )

    def __enter__(self) -> Relay:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def copies(self) -> Counter[str]:
        """How many times each Message-ID arrived."""
        return Counter(str(m.message["Message-ID"]) for m in self.messages)


def delivery_settings(db_url: str, relay: Relay | None, **changes: object) -> Settings:
    values: dict[str, object] = {
        "db_url": db_url,
        "relay": relay.address if relay else None,
        "address": "pbmserv@games.example.org",
        "retry_base_seconds": 60.0,
        "retry_max_seconds": 600.0,
        "confirm_addresses": False,
    }
    values.update(changes)
    return Settings(**values)  # type: ignore[arg-type]


def enqueue(engine: Engine, settings: Settings, recipients: Iterable[str]) -> list[str]:
    """Queue one composed message per recipient, as the server does; return their Message-IDs."""
    now = utcnow()
    with transaction(session_factory(engine)) as session:
        for number, to in enumerate(recipients, start=1):
            queue(
                session,
                settings,
                to=to,
                kind="notice",
                subject=f"message {number}",
                body=f"message {number} for {to}",
                now=now,
                inbox_id=None,
            )
    with engine.connect() as conn:
        return list(conn.scalars(select(OutboxMessage.message_id).order_by(OutboxMessage.id)))


@dataclass(frozen=True)
class Row:
    recipient: str
    status: str
    attempts: int
    last_error: str | None
    lease_owner: str | None


def rows(engine: Engine) -> list[Row]:
    """The outbox in queueing order."""
    with engine.connect() as conn:
        found = conn.execute(
            select(
                OutboxMessage.recipient,
                OutboxMessage.status,
                OutboxMessage.attempts,
                OutboxMessage.last_error,
                OutboxMessage.lease_owner,
            ).order_by(OutboxMessage.id)
        ).all()
    return [Row(*row) for row in found]
