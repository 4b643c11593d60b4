"""Every outgoing mail DKIM-signed, checked by dkimpy's verifier with the published record
(passed in: no DNS), through the real delivery path to a real relay and to the spool."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import dkim
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine

from pbmserv.db.engine import session_factory
from pbmserv.outbound.delivery import deliver_all_due
from pbmserv.outbound.signing import DkimSigner, dns_records, new_key, public_key_record
from tests.e2e.processes import run_pbmserv
from tests.reliability.outbox import delivery_settings, enqueue, rows
from tests.support import free_port

DOMAIN = "games.example.org"


@pytest.fixture(scope="module")
def key_pem() -> bytes:
    return new_key()


@pytest.fixture
def key_file(tmp_path: Path, key_pem: bytes) -> Path:
    path = tmp_path / "dkim.pem"
    path.write_bytes(key_pem)
    return path


def verifies(raw: bytes, key_pem: bytes, selector: str = "pbmserv") -> bool:
    record = public_key_record(key_pem).encode()

    def lookup(name: bytes, timeout: int = 5) -> bytes:
        return record if name == f"{selector}._domainkey.{DOMAIN}.".encode() else b""

    return bool(dkim.verify(raw, dnsfunc=lookup))


class RawRelay:
    """A relay that keeps the bytes exactly as they came."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.lock = threading.Lock()
        self.controller = Controller(self, hostname="127.0.0.1", port=free_port())

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        with self.lock:
            self.received.append(envelope.original_content or b"")
        return "250 OK"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.controller.port}"


def test_a_signature_survives_the_relay_and_fails_once_the_body_changes(key_pem: bytes) -> None:
    signer = DkimSigner("pbmserv", DOMAIN, key_pem)
    raw = b"From: pbmserv@games.example.org\nTo: bob@example.org\nSubject: board 1\n\nMove 2.\n"
    signed = signer.sign(raw)
    assert signed.startswith(b"DKIM-Signature:")
    assert verifies(signed, key_pem)
    assert not verifies(signed.replace(b"Move 2.", b"Move 3."), key_pem)
    assert not verifies(signed, new_key(1024))  # another key's record does not check it


@pytest.mark.db
def test_mail_through_the_relay_is_signed(engine: Engine, key_pem: bytes, key_file: Path) -> None:
    relay = RawRelay()
    relay.controller.start()
    try:
        settings = delivery_settings(
            str(engine.url),
            relay,  # type: ignore[arg-type]
            dkim_selector="pbmserv",
            dkim_key_file=key_file,
        )
        enqueue(engine, settings, ["alice@example.org", "bob@example.org"])
        asyncio.run(deliver_all_due(session_factory(engine), settings))
    finally:
        relay.controller.stop()
    assert len(relay.received) == 2
    assert all(verifies(raw, key_pem) for raw in relay.received)
    signature = relay.received[0].split(b"\r\n\r\n")[0]
    assert b"d=games.example.org" in signature and b"s=pbmserv" in signature


@pytest.mark.db
def test_spooled_mail_is_signed_too(engine: Engine, key_pem: bytes, tmp_path: Path) -> None:
    key_file = tmp_path / "dkim.pem"
    key_file.write_bytes(key_pem)
    settings = delivery_settings(
        str(engine.url),
        None,
        spool=tmp_path / "spool",
        dkim_selector="pbmserv",
        dkim_key_file=key_file,
        dkim_domain=DOMAIN,
    )
    enqueue(engine, settings, ["alice@example.org"])
    asyncio.run(deliver_all_due(session_factory(engine), settings))
    [spooled] = list((tmp_path / "spool" / "new").iterdir())
    assert verifies(spooled.read_bytes(), key_pem)


@pytest.mark.db
def test_an_unreadable_key_keeps_the_mail_queued_rather_than_unsigned(
    engine: Engine, tmp_path: Path
) -> None:
    relay = RawRelay()
    relay.controller.start()
    try:
        settings = delivery_settings(
            str(engine.url),
            relay,  # type: ignore[arg-type]
            dkim_selector="pbmserv",
            dkim_key_file=tmp_path / "missing.pem",
        )
        enqueue(engine, settings, ["alice@example.org"])
        asyncio.run(deliver_all_due(session_factory(engine), settings))
    finally:
        relay.controller.stop()
    assert relay.received == []
    [row] = rows(engine)
    assert row.status == "pending" and "cannot read the DKIM key" in (row.last_error or "")


def test_keygen_makes_a_private_key_and_prints_the_records(tmp_path: Path) -> None:
    key = tmp_path / "dkim.pem"
    args = ["dkim", "keygen", "--key-file", str(key), "--domain", DOMAIN, "--bits", "1024"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_")}
    made = run_pbmserv(args, env)
    assert made.returncode == 0, made.stderr
    assert key.stat().st_mode & 0o777 == 0o600
    printed = made.stdout.decode()
    record = public_key_record(key.read_bytes())
    # The zone line's strings joined are the record that verifies the key's signatures.
    [dkim_line] = [line for line in printed.splitlines() if "._domainkey." in line]
    assert dkim_line.startswith(f"pbmserv._domainkey.{DOMAIN}. 3600 IN TXT ")
    joined = "".join(dkim_line.split(" IN TXT ", 1)[1].split('"')[1::2])
    assert joined == record
    assert f'_dmarc.{DOMAIN}. 3600 IN TXT "v=DMARC1;' in printed
    assert f'{DOMAIN}. 3600 IN TXT "v=spf1' in printed
    signed = DkimSigner("pbmserv", DOMAIN, key.read_bytes()).sign(
        b"From: pbmserv@games.example.org\n\nhello\n"
    )
    assert verifies(signed, key.read_bytes())
    # A second run never overwrites the key the published record belongs to.
    again = run_pbmserv(args, env)
    assert again.returncode != 0 and b"exists" in again.stderr


def test_every_txt_string_fits_the_dns_limit(key_pem: bytes) -> None:
    for record in dns_records("pbmserv", DOMAIN, key_pem):
        strings = record.zone_line().split(" IN TXT ", 1)[1].split('"')[1::2]
        assert all(len(text) <= 255 for text in strings)
        assert "".join(strings) == record.value
