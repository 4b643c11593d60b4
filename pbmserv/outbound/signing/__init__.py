"""DKIM signatures on outgoing mail (dkimpy), and the keys and DNS records they need.

Gmail and Yahoo (since 2024) want mail DKIM-signed for a domain aligned with its From. The
signature is made at delivery, on the bytes that leave (after the board picture is drawn), with
relaxed/relaxed canonicalisation so that a relay re-folding a header does not break it.
"""

from __future__ import annotations

import base64
import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import dkim
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pbmserv.config import Settings

_LINE_END = re.compile(rb"\r\n|\r|\n")
DEFAULT_KEY_BITS = 2048
#: The headers of bulk mail (see outbound.list_headers) that the signature must cover.
_BULK_HEADERS = (b"list-id", b"list-unsubscribe", b"list-unsubscribe-post", b"precedence")


class SigningError(Exception):
    """The DKIM key cannot be used: mail waits (unsigned mail would land in spam)."""


@dataclass(frozen=True)
class DkimSigner:
    selector: str
    domain: str
    key_pem: bytes

    def sign(self, raw: bytes) -> bytes:
        """``raw`` with a DKIM-Signature header on top (line ends made CRLF, as on the wire)."""
        message = _LINE_END.sub(b"\r\n", raw)
        signer = dkim.DKIM(message)
        # RFC 8058: both unsubscribe headers inside the signature, signed once more than they
        # occur ("oversigned") so that nobody on the way can add another; dkimpy's default
        # list has List-Unsubscribe but not List-Unsubscribe-Post.
        signer.should_sign.update(_BULK_HEADERS)
        signer.add_frozen(_BULK_HEADERS)
        signature = signer.sign(
            self.selector.encode(),
            self.domain.encode(),
            self.key_pem,
            canonicalize=(b"relaxed", b"relaxed"),
        )
        return signature + message


def signing_domain(settings: Settings) -> str:
    return (settings.dkim_domain or settings.address.rpartition("@")[2]).lower()


def signer_of(settings: Settings) -> DkimSigner | None:
    """The signer the settings ask for (None: DKIM is off); raises SigningError for a key that
    cannot be read or used."""
    if not settings.dkim_selector or settings.dkim_key_file is None:
        return None
    path = settings.dkim_key_file
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as error:
        raise SigningError(f"cannot read the DKIM key {path}: {error.strerror}") from None
    key = _read_key(str(path), stamp)  # read again only when the file changed (a new key)
    return DkimSigner(settings.dkim_selector, signing_domain(settings), key)


def key_file_exposure(path: Path) -> str | None:
    """Why the private key at ``path`` may be read by others, as ssh refuses a key that
    others can read; None when only this server may read it. Readable by its group is fine
    when that group is one this process runs in (the kit's root:pbmserv 0640)."""
    try:
        status = path.stat()
    except OSError:
        return None  # signer_of says why it cannot be read
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o007:
        return f"the DKIM key {path} is readable by every user (mode {mode:04o}): chmod o-rwx it"
    ours = {os.getegid(), *os.getgroups()}
    if mode & 0o070 and status.st_gid not in ours:
        return (
            f"the DKIM key {path} is readable by the group {status.st_gid}, not this server's "
            f"(mode {mode:04o}): chmod g-rwx it, or give it the server's group"
        )
    return None


@lru_cache(maxsize=4)
def _read_key(path: str, _stamp: int) -> bytes:
    try:
        pem = Path(path).read_bytes()
        key = serialization.load_pem_private_key(pem, password=None)
    except OSError as error:
        raise SigningError(f"cannot read the DKIM key {path}: {error.strerror}") from None
    except (ValueError, TypeError) as error:
        raise SigningError(f"the DKIM key {path} is not a PEM private key: {error}") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise SigningError(f"the DKIM key {path} is not an RSA key")
    # dkimpy reads the traditional (PKCS#1) form; convert whatever form the file has.
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def new_key(bits: int = DEFAULT_KEY_BITS) -> bytes:
    """A new RSA private key, PEM (PKCS#1)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def public_key_record(key_pem: bytes) -> str:
    """The DKIM TXT record's value for the public half of ``key_pem``."""
    key = serialization.load_pem_private_key(key_pem, password=None)
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "v=DKIM1; k=rsa; p=" + base64.b64encode(der).decode()


def _txt(value: str) -> str:
    """A TXT record's value as zone-file strings of at most 255 characters each."""
    chunks = [value[i : i + 255] for i in range(0, len(value), 255)]
    return " ".join(f'"{chunk}"' for chunk in chunks)


@dataclass(frozen=True)
class DnsRecord:
    name: str
    value: str
    why: str

    def zone_line(self) -> str:
        return f"{self.name}. 3600 IN TXT {_txt(self.value)}"


def dns_records(selector: str, domain: str, key_pem: bytes) -> list[DnsRecord]:
    """What to publish so that receivers accept the server's mail: DKIM, SPF and DMARC."""
    return [
        DnsRecord(
            f"{selector}._domainkey.{domain}",
            public_key_record(key_pem),
            "the public key that checks the server's DKIM signatures",
        ),
        DnsRecord(
            domain,
            "v=spf1 mx -all",
            "SPF: the hosts that may send mail for the domain (here its MX hosts; add "
            "ip4:ADDRESS or include:PROVIDER for a relay or provider that sends for it); "
            "merge with any SPF record the domain has (one per domain)",
        ),
        DnsRecord(
            f"_dmarc.{domain}",
            # p=none first, as the comment says; the reports go to postmaster@, which the
            # kit's Postfix examples accept and alias to a person (deploy/postfix/).
            f"v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:postmaster@{domain}",
            "DMARC: what receivers do with mail that fails both; p=none only asks for the "
            f"reports (to postmaster@{domain}): read them for a week or two, then p=quarantine",
        ),
    ]
