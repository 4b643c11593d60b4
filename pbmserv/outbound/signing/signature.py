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
_LINESEP = b"\r\n"  # dkimpy's default, as the signer uses it
_PKCS1_SHA256 = (padding.PKCS1v15(), utils.Prehashed(hashes.SHA256()))
#: Runs of spaces: a literal start, which the regular expression engine finds fast (a class of
#: characters such as dkimpy's ``[\t ]+`` it tries at every byte).
_SPACES = re.compile(rb"  +")


def relaxed_body(body: bytes) -> bytes:
    """dkimpy's ``Relaxed.canonicalize_body(body)``, byte for byte: whitespace before a line end
    removed, each run of spaces and tabs made one space, empty lines at the end dropped. Tabs
    made spaces first, a run of either is a run of spaces."""
    body = body.replace(b"\t", b" ")
    # Past the last space (and the line end that may follow it) nothing changes: only the part
    # before is rewritten. A board mail's picture is 40 KB of base64 there, with no space.
    end = body.rfind(b" ") + 3
    if end > 2:
        head = _SPACES.sub(b" ", body[:end]).replace(b" \r\n", b"\r\n")
        body = head + body[end:]
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
        signed = b""
        for selector, key in keys:
            fields = _signature_fields(key, domain, selector, now, include, body_hash)
            hasher = hashlib.sha256()
            own = (_NAME, b" " + _blank_value(fields))
            dkim.hash_headers(hasher, _RELAXED, headers, include, own, dict(fields))
            signed += _signed_header(fields, _signature(key, hasher.digest()))
        return signed


def _signature_fields(
    key: PrivateKey,
    domain: bytes,
    selector: bytes,
    now: int,
    include: Sequence[bytes],
    body_hash: bytes,
) -> list[tuple[bytes, bytes]]:
    """The tags of one DKIM-Signature, in dkimpy's order, its b= a placeholder."""
    algorithm = b"rsa-sha256" if isinstance(key, rsa.RSAPrivateKey) else b"ed25519-sha256"
    return [
        (b"v", b"1"),
        (b"a", algorithm),
        (b"c", _RELAXED.to_c_value()),
        (b"d", domain),
        (b"i", b"@" + domain),
        (b"q", b"dns/txt"),
        (b"s", selector),
        (b"t", str(now).encode("ascii")),
        (b"h", b" : ".join(include)),
        (b"bh", body_hash),
        # As dkimpy: b= forced onto a line of its own, so that folding it once filled in
        # changes no whitespace before it.
        (b"b", b"0" * 60),
    ]


def _blank_value(fields: list[tuple[bytes, bytes]]) -> bytes:
    """The header's value as it is hashed (dkimpy's ``gen_header``): folded, b= emptied."""
    value = dkim.fold(b"; ".join(b"=".join(x) for x in fields), namelen=len(_NAME))
    return bytes(dkim.RE_BTAG.sub(b"\\1", value))


def _signature(key: PrivateKey, digest: bytes) -> bytes:
    if isinstance(key, rsa.RSAPrivateKey):
        return bytes(key.sign(digest, *_PKCS1_SHA256))
    return bytes(key.sign(digest))  # RFC 8463: Ed25519 over the SHA-256 of the headers


def _signed_header(fields: list[tuple[bytes, bytes]], signature: bytes) -> bytes:
    """The whole DKIM-Signature header, its b= filled in, folded as dkimpy folds it."""
    fields[-1] = (b"b", base64.b64encode(signature))
    value = b"; ".join(b"=".join(x) for x in fields) + _LINESEP
    return _NAME + b": " + dkim.fold(value, namelen=len(_NAME), linesep=_LINESEP)


def signature_headers(
    message: bytes,
    domain: str,
    keys: Sequence[tuple[str, PrivateKey]],
    now: int | None = None,
    crlf_only: bool = False,
) -> bytes:
    """The DKIM-Signature headers of ``message`` (CRLF line ends), one a (selector, key) in
    that order, for ``domain``, dated ``now`` (seconds; None: this second). ``crlf_only``:
    the caller vouches that every line end is a CRLF and no CR or LF stands alone."""
    when = int(time.time()) if now is None else now
    selected = [(selector.encode(), key) for selector, key in keys]
    lean = lean_signatures(message, domain.encode(), selected, when, crlf_only)
    if lean is not None:
        return lean
    return _Message(message).signatures(domain.encode(), selected, when)


# --- the lean path -------------------------------------------------------------------------------
# The server's own mail (CRLF line ends, a header of plain fields) signed without a dkimpy
# object: dkimpy's reading, header choice and relaxed canonicalisation redone for such a
# header alone, to the same bytes (tests/outbound/test_signing_identical.py), at a quarter
# of their cost; anything else goes the dkimpy way.

#: The headers signed (dkimpy's ``should_sign`` with the bulk headers added) and those signed
#: once more than they occur (its ``frozen_sign`` after ``add_frozen(BULK_HEADERS)``).
_SIGNED = frozenset(dkim.DKIM.SHOULD) | frozenset(BULK_HEADERS)
_FROZEN = frozenset(dkim.DKIM.FROZEN) | (frozenset(BULK_HEADERS) - frozenset(dkim.DKIM.SHOULD_NOT))
_CHOSEN = _SIGNED | _FROZEN
#: A field's name, as dkimpy's ``rfc822_parse`` reads it.
_FIELD_NAME = re.compile(rb"([\x21-\x7e]+?):")


def _plain_header(
    message: bytes, crlf_only: bool = False
) -> tuple[list[list[bytes]], bytes] | None:
    """``message``'s fields ([name, value with its CRLFs]) and body, as dkimpy reads them;
    None where this reading might differ from its own (the dkimpy way reads it then).
    ``crlf_only``: the caller has made every line end a CRLF, so it need not be checked (the
    check reads the whole message twice, a tenth of a board mail's signing)."""
    end = message.find(b"\r\n\r\n")
    if end <= 0:
        return None
    if not crlf_only and message.count(b"\n") != message.count(b"\r\n"):
        return None
    fields: list[list[bytes]] = []
    for line in message[:end].split(b"\r\n"):
        if line[:1] in (b" ", b"\t"):
            if not fields:
                return None
            fields[-1][1] += line + b"\r\n"
            continue
        name = _FIELD_NAME.match(line)
        if name is None:
            return None
        fields.append([name.group(1), line[name.end() :] + b"\r\n"])
    return fields, message[end + 4 :]


def _relaxed_value(value: bytes) -> bytes:
    """dkimpy's relaxed canonical field value: unfolded, runs of spaces and tabs made one
    space, stripped, a CRLF after it."""
    value = value.replace(b"\r\n", b"").replace(b"\n", b"").replace(b"\t", b" ")
    if b"  " in value:
        value = _SPACES.sub(b" ", value)
    return value.strip() + b"\r\n"


def _chosen(fields: list[list[bytes]], include: list[bytes]) -> list[tuple[bytes, bytes]]:
    """dkimpy's ``select_headers`` (for each name, the next occurrence from the bottom up),
    each field relaxed-canonical."""
    names = [name.lower() for name, _value in fields]
    chosen = []
    last: dict[bytes, int] = {}
    for wanted in include:
        index = last.get(wanted, len(fields))
        while index > 0:
            index -= 1
            if names[index] == wanted:
                chosen.append((wanted, _relaxed_value(fields[index][1])))
                break
        last[wanted] = index
    return chosen


def lean_signatures(
    message: bytes,
    domain: bytes,
    keys: Sequence[tuple[bytes, PrivateKey]],
    now: int,
    crlf_only: bool = False,
) -> bytes | None:
    """The DKIM-Signature headers ``_Message(message).signatures`` writes, for a message of
    plain fields with CRLF line ends; None for any other (left to that). ``crlf_only`` as
    for :func:`signature_headers`."""
    read = _plain_header(message, crlf_only)
    if read is None:
        return None
    fields, body = read
    include = [low for name, _value in fields if (low := name.lower()) in _CHOSEN]
    include += [name for name in include if name in _FROZEN]
    if b"from" not in include:
        return None  # dkimpy's refusal, said its way
    chosen = b"".join(name + b":" + value for name, value in _chosen(fields, include))
    body_hash = base64.b64encode(hashlib.sha256(relaxed_body(body)).digest())
    signed = b""
    for selector, key in keys:
        tags = _signature_fields(key, domain, selector, now, include, body_hash)
        # dkimpy hashes its own header last, relaxed, with no CRLF after it.
        own = b"dkim-signature:" + _relaxed_value(b" " + _blank_value(tags)).rstrip()
        signed += _signed_header(tags, _signature(key, hashlib.sha256(chosen + own).digest()))
    return signed
