"""An envelope address the parser cannot read (MAIL FROM, RCPT TO) is answered 501 with one log
line, never a traceback, and the SMTP session goes on (issue 29).

Real parts: the running listener over real SMTP (smtplib), the real database.
"""

from __future__ import annotations

import logging
import smtplib

import pytest

from tests.support import RunningServer, make_mail

pytestmark = pytest.mark.db

# The stdlib's address parser raises IndexError on the first and third, AttributeError on the
# second (a traceback and 500 before), HeaderParseError on the last (553 before).
MALFORMED = ["<=?utf-8?q??=@x.test>", "<a@[>", "a@", "<a@>"]


def _tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.exc_info is not None or "Traceback" in r.getMessage() or r.exc_text
    ]


def _send_whole(client: smtplib.SMTP, mail_from: bool = True) -> None:
    """A message taken whole in the same session (``mail_from``: a MAIL FROM first)."""
    if mail_from:
        assert client.mail("alice@example.org")[0] == 250
    assert client.rcpt("pbmserv@localhost")[0] == 250
    assert client.data(make_mail("alice@example.org", "help").as_bytes())[0] == 250


@pytest.mark.parametrize("command", ["MAIL FROM", "RCPT TO"])
@pytest.mark.parametrize("address", MALFORMED)
def test_a_malformed_envelope_address_is_answered_501_without_a_traceback(
    server: RunningServer, caplog: pytest.LogCaptureFixture, command: str, address: str
) -> None:
    caplog.set_level(logging.INFO)
    with smtplib.SMTP("127.0.0.1", server.port, timeout=30) as client:
        client.ehlo("test.example")
        if command == "RCPT TO":
            assert client.mail("alice@example.org")[0] == 250
        code, text = client.docmd(f"{command}:{address}")
        assert code == 501, (code, text)
        # The session goes on: a recipient's transaction is still open, a sender's is not.
        _send_whole(client, mail_from=command == "MAIL FROM")
        _send_whole(client)
    assert _tracebacks(caplog) == []
    said = [r for r in caplog.records if "malformed address" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
