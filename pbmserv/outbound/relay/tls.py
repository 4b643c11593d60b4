"""Opening the conversation with the relay: TLS as Postfix's SMTP client does it, then AUTH.

``relay_tls`` follows Postfix's ``smtp_tls_security_level``:

- ``may``: STARTTLS when the relay offers it, its certificate not checked (opportunistic: a
  stock local Postfix has a self-signed certificate for a name that is not 127.0.0.1). A relay
  whose TLS handshake fails (a TLS error, or the connection dropped or stalled in it) is tried
  once more in plain text, as Postfix does.
- ``starttls``: STARTTLS required, the certificate checked against ``relay_tls_server_name``
  (default: the relay's host) with ``relay_ca_file`` (default: the system's CAs).
- ``tls``: TLS from the first byte (a provider's submission port 465), checked the same way.
- ``none``: plain text.

SMTP AUTH is sent only inside TLS: a password never crosses the wire in clear, and with one
mechanism per connection (PLAIN, else LOGIN, else CRAM-MD5): a wrong password costs one failed
login, not one per mechanism. The connections a process opens at once log in one after
another, and a refusal answers those that waited for it: one failed login, however many
connections. A login the relay refuses for good (a 5xx reply to AUTH, such as 535) raises
:class:`RelayLoginRefused`; the outbox is then held (pbmserv.outbound.relay.hold).

The client says EHLO with ``Settings.ehlo_hostname`` (the host's own name is often "localhost").
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import aiosmtplib

from pbmserv.config import Settings

SMTP_TIMEOUT_SECONDS = 60


class RelayRefused(Exception):
    """The relay cannot be used as configured (no TLS where it is required, a certificate
    that does not check out, AUTH refused): mail waits, and the message says what to change."""


class RelayLoginRefused(RelayRefused):
    """The relay refused our login for good (535: a wrong user name or password): trying again
    with the same credentials would only lock the account or get the host banned."""

    def __init__(self, reply: str) -> None:
        super().__init__(f"the relay refused the login: {reply}")
        self.reply = reply


class _HandshakeFailed(Exception):
    """STARTTLS went wrong at a ``may`` relay: the caller tries again in plain text."""


#: The AUTH mechanisms used, the first the relay offers: exactly one a connection.
AUTH_MECHANISMS = ("plain", "login", "cram-md5")


@dataclass(frozen=True)
class RelayPlan:
    """How to reach the relay: where, at which TLS level, checked against which name."""

    host: str
    port: int
    level: str
    ehlo_name: str
    server_name: str
    ca_file: Path | None
    username: str | None
    password: str | None

    @classmethod
    def of(cls, settings: Settings) -> RelayPlan:
        host, port = settings.relay_host_port  # type: ignore[misc]
        return cls(
            host=host,
            port=port,
            level=settings.relay_tls,
            ehlo_name=settings.ehlo_hostname,
            server_name=settings.relay_tls_server_name or host,
            ca_file=settings.relay_ca_file,
            username=settings.relay_username,
            password=settings.relay_password,
        )

    @property
    def verifies(self) -> bool:
        return self.level in ("starttls", "tls")

    def context(self) -> ssl.SSLContext:
        return _context(self.verifies, str(self.ca_file) if self.ca_file else None)


@lru_cache(maxsize=8)
def _context(verify: bool, ca_file: str | None) -> ssl.SSLContext:
    """One context per kind, shared by every connection (loading CAs costs milliseconds)."""
    if not verify:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    return ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file)


async def open_relay(settings: Settings) -> aiosmtplib.SMTP:
    """A connected client that has said EHLO (over TLS where the level asks for it) and
    logged in if a user name is set; raises on any failure, the client closed."""
    plan = RelayPlan.of(settings)
    try:
        return await _open(plan, tls=plan.level != "none")
    except ssl.SSLError:
        if plan.level != "may":
            raise
    except _HandshakeFailed:
        pass
    # Opportunistic TLS that fails its handshake: plain text, as Postfix's "may" does.
    return await _open(plan, tls=False)


async def _open(plan: RelayPlan, tls: bool) -> aiosmtplib.SMTP:
    client = await _connect(plan, implicit=tls and plan.level == "tls")
    try:
        await client.ehlo()
        if tls and plan.level != "tls":
            try:
                await _starttls(client, plan)
            except (aiosmtplib.SMTPException, OSError) as error:
                # A relay that drops the connection (or stalls) in the handshake is no better
                # than one whose handshake fails: "may" goes on in plain text, the others wait.
                if plan.level != "may":
                    raise
                raise _HandshakeFailed from error
        await _login(client, plan)
    except BaseException:
        client.close()
        raise
    return client


async def _connect(plan: RelayPlan, implicit: bool) -> aiosmtplib.SMTP:
    if not implicit:
        client = aiosmtplib.SMTP(
            hostname=plan.host,
            port=plan.port,
            timeout=SMTP_TIMEOUT_SECONDS,
            start_tls=False,
            local_hostname=plan.ehlo_name,
        )
        await client.connect()
        return client
    # The TCP connection goes to the relay's host; the TLS handshake checks the name the
    # certificate must carry (they differ when relay_tls_server_name is set).
    sock = await asyncio.to_thread(
        socket.create_connection, (plan.host, plan.port), SMTP_TIMEOUT_SECONDS
    )
    client = aiosmtplib.SMTP(
        hostname=plan.server_name,
        sock=sock,
        timeout=SMTP_TIMEOUT_SECONDS,
        use_tls=True,
        start_tls=False,
        tls_context=plan.context(),
        local_hostname=plan.ehlo_name,
    )
    try:
        await client.connect()
    except BaseException:
        sock.close()
        raise
    return client


async def _starttls(client: aiosmtplib.SMTP, plan: RelayPlan) -> None:
    if not client.supports_extension("starttls"):
        if plan.level == "may":
            return
        raise RelayRefused(
            f"the relay {plan.host}:{plan.port} does not offer STARTTLS, which relay_tls = "
            f'"{plan.level}" requires'
        )
    await client.starttls(server_hostname=plan.server_name, tls_context=plan.context())
    await client.ehlo()  # the extensions offered inside TLS (AUTH often appears only now)


async def _login(client: aiosmtplib.SMTP, plan: RelayPlan) -> None:
    if plan.username is None:
        return
    if client.get_transport_info("sslcontext") is None:
        raise RelayRefused(
            f"relay_username is set but the connection to {plan.host}:{plan.port} is not "
            "encrypted: SMTP AUTH is only sent over TLS (relay_tls = starttls or tls)"
        )
    offered = [name for name in AUTH_MECHANISMS if name in client.server_auth_methods]
    if not offered:
        raise RelayRefused(
            f"the relay {plan.host}:{plan.port} offers no AUTH mechanism pbmserv speaks "
            f"({', '.join(AUTH_MECHANISMS).upper()})"
        )
    mechanism = offered[0]  # one only: every failed login counts against the account
    login = getattr(client, f"auth_{mechanism.replace('-', '')}")
    gate = _login_gate()
    async with gate.lock:  # the connections opened at once log in one after another
        if gate.refused is not None:  # refused in this process, and not released since
            raise RelayLoginRefused(gate.refused)
        try:
            await login(plan.username, plan.password or "")
        except aiosmtplib.SMTPAuthenticationError as error:
            if not 500 <= error.code < 600:  # 454: try later, retried with backoff as ever
                raise
            gate.refused = f"{error.code} {error.message}"
            raise RelayLoginRefused(gate.refused) from None


@dataclass
class _LoginGate:
    """The logins of one event loop's relay connections (a delivery process's): one at a
    time, and once one is refused, no other is tried until the hold it makes is released."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    refused: str | None = None  # the relay's reply
    hold_seen: bool = False


_LOGIN_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoginGate] = (
    weakref.WeakKeyDictionary()
)


def _login_gate() -> _LoginGate:
    loop = asyncio.get_running_loop()
    gate = _LOGIN_GATES.get(loop)
    if gate is None:
        gate = _LOGIN_GATES[loop] = _LoginGate()
    return gate


def note_hold(held: bool) -> None:
    """What the database says of the relay's hold (pbmserv.outbound.relay.hold): once a hold this
    process saw is gone (released, or new credentials), its logins are tried again. A refusal
    whose hold is not written yet still stops the connections that come meanwhile."""
    gate = _login_gate()
    if held:
        gate.hold_seen = True
    elif gate.hold_seen:
        gate.refused, gate.hold_seen = None, False


def explain(error: BaseException, settings: Settings) -> str:
    """The relay's failure in words an operator can act on (the exception alone for most)."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in text:
        plan = RelayPlan.of(settings)
        return (
            f"{text} (the relay's certificate was checked for {plan.server_name!r}: set "
            "relay_tls_server_name to the name on it, relay_ca_file to its CA, or relay_tls = "
            '"may" to encrypt without checking)'
        )
    return text
