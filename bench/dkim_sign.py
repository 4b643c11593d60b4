"""What a DKIM signature costs: dkimpy alone against the server's signer (issue 52).

Run ``python bench/dkim_sign.py [SIGNATURES]`` (200 by default). Two real mails, composed as the
server composes them and finished as delivery finishes them: an 11x11 Chameleon board mail in
mid-game with its picture drawn (about 41 KB), and the same mail as text alone. For each, the
CPU time (``time.process_time``) per signature, as the mean over SIGNATURES signatures of the
same mail (each a whole signing: reading the message, canonicalising, hashing, signing):

- ``dkimpy``: dkimpy's ``DKIM.sign`` as the server called it before (relaxed/relaxed, the bulk
  headers oversigned), its RSA in pure Python; for Ed25519, dkimpy with PyNaCl (skipped
  where PyNaCl is not installed);
- ``server``: ``pbmserv.outbound.signing``: dkimpy canonicalises, OpenSSL signs;
- ``OpenSSL``: the signature alone (of one SHA-256 digest), what the server's row cannot go
  below; ``body``: the server's canonicalising and hashing of the body alone, all that a cache
  of body hashes could save (and no two mails share a body: each MIME boundary is random, and
  each text names its reader).

Rows: RSA-2048, Ed25519, and both (the dual signing of a server with both keys). Ratio is
dkimpy's time over the server's.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

try:
    import pbmserv  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dkim
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, utils

from pbmserv.config import Settings
from pbmserv.games import find_game
from pbmserv.games.testing import random_playout
from pbmserv.outbound.compose import build_message
from pbmserv.outbound.picture_parts import finish_pictures
from pbmserv.outbound.signing import new_ed25519_key, new_key
from pbmserv.outbound.signing.keys import private_key
from pbmserv.outbound.signing.signature import BULK_HEADERS, relaxed_body, signature_headers

DOMAIN = "games.example.org"
SIGNATURES = 200


def mails() -> dict[str, bytes]:
    """The two mails, CRLF as they are signed."""
    game = find_game("chameleon")
    assert game is not None
    options = game.validate_options({"size": "11"}, game.SPEC.players)
    states = list(random_playout(game, options, 1, require_end=False).states)
    state = states[len(states) // 2]
    facts: dict[str, Any] = {
        "settings": Settings(confirm_addresses=False, address=f"pbmserv@{DOMAIN}"),
        "to": "bob@example.org",
        "subject": "chameleon board 1: your move",
        "body": f"alice (Vert) played.\n\n{game.render(state, 0, ['alice', 'bob'])}\n",
        "now": datetime(2030, 1, 1, tzinfo=UTC),
        "auto_submitted": "auto-generated",
        "reply_to": f"pbmserv+b1-s0-token@{DOMAIN}",
    }
    with_picture = finish_pictures(build_message(picture=game.svg(state, 0), **facts).raw)
    text = build_message(**facts).raw
    return {
        "board mail with picture": with_picture.replace(b"\n", b"\r\n"),
        "text mail": text.replace(b"\n", b"\r\n"),
    }


def cpu_ms(call: Callable[[], object], count: int) -> float:
    """CPU milliseconds per call, the mean over ``count`` calls (after one to warm up)."""
    call()
    start = time.process_time()
    for _ in range(count):
        call()
    return (time.process_time() - start) / count * 1e3


def dkimpy_sign(message: bytes, selector: bytes, key: bytes, algorithm: bytes) -> bytes:
    """dkimpy alone, as the server signed before (one signature)."""
    signer = dkim.DKIM(message)
    signer.should_sign.update(BULK_HEADERS)
    signer.add_frozen(BULK_HEADERS)
    return bytes(
        signer.sign(
            selector,
            DOMAIN.encode(),
            key,
            signature_algorithm=algorithm,
            canonicalize=(b"relaxed", b"relaxed"),
        )
    )


def both(*calls: Callable[[], object]) -> None:
    for call in calls:
        call()


def has_pynacl() -> bool:
    try:
        import nacl.signing  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else SIGNATURES
    rsa_pem, ed_pem = new_key(), new_ed25519_key()
    rsa_key, ed_key = private_key(rsa_pem), private_key(ed_pem)
    assert isinstance(ed_key, ed25519.Ed25519PrivateKey)
    raw = serialization.Encoding.Raw, serialization.PrivateFormat.Raw
    ed_seed = base64.b64encode(ed_key.private_bytes(*raw, serialization.NoEncryption()))
    digest = hashlib.sha256(b"headers").digest()
    pkcs1 = padding.PKCS1v15(), utils.Prehashed(hashes.SHA256())
    openssl = {
        "RSA-2048": lambda: rsa_key.sign(digest, *pkcs1),
        "Ed25519": lambda: ed_key.sign(digest),
    }
    openssl["both"] = partial(both, openssl["RSA-2048"], openssl["Ed25519"])
    nacl = has_pynacl()
    print(f"CPU ms a signed mail, the mean of {count} signatures (time.process_time)")
    print(
        f"{'mail':<25}{'bytes':>7}  {'signature':<10}{'dkimpy':>8}{'server':>8}{'ratio':>7}"
        f"{'OpenSSL':>9}{'body':>7}"
    )
    rsa_alone = [("pbmserv", rsa_key)]
    ed_alone = [("pbmserv-ed25519", ed_key)]
    for name, message in mails().items():
        body = dkim.DKIM(message).body
        # As DkimSigner.sign calls it: it has just made every line end a CRLF.
        server = partial(signature_headers, message, DOMAIN, crlf_only=True)
        body_ms = cpu_ms(lambda body=body: hashlib.sha256(relaxed_body(body)).digest(), count)
        dkimpy_rsa = partial(dkimpy_sign, message, b"pbmserv", rsa_pem, b"rsa-sha256")
        dkimpy_ed = partial(dkimpy_sign, message, b"pbmserv-ed25519", ed_seed, b"ed25519-sha256")
        rows: dict[str, tuple[Callable[[], object] | None, Callable[[], object]]] = {
            "RSA-2048": (dkimpy_rsa, partial(server, rsa_alone)),
            "Ed25519": (
                dkimpy_ed if nacl else None,
                partial(server, ed_alone),
            ),
            "both": (
                partial(both, dkimpy_rsa, dkimpy_ed) if nacl else None,
                partial(server, rsa_alone + ed_alone),
            ),
        }
        for algorithm, (before, now) in rows.items():
            old = cpu_ms(before, count) if before is not None else float("nan")
            new = cpu_ms(now, count)
            alone = cpu_ms(openssl[algorithm], count)
            print(
                f"{name:<25}{len(message):>7}  {algorithm:<10}{old:>8.3f}{new:>8.3f}"
                f"{old / new:>6.1f}x{alone:>9.3f}{body_ms:>7.3f}"
            )
    if not nacl:
        print("(dkimpy signs Ed25519 only with PyNaCl, not installed here: its rows are nan)")


if __name__ == "__main__":
    main()
