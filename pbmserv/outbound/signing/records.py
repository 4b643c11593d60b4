"""The DNS records an operator publishes for the server's mail: the DKIM public keys (RSA, and
Ed25519 beside it where it signs with both), SPF and DMARC."""

from __future__ import annotations

import base64
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519


def public_key_record(key_pem: bytes) -> str:
    """The DKIM TXT record's value for the public half of ``key_pem``: RSA's as its DER
    (SubjectPublicKeyInfo), Ed25519's as its 32 raw bytes (RFC 8463)."""
    key = serialization.load_pem_private_key(key_pem, password=None)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return "v=DKIM1; k=ed25519; p=" + base64.b64encode(raw).decode()
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


def dkim_record(selector: str, domain: str, key_pem: bytes) -> DnsRecord:
    """The DKIM record of one selector's key."""
    value = public_key_record(key_pem)
    why = (
        "the Ed25519 public key that checks the server's second DKIM signature (RFC 8463)"
        if value.startswith("v=DKIM1; k=ed25519;")
        else "the public key that checks the server's DKIM signatures"
    )
    return DnsRecord(f"{selector}._domainkey.{domain}", value, why)


def dns_records(
    selector: str, domain: str, key_pem: bytes, ed25519_key: tuple[str, bytes] | None = None
) -> list[DnsRecord]:
    """What to publish so that receivers accept the server's mail: DKIM (the RSA key's
    record, and ``ed25519_key``'s, a selector and its PEM, where it signs with both), SPF
    and DMARC."""
    keys = [dkim_record(selector, domain, key_pem)]
    if ed25519_key is not None:
        ed25519_selector, ed25519_pem = ed25519_key
        keys.append(dkim_record(ed25519_selector, domain, ed25519_pem))
    return [
        *keys,
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
