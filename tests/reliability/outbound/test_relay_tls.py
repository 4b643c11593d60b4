"""Outgoing mail through relays that speak TLS, as real MTAs and providers do.

Real aiosmtpd relays on 127.0.0.1 offering STARTTLS (a certificate from a test CA for
mx.games.example.org, or a self-signed one), implicit TLS (a provider's port 465) and AUTH;
the real database and delivery path. A relay offering STARTTLS stalled every mail before
``relay_tls`` existed: the client upgraded on its own and checked the certificate for 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword
from aiosmtpd.smtp import Session as SMTPSession
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sqlalchemy import Engine

from pbmserv.db.engine import session_factory
from pbmserv.outbound.delivery import deliver_all_due
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings, enqueue, rows
from tests.support import free_port

pytestmark = pytest.mark.db

RELAY_NAME = "mx.games.example.org"


class TLSRecordingHandler(ScriptedHandler):
    """A relay that remembers, per message, whether it came over TLS and who logged in."""

    def __init__(self) -> None:
        super().__init__()
        self.over_tls: list[bool] = []
        self.logins: list[tuple[bytes, bytes]] = []

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        transport = server.transport
        encrypted = session.ssl is not None or (
            transport is not None and transport.get_extra_info("ssl_object") is not None
        )
        with self.lock:
            self.over_tls.append(encrypted)
        return await super().handle_DATA(server, session, envelope)

    def authenticate(
        self, server: SMTP, session: SMTPSession, envelope: Envelope, mechanism: str, data: object
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        with self.lock:
            self.logins.append((data.login, data.password))
        return AuthResult(success=data.password == b"relay-secret-1")


class TLSRelay(Relay):
    """A relay with STARTTLS (``starttls``), implicit TLS (``implicit``) or neither."""

    def __init__(
        self,
        handler: TLSRecordingHandler,
        starttls: ssl.SSLContext | None = None,
        implicit: ssl.SSLContext | None = None,
        auth: bool = False,
    ) -> None:
        self.handler = handler
        options: dict[str, object] = {}
        if auth:
            # aiosmtpd counts only STARTTLS as TLS; a port-465 session is TLS from the start.
            options.update(authenticator=handler.authenticate, auth_require_tls=implicit is None)
        self.controller = Controller(
            handler,
            hostname="127.0.0.1",
            port=free_port(),
            tls_context=starttls,
            ssl_context=implicit,
            server_hostname=RELAY_NAME if implicit else None,
            **options,
        )
        if implicit is not None:  # the readiness check must trust the certificate too
            self.controller.ssl_context = implicit


@pytest.fixture(scope="module")
def test_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def ca_file(test_ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    test_ca.cert_pem.write_to_path(str(path))
    return path


def server_context(test_ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    test_ca.issue_cert(RELAY_NAME).configure_cert(context)
    return context


def self_signed_context(tmp_path: Path) -> ssl.SSLContext:
    """As Debian's snakeoil certificate: self-signed, for the machine's own name."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "debian.localdomain")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "snakeoil.pem", tmp_path / "snakeoil.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context


@pytest.fixture
def handler() -> Iterator[TLSRecordingHandler]:
    yield TLSRecordingHandler()


def deliver(engine: Engine, relay: Relay, count: int = 2, **changes: object) -> list[str]:
    """Queue ``count`` mails and run one delivery; the rows' statuses after it."""
    settings = delivery_settings(str(engine.url), relay, **changes)
    enqueue(engine, settings, [f"player{n}@example.org" for n in range(count)])
    asyncio.run(deliver_all_due(session_factory(engine), settings))
    return [row.status for row in rows(engine)]


def last_errors(engine: Engine) -> list[str]:
    return [row.last_error or "" for row in rows(engine)]


def test_opportunistic_tls_through_a_relay_with_a_self_signed_certificate(
    engine: Engine, handler: TLSRecordingHandler, tmp_path: Path
) -> None:
    """The default, "may", as a stock local Postfix needs: encrypted, not checked."""
    with TLSRelay(handler, starttls=self_signed_context(tmp_path)) as relay:
        assert deliver(engine, relay) == ["sent", "sent"]
    assert handler.over_tls == [True, True]


def test_opportunistic_tls_also_takes_a_relay_without_starttls(
    engine: Engine, handler: TLSRecordingHandler
) -> None:
    with TLSRelay(handler) as relay:
        assert deliver(engine, relay) == ["sent", "sent"]
    assert handler.over_tls == [False, False]


def test_required_starttls_checks_the_certificate_against_the_name_given(
    engine: Engine, handler: TLSRecordingHandler, test_ca: trustme.CA, ca_file: Path
) -> None:
    with TLSRelay(handler, starttls=server_context(test_ca)) as relay:
        statuses = deliver(
            engine,
            relay,
            relay_tls="starttls",
            relay_tls_server_name=RELAY_NAME,
            relay_ca_file=ca_file,
        )
    assert statuses == ["sent", "sent"]
    assert handler.over_tls == [True, True]


def test_a_certificate_for_another_name_defers_the_mail_and_says_what_to_set(
    engine: Engine, handler: TLSRecordingHandler, test_ca: trustme.CA, ca_file: Path
) -> None:
    """The trial's failure: a CA-signed certificate for mx.games.example.org, checked
    against 127.0.0.1. Required TLS keeps the mail queued and names the fix."""
    with TLSRelay(handler, starttls=server_context(test_ca)) as relay:
        statuses = deliver(engine, relay, relay_tls="starttls", relay_ca_file=ca_file)
    assert statuses == ["pending", "pending"]
    assert handler.messages == []
    assert all("relay_tls_server_name" in error for error in last_errors(engine))


def test_an_untrusted_certificate_is_refused_when_tls_is_required(
    engine: Engine, handler: TLSRecordingHandler, tmp_path: Path
) -> None:
    with TLSRelay(handler, starttls=self_signed_context(tmp_path)) as relay:
        statuses = deliver(engine, relay, relay_tls="starttls")
    assert statuses == ["pending", "pending"]
    assert handler.messages == []


def test_required_starttls_is_not_given_up_for_plain_text(
    engine: Engine, handler: TLSRecordingHandler
) -> None:
    with TLSRelay(handler) as relay:
        statuses = deliver(engine, relay, relay_tls="starttls")
    assert statuses == ["pending", "pending"]
    assert handler.messages == []
    assert all("does not offer STARTTLS" in error for error in last_errors(engine))


def test_implicit_tls_as_a_providers_port_465(
    engine: Engine, handler: TLSRecordingHandler, test_ca: trustme.CA, ca_file: Path
) -> None:
    with TLSRelay(handler, implicit=server_context(test_ca)) as relay:
        statuses = deliver(
            engine, relay, relay_tls="tls", relay_tls_server_name=RELAY_NAME, relay_ca_file=ca_file
        )
    assert statuses == ["sent", "sent"]
    assert handler.over_tls == [True, True]


def test_none_stays_in_plain_text_even_when_starttls_is_offered(
    engine: Engine, handler: TLSRecordingHandler, tmp_path: Path
) -> None:
    with TLSRelay(handler, starttls=self_signed_context(tmp_path)) as relay:
        assert deliver(engine, relay, relay_tls="none") == ["sent", "sent"]
    assert handler.over_tls == [False, False]


def test_auth_after_starttls_at_a_submission_server(
    engine: Engine, handler: TLSRecordingHandler, test_ca: trustme.CA, ca_file: Path
) -> None:
    with TLSRelay(handler, starttls=server_context(test_ca), auth=True) as relay:
        statuses = deliver(
            engine,
            relay,
            relay_tls="starttls",
            relay_tls_server_name=RELAY_NAME,
            relay_ca_file=ca_file,
            relay_username="games@example.net",
            relay_password="relay-secret-1",
        )
    assert statuses == ["sent", "sent"]
    assert handler.logins and handler.logins[0] == (b"games@example.net", b"relay-secret-1")


def test_the_password_never_goes_over_plain_text(
    engine: Engine, handler: TLSRecordingHandler
) -> None:
    with TLSRelay(handler) as relay:
        statuses = deliver(
            engine, relay, relay_username="games@example.net", relay_password="relay-secret-1"
        )
    assert statuses == ["pending", "pending"]
    assert handler.logins == []
    errors = last_errors(engine)
    assert all("only sent over TLS" in error for error in errors)
    assert not any("relay-secret-1" in error for error in errors)
