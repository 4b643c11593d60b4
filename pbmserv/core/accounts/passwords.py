"""Password hashing with argon2 (constant-time verification inside argon2-cffi).

Every move carries a password, and one argon2 check costs tens of milliseconds by design. As
mail servers such as Dovecot do, a successful check is remembered for a while in memory, keyed
by the stored hash and a keyed digest of the password (never the password itself). Failed
checks are never remembered, so guessing stays as slow as argon2 makes it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from functools import cache
from threading import Lock

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# OWASP's minimum argon2id profile.
_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)

_CACHE_SIZE = 4096
_CACHE_SECONDS = 600.0
_CACHE_KEY = secrets.token_bytes(32)  # per process: a digest is useless outside it
_verified: OrderedDict[tuple[str, bytes], float] = OrderedDict()
_lock = Lock()


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def _digest(password: str) -> bytes:
    return hmac.new(_CACHE_KEY, password.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


def is_remembered(password_hash: str, password: str) -> bool:
    """Whether this password was verified against this hash lately (no argon2 needed)."""
    key = (password_hash, _digest(password))
    with _lock:
        expires = _verified.get(key)
        return expires is not None and expires > time.monotonic()


def verify_password(password_hash: str, password: str) -> bool:
    key = (password_hash, _digest(password))
    now = time.monotonic()
    with _lock:
        expires = _verified.get(key)
        if expires is not None and expires > now:
            _verified.move_to_end(key)
            return True
    try:
        ok = _HASHER.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False
    with _lock:
        _verified[key] = now + _CACHE_SECONDS
        _verified.move_to_end(key)
        while len(_verified) > _CACHE_SIZE:
            _verified.popitem(last=False)
    return ok


@cache
def _dummy_hash() -> str:
    return _HASHER.hash("no such user")


def burn_verification_time(password: str) -> None:
    """Spend the time of a real check, so an unknown user id is not told apart by timing."""
    with contextlib.suppress(VerificationError, InvalidHashError):
        _HASHER.verify(_dummy_hash(), password)
