"""Mail in: the SMTP listener or the IMAP mailbox, what a message may be, and whom to trust."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InboundSettings:
    listen: str = "127.0.0.1:2525"
    # SMTP sessions at once; the next one is answered 421. 0: no limit.
    max_connections: int = 100
    max_message_bytes: int = 1_048_576
    # Messages per hour from one envelope sender, and in the name of one From address by
    # other envelope senders (see pbmserv.inbound.inbox); 0: no limit.
    rate_limit_per_hour: int = 300
    from_rate_limit_per_hour: int = 60
    # A copy of a message without a Message-ID that comes within this many seconds is a
    # retransmission; after it, the same bytes are a new message.
    dedupe_window_seconds: float = 300.0
    # Hosts (authserv-ids, comma-separated) whose Authentication-Results headers are trusted
    # (the receiving MTA's, on top of the message): a reply to a seat's reply address must then
    # have one that passes DMARC, or aligned DKIM or SPF, for its From domain (none: refused);
    # only such a From counts as an account's owner for the failed-login limit; a From they
    # say failed DMARC is not answered at all. Empty: the From address alone is checked.
    trusted_authserv_ids: str = ""
    # A hosted mailbox read by IMAP instead of an SMTP listener ("imaps://user@host/INBOX"),
    # its password (or XOAUTH2 token), and how often to look when the server has no IDLE.
    imap: str | None = None
    imap_password: str | None = None
    imap_poll_seconds: float = 30.0

    @property
    def listen_host(self) -> str:
        return self.listen.rsplit(":", 1)[0]

    @property
    def listen_port(self) -> int:
        return int(self.listen.rsplit(":", 1)[1])
