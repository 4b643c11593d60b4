"""What the signing tests check a signed mail with: dkimpy's verifier over a stub DNS (the
records the operator would publish), and dkimpy's own signer for the header it would write."""

from __future__ import annotations

import base64
import re
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest import mock

import dkim
import nacl.signing  # noqa: F401  # dkimpy checks (and makes) Ed25519 signatures with PyNaCl
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from pbmserv.outbound.signing import public_key_record
from pbmserv.outbound.signing.keys import private_key
from pbmserv.outbound.signing.signature import BULK_HEADERS

DOMAIN = "games.example.org"
#: A DKIM-Signature header at the top of a message, with its folded lines.
_SIGNATURE = re.compile(rb"\ADKIM-Signature:[^\r\n]*\r\n(?:[ \t][^\r\n]*\r\n)*")


def dns(records: dict[str, bytes]) -> Callable[..., bytes]:
    """A stub of dkimpy's TXT lookup: each selector's record for DOMAIN, nothing else."""
    table = {
        f"{s}._domainkey.{DOMAIN}.".encode(): public_key_record(k).encode()
        for s, k in records.items()
    }

    def lookup(name: bytes, timeout: int = 5) -> bytes:
        return table.get(name, b"")

    return lookup


def verified(raw: bytes, records: dict[str, bytes]) -> list[bool]:
    """Whether each DKIM-Signature of ``raw``, top first, checks with dkimpy's verifier."""
    checker = dkim.DKIM(raw)
    count = sum(1 for name, _ in checker.headers if name.lower() == b"dkim-signature")
    return [_checks(checker, index, records) for index in range(count)]


def _checks(checker: dkim.DKIM, index: int, records: dict[str, bytes]) -> bool:
    try:
        return bool(checker.verify(index, dnsfunc=dns(records)))
    except dkim.DKIMException:  # as dkim.verify: a failed check, said why
        return False


def split_signatures(raw: bytes) -> tuple[list[bytes], bytes]:
    """The DKIM-Signature headers on top of ``raw``, and the message under them."""
    headers = []
    while found := _SIGNATURE.match(raw):
        headers.append(found.group(0))
        raw = raw[found.end() :]
    return headers, raw


def timestamp(header: bytes) -> int:
    found = re.search(rb"\bt=(\d+);", header)
    assert found is not None, header
    return int(found.group(1))


@contextmanager
def dkimpy_clock(when: int) -> Iterator[None]:
    """dkimpy's clock stopped at ``when`` (its ``t=``), for its signer and verifier alone."""
    with mock.patch.object(dkim, "time", types.SimpleNamespace(time=lambda: float(when))):
        yield


def dkimpy_header(message: bytes, selector: str, key_pem: bytes, when: int) -> bytes:
    """The DKIM-Signature header dkimpy alone writes for ``message`` (CRLF line ends), with the
    server's choices (relaxed/relaxed, the bulk headers oversigned), dated ``when``."""
    signer = dkim.DKIM(message)
    signer.should_sign.update(BULK_HEADERS)
    signer.add_frozen(BULK_HEADERS)
    loaded = private_key(key_pem)
    if isinstance(loaded, ed25519.Ed25519PrivateKey):  # dkimpy takes the seed, in base64
        raw = serialization.Encoding.Raw, serialization.PrivateFormat.Raw
        key = base64.b64encode(loaded.private_bytes(*raw, serialization.NoEncryption()))
        algorithm = b"ed25519-sha256"
    else:  # dkimpy reads PKCS#1 alone
        pkcs1 = serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL
        key = loaded.private_bytes(*pkcs1, serialization.NoEncryption())
        algorithm = b"rsa-sha256"
    with dkimpy_clock(when):
        return bytes(
            signer.sign(
                selector.encode(),
                DOMAIN.encode(),
                key,
                signature_algorithm=algorithm,
                canonicalize=(b"relaxed", b"relaxed"),
            )
        )
