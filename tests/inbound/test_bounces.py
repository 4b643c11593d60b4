"""Reading delivery reports (inbound.bounces): real MTAs' reports, hard and soft, and what is no
report at all.

The Postfix samples under data/bounces/ are genuine: Postfix 3.7 (Debian 12) made them for mail
sent with a bounce address as its return path, to a remote server that refused the recipient
(550 5.1.1), to an unknown local user, and to a server that could not be reached (the delay
warning, then the report when it gave up). The others are written after their MTAs' formats:
Exim's report and its older plain-text bounce, Gmail's, qmail's; and an out-of-office reply.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pbmserv.core.accounts.delivery_reports import DeliveryReport
from pbmserv.inbound.bounces import bounce_tags, parse_report

DATA = Path(__file__).parent / "data" / "bounces"


def report(name: str) -> DeliveryReport:
    found = parse_report((DATA / name).read_bytes())
    assert found is not None, name
    return found


@pytest.mark.parametrize(
    ("name", "recipient", "action", "status", "permanent", "source", "words"),
    [
        (
            "postfix-5.1.1-remote.eml",
            "bob@gone.example.net",
            "failed",
            "5.1.1",
            True,
            "rfc3464",
            "550 5.1.1 <bob@gone.example.net>: Recipient address rejected: User unknown in "
            "virtual mailbox table",
        ),
        (
            "postfix-5.1.1-local.eml",
            "nosuchuser@localhost",
            "failed",
            "5.1.1",
            True,
            "rfc3464",
            'unknown user: "nosuchuser"',
        ),
        (
            "postfix-4.4.1-delayed.eml",
            "carol@slow.example.com",
            "delayed",
            "4.4.1",
            False,
            "rfc3464",
            "Connection refused",
        ),
        # Postfix gave up after its queue lifetime: failed, but with a 4.x.x status. The
        # address may work tomorrow: it is no hard bounce.
        (
            "postfix-4.4.1-expired.eml",
            "carol@slow.example.com",
            "failed",
            "4.4.1",
            False,
            "rfc3464",
            "Connection refused",
        ),
        (
            "exim-5.1.1-report.eml",
            "bob@example.com",
            "failed",
            "5.0.0",
            True,
            "rfc3464",
            "550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown",
        ),
        (
            "gmail-5.1.1.eml",
            "bob.nobody@gmail.com",
            "failed",
            "5.1.1",
            True,
            "rfc3464",
            "550-5.1.1 The email account that you tried to reach does not exist.",
        ),
        (
            "exim-classic.eml",
            "bob@example.org",
            "failed",
            "5.1.1",
            True,
            "flufl",
            "550 5.1.1 <bob@example.org>... User unknown",
        ),
        (
            "qmail-5.1.1.eml",
            "dave@example.net",
            "failed",
            "5.1.1",
            True,
            "flufl",
            "Sorry, no mailbox here by that name.",
        ),
    ],
)
def test_real_reports_are_read(
    name: str, recipient: str, action: str, status: str, permanent: bool, source: str, words: str
) -> None:
    found = report(name)
    [first] = found.recipients
    assert (first.recipient, first.action, first.status) == (recipient, action, status)
    assert found.permanent is permanent and first.permanent is permanent
    assert found.source == source
    assert words in first.diagnostic
    assert "\n" not in first.diagnostic and first.diagnostic.isprintable()
    assert found.describe().startswith(f"{status} {action} ")


def test_an_out_of_office_reply_is_no_report() -> None:
    assert parse_report((DATA / "vacation-reply.eml").read_bytes()) is None


def _report(*blocks: str, kind: str = "message/delivery-status") -> bytes:
    fields = "\n\n".join(["Reporting-MTA: dns; mx.example.org", *blocks])
    text = (
        "From: MAILER-DAEMON@mx.example.org\n"
        "To: pbmserv+bounce-1-aaaaaaaaaaaa@games.example.net\n"
        "Subject: Undelivered Mail Returned to Sender\n"
        "MIME-Version: 1.0\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\n'
        "\n"
        "--b\n"
        "Content-Type: text/plain\n"
        "\n"
        "The mail system\n"
        "\n"
        "--b\n"
        f"Content-Type: {kind}\n"
        "\n"
        f"{fields}\n"
        "\n"
        "--b--\n"
    )
    return text.encode("utf-8")


def _only(raw: bytes) -> tuple[str, str, bool]:
    found = parse_report(raw)
    assert found is not None
    [first] = found.recipients
    return first.action, first.status, first.permanent


def test_what_counts_as_a_hard_bounce() -> None:
    recipient = "Final-Recipient: rfc822; bob@example.org"
    # Failed for good, with a 5.x.x status or with none at all.
    assert _only(_report(f"{recipient}\nAction: failed\nStatus: 5.2.2")) == (
        "failed",
        "5.2.2",
        True,
    )
    assert _only(_report(f"{recipient}\nAction: failed")) == ("failed", "", True)
    # A 5.x.x status with no Action (a sloppy MTA) still says the address failed.
    assert _only(_report(f"{recipient}\nStatus: 5.1.1 (bad mailbox)"))[2] is True
    # Delayed, or a 4.x.x status even when the MTA gave up: temporary.
    assert _only(_report(f"{recipient}\nAction: delayed\nStatus: 4.2.2"))[2] is False
    assert _only(_report(f"{recipient}\nAction: failed\nStatus: 4.4.7"))[2] is False
    # A report of success (NOTIFY=SUCCESS) is no failure.
    assert _only(_report(f"{recipient}\nAction: delivered\nStatus: 2.0.0"))[2] is False
    # The status may be found in the diagnostic alone.
    code = "Diagnostic-Code: smtp; 550 5.7.1 Message rejected as spam"
    assert _only(_report(f"{recipient}\nAction: failed\n{code}")) == ("failed", "5.7.1", True)


def test_an_international_report_is_read_too() -> None:
    # RFC 6533: message/global-delivery-status, UTF-8, which the parser leaves as text.
    raw = _report(
        "Final-Recipient: utf-8; jörg@example.de\nAction: failed\nStatus: 5.1.1\n"
        "Diagnostic-Code: smtp; 550 5.1.1 Benutzer unbekannt",
        kind="message/global-delivery-status",
    )
    found = parse_report(raw)
    assert found is not None and found.permanent
    # (The parser may keep the UTF-8 of the later blocks as replacement characters: the
    # address is only shown to the operator.)
    assert found.recipients[0].recipient.endswith("rg@example.de")
    assert found.diagnostic == "550 5.1.1 Benutzer unbekannt"


def test_a_diagnostic_is_one_printable_line_of_bounded_length() -> None:
    raw = _report(
        "Final-Recipient: rfc822; bob@example.org\nAction: failed\nStatus: 5.0.0\n"
        "Diagnostic-Code: smtp; 550 \x1b[31mno\x07 " + "x" * 2000
    )
    found = parse_report(raw)
    assert found is not None
    assert found.diagnostic.isprintable() and len(found.diagnostic) <= 500


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x00\xff\xfe garbage",
        b"Content-Type: multipart/report; boundary=x\n\n--x\nContent-Type: message/delivery-"
        b"status\n\n\n--x--\n",
        b"From: someone@example.org\nSubject: hello\n\nJust a note.\n",
        b"Content-Type: multipart/mixed; boundary=a\n\n" + b"--a\n" * 5000,
    ],
)
def test_what_is_no_report_gives_none_and_never_raises(raw: bytes) -> None:
    assert parse_report(raw) is None


def test_bounce_tags_are_read_from_the_servers_own_address_only() -> None:
    recipients = [
        "pbmserv+bounce-17-k3mpq7abcdef@games.example.net",
        "pbmserv+b3-s0-abcdefghijklmnop@games.example.net",  # a seat's reply address
        "pbmserv+bounce-18-x2y3z4abcdef@elsewhere.example",  # another domain
        "other+bounce-19-x2y3z4abcdef@games.example.net",  # another mailbox
        "pbmserv@games.example.net",
    ]
    assert bounce_tags(recipients, "pbmserv@games.example.net") == ["bounce-17-k3mpq7abcdef"]
    # The server's address as configured, in any case.
    assert bounce_tags(recipients, "PbmServ@Games.Example.NET") == ["bounce-17-k3mpq7abcdef"]
    assert bounce_tags([], "pbmserv@games.example.net") == []
