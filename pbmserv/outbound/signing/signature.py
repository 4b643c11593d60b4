"""The DKIM-Signature headers of one message, made at OpenSSL's cost.

dkimpy reads the message, chooses the headers to sign and canonicalises them and the body,
exactly as its own ``DKIM.sign`` does (relaxed/relaxed, the bulk headers oversigned); OpenSSL,
through the ``cryptography`` package, makes the signature over the very header hash dkimpy
would sign: RSA PKCS#1 v1.5 with SHA-256, and Ed25519 (RFC 8463) beside it where the operator
asks. dkimpy's own RSA is pure Python (about 9 ms a signature); OpenSSL's takes a third of a
millisecond. PKCS#1 v1.5 and Ed25519 are deterministic, so each header is, byte for byte, the
one dkimpy alone would write (tests/outbound/test_signing_identical.py).

Two of dkimpy's steps are done here at a fraction of their cost, to the same bytes (proven on
any input by tests/outbound/test_signing_identical.py): reading the message (dkimpy splits the
whole of it into lines; only its header needs reading) and the relaxed canonicalisation of the
body (dkimpy's two regular expressions try every byte of it, most of them a picture's base64
with no space to change). On a 41 KB board mail they were two thirds of the signer's time.

Nothing global is changed: each message is read by its own :class:`_Message`, so that any
number of threads may sign at once.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import Sequence

import dkim
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa, utils
from dkim.canonicalization import (
    CanonicalizationPolicy,
    correct_empty_body,
    strip_trailing_lines,
)

from pbmserv.outbound.signing.keys import PrivateKey

#: The headers of bulk mail (see outbound.list_headers) that the signature must cover.
BULK_HEADERS = (b"list-id", b"list-unsubscribe", b"list-unsubscribe-post", b"precedence")
_RELAXED = CanonicalizationPolicy.from_c_value(b"relaxed/relaxed")
_NAME = b"DKIM-Signature"
_PKCS1_SHA256 = (padding.PKCS1v15(), utils.Prehashed(hashes.SHA256()))
#: Runs of spaces: a literal start, which the regular expression engine finds fast (a class of
#: characters such as dkimpy's ``[\t ]+`` it tries at every byte).
_SPACES = re.compile(rb"  +")


def relaxed_body(body: bytes) -> bytes:
    """dkimpy's ``Relaxed.canonicalize_body(body)``, byte for byte: whitespace before a line end
    removed, each run of spaces and tabs made one space, empty lines at the end dropped. Tabs
    made spaces first, a run of either is a run of spaces."""
    body = _SPACES.sub(b" ", body.replace(b"\t", b" ")).replace(b" \r\n", b"\r\n")
    return bytes(correct_empty_body(strip_trailing_lines(body)))


class _Message(dkim.DKIM):  # dkimpy has no type information: an Any base
    """One message as dkimpy reads it for signing: its headers and body, and which headers
    a signature covers."""

    def __init__(self, message: bytes) -> None:
        super().__init__(message)
        # RFC 8058: both unsubscribe headers inside the signature, signed once more than they
        # occur ("oversigned") so that nobody on the way can add another; dkimpy's default
        # list has List-Unsubscribe but not List-Unsubscribe-Post.
        self.should_sign.update(BULK_HEADERS)
        self.add_frozen(BULK_HEADERS)

    def set_message(self, message: bytes) -> None:
        """dkimpy's reading of ``message``, its header alone parsed where the result is the
        same: every line end a CRLF (dkimpy makes a lone LF one) and a header before the first
        empty line. The body is then the bytes after that line, as dkimpy would join them."""
        end = message.find(b"\r\n\r\n")
        if (
            end <= 0
            or message.startswith(b"\r\n")
            or message.count(b"\n") != message.count(b"\r\n")
        ):
            super().set_message(message)
            return
        super().set_message(message[: end + 4])
        self.body = message[end + 4 :]

    def signatures(
        self, domain: bytes, keys: Sequence[tuple[bytes, PrivateKey]], now: int
    ) -> bytes:
        """One DKIM-Signature header a (selector, key), in that order, as dkimpy's
        ``DKIM.sign(selector, domain, key, canonicalize=(b"relaxed", b"relaxed"))`` writes it
        (each over the message alone, not over the others)."""
        include = tuple(name.lower() for name in self.default_sign_headers())
        if b"from" not in include:
            raise dkim.ParameterError("The From header field MUST be signed")
        # One body hash and one canonical copy of the headers for every signature: both
        # algorithms hash with SHA-256.
        body_hash = base64.b64encode(hashlib.sha256(relaxed_body(self.body)).digest())
        headers = _RELAXED.canonicalize_headers(self.headers)
        common = [
            (b"c", _RELAXED.to_c_value()),
            (b"d", domain),
            (b"i", b"@" + domain),
            (b"q", b"dns/txt"),
        ]
        signed = b""
        for selector, key in keys:
            algorithm = b"rsa-sha256" if isinstance(key, rsa.RSAPrivateKey) else b"ed25519-sha256"
            fields = [
                (b"v", b"1"),
                (b"a", algorithm),
                *common,
                (b"s", selector),
                (b"t", str(now).encode("ascii")),
                (b"h", b" : ".join(include)),
                (b"bh", body_hash),
                # As dkimpy: b= forced onto a line of its own, so that folding it once filled
                # in changes no whitespace before it.
                (b"b", b"0" * 60),
            ]
            signed += self._header(fields, include, headers, key)
        return signed

    def _header(
        self,
        fields: list[tuple[bytes, bytes]],
        include: tuple[bytes, ...],
        headers: list[tuple[bytes, bytes]],
        key: PrivateKey,
    ) -> bytes:
        """dkimpy's ``gen_header`` with OpenSSL's signature in the place of dkimpy's."""
        value = dkim.fold(b"; ".join(b"=".join(x) for x in fields), namelen=len(_NAME))
        value = dkim.RE_BTAG.sub(b"\\1", value)
        hasher = hashlib.sha256()
        dkim.hash_headers(hasher, _RELAXED, headers, include, (_NAME, b" " + value), dict(fields))
        digest = hasher.digest()
        if isinstance(key, rsa.RSAPrivateKey):
            signature = key.sign(digest, *_PKCS1_SHA256)
        else:
            signature = key.sign(digest)  # RFC 8463: Ed25519 over the SHA-256 of the headers
        fields[-1] = (b"b", base64.b64encode(signature))
        value = b"; ".join(b"=".join(x) for x in fields) + self.linesep
        return _NAME + b": " + dkim.fold(value, namelen=len(_NAME), linesep=self.linesep)


def signature_headers(
    message: bytes,
    domain: str,
    keys: Sequence[tuple[str, PrivateKey]],
    now: int | None = None,
) -> bytes:
    """The DKIM-Signature headers of ``message`` (CRLF line ends), one a (selector, key) in
    that order, for ``domain``, dated ``now`` (seconds; None: this second)."""
    when = int(time.time()) if now is None else now
    return _Message(message).signatures(
        domain.encode(), [(selector.encode(), key) for selector, key in keys], when
    )
