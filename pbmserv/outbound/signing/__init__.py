"""DKIM signatures on outgoing mail, and the keys and DNS records they need.

Gmail and Yahoo (since 2024) want mail DKIM-signed for a domain aligned with its From. The
signature is made at delivery, on the bytes that leave (after the board picture is drawn), with
relaxed/relaxed canonicalisation so that a relay re-folding a header does not break it: dkimpy
reads and canonicalises, OpenSSL signs (``signature``). RSA always; Ed25519 (RFC 8463) beside
it where the operator sets a second selector and key (dual signing: a receiver that knows
Ed25519 may check either, the others check RSA). ``keys`` makes, reads and guards the keys,
``records`` says what to publish in the DNS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pbmserv.config import Settings
from pbmserv.outbound.signing.keys import (
    DEFAULT_KEY_BITS,
    ED25519,
    RSA,
    SigningError,
    key_file_exposure,
    new_ed25519_key,
    new_key,
    private_key,
    read_key,
)

if TYPE_CHECKING:
    from pbmserv.outbound.signing.records import DnsRecord

#: Imported when first asked for (PEP 562): they load dkimpy, dnspython and OpenSSL's
#: bindings, which a process that never signs (and never prints DNS records) does without.
_FROM_RECORDS = {"DnsRecord", "dkim_record", "dns_records", "public_key_record"}


def __getattr__(name: str) -> Any:
    if name in _FROM_RECORDS:
        from pbmserv.outbound.signing import records

        return getattr(records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_KEY_BITS",
    "DkimSigner",
    "DnsRecord",
    "SigningError",
    "dkim_record",
    "dns_records",
    "key_file_exposure",
    "new_ed25519_key",
    "new_key",
    "public_key_record",
    "signer_of",
    "signing_domain",
]

_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class DkimSigner:
    """The server's signer: an RSA key under ``selector``, and an Ed25519 key under
    ``ed25519_selector`` beside it where both of those are given."""

    selector: str
    domain: str
    key_pem: bytes
    ed25519_selector: str | None = None
    ed25519_key_pem: bytes | None = None

    def sign(self, raw: bytes) -> bytes:
        """``raw`` with its DKIM-Signature headers on top (RSA's first), line ends made CRLF,
        as on the wire."""
        # The server's own mail has LF line ends: a plain replace, a tenth of the pattern's time.
        from pbmserv.outbound.signing.signature import signature_headers

        message = raw.replace(b"\n", b"\r\n") if b"\r" not in raw else _LINE_END.sub(b"\r\n", raw)
        keys = [(self.selector, private_key(self.key_pem))]
        if self.ed25519_selector and self.ed25519_key_pem is not None:
            keys.append((self.ed25519_selector, private_key(self.ed25519_key_pem)))
        # Every line end is a CRLF now: the signer need not read the message to be sure.
        return signature_headers(message, self.domain, keys, crlf_only=True) + message

    def records(self) -> list[DnsRecord]:
        """The DNS records to publish for this signer's keys (and SPF, DMARC)."""
        from pbmserv.outbound.signing.records import dns_records

        ed25519 = None
        if self.ed25519_selector and self.ed25519_key_pem is not None:
            ed25519 = (self.ed25519_selector, self.ed25519_key_pem)
        return dns_records(self.selector, self.domain, self.key_pem, ed25519)


def signing_domain(settings: Settings) -> str:
    return (settings.dkim_domain or settings.address.rpartition("@")[2]).lower()


def signer_of(settings: Settings) -> DkimSigner | None:
    """The signer the settings ask for (None: DKIM is off); raises SigningError for a key that
    cannot be read or used. Each key file is read again only when it changed (a new key)."""
    if not settings.dkim_selector or settings.dkim_key_file is None:
        return None
    key = read_key(settings.dkim_key_file, RSA)
    ed25519_selector, ed25519_key = settings.dkim_ed25519_selector, None
    if ed25519_selector and settings.dkim_ed25519_key_file is not None:
        ed25519_key = read_key(settings.dkim_ed25519_key_file, ED25519)
    return DkimSigner(
        settings.dkim_selector, signing_domain(settings), key, ed25519_selector, ed25519_key
    )
