"""Real mail parts for tests: a capturing SMTP relay and the pbmserv server in a thread."""

from __future__ import annotations

import asyncio
import email
import email.policy
import smtplib
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import make_msgid

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession

from pbmserv.config import Settings
from pbmserv.db.engine import make_engine, session_factory
from pbmserv.db.models import User
from pbmserv.runtime.worker import Server


@dataclass
class Received:
    mail_from: str
    recipients: list[str]
    message: EmailMessage

    @property
    def to(self) -> str:
        return self.recipients[0]

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    @property
    def body(self) -> str:
        part = self.message.get_body(preferencelist=("plain",))
        return part.get_content() if part is not None else ""


#: Users who are people: the robots (migration 0017) are there from the start.
PEOPLE = User.robot_level.is_(None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class CapturingHandler:
    """A relay that keeps every message it is given; it can be told to refuse for a while."""

    def __init__(self) -> None:
        self.messages: list[Received] = []
        self.refuse_with: str | None = None
        self.lock = threading.Lock()

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        if self.refuse_with:
            return self.refuse_with
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        with self.lock:
            self.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos), message))
        return "250 OK"


class Sink:
    """A real SMTP server on 127.0.0.1 that captures what pbmserv delivers."""

    def __init__(self) -> None:
        self.handler = CapturingHandler()
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=free_port())

    def start(self) -> Sink:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.controller.port}"

    @property
    def messages(self) -> list[Received]:
        with self.handler.lock:
            return list(self.handler.messages)

    def wait_for(
        self, predicate: Callable[[list[Received]], bool], timeout: float = 20.0
    ) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            messages = self.messages
            if predicate(messages):
                return messages
            time.sleep(0.02)
        raise AssertionError(f"timed out; the relay has {len(self.messages)} messages")

    def wait_count(self, count: int, timeout: float = 20.0) -> list[Received]:
        return self.wait_for(lambda m: len(m) >= count, timeout)


@dataclass
class RunningServer:
    """pbmserv's real Server (listener + workers) on its own loop in a thread."""

    settings: Settings
    #: The parts of the work it does (runtime.worker): all but the robots' unless told.
    parts: frozenset[str] | None = None
    server: Server | None = None
    thread: threading.Thread | None = None
    loop: asyncio.AbstractEventLoop | None = None
    started: threading.Event = field(default_factory=threading.Event)

    def start(self) -> RunningServer:
        engine = make_engine(self.settings.db_url)
        if self.parts is None:
            self.server = Server(session_factory(engine), self.settings)
        else:
            self.server = Server(session_factory(engine), self.settings, parts=self.parts)

        def run() -> None:
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(self.started.set)
            self.loop.run_until_complete(self.server.run())
            engine.dispose()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        self.started.wait(10)
        deadline = time.monotonic() + 10
        while self.server.port is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    @property
    def port(self) -> int:
        assert self.server is not None and self.server.port is not None
        return self.server.port

    def stop(self) -> None:
        if self.loop and self.server:
            self.loop.call_soon_threadsafe(self.server.stop)
        if self.thread:
            self.thread.join(15)


def make_mail(
    sender: str,
    subject: str,
    body: str = "",
    *,
    to: str = "pbmserv@localhost",
    headers: dict[str, str] | None = None,
) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = make_msgid(domain="test.example")
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(body)
    return message


def smtp_send(
    port: int,
    message: EmailMessage | bytes,
    mail_from: str | None = None,
    to: str = "pbmserv@localhost",
) -> tuple[int, bytes]:
    """Send over a real SMTP conversation; return the DATA reply (code, text)."""
    raw = message if isinstance(message, bytes) else message.as_bytes(policy=email.policy.SMTP)
    if mail_from is None:
        assert isinstance(message, EmailMessage)
        mail_from = email.utils.parseaddr(str(message["From"]))[1]
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.ehlo("test.example")
        code, text = client.mail(mail_from)
        assert code == 250, (code, text)
        code, text = client.rcpt(to)
        assert code == 250, (code, text)
        try:
            return client.data(raw)
        except smtplib.SMTPDataError as error:
            return error.smtp_code, error.smtp_error


def settle(engine, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until every stored message is processed and every queued mail delivered."""
    from sqlalchemy import func, select

    from pbmserv.db.models import InboxMessage, OutboxMessage

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            inbox = conn.scalar(
                select(func.count())
                .select_from(InboxMessage)
                .where(InboxMessage.status == "pending")
            )
            outbox = conn.scalar(
                select(func.count())
                .select_from(OutboxMessage)
                .where(OutboxMessage.status == "pending")
            )
        if inbox == 0 and outbox == 0:
            return
        time.sleep(0.02)
    raise AssertionError(f"not settled: {inbox} inbox, {outbox} outbox pending")
