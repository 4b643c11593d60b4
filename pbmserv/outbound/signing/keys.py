"""The DKIM private keys: made, read once per file (and again when the file changes), loaded
once as OpenSSL key objects, and checked for who else may read them."""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

# OpenSSL's bindings are imported where a key is made or read: a server that does not sign
# (and every process of one that does, but delivery) never loads them.
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

DEFAULT_KEY_BITS = 2048
#: The kinds of key a DKIM signature is made with: RSA (everyone checks it) and Ed25519
#: (RFC 8463, beside RSA: fewer receivers check it yet).
PrivateKey: TypeAlias = "rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey"
RSA, ED25519 = "rsa", "ed25519"


class SigningError(Exception):
    """The DKIM key cannot be used: mail waits (unsigned mail would land in spam)."""


def read_key(path: Path, kind: str = RSA) -> bytes:
    """The PEM of the ``kind`` key at ``path``, read again only when the file changed (a new
    key); SigningError for a key that cannot be read or is of another kind."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as error:
        raise SigningError(f"cannot read the DKIM key {path}: {error.strerror}") from None
    return _read_key(str(path), stamp, kind)


@lru_cache(maxsize=8)
def _read_key(path: str, _stamp: int, kind: str) -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

    try:
        pem = Path(path).read_bytes()
        key = serialization.load_pem_private_key(pem, password=None)
    except OSError as error:
        raise SigningError(f"cannot read the DKIM key {path}: {error.strerror}") from None
    except (ValueError, TypeError) as error:
        raise SigningError(f"the DKIM key {path} is not a PEM private key: {error}") from None
    wanted = rsa.RSAPrivateKey if kind == RSA else ed25519.Ed25519PrivateKey
    if not isinstance(key, wanted):
        raise SigningError(
            f"the DKIM key {path} is not an {'RSA' if kind == RSA else 'Ed25519'} key"
        )
    return pem


@lru_cache(maxsize=8)
def private_key(pem: bytes) -> PrivateKey:
    """``pem`` loaded as OpenSSL's key object, once per key (a signature then costs OpenSSL's
    time alone). ValueError for a PEM that is no RSA or Ed25519 private key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey):
        raise ValueError("a DKIM key is an RSA or an Ed25519 private key")
    return key


def new_key(bits: int = DEFAULT_KEY_BITS) -> bytes:
    """A new RSA private key, PEM (PKCS#1)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def new_ed25519_key() -> bytes:
    """A new Ed25519 private key, PEM (PKCS#8)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


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
