"""The ``imap`` setting's URL, and the envelope sender a provider writes into Return-Path."""

from __future__ import annotations

import pytest

from pbmserv.config import ConfigError, Settings
from pbmserv.inbound.imap import MailboxReader, MailboxURL, envelope_sender, parse_imap_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "imaps://pbm@example.org@imap.example.org/INBOX",
            MailboxURL(True, "pbm@example.org", "imap.example.org", 993, "INBOX"),
        ),
        (
            "imaps://pbm%40example.org@imap.example.org:9993/Games/Moves",
            MailboxURL(True, "pbm@example.org", "imap.example.org", 9993, "Games/Moves"),
        ),
        ("imap://games@127.0.0.1", MailboxURL(False, "games", "127.0.0.1", 143, "INBOX")),
        ("IMAPS://u@[::1]:1993/", MailboxURL(True, "u", "::1", 1993, "INBOX")),
        ("imaps://a%20b@host/Caf%C3%A9", MailboxURL(True, "a b", "host", 993, "Café")),
        (
            "imaps://me@gmail.com;AUTH=XOAUTH2@imap.gmail.com/INBOX",
            MailboxURL(True, "me@gmail.com", "imap.gmail.com", 993, "INBOX", "XOAUTH2"),
        ),
        ("imaps://me;AUTH=*@host/INBOX", MailboxURL(True, "me", "host", 993, "INBOX")),
    ],
)
def test_urls_operators_write(url: str, expected: MailboxURL) -> None:
    assert parse_imap_url(url) == expected


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("pop3://u@host/INBOX", "imaps://USER@HOST/FOLDER"),
        ("imap.example.org", "imaps://USER@HOST/FOLDER"),
        ("imaps://imap.example.org/INBOX", "name the user"),
        ("imaps://@imap.example.org/INBOX", "name the user"),
        ("imaps://u:secret@imap.example.org/INBOX", "imap_password"),
        ("imaps://u@/INBOX", "no host"),
        ("imaps://u@host:99999/INBOX", "not HOST or HOST:PORT"),
        ("imaps://u@host:imap/INBOX", "not HOST or HOST:PORT"),
        ("imaps://u@[::1/INBOX", "not HOST or HOST:PORT"),
        ("imaps://u;AUTH=GSSAPI@host/INBOX", "mechanism"),
    ],
)
def test_wrong_urls_say_what_is_wrong(url: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint):
        parse_imap_url(url)


def test_the_url_shown_in_logs_has_no_password_and_reads_back() -> None:
    url = parse_imap_url("imaps://pbm@example.org@[::1]/INBOX")
    assert str(url) == "imaps://pbm@example.org@[::1]:993/INBOX"
    assert parse_imap_url(str(url)) == url


def test_a_reader_needs_its_password() -> None:
    settings = Settings(imap="imaps://u@host/INBOX")
    with pytest.raises(ConfigError, match="PBMSERV_IMAP_PASSWORD"):
        MailboxReader(None, settings)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="name the user"):
        MailboxReader(None, Settings(imap="imaps://host/INBOX", imap_password="x"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "sender"),
    [
        (b"Return-Path: <alice@example.org>\r\nFrom: a@b\r\n\r\nbody", "alice@example.org"),
        (b"Return-Path: <>\r\nFrom: MAILER-DAEMON@b\r\n\r\nbounce", ""),
        (b"Return-Path:\r\n <bob@example.org>\r\nFrom: a@b\r\n\r\n", "bob@example.org"),
        (b"Return-Path: <first@x>\r\nReturn-Path: <second@y>\r\n\r\n", "first@x"),
        (b"From: a@b\r\nSubject: x\r\n\r\nReturn-Path: <not@header>\r\n", None),
        (b"", None),
    ],
)
def test_the_envelope_sender_is_the_topmost_return_path(raw: bytes, sender: str | None) -> None:
    assert envelope_sender(raw) == sender
