"""The relays the benches' servers deliver to: a recording relay on 127.0.0.1 in this process,
a baseline relay (another program) in a child process, a bare aiosmtpd ``Sink``; and reading
what a relay got."""

from __future__ import annotations

import email.policy
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage, Message

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession

from bench.rig.basics import free_port, wait_listening, wait_or_kill

#: The Subject of a board mail ("chameleon board 12 ...").
BOARD_SUBJECT = re.compile(rb"^\s*(\w+) board (\d+)\b")


# --- the relay sink -----------------------------------------------------------------------


@dataclass(frozen=True)
class Relayed:
    """One message the server handed to the relay, byte for byte; ``at``: time.monotonic()."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    raw: bytes
    at: float


class _RecordingHandler:
    def __init__(self, keep: bool, on_mail: Callable[[Relayed], None] | None) -> None:
        self.keep = keep
        self.on_mail = on_mail
        self.messages: list[Relayed] = []
        self.count = 0
        self.lock = threading.Lock()

    async def handle_EHLO(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        """Offer PIPELINING, as Postfix does (aiosmtpd reads pipelined commands in order)."""
        session.host_name = hostname
        return [responses[0], "250-PIPELINING", *responses[1:]]

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        item = Relayed(
            str(envelope.mail_from), tuple(envelope.rcpt_tos), bytes(raw), time.monotonic()
        )
        with self.lock:
            self.count += 1
            if self.keep:
                self.messages.append(item)
        if self.on_mail is not None:
            self.on_mail(item)
        return "250 OK"


class RecordingRelay:
    """An SMTP relay on 127.0.0.1 that accepts everything. It keeps each message's raw bytes
    (unless ``keep`` is false: a long load would hold them all) and hands each to ``on_mail``
    as it arrives. It speaks SMTPUTF8 and PIPELINING, as a modern relay such as Postfix does."""

    def __init__(
        self,
        port: int = 0,
        keep: bool = True,
        on_mail: Callable[[Relayed], None] | None = None,
    ) -> None:
        self.handler = _RecordingHandler(keep, on_mail)
        self.controller = Controller(
            self.handler,
            hostname="127.0.0.1",
            port=port or free_port(),
            enable_SMTPUTF8=True,
            data_size_limit=64 * 1024 * 1024,
        )

    def start(self) -> RecordingRelay:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    def __enter__(self) -> RecordingRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.controller.port}"

    def messages(self) -> list[Relayed]:
        with self.handler.lock:
            return list(self.handler.messages)

    def count(self) -> int:
        with self.handler.lock:
            return self.handler.count


class SinkProcess:
    """A baseline relay in a child process: a command given the port it must listen on."""

    def __init__(self, command: Callable[[int], list[str]], env: dict[str, str] | None = None):
        self.port = free_port()
        self.command = command(self.port)
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> SinkProcess:
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        if not wait_listening(self.port, 20, lambda: self.process.poll() is None):
            self.__exit__()
            raise RuntimeError(f"{self.command[0]} did not start listening")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            wait_or_kill(self.process)


# --- reading relayed mail -----------------------------------------------------------------


def parse_relayed(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def header_text(message: Message, name: str) -> str:
    """A header's decoded value, or "" (a header the library cannot read gives its raw text)."""
    try:
        value = message.get(name)
    except Exception:
        value = None
        for key, raw in message.raw_items():
            if key.lower() == name.lower():
                value = raw
                break
    return "" if value is None else str(value)


_MSGID = re.compile(r"<[^<>\s]*>")


def message_ids(value: str) -> list[str]:
    return _MSGID.findall(value)


# --- a bare aiosmtpd Sink (in a process of its own: bench/rig/__main__.py) --------------------


def serve_aiosmtpd_sink(port: int, seconds: float) -> None:
    """A bare aiosmtpd ``Sink`` on 127.0.0.1:``port`` until SIGTERM or SIGINT, ``seconds`` at
    most (``python -m bench.rig aiosmtpd-sink PORT``)."""
    from aiosmtpd.handlers import Sink

    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopped.set())
    stopped.wait(seconds)
    controller.stop()
