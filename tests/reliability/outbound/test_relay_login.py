"""The relay's login, TLS handshake and EHLO name, against real aiosmtpd relays.

- A wrong relay password cost two failed logins (PLAIN, then LOGIN) per attempt, retried with
  backoff for days: accounts get locked, hosts banned. Now one mechanism per connection, and a
  535 holds the outbox: no login until the credentials change or the operator releases it,
  the mail still queued (never failed, its attempts not counted), one ERROR line.
- ``relay_tls = "may"`` went on in plain text only after an ``ssl.SSLError``; a relay that
  drops the connection in the handshake kept the mail waiting for five days.
- The EHLO name was the host's ``getfqdn()`` ("localhost"); now ``ehlo_name``, by default the
  domain of the server's address.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from pathlib import Path

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine, select

from pbmserv.config import ConfigError, describe_settings, load_settings
from pbmserv.db.engine import session_factory
from pbmserv.db.models import RelayHold
from pbmserv.outbound.delivery import deliver_all_due, deliver_batch
from pbmserv.outbound.relay import hold as relay_hold
from tests.e2e.processes import environment, run_pbmserv
from tests.reliability.outbox import ScriptedHandler, delivery_settings, enqueue, rows
from tests.support import free_port

pytestmark = pytest.mark.db

RIGHT, WRONG = "relay-secret-1", "wrong-secret-9"
USER = "games@example.net"


@pytest.fixture(scope="module")
def tls_context() -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    trustme.CA().issue_cert("relay.test").configure_cert(context)
    return context


class LoginHandler(ScriptedHandler):
    """A submission server: every AUTH command it gets is counted; one password is right.
    It remembers the EHLO name each message came under."""

    def __init__(self) -> None:
        super().__init__()
        self.auth_attempts: list[str] = []
        self.ehlo_names: list[str] = []

    def authenticate(
        self, server: SMTP, session: SMTPSession, envelope: Envelope, mechanism: str, data: object
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        with self.lock:
            self.auth_attempts.append(mechanism)
        right = data.login == USER.encode() and data.password == RIGHT.encode()
        # Not handled: aiosmtpd answers "535 5.7.8 Authentication credentials invalid".
        return AuthResult(success=right, handled=False)

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        with self.lock:
            self.ehlo_names.append(str(session.host_name))
        return await super().handle_DATA(server, session, envelope)


class DroppingSTARTTLS(SMTP):
    """A relay that offers STARTTLS, says go ahead, and hangs up in the handshake."""

    dropped = 0

    async def smtp_STARTTLS(self, arg: str) -> None:
        type(self).dropped += 1
        await self.push("220 2.0.0 Ready to start TLS")
        assert self.transport is not None
        self.transport.close()


class LoginRelay:
    def __init__(self, handler: LoginHandler, **options: object) -> None:
        self.handler = handler
        self.controller = Controller(handler, hostname="127.0.0.1", port=free_port(), **options)

    def __enter__(self) -> LoginRelay:
        self.controller.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.controller.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.controller.port}"


class DroppingRelay(LoginRelay):
    def __init__(self, handler: LoginHandler, tls_context: ssl.SSLContext) -> None:
        context = tls_context

        class Dropping(Controller):
            def factory(self) -> SMTP:
                return DroppingSTARTTLS(self.handler, tls_context=context)

        self.handler = handler
        self.controller = Dropping(handler, hostname="127.0.0.1", port=free_port())


def deliver(engine: Engine, relay: LoginRelay, **changes: object) -> list[str]:
    settings = delivery_settings(str(engine.url), relay, **changes)  # type: ignore[arg-type]
    asyncio.run(deliver_all_due(session_factory(engine), settings))
    return [row.status for row in rows(engine)]


def holds(engine: Engine) -> list[RelayHold]:
    with session_factory(engine)() as session:
        return list(session.scalars(select(RelayHold)))


def admin(engine: Engine, tmp_path: Path, *args: str) -> object:
    env = environment(str(engine.url), tmp_path / "spool")
    result = run_pbmserv(["admin", "relay", *args, "--json"], env)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def test_a_wrong_password_costs_one_login_then_holds_the_mail_until_released(
    engine: Engine, tls_context: ssl.SSLContext, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    handler = LoginHandler()
    login = {"relay_tls": "may", "relay_username": USER, "relay_password": WRONG}
    enqueue(engine, delivery_settings(str(engine.url), None), ["a@example.org", "b@example.org"])
    caplog.set_level(logging.INFO, logger="pbmserv")
    with LoginRelay(handler, tls_context=tls_context, authenticator=handler.authenticate) as relay:
        # One AUTH command for the attempt (aiosmtplib tried PLAIN, then LOGIN).
        assert deliver(engine, relay, **login) == ["pending", "pending"]
        assert handler.auth_attempts == ["PLAIN"]
        # The mail waits as it was: not failed, its attempts not counted, the reason shown.
        for row in rows(engine):
            assert row.attempts == 0 and row.lease_owner is None
            assert (row.last_error or "").startswith("held: the relay refused the login: 535")
            assert "pbmserv admin relay release" in (row.last_error or "")
        [hold] = holds(engine)
        assert hold.username == USER and hold.reason.startswith("535")

        # Later runs (another process, days later): no login at all, the mail still queued.
        for _ in range(3):
            assert deliver(engine, relay, **login) == ["pending", "pending"]
        assert handler.auth_attempts == ["PLAIN"]
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1 and "outgoing mail is held" in errors[0].getMessage()

        # The operator sees it, and releases it: one login more, refused again, held again.
        [shown] = admin(engine, tmp_path, "status")  # type: ignore[misc]
        assert shown["relay"] == relay.address and shown["username"] == USER
        assert admin(engine, tmp_path, "release")["released"] == 1  # type: ignore[index]
        assert deliver(engine, relay, **login) == ["pending", "pending"]
        assert handler.auth_attempts == ["PLAIN", "PLAIN"]
        assert len(holds(engine)) == 1

        # The right password (changed credentials) releases it by itself: the mail goes.
        login["relay_password"] = RIGHT
        assert deliver(engine, relay, **login) == ["sent", "sent"]
        assert handler.auth_attempts == ["PLAIN", "PLAIN", "PLAIN"]
        assert holds(engine) == []
    # No secret anywhere the operator or others read.
    assert WRONG not in caplog.text and RIGHT not in caplog.text
    assert all(WRONG not in (r.last_error or "") for r in rows(engine))


def test_connections_opened_at_once_cost_one_failed_login_between_them(
    engine: Engine, tls_context: ssl.SSLContext
) -> None:
    """As `serve` opens delivery_connections (4) at once: one AUTH, the others wait for it."""
    handler = LoginHandler()
    queued = delivery_settings(str(engine.url), None)
    enqueue(engine, queued, [f"player{n}@example.org" for n in range(4)])
    with LoginRelay(handler, tls_context=tls_context, authenticator=handler.authenticate) as relay:
        settings = delivery_settings(
            str(engine.url),
            relay,
            relay_username=USER,
            relay_password=WRONG,  # type: ignore[arg-type]
        )

        async def four_at_once() -> None:
            factory = session_factory(engine)
            await asyncio.gather(*(deliver_batch(factory, settings, batch=1) for _ in range(4)))

        asyncio.run(four_at_once())
    assert handler.auth_attempts == ["PLAIN"]
    assert [r.status for r in rows(engine)] == ["pending"] * 4
    assert all(r.attempts == 0 for r in rows(engine)) and len(holds(engine)) == 1


def test_in_one_running_process_a_release_lets_the_next_delivery_log_in_once_more(
    engine: Engine, tls_context: ssl.SSLContext
) -> None:
    """`serve` keeps one event loop: the refusal it remembers ends with the hold."""
    handler = LoginHandler()
    enqueue(engine, delivery_settings(str(engine.url), None), ["a@example.org"])
    with LoginRelay(handler, tls_context=tls_context, authenticator=handler.authenticate) as relay:
        wrong = delivery_settings(
            str(engine.url),
            relay,
            relay_username=USER,
            relay_password=WRONG,  # type: ignore[arg-type]
        )
        factory = session_factory(engine)

        async def serving() -> list[int]:
            logins = []
            for _ in range(3):  # refused, then held
                await deliver_all_due(factory, wrong)
                logins.append(len(handler.auth_attempts))
            with engine.begin() as conn:
                assert relay_hold.release(conn) == 1
            await deliver_all_due(factory, wrong)  # once more, refused again
            logins.append(len(handler.auth_attempts))
            await deliver_all_due(factory, wrong)
            logins.append(len(handler.auth_attempts))
            return logins

        assert asyncio.run(serving()) == [1, 1, 1, 2, 2]
    assert [r.status for r in rows(engine)] == ["pending"] and len(holds(engine)) == 1


def test_may_goes_on_in_plain_text_when_the_relay_drops_the_handshake(
    engine: Engine, tls_context: ssl.SSLContext
) -> None:
    handler = LoginHandler()
    queued = delivery_settings(str(engine.url), None)
    DroppingSTARTTLS.dropped = 0
    with DroppingRelay(handler, tls_context) as relay:
        # "may": the handshake dropped, then the same relay again in plain text.
        enqueue(engine, queued, ["a@example.org", "b@example.org"])
        assert deliver(engine, relay, relay_tls="may") == ["sent", "sent"]
        assert DroppingSTARTTLS.dropped == 1 and len(handler.messages) == 2
        # Required TLS is never given up for plain text: the mail waits.
        enqueue(engine, queued, ["c@example.org"])
        assert deliver(engine, relay, relay_tls="starttls") == ["sent", "sent", "pending"]
    assert DroppingSTARTTLS.dropped == 2 and len(handler.messages) == 2


def test_the_ehlo_name_is_the_setting_or_the_domain_of_the_address(engine: Engine) -> None:
    handler = LoginHandler()
    with LoginRelay(handler) as relay:
        enqueue(engine, delivery_settings(str(engine.url), None), ["a@example.org"])
        assert deliver(engine, relay) == ["sent"]
        enqueue(engine, delivery_settings(str(engine.url), None), ["b@example.org"])
        assert deliver(engine, relay, ehlo_name="mx1.games.example.org") == ["sent", "sent"]
    assert handler.ehlo_names == ["games.example.org", "mx1.games.example.org"]


def test_ehlo_name_is_a_setting_shown_with_its_default(tmp_path: Path) -> None:
    settings = load_settings(environ={"PBMSERV_ADDRESS": "pbmserv@games.example.org"})
    assert settings.ehlo_name is None and settings.ehlo_hostname == "games.example.org"
    assert describe_settings(settings)["ehlo_name"] == "games.example.org"
    config = tmp_path / "pbmserv.toml"
    config.write_text('ehlo_name = "mx1.games.example.org"\n')
    assert load_settings(environ={}, config_file=config).ehlo_hostname == "mx1.games.example.org"
    for wrong in ("two words.example.org", "bad\r\nname", "-x"):
        with pytest.raises(ConfigError, match="ehlo_name must be a host name"):
            load_settings(environ={"PBMSERV_EHLO_NAME": wrong})
