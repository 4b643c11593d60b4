"""Mail out: the relay (TLS, login, EHLO), DKIM, the spool, retries and leases, bounces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pbmserv.config.server import ServerSettings


@dataclass(frozen=True)
class OutboundSettings(ServerSettings):
    """Built on the server's own settings: the name said in EHLO defaults to the domain of its
    ``address``."""

    relay: str | None = None
    relay_username: str | None = None
    relay_password: str | None = None
    # TLS to the relay, as Postfix's smtp_tls_security_level: "may" (STARTTLS when offered,
    # certificate not checked: opportunistic), "starttls" (STARTTLS required, certificate
    # checked), "tls" (implicit TLS from the first byte: port 465), "none" (plain). SMTP AUTH
    # is only ever done over TLS.
    relay_tls: str = "may"
    # The name the relay's certificate must carry (default: the relay's host name).
    relay_tls_server_name: str | None = None
    # CA certificates (PEM) to check the relay's certificate against (default: the system's).
    relay_ca_file: Path | None = None
    # The name pbmserv gives itself in EHLO to the relay (default: the domain of ``address``;
    # the host's own name is often "localhost", which providers score as spam).
    ehlo_name: str | None = None
    # DKIM signing of every outgoing mail: selector, PEM private key, signing domain (default:
    # the domain of ``address``). Unset selector or key: mail goes unsigned.
    dkim_selector: str | None = None
    dkim_key_file: Path | None = None
    dkim_domain: str | None = None
    # A second signature beside RSA's, Ed25519 (RFC 8463): its own selector and PEM private
    # key (`pbmserv dkim keygen --ed25519`). Both set, with the RSA ones: mail carries both.
    dkim_ed25519_selector: str | None = None
    dkim_ed25519_key_file: Path | None = None
    spool: Path = Path("spool")
    # SMTP connections `serve` delivers over at once: each message waits for the relay's
    # answers, so one connection alone leaves the server idle between them.
    delivery_connections: int = 4
    retry_base_seconds: float = 30.0
    retry_max_seconds: float = 3600.0
    # How long a server may hold outgoing mail it is sending before another (or it, after a
    # crash) takes it over.
    delivery_lease_seconds: float = 120.0
    # `serve` deletes sent mail queued more than this many days ago, once an hour; 0 keeps it.
    sent_retention_days: float = 30.0
    # Hard bounces (5.x.x delivery reports) after which an address counts as bouncing: it
    # gets no more mail but what its owner asks for from it, until mail comes from it again.
    bounce_limit: int = 3

    @property
    def relay_host_port(self) -> tuple[str, int] | None:
        if not self.relay:
            return None
        host, _, port = self.relay.rpartition(":")
        return (host or "127.0.0.1", int(port))

    @property
    def ehlo_hostname(self) -> str:
        """The name said in EHLO: ``ehlo_name``, else the domain of ``address``."""
        return self.ehlo_name or self.address.rpartition("@")[2] or "localhost"
