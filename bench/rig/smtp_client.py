"""The benches' SMTP client: one message's envelope and bytes, a connection that reports the
server's status code for each message, and a plain one-command message."""

from __future__ import annotations

import contextlib
import smtplib
import uuid
from dataclasses import dataclass
from email.utils import formatdate

from bench.rig.server import SERVER_ADDRESS


@dataclass(frozen=True)
class Outgoing:
    """One message to send: its envelope and its exact bytes."""

    envelope_from: str
    raw: bytes
    rcpt: str = SERVER_ADDRESS


class SmtpClient:
    """One SMTP connection to the server, reopened when it breaks; reports a code per message.

    The code is the server's reply to DATA (or to MAIL/RCPT when those were refused), or a
    negative number when the connection failed: -1 refused or reset, -2 timed out.
    ``reconnects``: how many times a message is tried again on a new connection after the
    connection failed (a connection the server closed while idle; 0 for the benches that count
    every failure).
    """

    def __init__(self, port: int, timeout: float = 60.0, reconnects: int = 0) -> None:
        self.port = port
        self.timeout = timeout
        self.reconnects = reconnects
        self.client: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        if self.client is None:
            client = smtplib.SMTP(timeout=self.timeout)
            client.connect("127.0.0.1", self.port)
            client.ehlo("bench.test")
            self.client = client
        return self.client

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.quit()
            with contextlib.suppress(Exception):
                self.client.close()
            self.client = None

    def send(self, message: Outgoing) -> tuple[int, str]:
        for _ in range(self.reconnects):
            code, reply = self._send_once(message)
            if code >= 0:
                return code, reply
        return self._send_once(message)

    def _send_once(self, message: Outgoing) -> tuple[int, str]:
        try:
            client = self._connect()
            code, reply = client.mail(message.envelope_from)
            if code != 250:
                client.rset()
                return code, reply.decode("utf-8", "replace")
            code, reply = client.rcpt(message.rcpt)
            if code not in (250, 251):
                client.rset()
                return code, reply.decode("utf-8", "replace")
            code, reply = client.data(message.raw)
            return code, reply.decode("utf-8", "replace")
        except smtplib.SMTPDataError as error:
            return error.smtp_code, str(error.smtp_error)
        except smtplib.SMTPResponseException as error:
            self.close()
            return error.smtp_code, str(error.smtp_error)
        except TimeoutError:
            self.close()
            return -2, "timed out"
        except (OSError, smtplib.SMTPException) as error:
            self.close()
            return -1, f"{type(error).__name__}: {error}"


def mail_bytes(sender: str, subject: str, message_id: str | None = None) -> tuple[str, bytes]:
    """A plain message whose Subject is one command line; returns (Message-ID, bytes). The
    Message-ID is a new one unless given."""
    message_id = message_id or f"<{uuid.uuid4().hex}@bench.example>"
    raw = (
        f"From: {sender}\r\nTo: {SERVER_ADDRESS}\r\nSubject: {subject}\r\n"
        f"Date: {formatdate()}\r\nMessage-ID: {message_id}\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\n\r\n"
    ).encode()
    return message_id, raw
